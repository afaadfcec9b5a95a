// A cuBLASLt stand-in over OpenBLAS for the calls kernels/cuda makes (blas.cu, linear.cu,
// fp8_gemm.cu): column-major D = alpha·op(A)·op(B) + beta·C (C = D), fp32 compute, with
//   - fp32 or bf16 A, B, C, D (bf16 widened to fp32, one sgemm, rounded once), transposes,
//     and the epilogues (cublasLt.h's enum comments; bias and aux in D's type, the default):
//     BIAS (bias[m] added per column, before the single rounding); GELU_AUX and GELU_AUX_BIAS
//     (the GELU input, bias included, rounded to D's type into the aux matrix [m, n] with
//     leading dimension EPILOGUE_AUX_LD, a multiple of 8 and ≥ m; D = gelu of the unrounded
//     input, the tanh approximation; beta = 0 only); BGRADA (bias[i] = Σ_k op(A)[i, k],
//     overwritten, summed in double and rounded once where the GPU sums in fp32 in its own
//     order; D computed as without the epilogue; alpha = 1 only);
//   - E4M3 A (transposed) and B (not) with BLK128x128 scales on A and VEC128 scales on B, fp32
//     or bf16 D, computed by the block-scaled GEMM reference kernels/fp8_gemm.cpp.
// Anything else (other types, epilogues, scale modes, layout attributes) is refused with
// CUBLAS_STATUS_NOT_SUPPORTED and a line on stderr. The stand-in checks our calls against our
// reading of cuBLASLt's documentation, not cuBLASLt itself: only a GPU run checks that.
#include <cblas.h>
#include <cublasLt.h>
#include <cuda_bf16.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/fp8_gemm.hpp"
#include "kernels/cuda/emu/runtime.hpp"

struct cublasLtContext {};

