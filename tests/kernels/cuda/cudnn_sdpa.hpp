// cuDNN 9's fused scaled-dot-product attention, forward and backward: the reference the attention
// benchmark measures our kernels against on the same GPU (bench_kernels.cu; not used by the model).
// Built through cuDNN's C backend graph API (cudnn_graph.h: no cudnn_frontend headers here) as the
// graphs cudnn_frontend's SDPA nodes lower to for cuDNN < 9.21 (scaled_dot_product_flash_attention.h,
// no dropout, bias, ALiBi or padding), which cuDNN's runtime fusion engines recognise:
//   forward:  S = Q·Kᵀ (fp32), S·scale, optionally the causal mask (GEN_INDEX row and column,
//             CMP_GE, BINARY_SELECT with the lowest float), softmax as MAX, SUB, EXP, ADD
//             reduction, DIV with the stats (max + log Σ) written out, then O = P·V, P in bf16;
//   backward: D = Σ_d dO·O (times 1: the dropout scale's place), S as in the forward, P =
//             exp(S − stats), dV = Pᵀ·dO (Pᵀ a bf16 reshape), dP = dO·Vᵀ (times 1: the dropout
//             mask's place), dS = (dP − D)·P·scale, dK = dSᵀ·Q, dQ = dS·K; dQ either straight out
//             (deterministic: cuDNN's dP-workspace kernels) or accumulated in an fp32 F16x16-
//             reordered buffer zeroed before each call and copied out (IDENTITY), cuDNN 9's
//             default and fastest.
// Layout: Q, K, V, O, dO, dQ, dK, dV bf16 [B, S, H, D] (each sample padded to S), stats fp32
// [B, H, S]. The graphs are finalised operation by operation without a handle, so their shapes
// and attributes are checked on any machine (tests/kernels/test_cudnn_sdpa.cpp); a plan needs a
// GPU. Header-only and included only by the benchmark and that test, which link libcudnn; never
// built under the emulation (there is no cuDNN stand-in). NEVER RUN on a GPU: written without one.
#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"

namespace emb::cuda {

inline void check_cudnn(cudnnStatus_t status, const char* what) {
  EMB_CHECK(status == CUDNN_STATUS_SUCCESS, "cuDNN: ", what, ": ", cudnnGetErrorString(status));
}

// One backend descriptor, destroyed with its owner.
class CudnnDescriptor {
 public:
  explicit CudnnDescriptor(cudnnBackendDescriptorType_t type) {
    check_cudnn(cudnnBackendCreateDescriptor(type, &d_), "create descriptor");
  }
  ~CudnnDescriptor() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  cudnnBackendDescriptor_t get() const { return d_; }
  template <class V>
  CudnnDescriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, const V* values,
                       int64_t count = 1) {
    check_cudnn(cudnnBackendSetAttribute(d_, name, type, count, values), "set attribute");
    return *this;
  }
  CudnnDescriptor& set(cudnnBackendAttributeName_t name, const CudnnDescriptor& other) {
    const cudnnBackendDescriptor_t o = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &o);
  }
  cudnnStatus_t finalize() { return cudnnBackendFinalize(d_); }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

// An operation graph: its tensors and operations, each finalised as it is added (no handle, no
// GPU), then an execution plan on a handle and its workspace.
class CudnnGraph {
 public:
  CudnnGraph() = default;
  CudnnGraph(const CudnnGraph&) = delete;
  CudnnGraph& operator=(const CudnnGraph&) = delete;
  ~CudnnGraph() { cudaFree(workspace_); }

  // A tensor the caller binds (uid), or, virtual, one the graph keeps inside (next free uid).
  // by_value: a host scalar; f16x16: the reordered layout of cuDNN's fp32 dQ accumulator.
  const CudnnDescriptor& tensor(int64_t uid, cudnnDataType_t type, std::vector<int64_t> dims,
                                std::vector<int64_t> strides, bool by_value = false, bool f16x16 = false) {
    bound_uids_.push_back(uid);
    return make_tensor(uid, type, dims, strides, false, by_value, f16x16);
  }
  const CudnnDescriptor& virtual_tensor(cudnnDataType_t type, std::vector<int64_t> dims, std::vector<int64_t> strides) {
    return make_tensor(next_virtual_++, type, dims, strides, true, false, false);
  }

