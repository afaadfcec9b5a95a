// cuBLASLt as every GEMM of this backend uses it: one handle per device (Blas), one workspace
// per stream, and the descriptors and heuristic result of each GEMM shape built once and cached
// (Blas::gemm). The uncached MatmulDescs + run_matmul path remains for the block-scaled FP8 GEMM.
#pragma once
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>

#include "kernels/cuda/cuda_check.hpp"

namespace emb::cuda {

// One column-major GEMM D[m, n] = op(A)·op(B) + beta·D with an epilogue, as cached by Blas:
// A is stored [m, k] (or [k, m] when trans_a), B [k, n] (or [n, k] when trans_b); A and B of one
// storage type, D of that type or fp32 beside bf16 A and B (bf16 activations accumulating into
// fp32 parameter gradients); fp32 compute (CUBLAS_COMPUTE_32F: no TF32, so fp32 matches the CPU).
// Epilogues used (cublasLt.h): BIAS (bias[m] added per column), GELU_AUX / GELU_AUX_BIAS
// (D = gelu(A·B (+ bias)), the GELU input written to aux [m, n] with leading dimension aux_ld,
// a multiple of 8), BGRADA (bias[m] = Σ_k op(A)[i, k], overwritten, in D's type).
struct GemmShape {
  cudaDataType_t type = CUDA_R_32F;      // A and B
  cudaDataType_t out_type = CUDA_R_32F;  // C and D (and a BGRADA bias gradient)
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldd = 0;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  int64_t aux_ld = 0;
};

// The pointers of one call: bias is the bias (BIAS, GELU_AUX_BIAS) or the bias gradient
// written by BGRADA; aux the GELU input written by GELU_AUX*.
struct GemmOperands {
  const void* A = nullptr;
  const void* B = nullptr;
  float beta = 0.0f;
  void* D = nullptr;
  void* bias = nullptr;
  void* aux = nullptr;
};

// The cuBLASLt handle, a workspace per stream, and the cache of GEMM plans (descriptors, layouts
// and the heuristic's algorithm per shape, epilogue and operand alignment). Not thread-safe: one
// Blas serves the streams of one host thread (one CudaOps).
class Blas {
 public:
  // Where the per-stream device memory comes from: CudaOps' DeviceMemory, so that running out
  // is its one line naming the phase and what to change; empty: cudaMalloc and cudaFree.
  struct Allocator {
    std::function<void*(size_t bytes, const char* what)> allocate;
    std::function<void(void* p)> release;
  };
  explicit Blas(size_t workspace_bytes = size_t{32} << 20, Allocator allocator = {});
  ~Blas();
  Blas(const Blas&) = delete;
  Blas& operator=(const Blas&) = delete;
  cublasLtHandle_t handle() const { return handle_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  // The workspace of `stream` (allocated on its first use: call it before capturing a CUDA
  // graph on that stream, since cudaMalloc is not allowed during capture).
  void* workspace(cudaStream_t stream) const;
  // Device scratch of kBiasGradScratchBytes next to the stream's workspace: where BGRADA writes
  // a bias gradient that is then added to the accumulated one (the epilogue overwrites).
  void* bias_grad_scratch(cudaStream_t stream) const;
  static constexpr size_t kBiasGradScratchBytes = size_t{256} << 10;
  // Device scratch of kColumnSumScratchBytes (column_sum.cuh) after the bias-gradient scratch:
  // the per-chunk partials of the stream's column sums (fp32 bias and norm parameter gradients).
  void* column_sum_scratch(cudaStream_t stream) const;
  // The bytes allocated per stream: workspace, bias-gradient and column-sum scratch.
  size_t stream_bytes() const;

  // Runs the GEMM with its cached plan (built on the first call of its key). Returns false,
  // running nothing, when cuBLASLt has no algorithm for an epilogue other than DEFAULT/BIAS (the
  // caller then runs its separate pass); throws when it has none for a plain GEMM.
  bool gemm(const GemmShape& shape, const GemmOperands& ops, cudaStream_t stream) const;
  // Plans built so far (the benchmark and tests read it; at kMaxPlans the cache starts afresh,
  // so ragged per-embodiment row counts cannot grow it without bound).
  size_t cached_plans() const;
  static constexpr size_t kMaxPlans = 4096;
  // Plans built for an epilogue cuBLASLt refused (their GEMMs run the separate pass instead).
  size_t fallback_plans() const;

 private:
  struct Plan;
  struct PlanKey;
  struct PlanKeyHash {
    size_t operator()(const PlanKey& k) const;
  };
  struct PlanKeyEqual {
    bool operator()(const PlanKey& a, const PlanKey& b) const;
  };
  const Plan& plan(const GemmShape& shape, const GemmOperands& ops) const;

  cublasLtHandle_t handle_ = nullptr;
  size_t workspace_bytes_ = 0;
  Allocator allocator_;
  mutable std::unordered_map<cudaStream_t, void*> workspaces_;
  mutable std::unordered_map<PlanKey, std::unique_ptr<Plan>, PlanKeyHash, PlanKeyEqual> plans_;
  mutable size_t fallbacks_ = 0;
};

// Owns the descriptors of one uncached cuBLASLt call (the FP8 GEMM).
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

// D = op(A)·op(B) + beta·D with the operation and layouts in g (d serves as C's layout too),
// descriptors and heuristic built for this call only; m, n, k name the problem in the error
// raised when no algorithm fits.
void run_matmul(const Blas& blas, MatmulDescs& g, const void* A, const void* B, float beta, void* D, int64_t m,
                int64_t n, int64_t k, cudaStream_t stream);

}  // namespace emb::cuda
