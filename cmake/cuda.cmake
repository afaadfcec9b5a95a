# Decides whether the CUDA backend is built. The CPU build never needs CUDA.
set(EMBTRAIN_WITH_CUDA OFF)
if(NOT EMBTRAIN_CUDA STREQUAL "OFF")
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
  elseif(EMBTRAIN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "EMBTRAIN_CUDA=ON but no nvcc found (set CUDACXX or CMAKE_CUDA_COMPILER)")
  endif()
endif()
message(STATUS "embtrain CUDA backend: ${EMBTRAIN_WITH_CUDA}")
