#include "kernels/cuda/blas.hpp"

namespace emb::cuda {

Blas::Blas(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
  check_cuda(cudaMalloc(&workspace_, workspace_bytes_), "cudaMalloc(cuBLASLt workspace)");
}

Blas::~Blas() {
  cudaFree(workspace_);
  cublasLtDestroy(handle_);
}

MatmulDescs::~MatmulDescs() {
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(op);
}

namespace {

// The largest power of two (≤ 256) dividing the address: slices of a buffer (one embodiment's
// W, a group of gathered rows) are less aligned than cuBLASLt's default assumption of 256.
uint32_t alignment_of(const void* p) {
  const auto a = reinterpret_cast<uintptr_t>(p);
  uint32_t align = 256;
  while (align > 1 && a % align) align /= 2;
  return align;
}

void set_preference(cublasLtMatmulPreference_t pref, cublasLtMatmulPreferenceAttributes_t attribute, uint32_t value,
                    const char* what) {
  check_cublas(cublasLtMatmulPreferenceSetAttribute(pref, attribute, &value, sizeof(value)), what);
}

}  // namespace

void run_matmul(const Blas& blas, MatmulDescs& g, const void* A, const void* B, float beta, void* D, int64_t m,
                int64_t n, int64_t k, cudaStream_t stream) {
  check_cublas(cublasLtMatmulPreferenceCreate(&g.pref), "preference");
  const size_t ws = blas.workspace_bytes();
  check_cublas(cublasLtMatmulPreferenceSetAttribute(g.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)),
               "workspace preference");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(A), "alignment A");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(B), "alignment B");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(D), "alignment C");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(D), "alignment D");

  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(blas.handle(), g.op, g.a, g.b, g.d, g.d, g.pref, 1, &heuristic, &found),
               "heuristic");
  EMB_CHECK(found > 0, "cublasLt: no algorithm for a ", m, "x", n, "x", k, " GEMM");
  const float alpha = 1.0f;
  check_cublas(cublasLtMatmul(blas.handle(), g.op, &alpha, A, g.a, B, g.b, &beta, D, g.d, D, g.d, &heuristic.algo,
                              blas.workspace(), ws, stream),
               "matmul");
}

}  // namespace emb::cuda