  void matmul(const CudnnDescriptor& a, const CudnnDescriptor& b, const CudnnDescriptor& c) {
    auto desc = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc->set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
    check_cudnn(desc->finalize(), "matmul descriptor");
    auto op = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
        .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
        .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
        .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, *desc);
    keep(std::move(desc));
    operation(std::move(op), "matmul");
  }

  // y = mode(x[, b][, t]); axis ≥ 0 for GEN_INDEX; compute: the math precision.
  void pointwise(cudnnPointwiseMode_t mode, const CudnnDescriptor& x, const CudnnDescriptor* b,
                 const CudnnDescriptor& y, const CudnnDescriptor* t = nullptr, int64_t axis = -1,
                 cudnnDataType_t compute = CUDNN_DATA_FLOAT) {
    auto desc = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    desc->set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
        .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &compute);
    if (axis >= 0) desc->set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &axis);
    check_cudnn(desc->finalize(), "pointwise descriptor");
    auto op = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, *desc)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    if (b) op->set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
    if (t) op->set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
    keep(std::move(desc));
    operation(std::move(op), "pointwise");
  }

  void reduction(cudnnReduceTensorOp_t mode, const CudnnDescriptor& x, const CudnnDescriptor& y) {
    auto desc = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
    desc->set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode)
        .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute);
    check_cudnn(desc->finalize(), "reduction descriptor");
    auto op = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
        .set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, *desc);
    keep(std::move(desc));
    operation(std::move(op), "reduction");
  }

  // y: x's elements under y's dimensions and strides (a transposed view, or a cast to y's type).
  void reshape(const CudnnDescriptor& x, const CudnnDescriptor& y) {
    auto op = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
    op->set(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x).set(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y);
    operation(std::move(op), "reshape");
  }

  size_t operation_count() const { return ops_.size(); }
  // The uids of the tensors a variant pack binds, in the order they were added.
  const std::vector<int64_t>& bound_uids() const { return bound_uids_; }

  // The operation graph on `handle`, and the first of heuristic A's configurations cuDNN can
  // build a plan for; `what` names the graph in errors.
  void plan(cudnnHandle_t handle, const char* what) {
    handle_ = handle;
    CudnnDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops_.data(), int64_t(ops_.size()));
    check_cudnn(graph.finalize(), what);
    CudnnDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph).set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode);
    check_cudnn(heuristics.finalize(), "engine heuristics");
    int64_t count = 0;
    check_cudnn(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
                "engine count");
    std::vector<std::unique_ptr<CudnnDescriptor>> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < count; ++i) {
      configs.push_back(std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
      raw.push_back(configs.back()->get());
    }
    int64_t returned = 0;
    if (count > 0)
      check_cudnn(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned, raw.data()),
                  "engine configs");
    for (int64_t i = 0; i < returned && !plan_; ++i) {
      auto plan = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[size_t(i)]);
      if (plan->finalize() == CUDNN_STATUS_SUCCESS) plan_ = std::move(plan);
    }
    EMB_CHECK(plan_ != nullptr, "cuDNN: no engine runs the ", what, " graph (", returned, " configurations tried)");
    int64_t bytes = 0, n = 0;
    check_cudnn(cudnnBackendGetAttribute(plan_->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                         &n, &bytes),
                "workspace size");
    check_cuda(cudaMalloc(&workspace_, size_t(std::max<int64_t>(bytes, 1))), "cuDNN workspace");
  }

  // Runs the plan with pointers[i] bound to bound_uids()[i].
  void execute(const std::vector<void*>& pointers, cudaStream_t stream) {
    EMB_CHECK(plan_ != nullptr && pointers.size() == bound_uids_.size(), "cuDNN: ", pointers.size(),
              " pointers for a graph of ", bound_uids_.size(), " bound tensors, or no plan");
    check_cudnn(cudnnSetStream(handle_, stream), "set stream");
    CudnnDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, bound_uids_.data(), int64_t(bound_uids_.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(), int64_t(pointers.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace_);
    check_cudnn(pack.finalize(), "variant pack");
    check_cudnn(cudnnBackendExecute(handle_, plan_->get(), pack.get()), "execute");
  }

 private:
  static constexpr int64_t kFirstVirtual = 1000;

  const CudnnDescriptor& make_tensor(int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& dims,
                                     const std::vector<int64_t>& strides, bool is_virtual, bool by_value, bool f16x16) {
    auto t = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t alignment = 16;
    t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), int64_t(dims.size()))
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), int64_t(strides.size()))
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
    if (by_value) t->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
    if (f16x16) {
      const cudnnBackendTensorReordering_t reordering = CUDNN_TENSOR_REORDERING_F16x16;
      t->set(CUDNN_ATTR_TENSOR_REORDERING_MODE, CUDNN_TYPE_TENSOR_REORDERING_MODE, &reordering);
    }
    check_cudnn(t->finalize(), "tensor");
    const CudnnDescriptor& made = *t;
    keep(std::move(t));
    return made;
  }
  void keep(std::unique_ptr<CudnnDescriptor> d) { descriptors_.push_back(std::move(d)); }
  void operation(std::unique_ptr<CudnnDescriptor> op, const char* what) {
    check_cudnn(op->finalize(), what);
    ops_.push_back(op->get());
    keep(std::move(op));
  }

  cudnnHandle_t handle_ = nullptr;
  int64_t next_virtual_ = kFirstVirtual;
  std::vector<std::unique_ptr<CudnnDescriptor>> descriptors_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::vector<int64_t> bound_uids_;
  std::unique_ptr<CudnnDescriptor> plan_;
  void* workspace_ = nullptr;
};

