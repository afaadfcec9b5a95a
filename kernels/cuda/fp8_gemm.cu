#include "kernels/cuda/fp8_gemm.hpp"

#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

bool aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

}  // namespace

template <class Out>
void fp8_gemm(const Blas& blas, const __nv_fp8_e4m3* x_codes, const float* x_scales, const __nv_fp8_e4m3* w_codes,
              const float* w_scales, Out* y, int64_t T, int64_t O, int64_t K, float beta, cudaStream_t stream) {
  if (T == 0 || O == 0) return;
  EMB_CHECK(K % 16 == 0 && O % 16 == 0 && T % 4 == 0 && K > 0, "fp8_gemm: a ", T, "x", O, "x", K,
            " GEMM (tokens x out x in) needs K and O multiples of 16 and T a multiple of 4");
  EMB_CHECK(aligned16(x_codes) && aligned16(x_scales) && aligned16(w_codes) && aligned16(w_scales) && aligned16(y),
            "fp8_gemm: operands and scales must be 16-byte aligned");
  MatmulDescs g;
  check_cublas(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "fp8 matmul desc");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, "fp8 transa");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, "fp8 transb");
  const int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, a_mode, "fp8 A scale mode");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, b_mode, "fp8 B scale mode");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, w_scales, "fp8 A scales");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, x_scales, "fp8 B scales");
  check_cublas(cublasLtMatrixLayoutCreate(&g.a, CUDA_R_8F_E4M3, K, O, K), "fp8 layout A");
  check_cublas(cublasLtMatrixLayoutCreate(&g.b, CUDA_R_8F_E4M3, K, T, K), "fp8 layout B");
  check_cublas(cublasLtMatrixLayoutCreate(&g.d, data_type<Out>(), O, T, O), "fp8 layout D");
  run_matmul(blas, g, w_codes, x_codes, beta, y, O, T, K, stream);
}

#define EMB_INSTANTIATE(Out)                                                                                       \
  template void fp8_gemm<Out>(const Blas&, const __nv_fp8_e4m3*, const float*, const __nv_fp8_e4m3*, const float*, \
                              Out*, int64_t, int64_t, int64_t, float, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
