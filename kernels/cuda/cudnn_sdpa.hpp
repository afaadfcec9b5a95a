// cuDNN 9's fused scaled-dot-product attention forward, the reference the attention benchmark
// measures our kernels against on the same GPU (bench_kernels.cu; not used by the model).
// Built through cuDNN's C backend graph API (cudnn_graph.h: no cudnn_frontend headers here) as
// the graph cudnn_frontend's SDPA node lowers to for cuDNN < 9.21, which cuDNN's runtime fusion
// engines recognise: S = Q·Kᵀ (fp32), S·scale, optionally the causal mask (GEN_INDEX row and
// column, CMP_GE, BINARY_SELECT with the lowest float), softmax as MAX, SUB, EXP, ADD
// reduction, DIV with the stats (max + log Σ) written out, then O = P·V with P in bf16.
// Layout: Q, K, V, O bf16 [B, S, H, D] (each sample padded to S), stats fp32 [B, H, S].
// Header-only and included only by the benchmark, which links libcudnn; never built under the
// emulation (there is no cuDNN stand-in). NEVER RUN: written without a GPU.
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

class CudnnSdpa {
 public:
  // B samples of S tokens, H heads of D; causal: query i attends keys j ≤ i of its sample.
  CudnnSdpa(int64_t B, int64_t S, int64_t H, int64_t D, bool causal) {
    check_cudnn(cudnnCreate(&handle_), "cudnnCreate");
    build(B, S, H, D, causal);
  }
  ~CudnnSdpa() {
    cudaFree(workspace_);
    descriptors_.clear();
    plan_.reset();
    cudnnDestroy(handle_);
  }
  CudnnSdpa(const CudnnSdpa&) = delete;
  CudnnSdpa& operator=(const CudnnSdpa&) = delete;