namespace {

struct Desc {
  cublasComputeType_t compute;
  cudaDataType_t scale_type;
  cublasOperation_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void* bias = nullptr;
  int32_t bias_type = -1;
  void* aux = nullptr;
  int64_t aux_ld = 0;
  int32_t a_scale_mode = -1, b_scale_mode = -1;
  const float *a_scales = nullptr, *b_scales = nullptr;
};
struct Layout {
  cudaDataType_t type;
  uint64_t rows, cols;
  int64_t ld;
};
struct Preference {
  uint64_t workspace = 0;
  uint32_t align_a = 256, align_b = 256, align_c = 256, align_d = 256;
};
constexpr uint64_t kAlgoTag = 0x656d752d626c6173ull;  // "emu-blas"

static_assert(sizeof(Desc) <= sizeof(cublasLtMatmulDescOpaque_t));
static_assert(sizeof(Layout) <= sizeof(cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(Preference) + 8 <= sizeof(cublasLtMatmulAlgo_t));

template <class S, class Opaque>
S load(const Opaque* o) {
  S s;
  std::memcpy(static_cast<void*>(&s), o->data, sizeof(S));
  return s;
}
template <class S, class Opaque>
void store(Opaque* o, const S& s) {
  std::memcpy(o->data, &s, sizeof(S));
}

cublasStatus_t refuse(const std::string& what) {
  std::fprintf(stderr, "emulated cuBLASLt: not emulated: %s\n", what.c_str());
  return CUBLAS_STATUS_NOT_SUPPORTED;
}

cublasStatus_t invalid(const std::string& what) {
  std::fprintf(stderr, "emulated cuBLASLt: invalid: %s\n", what.c_str());
  return CUBLAS_STATUS_INVALID_VALUE;
}

template <class V>
bool take(const void* buf, size_t size, V& value) {
  if (size != sizeof(V)) return false;
  std::memcpy(&value, buf, sizeof(V));
  return true;
}

bool uses_bias(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_BGRADA;
}
bool uses_aux(cublasLtEpilogue_t e) { return e == CUBLASLT_EPILOGUE_GELU_AUX || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS; }

// gelu_tanh in fp32, as kernels/cpu/activation.cpp computes it.
float gelu_tanh(float x) {
  return 0.5f * x * (1.0f + std::tanh(0.7978845608028654f * (x + 0.044715f * x * x * x)));
}

bool is_fp8(const Desc& d) { return d.a_scale_mode >= 0 || d.b_scale_mode >= 0; }

// Checks one call's descriptors; the problem is m x n x k.
cublasStatus_t validate(const Desc& d, const Layout& a, const Layout& b, const Layout& c, const Layout& dl) {
  if (d.compute != CUBLAS_COMPUTE_32F || d.scale_type != CUDA_R_32F)
    return refuse("compute type " + std::to_string(int(d.compute)) + " / scale type " +
                  std::to_string(int(d.scale_type)) + " (only CUBLAS_COMPUTE_32F with CUDA_R_32F scales)");
  if (std::memcmp(&c, &dl, sizeof(Layout)) != 0) return refuse("a C layout that differs from D's");
  const uint64_t m = dl.rows, n = dl.cols;
  const uint64_t k = d.trans_a == CUBLAS_OP_N ? a.cols : a.rows;
  const uint64_t a_m = d.trans_a == CUBLAS_OP_N ? a.rows : a.cols;
  const uint64_t b_k = d.trans_b == CUBLAS_OP_N ? b.rows : b.cols, b_n = d.trans_b == CUBLAS_OP_N ? b.cols : b.rows;
  if (a_m != m || b_n != n || b_k != k)
    return invalid("op(A) is " + std::to_string(a_m) + "x" + std::to_string(k) + ", op(B) " + std::to_string(b_k) +
                   "x" + std::to_string(b_n) + ", D " + std::to_string(m) + "x" + std::to_string(n));
  for (const Layout* l : {&a, &b, &dl})
    if (l->ld < int64_t(l->rows) || l->ld < 1)
      return invalid("leading dimension " + std::to_string(l->ld) + " < rows " + std::to_string(l->rows));
  if (is_fp8(d)) {
    if (a.type != CUDA_R_8F_E4M3 || b.type != CUDA_R_8F_E4M3) return refuse("scale modes on non-E4M3 operands");
    if (d.a_scale_mode != CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F ||
        d.b_scale_mode != CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F)
      return refuse("FP8 scale modes A " + std::to_string(d.a_scale_mode) + ", B " + std::to_string(d.b_scale_mode) +
                    " (only BLK128x128_32F on A with VEC128_32F on B)");
    if (d.trans_a != CUBLAS_OP_T || d.trans_b != CUBLAS_OP_N)
      return invalid("FP8 GEMMs take only the TN layout (A transposed, B not)");
    if (a.ld != int64_t(a.rows) || b.ld != int64_t(b.rows))
      return refuse("FP8 operands with padded leading dimensions");
    if (k % 16 || a.ld % 16 || b.ld % 16 || dl.ld % 16)
      return invalid("FP8 GEMM with K or a leading dimension not a multiple of 16");
    if (d.epilogue != CUBLASLT_EPILOGUE_DEFAULT) return refuse("an epilogue on the FP8 GEMM");
    if (!d.a_scales || !d.b_scales) return invalid("FP8 scale modes without scale pointers");
    if (dl.type != CUDA_R_32F && dl.type != CUDA_R_16BF)
      return refuse("FP8 GEMM output type " + std::to_string(int(dl.type)));
    return CUBLAS_STATUS_SUCCESS;
  }
  // cuBLASLt's CUBLAS_COMPUTE_32F table: A = B = D fp32 or bf16, or bf16 A and B with fp32 C and D.
  const bool same = a.type == b.type && a.type == dl.type && (a.type == CUDA_R_32F || a.type == CUDA_R_16BF);
  const bool bf16_into_fp32 = a.type == CUDA_R_16BF && b.type == CUDA_R_16BF && dl.type == CUDA_R_32F;
  if (!same && !bf16_into_fp32)
    return refuse("operand types A " + std::to_string(int(a.type)) + ", B " + std::to_string(int(b.type)) + ", D " +
                  std::to_string(int(dl.type)) + " (only all fp32, all bf16, or bf16 A and B with fp32 D)");
  switch (d.epilogue) {
    case CUBLASLT_EPILOGUE_DEFAULT:
      return CUBLAS_STATUS_SUCCESS;
    case CUBLASLT_EPILOGUE_BIAS:
    case CUBLASLT_EPILOGUE_GELU_AUX:
    case CUBLASLT_EPILOGUE_GELU_AUX_BIAS:
    case CUBLASLT_EPILOGUE_BGRADA:
      break;
    default:
      return refuse("epilogue " + std::to_string(int(d.epilogue)) +
                    " (only DEFAULT, BIAS, GELU_AUX, GELU_AUX_BIAS and BGRADA)");
  }
  if (uses_bias(d.epilogue) && !d.bias) return invalid("a bias epilogue without a bias pointer");
  if (uses_bias(d.epilogue) && d.bias_type != -1 && d.bias_type != int32_t(dl.type))
    return refuse("a bias type other than D's");
  if (uses_aux(d.epilogue) && (!d.aux || d.aux_ld % 8 || d.aux_ld < int64_t(dl.rows)))
    return invalid("a GELU_AUX epilogue needs an aux pointer and an aux leading dimension divisible by 8 and >= " +
                   std::to_string(dl.rows) + " (got " + std::to_string(d.aux_ld) + ")");
  return CUBLAS_STATUS_SUCCESS;
}

std::vector<float> widen(const Layout& l, const void* p) {
  std::vector<float> out(size_t(l.ld) * l.cols, 0.0f);  // the padding rows stay unread
  for (uint64_t j = 0; j < l.cols; ++j)
    for (uint64_t i = 0; i < l.rows; ++i) {
      const size_t e = j * size_t(l.ld) + i;
      out[e] = l.type == CUDA_R_32F ? static_cast<const float*>(p)[e]
                                    : __bfloat162float(static_cast<const __nv_bfloat16*>(p)[e]);
    }
  return out;
}

// Stores the m x n result (ld = D's) into D, rounding once to D's type.
void narrow(const Layout& l, const std::vector<float>& v, void* p) {
  for (uint64_t j = 0; j < l.cols; ++j)
    for (uint64_t i = 0; i < l.rows; ++i) {
      const size_t e = j * size_t(l.ld) + i;
      if (l.type == CUDA_R_32F)
        static_cast<float*>(p)[e] = v[e];
      else
        static_cast<__nv_bfloat16*>(p)[e] = __float2bfloat16_rn(v[e]);
    }
}

// The m x n values of v (leading dimension ld) with leading dimension to_ld.
std::vector<float> with_leading_dimension(const std::vector<float>& v, int64_t ld, int m, int n, int64_t to_ld) {
  std::vector<float> out(size_t(to_ld) * n, 0.0f);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) out[size_t(j) * to_ld + i] = v[size_t(j) * ld + i];
  return out;
}

void run_dense(const Desc& d, const Layout& a, const Layout& b, const Layout& dl, float alpha, float beta,
               const void* A, const void* B, void* D) {
  const int m = int(dl.rows), n = int(dl.cols), k = int(d.trans_a == CUBLAS_OP_N ? a.cols : a.rows);
  const std::vector<float> fa = widen(a, A), fb = widen(b, B);
  std::vector<float> fd(size_t(dl.ld) * dl.cols, 0.0f);
  if (beta != 0.0f) fd = widen(dl, D);  // beta = 0 leaves D unread
  cblas_sgemm(CblasColMajor, d.trans_a == CUBLAS_OP_N ? CblasNoTrans : CblasTrans,
              d.trans_b == CUBLAS_OP_N ? CblasNoTrans : CblasTrans, m, n, k, alpha, fa.data(), int(a.ld), fb.data(),
              int(b.ld), beta, fd.data(), int(dl.ld));
  const Layout vector_layout{dl.type, dl.rows, 1, int64_t(dl.rows)};
  if (d.epilogue == CUBLASLT_EPILOGUE_BIAS || d.epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS) {
    const std::vector<float> bias = widen(vector_layout, d.bias);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) fd[size_t(j) * dl.ld + i] += bias[size_t(i)];
  }
  if (uses_aux(d.epilogue)) {
    narrow(Layout{dl.type, dl.rows, dl.cols, d.aux_ld}, with_leading_dimension(fd, dl.ld, m, n, d.aux_ld), d.aux);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < m; ++i) fd[size_t(j) * dl.ld + i] = gelu_tanh(fd[size_t(j) * dl.ld + i]);
  }
  if (d.epilogue == CUBLASLT_EPILOGUE_BGRADA) {
    std::vector<float> grad(static_cast<size_t>(m));
    for (int i = 0; i < m; ++i) {
      double sum = 0.0;
      for (int kk = 0; kk < k; ++kk)
        sum += d.trans_a == CUBLAS_OP_N ? fa[size_t(kk) * a.ld + i] : fa[size_t(i) * a.ld + kk];
      grad[size_t(i)] = float(sum);
    }
    narrow(vector_layout, grad, const_cast<void*>(d.bias));
  }
  narrow(dl, fd, D);
}

