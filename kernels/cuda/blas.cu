#include "kernels/cuda/blas.hpp"

#include <functional>
#include <string>
#include <utility>

#include "kernels/cuda/column_sum.cuh"

namespace emb::cuda {

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

// A preference for an algorithm that fits the workspace and the operands' actual alignment.
void set_preferences(MatmulDescs& g, size_t workspace_bytes, const void* A, const void* B, const void* D) {
  check_cublas(cublasLtMatmulPreferenceCreate(&g.pref), "preference");
  check_cublas(cublasLtMatmulPreferenceSetAttribute(g.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                                    &workspace_bytes, sizeof(workspace_bytes)),
               "workspace preference");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(A), "alignment A");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(B), "alignment B");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignment_of(D), "alignment C");
  set_preference(g.pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignment_of(D), "alignment D");
}

bool plain_epilogue(cublasLtEpilogue_t e) { return e == CUBLASLT_EPILOGUE_DEFAULT || e == CUBLASLT_EPILOGUE_BIAS; }

}  // namespace

// The heuristic's answer depends on the shape, the epilogue and the pointers only through
// their alignment (cublasLt.h: bias and aux pointers are read for their alignment), so a plan
// serves every later call whose key matches.
struct Blas::PlanKey {
  GemmShape shape;
  uint32_t align_a, align_b, align_d, align_bias, align_aux;
};

size_t Blas::PlanKeyHash::operator()(const PlanKey& k) const {
  size_t h = 0;
  auto mix = [&h](uint64_t v) { h ^= std::hash<uint64_t>{}(v) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
  const GemmShape& s = k.shape;
  for (int64_t v : {int64_t(s.type), int64_t(s.out_type), int64_t(s.trans_a), int64_t(s.trans_b), s.m, s.n, s.k,
                    s.lda, s.ldb, s.ldd, int64_t(s.epilogue), s.aux_ld, int64_t(k.align_a), int64_t(k.align_b),
                    int64_t(k.align_d), int64_t(k.align_bias), int64_t(k.align_aux)})
    mix(uint64_t(v));
  return h;
}

bool Blas::PlanKeyEqual::operator()(const PlanKey& a, const PlanKey& b) const {
  const GemmShape &x = a.shape, &y = b.shape;
  return x.type == y.type && x.out_type == y.out_type && x.trans_a == y.trans_a && x.trans_b == y.trans_b &&
         x.m == y.m && x.n == y.n && x.k == y.k && x.lda == y.lda && x.ldb == y.ldb && x.ldd == y.ldd &&
         x.epilogue == y.epilogue && x.aux_ld == y.aux_ld && a.align_a == b.align_a && a.align_b == b.align_b &&
         a.align_d == b.align_d && a.align_bias == b.align_bias && a.align_aux == b.align_aux;
}

struct Blas::Plan {
  MatmulDescs descs;
  cublasLtMatmulAlgo_t algo{};
  bool found = false;
};

Blas::Blas(size_t workspace_bytes, Allocator allocator)
    : workspace_bytes_(workspace_bytes), allocator_(std::move(allocator)) {
  if (!allocator_.allocate)
    allocator_ = {[](size_t bytes, const char* what) {
                    void* p = nullptr;
                    check_cuda(cudaMalloc(&p, bytes), (std::string("cudaMalloc(") + what + ")").c_str());
                    return p;
                  },
                  [](void* p) { cudaFree(p); }};
  check_cublas(cublasLtCreate(&handle_), "cublasLtCreate");
}

Blas::~Blas() {
  plans_.clear();
  for (auto& entry : workspaces_) {
    try {
      allocator_.release(entry.second);
    } catch (const std::exception&) {  // a destructor cannot throw; the run already failed
    }
  }
  cublasLtDestroy(handle_);
}

void* Blas::workspace(cudaStream_t stream) const {
  void*& ws = workspaces_[stream];
  if (!ws) ws = allocator_.allocate(stream_bytes(), "cuBLASLt workspace");
  return ws;
}

void* Blas::bias_grad_scratch(cudaStream_t stream) const {
  return static_cast<char*>(workspace(stream)) + workspace_bytes_;  // aligned as workspace_bytes_ is
}

void* Blas::column_sum_scratch(cudaStream_t stream) const {
  return static_cast<char*>(bias_grad_scratch(stream)) + kBiasGradScratchBytes;
}

size_t Blas::stream_bytes() const { return workspace_bytes_ + kBiasGradScratchBytes + kColumnSumScratchBytes; }

size_t Blas::cached_plans() const { return plans_.size(); }
size_t Blas::fallback_plans() const { return fallbacks_; }

const Blas::Plan& Blas::plan(const GemmShape& s, const GemmOperands& ops) const {
  const PlanKey key{s,
                    alignment_of(ops.A),
                    alignment_of(ops.B),
                    alignment_of(ops.D),
                    ops.bias ? alignment_of(ops.bias) : 0,
                    ops.aux ? alignment_of(ops.aux) : 0};
  if (const auto it = plans_.find(key); it != plans_.end()) return *it->second;
  if (plans_.size() >= kMaxPlans) plans_.clear();
  auto p = std::make_unique<Plan>();
  MatmulDescs& g = p->descs;
  check_cublas(cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
  const cublasOperation_t op_a = s.trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = s.trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, op_a, "transa");
  set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_TRANSB, op_b, "transb");
  if (s.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
    set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_EPILOGUE, s.epilogue, "epilogue");
    if (ops.bias) set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, ops.bias, "bias pointer");
    if (ops.aux) {
      set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, ops.aux, "aux pointer");
      set_matmul_attribute(g.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, s.aux_ld, "aux ld");
    }
  }
  check_cublas(cublasLtMatrixLayoutCreate(&g.a, s.type, s.trans_a ? s.k : s.m, s.trans_a ? s.m : s.k, s.lda),
               "layout A");
  check_cublas(cublasLtMatrixLayoutCreate(&g.b, s.type, s.trans_b ? s.n : s.k, s.trans_b ? s.k : s.n, s.ldb),
               "layout B");
  check_cublas(cublasLtMatrixLayoutCreate(&g.d, s.out_type, s.m, s.n, s.ldd), "layout D");
  set_preferences(g, workspace_bytes_, ops.A, ops.B, ops.D);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  const cublasStatus_t status =
      cublasLtMatmulAlgoGetHeuristic(handle_, g.op, g.a, g.b, g.d, g.d, g.pref, 1, &heuristic, &found);
  // An epilogue cuBLASLt refuses here (any status, or no result: the rules for epilogues vary by
  // version and GPU) is a plan without an algorithm: the caller falls back to its separate pass,
  // on every later call too, and fallback_plans() counts it.
  if (status != CUBLAS_STATUS_SUCCESS && plain_epilogue(s.epilogue)) check_cublas(status, "heuristic");
  p->found = status == CUBLAS_STATUS_SUCCESS && found > 0;
  fallbacks_ += !p->found;
  p->algo = heuristic.algo;
  EMB_CHECK(p->found || !plain_epilogue(s.epilogue), "cublasLt: no algorithm for a ", s.m, "x", s.n, "x", s.k,
            " GEMM");
  return *plans_.emplace(key, std::move(p)).first->second;
}

