// cuBLASLt as every GEMM of this backend uses it: one handle and workspace per device (Blas),
// the descriptors of one call owned together (MatmulDescs), and run_matmul, which asks the
// heuristic for an algorithm that fits the workspace and the operands' actual alignment and runs
// it. Descriptors are rebuilt per call (see README.md, performance notes).
#pragma once
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/cuda_check.hpp"

namespace emb::cuda {

// The cuBLASLt handle and its workspace; one per device, reused by every GEMM.
class Blas {
 public:
  explicit Blas(size_t workspace_bytes = size_t{32} << 20);
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
};

// Owns the descriptors of one cuBLASLt call.
struct MatmulDescs {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  MatmulDescs() = default;
  MatmulDescs(const MatmulDescs&) = delete;
  MatmulDescs& operator=(const MatmulDescs&) = delete;
  ~MatmulDescs();
};

// The cuBLASLt data type of a storage type.
template <class T>
constexpr cudaDataType_t data_type();
template <>
constexpr cudaDataType_t data_type<float>() {
  return CUDA_R_32F;
}
template <>
constexpr cudaDataType_t data_type<__nv_bfloat16>() {
  return CUDA_R_16BF;
}

template <class V>
void set_matmul_attribute(cublasLtMatmulDesc_t op, cublasLtMatmulDescAttributes_t attribute, const V& value,
                          const char* what) {
  check_cublas(cublasLtMatmulDescSetAttribute(op, attribute, &value, sizeof(value)), what);
}

// D = op(A)·op(B) + beta·D with the operation and layouts in g (d serves as C's layout too);
// m, n, k name the problem in the error raised when no algorithm fits.
void run_matmul(const Blas& blas, MatmulDescs& g, const void* A, const void* B, float beta, void* D, int64_t m,
                int64_t n, int64_t k, cudaStream_t stream);

}  // namespace emb::cuda