// B samples of S tokens, H heads of D; causal: query i attends keys j ≤ i of its sample;
// deterministic: dQ written directly instead of accumulated (backward only).
struct SdpaShape {
  int64_t B = 1, S = 1, H = 1, D = 64;
  bool causal = false, deterministic = false;
};

// The tensors the SDPA graphs bind: the caller's buffers, then the host scalars.
enum SdpaUid : int64_t { kSdpaQ = 1, kSdpaK, kSdpaV, kSdpaO, kSdpaStats, kSdpaDO, kSdpaDQ, kSdpaDK, kSdpaDV,
                         kSdpaDQAccum, kSdpaScale, kSdpaOne, kSdpaLowest };

namespace sdpa_graph {

// The shapes both graphs share: [B, H, S, D] views of the [B, S, H, D] buffers, their transposes,
// the scores [B, H, S, S] and the per-row statistics [B, H, S, 1].
struct Views {
  explicit Views(const SdpaShape& s) : x(s) {}
  const SdpaShape x;
  std::vector<int64_t> bhsd() const { return {x.B, x.H, x.S, x.D}; }
  std::vector<int64_t> bshd_strides() const { return {x.S * x.H * x.D, x.D, x.H * x.D, 1}; }
  std::vector<int64_t> transposed() const { return {x.B, x.H, x.D, x.S}; }  // Kᵀ, Vᵀ as views of K, V
  std::vector<int64_t> transposed_strides() const { return {x.S * x.H * x.D, x.D, 1, x.H * x.D}; }
  std::vector<int64_t> scores() const { return {x.B, x.H, x.S, x.S}; }
  std::vector<int64_t> scores_strides() const { return {x.H * x.S * x.S, x.S * x.S, x.S, 1}; }
  std::vector<int64_t> scores_transposed_strides() const { return {x.H * x.S * x.S, x.S * x.S, 1, x.S}; }
  std::vector<int64_t> per_row() const { return {x.B, x.H, x.S, 1}; }
  std::vector<int64_t> per_row_strides() const { return {x.H * x.S, x.S, 1, 1}; }
};

inline const CudnnDescriptor& host_scalar(CudnnGraph& g, int64_t uid) {
  return g.tensor(uid, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, true);
}

inline const CudnnDescriptor& virtual_scores(CudnnGraph& g, const Views& v, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
  return g.virtual_tensor(type, v.scores(), v.scores_strides());
}

// S·scale after S = Q·Kᵀ, with the causal mask when the shape asks for it: both graphs start so.
inline const CudnnDescriptor& scaled_scores(CudnnGraph& g, const Views& v, const CudnnDescriptor& q,
                                            const CudnnDescriptor& kt, const CudnnDescriptor& scale) {
  const auto& s = virtual_scores(g, v);
  g.matmul(q, kt, s);
  const auto& scaled = virtual_scores(g, v);
  g.pointwise(CUDNN_POINTWISE_MUL, s, &scale, scaled);
  if (!v.x.causal) return scaled;
  const auto& row = virtual_scores(g, v, CUDNN_DATA_INT32);
  const auto& col = virtual_scores(g, v, CUDNN_DATA_INT32);
  const auto& keep = virtual_scores(g, v, CUDNN_DATA_BOOLEAN);
  const auto& lowest = host_scalar(g, kSdpaLowest);
  const auto& masked = virtual_scores(g, v);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, row, nullptr, 2, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, col, nullptr, 3, CUDNN_DATA_INT32);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep, nullptr, -1, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scaled, &lowest, masked, &keep);
  return masked;
}