bool Blas::gemm(const GemmShape& s, const GemmOperands& ops, cudaStream_t stream) const {
  const Plan& p = plan(s, ops);
  if (!p.found) return false;
  // The descriptor keeps the pointers of the call that built it; this call's go in (host-side
  // attribute writes, read by cublasLtMatmul when it enqueues).
  if (ops.bias) set_matmul_attribute(p.descs.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, ops.bias, "bias pointer");
  if (ops.aux) set_matmul_attribute(p.descs.op, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, ops.aux, "aux pointer");
  const float alpha = 1.0f;
  check_cublas(cublasLtMatmul(handle_, p.descs.op, &alpha, ops.A, p.descs.a, ops.B, p.descs.b, &ops.beta, ops.D,
                              p.descs.d, ops.D, p.descs.d, &p.algo, workspace(stream), workspace_bytes_, stream),
               "matmul");
  return true;
}

MatmulDescs::~MatmulDescs() {
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(op);
}

void run_matmul(const Blas& blas, MatmulDescs& g, const void* A, const void* B, float beta, void* D, int64_t m,
                int64_t n, int64_t k, cudaStream_t stream) {
  set_preferences(g, blas.workspace_bytes(), A, B, D);
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check_cublas(cublasLtMatmulAlgoGetHeuristic(blas.handle(), g.op, g.a, g.b, g.d, g.d, g.pref, 1, &heuristic, &found),
               "heuristic");
  EMB_CHECK(found > 0, "cublasLt: no algorithm for a ", m, "x", n, "x", k, " GEMM");
  const float alpha = 1.0f;
  check_cublas(cublasLtMatmul(blas.handle(), g.op, &alpha, A, g.a, B, g.b, &beta, D, g.d, D, g.d, &heuristic.algo,
                              blas.workspace(stream), blas.workspace_bytes(), stream),
               "matmul");
}

}  // namespace emb::cuda
