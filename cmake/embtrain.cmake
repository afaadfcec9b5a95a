# embtrain_schedule_test(TESTS t... [RANKS n] [TIMED]): how `ctest -j N` may run a test beside
# others. PROCESSORS = the most ranks it runs at once (so two 2-rank jobs never share 2 cores);
# TIMED (RUN_SERIAL) for a test that measures time or relies on timing (deadlines, signals, frozen
# peers, speed ratios), which a busy neighbour would make flaky. No RESOURCE_LOCK: every test
# writes into a directory of its own (mkdtemp, EMBTRAIN_TEST_TMP/<its suite>, or outputs/ names no
# other test uses).
function(embtrain_schedule_test)
  cmake_parse_arguments(S "TIMED" "RANKS" "TESTS" ${ARGN})
  if(NOT S_RANKS)
    set(S_RANKS 1)
  endif()
  set_tests_properties(${S_TESTS} PROPERTIES PROCESSORS ${S_RANKS})
  if(S_TIMED)
    set_tests_properties(${S_TESTS} PROPERTIES RUN_SERIAL TRUE)
  endif()
endfunction()

# embtrain_add_test(NAME SOURCES a.cpp b.cpp LIBS emb_x [RANKS 1 2 3 4] [LABELS l] [TIMED])
# Builds one Boost.Test executable and registers it with ctest, once per rank count
# (under mpirun --oversubscribe when RANKS is given), with the MPI settings MACHINE.md asks for
# and its schedule under ctest -j (embtrain_schedule_test).
set(EMBTRAIN_MPI_ENV
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
  OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1)

# EMBTRAIN_TEST_TMP: the /tmp folder of this build's tests' fixed scratch paths, named after the
# build directory, so that two checkouts testing at once on one machine never share a file.
string(MD5 EMBTRAIN_BUILD_HASH "${CMAKE_BINARY_DIR}")
string(SUBSTRING "${EMBTRAIN_BUILD_HASH}" 0 10 EMBTRAIN_BUILD_HASH)
set(EMBTRAIN_TEST_TMP "/tmp/embtrain_test_${EMBTRAIN_BUILD_HASH}")

function(embtrain_add_test name)
  cmake_parse_arguments(T "TIMED" "TIMEOUT" "SOURCES;LIBS;RANKS;LABELS" ${ARGN})
  add_executable(${name} ${T_SOURCES})
  target_link_libraries(${name} PRIVATE ${T_LIBS} Boost::unit_test_framework)
  target_compile_definitions(${name} PRIVATE BOOST_TEST_DYN_LINK EMBTRAIN_TEST_TMP="${EMBTRAIN_TEST_TMP}")
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  set(timed)
  if(T_TIMED)
    set(timed TIMED)
  endif()
  if(T_RANKS)
    foreach(n IN LISTS T_RANKS)
      add_test(NAME ${name}_np${n}
               COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${n} --oversubscribe
                       $<TARGET_FILE:${name}>)
      set_tests_properties(${name}_np${n} PROPERTIES ENVIRONMENT "${EMBTRAIN_MPI_ENV}"
                           TIMEOUT ${T_TIMEOUT} LABELS "mpi;${T_LABELS}"
                           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
      embtrain_schedule_test(TESTS ${name}_np${n} RANKS ${n} ${timed})
    endforeach()
  else()
    add_test(NAME ${name} COMMAND ${name})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT "${EMBTRAIN_MPI_ENV}"
                         TIMEOUT ${T_TIMEOUT} LABELS "${T_LABELS}"
                         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
    embtrain_schedule_test(TESTS ${name} ${timed})
  endif()
endfunction()

# embtrain_add_layer(NAME DIR PUBLIC_LIBS... [CUDA_ONLY file.cpp...] [EXCLUDE file.cpp...]): a
# static library of every .cpp in DIR but the EXCLUDE ones (a library of their own); the
# CUDA_ONLY files are left out when the CUDA backend is not built.
# Headers are included from the repository root ("kernels/cpu/gemm.hpp") or src/ ("core/error.hpp").
function(embtrain_add_layer name dir)
  cmake_parse_arguments(L "" "" "CUDA_ONLY;EXCLUDE" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  foreach(f IN LISTS L_EXCLUDE)
    list(REMOVE_ITEM sources ${dir}/${f})
  endforeach()
  if(NOT EMBTRAIN_WITH_CUDA)
    foreach(f IN LISTS L_CUDA_ONLY)
      list(REMOVE_ITEM sources ${dir}/${f})
    endforeach()
  endif()
  if(sources)
    add_library(${name} STATIC ${sources})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${L_UNPARSED_ARGUMENTS})
  else()  # a layer with headers only so far
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${L_UNPARSED_ARGUMENTS})
  endif()
endfunction()