// Binds Q, Kᵀ, V, O, stats, scale[, lowest].
inline void build_forward(CudnnGraph& g, const SdpaShape& shape) {
  const Views v(shape);
  const auto& q = g.tensor(kSdpaQ, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& kt = g.tensor(kSdpaK, CUDNN_DATA_BFLOAT16, v.transposed(), v.transposed_strides());
  const auto& val = g.tensor(kSdpaV, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& o = g.tensor(kSdpaO, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& stats = g.tensor(kSdpaStats, CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& scale = host_scalar(g, kSdpaScale);
  const auto& s = scaled_scores(g, v, q, kt, scale);
  const auto& max = g.virtual_tensor(CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& shifted = virtual_scores(g, v);
  const auto& e = virtual_scores(g, v);
  const auto& sum = g.virtual_tensor(CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& log_sum = g.virtual_tensor(CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& p = virtual_scores(g, v, CUDNN_DATA_BFLOAT16);  // P·V's A operand in the I/O type
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, s, max);
  g.pointwise(CUDNN_POINTWISE_SUB, s, &max, shifted);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, e);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, stats);
  g.pointwise(CUDNN_POINTWISE_DIV, e, &sum, p);
  g.matmul(p, val, o);
}

// Binds Q, Kᵀ, Vᵀ, O, stats, dO, dQ, dK, dV[, dQ accumulator], scale, one[, lowest].
inline void build_backward(CudnnGraph& g, const SdpaShape& shape) {
  const Views v(shape);
  const int64_t B = shape.B, H = shape.H, S = shape.S, D = shape.D;
  const auto& q = g.tensor(kSdpaQ, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& kt = g.tensor(kSdpaK, CUDNN_DATA_BFLOAT16, v.transposed(), v.transposed_strides());
  const auto& vt = g.tensor(kSdpaV, CUDNN_DATA_BFLOAT16, v.transposed(), v.transposed_strides());
  const auto& o = g.tensor(kSdpaO, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& stats = g.tensor(kSdpaStats, CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& d_o = g.tensor(kSdpaDO, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& dq = g.tensor(kSdpaDQ, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& dk = g.tensor(kSdpaDK, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const auto& dv = g.tensor(kSdpaDV, CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  const CudnnDescriptor* dq_accum =
      shape.deterministic
          ? nullptr
          : &g.tensor(kSdpaDQAccum, CUDNN_DATA_FLOAT, v.bhsd(), {H * S * D, S * D, D, 1}, false, true);
  const auto& scale = host_scalar(g, kSdpaScale);
  const auto& one = host_scalar(g, kSdpaOne);

  // D = Σ_d dO·O per row.
  const auto& d_o_times_o = g.virtual_tensor(CUDNN_DATA_FLOAT, v.bhsd(), {H * S * D, S * D, H * D, 1});
  const auto& row_dot = g.virtual_tensor(CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  const auto& softmax_sum = g.virtual_tensor(CUDNN_DATA_FLOAT, v.per_row(), v.per_row_strides());
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, &o, d_o_times_o);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_times_o, row_dot);
  g.pointwise(CUDNN_POINTWISE_MUL, row_dot, &one, softmax_sum);

  // P = exp(S − stats); dV = Pᵀ·dO.
  const auto& s = scaled_scores(g, v, q, kt, scale);
  const auto& shifted = virtual_scores(g, v);
  const auto& p = virtual_scores(g, v);
  const auto& pt = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {B, H, S, S}, v.scores_transposed_strides());
  g.pointwise(CUDNN_POINTWISE_SUB, s, &stats, shifted);
  g.pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, p);
  g.reshape(p, pt);
  g.matmul(pt, d_o, dv);

  // dS = (dP − D)·P·scale, dP = dO·Vᵀ; dK = dSᵀ·Q.
  const auto& dp = virtual_scores(g, v);
  const auto& dp_kept = virtual_scores(g, v);
  const auto& dp_centred = virtual_scores(g, v);
  const auto& ds_unscaled = virtual_scores(g, v);
  const auto& ds = virtual_scores(g, v);
  const auto& dst = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {B, H, S, S}, v.scores_transposed_strides());
  g.matmul(d_o, vt, dp);
  g.pointwise(CUDNN_POINTWISE_MUL, dp, &one, dp_kept);
  g.pointwise(CUDNN_POINTWISE_SUB, dp_kept, &softmax_sum, dp_centred);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, &p, ds_unscaled);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, &scale, ds);
  g.reshape(ds, dst);
  g.matmul(dst, q, dk);

  // dQ = dS·K, K as the transpose of the bound Kᵀ.
  const auto& k = g.virtual_tensor(CUDNN_DATA_BFLOAT16, v.bhsd(), v.bshd_strides());
  g.reshape(kt, k);
  if (dq_accum) {
    g.matmul(ds, k, *dq_accum);
    g.pointwise(CUDNN_POINTWISE_IDENTITY, *dq_accum, nullptr, dq);
  } else {
    g.matmul(ds, k, dq);
  }
}

}  // namespace sdpa_graph

// A cuDNN handle, created on the current device.
class CudnnHandle {
 public:
  CudnnHandle() { check_cudnn(cudnnCreate(&h_), "cudnnCreate"); }
  ~CudnnHandle() { cudnnDestroy(h_); }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return h_; }

 private:
  cudnnHandle_t h_ = nullptr;
};

// The forward and backward plans of one shape on their own handle.
class CudnnSdpa {
 public:
  explicit CudnnSdpa(const SdpaShape& shape) : shape_(shape), scale_(1.0f / std::sqrt(float(shape.D))) {
    sdpa_graph::build_forward(forward_, shape);
    sdpa_graph::build_backward(backward_, shape);
    forward_.plan(handle_.get(), "SDPA forward");
    backward_.plan(handle_.get(), "SDPA backward");
    if (!shape.deterministic) check_cuda(cudaMalloc(&dq_accum_, dq_accum_bytes()), "cuDNN dQ accumulator");
  }
  ~CudnnSdpa() { cudaFree(dq_accum_); }
  CudnnSdpa(const CudnnSdpa&) = delete;
  CudnnSdpa& operator=(const CudnnSdpa&) = delete;

  void forward(const void* q, const void* k, const void* v, void* out, float* stats, cudaStream_t stream) {
    forward_.execute(bind(forward_, {q, k, v, out, stats, nullptr, nullptr, nullptr, nullptr}), stream);
  }

  // stats: this class's forward's.
  void backward(const void* q, const void* k, const void* v, const void* out, const float* stats, const void* dout,
                void* dq, void* dk, void* dv, cudaStream_t stream) {
    if (dq_accum_) check_cuda(cudaMemsetAsync(dq_accum_, 0, dq_accum_bytes(), stream), "zero the dQ accumulator");
    backward_.execute(bind(backward_, {q, k, v, out, stats, dout, dq, dk, dv}), stream);
  }

 private:
  size_t dq_accum_bytes() const { return size_t(shape_.B * shape_.H * shape_.S * shape_.D) * sizeof(float); }

  // The pointers of a graph's bound uids: buffers in SdpaUid order (kSdpaQ .. kSdpaDV), then ours.
  std::vector<void*> bind(const CudnnGraph& g, const std::vector<const void*>& buffers) const {
    std::vector<void*> pointers;
    for (int64_t uid : g.bound_uids()) {
      const void* p = uid <= kSdpaDV         ? buffers[size_t(uid - kSdpaQ)]
                      : uid == kSdpaDQAccum ? dq_accum_
                      : uid == kSdpaScale   ? static_cast<const void*>(&scale_)
                      : uid == kSdpaOne     ? static_cast<const void*>(&one_)
                                            : static_cast<const void*>(&lowest_);
      pointers.push_back(const_cast<void*>(p));
    }
    return pointers;
  }

  const SdpaShape shape_;
  float scale_, one_ = 1.0f, lowest_ = std::numeric_limits<float>::lowest();
  CudnnHandle handle_;  // before the graphs: their plans are destroyed first
  CudnnGraph forward_, backward_;
  void* dq_accum_ = nullptr;
};

}  // namespace emb::cuda
