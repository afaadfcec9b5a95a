// Included first (g++ -include) in every kernels/cuda source compiled as host C++ when
// EMBTRAIN_CUDA=EMULATE: CUDA's own headers give the host types and conversions (dim3,
// cudaError_t, __nv_bfloat16, __nv_fp8_e4m3, cuBLASLt's enums), the emulation gives the
// device side (threads as fibers, shared memory, barriers, warp collectives, atomics) and
// implements the runtime and cuBLASLt calls (runtime.cpp, cublaslt.cpp). See README.md.
#pragma once
#define EMB_CUDA_EMULATE 1

#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels/cuda/emu/device_builtins.hpp"
#include "kernels/cuda/emu/launch.hpp"
#include "kernels/cuda/emu/warp_intrinsics.hpp"
