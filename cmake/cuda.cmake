# Decides whether and how the CUDA backend is built. The CPU build never needs CUDA.
#   EMBTRAIN_CUDA = AUTO (when nvcc is found) | ON | OFF | EMULATE
# EMULATE compiles the same kernels/cuda sources as host C++ against the emulation of the
# CUDA execution model in kernels/cuda/emu (no GPU and no nvcc; CUDA's headers only).
#   EMBTRAIN_WITH_CUDA      the real toolchain: nvcc, cudart, NCCL (src/comm, kernels/cuda)
#   EMBTRAIN_CUDA_KERNELS   kernels/cuda is built, by nvcc or emulated
#   EMBTRAIN_CUDA_EMULATED  kernels/cuda is built against the emulation
set(EMBTRAIN_WITH_CUDA OFF)
set(EMBTRAIN_CUDA_KERNELS OFF)
set(EMBTRAIN_CUDA_EMULATED OFF)
if(EMBTRAIN_CUDA STREQUAL "EMULATE")
  find_package(CUDAToolkit REQUIRED)  # headers only: cuda_runtime_api.h, cuda_bf16.h, cublasLt.h, ...
  find_package(Boost 1.74 CONFIG REQUIRED COMPONENTS context)
  set(EMBTRAIN_CUDA_KERNELS ON)
  set(EMBTRAIN_CUDA_EMULATED ON)
elseif(NOT EMBTRAIN_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # "native" fails on machines without a GPU (CI). Ampere (sm_80) and Hopper with its
      # arch-specific features (sm_90a: wgmma, setmaxnreg) as cubins, plus compute_90 PTX that
      # later GPUs JIT-compile (sm_90a code is not forward compatible, PTX of compute_90 is).
      set(CMAKE_CUDA_ARCHITECTURES 80-real 90a-real 90-virtual)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(EMBTRAIN_WITH_CUDA ON)
    set(EMBTRAIN_CUDA_KERNELS ON)
  elseif(EMBTRAIN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBTRAIN_CUDA=ON but no nvcc found (set CUDACXX or CMAKE_CUDA_COMPILER)")
  endif()
endif()
message(STATUS "embtrain CUDA backend: ${EMBTRAIN_CUDA_KERNELS} (emulated: ${EMBTRAIN_CUDA_EMULATED})")

# Every CUDA test executable joins this target, so `cmake --build <dir> --target cuda_tests`
# builds what `ctest -L cuda` runs (make emu).
add_custom_target(cuda_tests)

# embtrain_cuda_sources(file.cu ...): under emulation, compile these CUDA sources as host C++
# with the emulation's header included first (called in the directory of the target). g++
# ignores nvcc's #pragma unroll, and sees a constexpr used only in a launch's template
# arguments as unused.
function(embtrain_cuda_sources)
  if(EMBTRAIN_CUDA_EMULATED)
    set_source_files_properties(${ARGN} PROPERTIES LANGUAGE CXX
                                COMPILE_OPTIONS "-include;${PROJECT_SOURCE_DIR}/kernels/cuda/emu/cuda_emu.hpp;-Wno-unknown-pragmas;-Wno-unused-but-set-variable")
  endif()
endfunction()