// D [O, T] (column-major) = W·X with A = W codes [K, O] (transposed), B = X codes [K, T]:
// the CPU reference's y [T, O] = X·Wᵀ with the scales moved to its layouts.
void run_fp8(const Desc& d, const Layout& a, const Layout& dl, float beta, const void* A, const void* B, void* D) {
  const int64_t O = int64_t(dl.rows), T = int64_t(dl.cols), K = int64_t(a.rows);
  const int64_t k_blocks = (K + 127) / 128, o_blocks = (O + 127) / 128, stride = (k_blocks + 3) / 4 * 4;
  std::vector<float> x_scales(size_t(T * k_blocks)), w_scales(size_t(o_blocks * k_blocks));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t kb = 0; kb < k_blocks; ++kb) x_scales[size_t(t * k_blocks + kb)] = d.b_scales[kb * T + t];
  for (int64_t ob = 0; ob < o_blocks; ++ob)
    for (int64_t kb = 0; kb < k_blocks; ++kb) w_scales[size_t(ob * k_blocks + kb)] = d.a_scales[ob * stride + kb];
  std::vector<float> y(size_t(T * O), 0.0f);
  if (beta != 0.0f) y = widen(dl, D);
  emb::fp8_gemm(static_cast<const uint8_t*>(B), x_scales.data(), static_cast<const uint8_t*>(A), w_scales.data(),
                y.data(), T, O, K, beta);
  narrow(dl, y, D);
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* handle) {
  *handle = new cublasLtContext;
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t handle) {
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* desc, cublasComputeType_t compute, cudaDataType_t scale) {
  *desc = new cublasLtMatmulDescOpaque_t{};
  Desc d;
  d.compute = compute;
  d.scale_type = scale;
  store(*desc, d);
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) {
  delete desc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc, cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  Desc d = load<Desc>(desc);
  bool ok;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_TRANSA:
      ok = take(buf, size, d.trans_a);
      break;
    case CUBLASLT_MATMUL_DESC_TRANSB:
      ok = take(buf, size, d.trans_b);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      ok = take(buf, size, d.epilogue);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_POINTER:
      ok = take(buf, size, d.bias);
      break;
    case CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE:
      ok = take(buf, size, d.bias_type);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER:
      ok = take(buf, size, d.aux);
      break;
    case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD:
      ok = take(buf, size, d.aux_ld);
      break;
    case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
      ok = take(buf, size, d.a_scale_mode);
      break;
    case CUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      ok = take(buf, size, d.b_scale_mode);
      break;
    case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER:
      ok = take(buf, size, d.a_scales);
      break;
    case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER:
      ok = take(buf, size, d.b_scales);
      break;
    default:
      return refuse("matmul descriptor attribute " + std::to_string(int(attr)));
  }
  if (!ok)
    return invalid("matmul descriptor attribute " + std::to_string(int(attr)) + " of " + std::to_string(size) +
                   " bytes");
  store(desc, d);
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* layout, cudaDataType type, uint64_t rows,
                                          uint64_t cols, int64_t ld) {
  *layout = new cublasLtMatrixLayoutOpaque_t{};
  store(*layout, Layout{type, rows, cols, ld});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  delete layout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  store(*pref, Preference{});
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t attr, const void* buf,
                                                    size_t size) {
  Preference p = load<Preference>(pref);
  bool ok;
  switch (attr) {
    case CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES:
      ok = take(buf, size, p.workspace);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES:
      ok = take(buf, size, p.align_a);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES:
      ok = take(buf, size, p.align_b);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES:
      ok = take(buf, size, p.align_c);
      break;
    case CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES:
      ok = take(buf, size, p.align_d);
      break;
    default:
      return refuse("preference attribute " + std::to_string(int(attr)));
  }
  if (!ok)
    return invalid("preference attribute " + std::to_string(int(attr)) + " of " + std::to_string(size) + " bytes");
  store(pref, p);
  return CUBLAS_STATUS_SUCCESS;
}