  void forward(const void* q, const void* k, const void* v, void* out, float* stats, cudaStream_t stream) {
    check_cudnn(cudnnSetStream(handle_, stream), "set stream");
    const int64_t uids[] = {kQ, kK, kV, kO, kStats, kScale, kLowest};
    void* pointers[] = {const_cast<void*>(q), const_cast<void*>(k), const_cast<void*>(v), out, stats, &scale_,
                        &lowest_};
    const int64_t count = causal_ ? 7 : 6;
    CudnnDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids, count)
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers, count)
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace_);
    check_cudnn(pack.finalize(), "variant pack");
    check_cudnn(cudnnBackendExecute(handle_, plan_->get(), pack.get()), "execute");
  }

 private:
  enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kScale, kLowest, kFirstVirtual = 100 };

  const CudnnDescriptor& tensor(int64_t uid, cudnnDataType_t type, std::vector<int64_t> dims,
                                std::vector<int64_t> strides, bool is_virtual, bool by_value = false) {
    auto t = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t alignment = 16;
    t->set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
        .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), int64_t(dims.size()))
        .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), int64_t(strides.size()))
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
    if (by_value) t->set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
    check_cudnn(t->finalize(), "tensor");
    descriptors_.push_back(std::move(t));
    return *descriptors_.back();
  }

  // A virtual fp32 (or `type`) tensor of the scores' shape, or of the per-row shape.
  const CudnnDescriptor& scores(cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(next_virtual_++, type, {B_, H_, S_, S_}, {H_ * S_ * S_, S_ * S_, S_, 1}, true);
  }
  const CudnnDescriptor& per_row(int64_t uid, bool is_virtual) {
    return tensor(uid, CUDNN_DATA_FLOAT, {B_, H_, S_, 1}, {H_ * S_, S_, 1, 1}, is_virtual);
  }

  void operation(std::unique_ptr<CudnnDescriptor> op, const char* what) {
    check_cudnn(op->finalize(), what);
    ops_.push_back(op->get());
    descriptors_.push_back(std::move(op));
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
    descriptors_.push_back(std::move(desc));
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
    descriptors_.push_back(std::move(desc));
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
    descriptors_.push_back(std::move(desc));
    operation(std::move(op), "reduction");
  }

  void build(int64_t B, int64_t S, int64_t H, int64_t D, bool causal) {
    B_ = B, S_ = S, H_ = H, causal_ = causal;
    scale_ = 1.0f / std::sqrt(float(D));
    const std::vector<int64_t> bshd = {S * H * D, D, H * D, 1};
    const auto& q = tensor(kQ, CUDNN_DATA_BFLOAT16, {B, H, S, D}, bshd, false);
    // Kᵀ as a view of K [B, S, H, D]: dims [B, H, D, S].
    const auto& kt = tensor(kK, CUDNN_DATA_BFLOAT16, {B, H, D, S}, {S * H * D, D, 1, H * D}, false);
    const auto& v = tensor(kV, CUDNN_DATA_BFLOAT16, {B, H, S, D}, bshd, false);
    const auto& o = tensor(kO, CUDNN_DATA_BFLOAT16, {B, H, S, D}, bshd, false);
    const auto& scale = tensor(kScale, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
    const auto& s = scores();
    matmul(q, kt, s);
    const CudnnDescriptor* last = &scores();
    pointwise(CUDNN_POINTWISE_MUL, s, &scale, *last);
    if (causal) {
      const auto& row = scores(CUDNN_DATA_INT32);
      const auto& col = scores(CUDNN_DATA_INT32);
      const auto& keep = scores(CUDNN_DATA_BOOLEAN);
      const auto& lowest = tensor(kLowest, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, false, true);
      const auto& masked = scores();
      pointwise(CUDNN_POINTWISE_GEN_INDEX, *last, nullptr, row, nullptr, 2);
      pointwise(CUDNN_POINTWISE_GEN_INDEX, *last, nullptr, col, nullptr, 3);
      pointwise(CUDNN_POINTWISE_CMP_GE, row, &col, keep, nullptr, -1, CUDNN_DATA_BOOLEAN);
      pointwise(CUDNN_POINTWISE_BINARY_SELECT, *last, &lowest, masked, &keep);
      last = &masked;
    }
    const auto& max = per_row(next_virtual_++, true);
    const auto& shifted = scores();
    const auto& e = scores();
    const auto& sum = per_row(next_virtual_++, true);
    const auto& log_sum = per_row(next_virtual_++, true);
    const auto& stats = per_row(kStats, false);
    const auto& p = scores(CUDNN_DATA_BFLOAT16);  // bmm2's A operand in the I/O type
    reduction(CUDNN_REDUCE_TENSOR_MAX, *last, max);
    pointwise(CUDNN_POINTWISE_SUB, *last, &max, shifted);
    pointwise(CUDNN_POINTWISE_EXP, shifted, nullptr, e);
    reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
    pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, log_sum);
    pointwise(CUDNN_POINTWISE_ADD, max, &log_sum, stats);
    pointwise(CUDNN_POINTWISE_DIV, e, &sum, p);
    matmul(p, v, o);

    CudnnDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops_.data(), int64_t(ops_.size()));
    check_cudnn(graph.finalize(), "operation graph");
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
    // The first configuration cuDNN can build a plan for.
    for (int64_t i = 0; i < returned && !plan_; ++i) {
      auto plan = std::make_unique<CudnnDescriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle_)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, *configs[size_t(i)]);
      if (plan->finalize() == CUDNN_STATUS_SUCCESS) plan_ = std::move(plan);
    }
    EMB_CHECK(plan_ != nullptr, "cuDNN: no engine runs this SDPA graph (", returned, " configurations tried)");
    int64_t bytes = 0, n = 0;
    check_cudnn(cudnnBackendGetAttribute(plan_->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                         &n, &bytes),
                "workspace size");
    check_cuda(cudaMalloc(&workspace_, size_t(std::max<int64_t>(bytes, 1))), "cuDNN workspace");
  }

  cudnnHandle_t handle_ = nullptr;
  int64_t B_ = 0, S_ = 0, H_ = 0;
  bool causal_ = false;
  float scale_ = 1.0f, lowest_ = std::numeric_limits<float>::lowest();
  int64_t next_virtual_ = kFirstVirtual;
  std::vector<std::unique_ptr<CudnnDescriptor>> descriptors_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::unique_ptr<CudnnDescriptor> plan_;
  void* workspace_ = nullptr;
};

}  // namespace emb::cuda
