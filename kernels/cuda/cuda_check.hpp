// CUDA and cuBLASLt status checks. A failing call is an environment or programming error, not
// bad user input, so it throws emb::Error naming the call and the driver's message.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime.h>

#include "core/error.hpp"

namespace emb::cuda {

inline void check_cuda(cudaError_t status, const char* what) {
  EMB_CHECK(status == cudaSuccess, "cuda: ", what, ": ", cudaGetErrorString(status));
}

inline void check_cublas(cublasStatus_t status, const char* what) {
  EMB_CHECK(status == CUBLAS_STATUS_SUCCESS, "cublasLt: ", what, ": status ", int(status));
}

// Launch errors (bad configuration) surface at the launch; execution errors at the next sync.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

}  // namespace emb::cuda