// One "algorithm" for every supported problem; it remembers the alignments it was chosen for,
// which cublasLtMatmul checks against the actual pointers.
cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a,
                                              cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                              cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
                                              cublasLtMatmulHeuristicResult_t results[], int* count) {
  *count = 0;
  if (requested < 1) return invalid("a heuristic request for no algorithm");
  const cublasStatus_t s =
      validate(load<Desc>(desc), load<Layout>(a), load<Layout>(b), load<Layout>(c), load<Layout>(d));
  if (s != CUBLAS_STATUS_SUCCESS) return s;
  results[0] = cublasLtMatmulHeuristicResult_t{};
  const Preference p = load<Preference>(pref);
  results[0].algo.data[0] = kAlgoTag;
  std::memcpy(&results[0].algo.data[1], &p, sizeof(p));
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *count = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void* alpha, const void* A,
                              cublasLtMatrixLayout_t a_desc, const void* B, cublasLtMatrixLayout_t b_desc,
                              const void* beta, const void* C, cublasLtMatrixLayout_t c_desc, void* D,
                              cublasLtMatrixLayout_t d_desc, const cublasLtMatmulAlgo_t* algo, void*, size_t,
                              cudaStream_t stream) {
  const Desc d = load<Desc>(desc);
  const Layout a = load<Layout>(a_desc), b = load<Layout>(b_desc), c = load<Layout>(c_desc), dl = load<Layout>(d_desc);
  if (const cublasStatus_t s = validate(d, a, b, c, dl); s != CUBLAS_STATUS_SUCCESS) return s;
  if (!algo || algo->data[0] != kAlgoTag) return invalid("cublasLtMatmul without an algorithm from the heuristic");
  Preference p;
  std::memcpy(static_cast<void*>(&p), &algo->data[1], sizeof(p));
  auto aligned = [](const void* ptr, uint32_t align) { return reinterpret_cast<uintptr_t>(ptr) % align == 0; };
  if (!aligned(A, p.align_a) || !aligned(B, p.align_b) || !aligned(C, p.align_c) || !aligned(D, p.align_d))
    return invalid("operand less aligned than the preference the algorithm was chosen for (A " +
                   std::to_string(p.align_a) + ", B " + std::to_string(p.align_b) + ", D " + std::to_string(p.align_d) +
                   " bytes)");
  if (C != D) return refuse("C and D at different addresses");
  const float alpha_v = *static_cast<const float*>(alpha), beta_v = *static_cast<const float*>(beta);
  if (is_fp8(d)) {
    if (alpha_v != 1.0f) return refuse("alpha != 1 on the FP8 GEMM");
    for (const void* ptr : {A, B, static_cast<const void*>(D), static_cast<const void*>(d.a_scales),
                            static_cast<const void*>(d.b_scales)})
      if (!aligned(ptr, 16)) return invalid("FP8 operands and scales must be 16-byte aligned");
    emb::emu::enqueue(stream, "cublasLtMatmul (fp8)", [=] { run_fp8(d, a, dl, beta_v, A, B, D); });
  } else {
    if (uses_aux(d.epilogue) && beta_v != 0.0f) return refuse("beta != 0 with a GELU_AUX epilogue");
    if (d.epilogue == CUBLASLT_EPILOGUE_BGRADA && alpha_v != 1.0f) return refuse("alpha != 1 with BGRADA");
    emb::emu::enqueue(stream, "cublasLtMatmul", [=] { run_dense(d, a, b, dl, alpha_v, beta_v, A, B, D); });
  }
  return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
