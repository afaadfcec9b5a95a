#include "kernels/cuda/cuda_ops.hpp"

#include <algorithm>
#include <type_traits>

#include "core/activity.hpp"
#include "core/error.hpp"
#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/adamw.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/attention_mma.hpp"
#include "kernels/cuda/attention_wgmma.hpp"
#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_input_slots.hpp"
#include "kernels/cuda/embedding.hpp"
#include "kernels/cuda/flow_loss.hpp"
#include "kernels/cuda/fp8_linear.hpp"
#include "kernels/cuda/graph_cache.hpp"
#include "kernels/cuda/linear.hpp"
#include "kernels/cuda/norm_modulate.hpp"
#include "kernels/cuda/residual.hpp"
#include "kernels/cuda/rope.hpp"
#include "kernels/cuda/rows.hpp"
#include "kernels/cuda/op_entry.hpp"

namespace emb {

namespace {

cuda::Activation kernel_activation(Activation act) {
  switch (act) {
    case Activation::relu: return cuda::Activation::relu;
    case Activation::silu: return cuda::Activation::silu;
    case Activation::gelu_tanh: return cuda::Activation::gelu_tanh;
    case Activation::gelu_erf: return cuda::Activation::gelu_erf;
    case Activation::none: break;
  }
  EMB_ASSERT(false);
  return cuda::Activation::relu;
}

// Where a linear's GEMM writes: y without an activation, else pre (activation_epilogue reads it).
template <class T>
T* gemm_output(Activation act, const View& pre, const View& y) {
  return ptr<T>(act == Activation::none ? y : pre);
}
// y = act(pre) after a GEMM that had no epilogue for it (nothing without an activation).
template <class T>
void activation_epilogue(Activation act, const View& pre, const View& y, cudaStream_t stream) {
  if (act != Activation::none)
    cuda::activation_forward(kernel_activation(act), ptr<const T>(pre), ptr<T>(y), y.size(), stream);
}

int64_t row_count(const View& src, const RowIndex& src_rows, const RowIndex& dst_rows) {
  return !src_rows.absent() ? src_rows.n : !dst_rows.absent() ? dst_rows.n : src.rows;
}

}  // namespace

void* DeviceMemory::allocate(size_t bytes, const char* what) {
  void* p = nullptr;
  if (bytes == 0) return p;
  const cudaError_t status = cudaMalloc(&p, bytes);  // 256-byte aligned
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear it, so the next CUDA call does not report it again
    auto amount = [](size_t n) { return n >= 1000000 ? str((n + 999999) / 1000000, " MB") : str((n + 999) / 1000, " kB"); };
    // Where the run was (the phase and step, core/activity.hpp) and what it was allocating.
    const std::string when = current_activity();
    const char* label = current_activity_label();
    throw Error(str("CUDA out of memory", when.empty() ? "" : " in " + when, ": ", label ? label : what, " asked for ",
                    amount(bytes), " with ", amount(in_use_),
                    " held by embtrain on this GPU; lower data.tokens_per_mb, set "
                    "model.recompute = full or train.shard = full, or use more GPUs (embtrain DECK --plan "
                    "estimates the memory per GPU)"));
  }
  check_cuda(status, what);
  sizes_[p] = bytes;
  in_use_ += bytes;
  peak_ = std::max(peak_, in_use_);
  return p;
}

void DeviceMemory::release(void* p) {
  if (!p) return;
  const auto it = sizes_.find(p);
  EMB_ASSERT(it != sizes_.end());
  in_use_ -= it->second;
  sizes_.erase(it);
  check_cuda(cudaFree(p), "cudaFree");
}

DeviceScratch::~DeviceScratch() {
  try {
    for (void* p : retired_) memory_.release(p);
    memory_.release(data_);
  } catch (const std::exception&) {  // a destructor cannot throw; the run already failed
  }
}

void* DeviceScratch::get(size_t bytes, cudaStream_t stream) {
  if (bytes <= bytes_) return data_;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "scratch: capture status");
  if (capture == cudaStreamCaptureStatusNone) {
    check_cuda(cudaStreamSynchronize(stream), "scratch: wait for the stream");
    for (void* p : retired_) memory_.release(p);
    retired_.clear();
    memory_.release(data_);
  } else if (data_) {
    retired_.push_back(data_);
  }
  data_ = nullptr;
  bytes_ = 0;
  data_ = memory_.allocate(bytes, "CudaOps scratch");
  bytes_ = bytes;
  return data_;
}

CudaOps::CudaOps(int device, bool deterministic)
    : dq_accumulation_(deterministic ? cuda::DqAccumulation::deterministic : cuda::DqAccumulation::atomic) {
  check_cuda(cudaSetDevice(device), "CudaOps: cudaSetDevice");
  check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "CudaOps: stream");
  cuda::Blas::Allocator device_memory{[this](size_t bytes, const char* what) { return memory_.allocate(bytes, what); },
                                      [this](void* p) { memory_.release(p); }};
  blas_ = std::make_unique<cuda::Blas>(size_t{32} << 20, std::move(device_memory));
  blas_->workspace(stream_);  // allocated now, never during a graph capture
  keyless_row_ = static_cast<unsigned long long*>(memory_.allocate(sizeof *keyless_row_, "CudaOps: keyless row"));
  check_cuda(cudaMemsetAsync(keyless_row_, 0xff, sizeof *keyless_row_, stream_), "CudaOps: keyless row");
  clock_ = std::make_unique<cuda::EventClock>(stream_);
  wgmma_attention_ = cuda::attention_wgmma_selected(device);
}

CudaOps::~CudaOps() {
  cudaStreamSynchronize(stream_);  // errors cannot be thrown here; the run already ended
  graphs_.reset();
  clock_.reset();
  cudaFree(keyless_row_);
  blas_.reset();
  cudaStreamDestroy(stream_);
}

void* CudaOps::allocate(size_t bytes) { return memory_.allocate(bytes, "CudaOps::allocate"); }
void CudaOps::deallocate(void* p) { memory_.release(p); }
void CudaOps::upload(void* dst, const void* src, size_t bytes) {
  // From pageable memory the copy is staged before the call returns: src may be reused.
  if (bytes) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "CudaOps::upload");
}
std::unique_ptr<InputSlots> CudaOps::make_input_slots() { return std::make_unique<CudaInputSlots>(stream_, memory_); }
bool CudaOps::begin_graph() {
  if (!graphs_) graphs_ = std::make_unique<cuda::GraphCache>(stream_);
  graphs_->begin();
  return true;
}
void CudaOps::end_graph(const std::vector<int64_t>& key) { graphs_->end(key); }
void CudaOps::abandon_graph() { graphs_->abandon(); }
size_t CudaOps::blas_workspace_bytes() const { return blas_->workspace_bytes(); }
GraphStats CudaOps::graph_stats() const { return graphs_ ? graphs_->stats() : GraphStats{}; }
void CudaOps::download(void* dst, const void* src, size_t bytes) {
  if (bytes) check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "CudaOps::download");
  synchronize();
}
void CudaOps::synchronize() { check_cuda(cudaStreamSynchronize(stream_), "CudaOps::synchronize"); }

void* CudaOps::zeroed_gradient(int64_t n, size_t elem) {
  void* g = gradient_.get(size_t(n) * elem, stream_);
  check_cuda(cudaMemsetAsync(g, 0, size_t(n) * elem, stream_), "CudaOps: zero a gradient");
  return g;
}

// ---- elementwise and rows ----

void CudaOps::zero(const View& y) {
  OpCheck c("zero", {{"y", &y}});
  c.well_formed();
  if (y.absent()) return;
  dispatch(storage(c, {&y}), [&](auto t) {
    using T = decltype(t);
    cuda::zero_rows(ptr<T>(y), y.ld, y.rows, y.cols, stream_);
  });
}

void CudaOps::copy(const View& x, const View& y) {
  const OpCheck c = check_elementwise("copy", {{"x", &x}, {"y", &y}});
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::copy_rows(ptr<const T>(x), x.ld, nullptr, ptr<T>(y), y.ld, nullptr, x.rows, x.cols, stream_);
  });
}

void CudaOps::convert(const View& x, const View& y) {
  check_convert(x, y);
  if (x.dtype == y.dtype)
    check_cuda(cudaMemcpyAsync(y.data, x.data, size_t(x.size()) * dtype_size(x.dtype), cudaMemcpyDeviceToDevice, stream_),
               "CudaOps::convert");
  else if (x.dtype == DType::f32)
    cuda::convert(ptr<const float>(x), ptr<bf16_t>(y), x.size(), stream_);
  else
    cuda::convert(ptr<const bf16_t>(x), ptr<float>(y), x.size(), stream_);
}

void CudaOps::add(const View& a, const View& b, const View& y) {
  const OpCheck c = check_elementwise("add", {{"a", &a}, {"b", &b}, {"y", &y}});
  dispatch(storage(c, {&a, &b, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::add(ptr<const T>(a), a.ld, ptr<const T>(b), b.ld, ptr<T>(y), y.ld, y.rows, y.cols, stream_);
  });
}

void CudaOps::add_bias(const View& y, const View& b) {
  OpCheck c("add_bias", {{"y", &y}, {"b", &b}});
  c.well_formed();
  c.expect(!y.absent() && !b.absent() && b.size() == y.cols && b.contiguous(), "b must hold y cols elements");
  dispatch(storage(c, {&y, &b}), [&](auto t) {
    using T = decltype(t);
    cuda::add_bias(ptr<T>(y), y.ld, ptr<const T>(b), y.rows, y.cols, stream_);
  });
}

void CudaOps::copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  const OpCheck c = check_rows("copy_rows", src, src_rows, dst, dst_rows);
  dispatch(storage(c, {&src, &dst}), [&](auto t) {
    using T = decltype(t);
    cuda::copy_rows(ptr<const T>(src), src.ld, src_rows.data, ptr<T>(dst), dst.ld, dst_rows.data,
                    row_count(src, src_rows, dst_rows), src.cols, stream_);
  });
}

// dst may be wider than src (residual_storage: fp32 beside bf16): the blocks' bf16 gradients of
// the conditioning and the context summed into the fp32 ones outside the blocks.
void CudaOps::add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  const OpCheck c = check_rows("add_rows", src, src_rows, dst, dst_rows);
  const DType data = storage(c, {&src});
  dispatch_mixed(data, residual_storage(c, data, {&dst}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::add_rows(ptr<const T>(src), src.ld, src_rows.data, ptr<R>(dst), dst.ld, dst_rows.data,
                   row_count(src, src_rows, dst_rows), src.cols, stream_);
  });
}

void CudaOps::column_sums(const View& x, const View& out) {
  OpCheck c("column_sums", {{"x", &x}, {"out", &out}});
  c.well_formed();
  c.expect(!x.absent() && !out.absent() && out.size() == x.cols && out.contiguous(), "out must be [1, x cols]");
  const DType data = storage(c, {&x});
  dispatch_mixed(data, data, gradient_storage(c, data, {&out}), [&](auto t, auto, auto g) {
    using T = decltype(t);
    using G = decltype(g);
    cuda::column_sum(x.rows, int(x.cols), ptr<G>(out), cuda::MatrixEntry<T>{ptr<const T>(x), x.ld},
                     blas_->column_sum_scratch(stream_), stream_);
  });
}

// ---- activations ----

void CudaOps::activation_forward(Activation act, const View& x, const View& y) {
  const OpCheck c = check_elementwise("activation_forward", {{"x", &x}, {"y", &y}});
  c.expect(act != Activation::none, "no activation given");
  contiguous(c, {{"x", &x}, {"y", &y}});
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::activation_forward(kernel_activation(act), ptr<const T>(x), ptr<T>(y), x.size(), stream_);
  });
}

void CudaOps::activation_backward(Activation act, const View& x, const View& dy, const View& dx) {
  const OpCheck c = check_elementwise("activation_backward", {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  c.expect(act != Activation::none, "no activation given");
  contiguous(c, {{"x", &x}, {"dy", &dy}, {"dx", &dx}});
  dispatch(storage(c, {&x, &dy, &dx}), [&](auto t) {
    using T = decltype(t);
    cuda::activation_backward(kernel_activation(act), ptr<const T>(x), ptr<const T>(dy), ptr<T>(dx), x.size(),
                              stream_);
  });
}

// ---- linear layers ----

void CudaOps::linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                             const View& y) {
  const OpCheck c = check_linear("linear_forward", x, W, b, act, pre, y, 0);
  contiguous(c, {{"x", &x}, {"W", &W}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  dispatch(storage(c, {&x, &W, &b, &pre, &y}), [&](auto t) {
    using T = decltype(t);
    if (act == Activation::gelu_tanh) {  // one GEMM with cuBLASLt's GELU epilogue (linear.hpp)
      cuda::linear_gelu_forward(*blas_, ptr<const T>(x), ptr<const T>(W), ptr<const T>(b), ptr<T>(pre), ptr<T>(y),
                                x.rows, int(x.cols), int(W.cols), stream_);
      return;
    }
    cuda::linear_forward(*blas_, ptr<const T>(x), ptr<const T>(W), ptr<const T>(b), gemm_output<T>(act, pre, y),
                         x.rows, int(x.cols), int(W.cols), stream_);
    activation_epilogue<T>(act, pre, y, stream_);
  });
}

template <class T>
const T* CudaOps::activation_input_gradient(Activation act, const View& pre, const View& dy) {
  if (act == Activation::none) return ptr<const T>(dy);
  T* dpre = static_cast<T*>(zeroed_gradient(dy.size(), sizeof(T)));
  cuda::activation_backward(kernel_activation(act), ptr<const T>(pre), ptr<const T>(dy), dpre, dy.size(), stream_);
  return dpre;
}

// What every linear backward shares: contiguous operands, one storage type for the data and
// one for the weight and bias gradients (fp32 beside bf16 data), and dy taken through the
// activation's derivative. gemms(T{}, G{}, g) then runs the family's GEMMs on g.
template <class Gemms>
void CudaOps::linear_backward_frame(const OpCheck& c, const View& x, const View& W, Activation act, const View& pre,
                                    const View& dy, const View& dx, const View& dW, const View& db, Gemms&& gemms) {
  contiguous(c, {{"x", &x}, {"W", &W}, {"pre", &pre}, {"dy", &dy}, {"dx", &dx}, {"dW", &dW}, {"db", &db}});
  const DType data = storage(c, {&x, &W, &pre, &dy, &dx});
  dispatch_mixed(data, data, gradient_storage(c, data, {&dW, &db}), [&](auto t, auto, auto gt) {
    using T = decltype(t);
    gemms(t, gt, activation_input_gradient<T>(act, pre, dy));
  });
}

void CudaOps::linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                              const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_backward("linear_backward", x, W, act, pre, dy, dx, dW, db, 0);
  linear_backward_frame(c, x, W, act, pre, dy, dx, dW, db, [&](auto t, auto gt, auto g) {
    using T = decltype(t);
    using G = decltype(gt);
    cuda::linear_backward(*blas_, ptr<const T>(x), ptr<const T>(W), g, ptr<T>(dx), ptr<G>(dW), ptr<G>(db), x.rows,
                          int(x.cols), int(W.cols), stream_);
  });
}

// The FP8 recipe (fp8_linear.hpp); the activation composed as in linear_forward/backward.
void CudaOps::fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                 const View& y) {
  const OpCheck c = check_linear("fp8_linear_forward", x, W, b, act, pre, y, 0);
  check_fp8_shape(c, W);
  contiguous(c, {{"x", &x}, {"W", &W}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  dispatch(storage(c, {&x, &W, &b, &pre, &y}), [&](auto t) {
    using T = decltype(t);
    void* scratch = workspace_.get(cuda::fp8_linear_scratch_bytes(x.rows, x.cols, W.cols, sizeof(T)), stream_);
    cuda::fp8_linear_forward(*blas_, ptr<const T>(x), ptr<const T>(W), ptr<const T>(b), gemm_output<T>(act, pre, y),
                             x.rows, x.cols, W.cols, scratch, stream_);
    activation_epilogue<T>(act, pre, y, stream_);
  });
}

void CudaOps::fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                  const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_backward("fp8_linear_backward", x, W, act, pre, dy, dx, dW, db, 0);
  check_fp8_shape(c, W);
  linear_backward_frame(c, x, W, act, pre, dy, dx, dW, db, [&](auto t, auto gt, auto dpre) {
    using T = decltype(t);
    using G = decltype(gt);
    void* scratch = workspace_.get(cuda::fp8_linear_scratch_bytes(x.rows, x.cols, W.cols, sizeof(T)), stream_);
    cuda::fp8_linear_backward(*blas_, ptr<const T>(x), ptr<const T>(W), dpre, ptr<T>(dx), ptr<G>(dW), ptr<G>(db),
                              x.rows, x.cols, W.cols, scratch, stream_);
  });
}

namespace {
void check_emb_rows(const OpCheck& c, const EmbRows& emb, const View& x) {
  c.expect(emb.n_emb > 0 && emb.ids && emb.n == x.rows, str("the embodiment ids must cover x's rows (", emb.n, ")"));
  c.expect(emb.perm && emb.offsets, "CUDA needs the embodiment grouping (EmbRows perm and offsets)");
}
}  // namespace

void CudaOps::linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                 const View& pre, const View& y) {
  const OpCheck c = check_linear("linear_emb_forward", x, W, b, act, pre, y, emb.n_emb);
  check_emb_rows(c, emb, x);
  contiguous(c, {{"x", &x}, {"W", &W}, {"b", &b}, {"pre", &pre}, {"y", &y}});
  dispatch(storage(c, {&x, &W, &b, &pre, &y}), [&](auto t) {
    using T = decltype(t);
    void* scratch =
        workspace_.get(cuda::linear_emb_scratch_bytes(x.rows, int(x.cols), int(W.cols), sizeof(T)), stream_);
    cuda::linear_emb_forward(*blas_, ptr<const T>(x), ptr<const T>(W), ptr<const T>(b), emb.perm, emb.offsets,
                             gemm_output<T>(act, pre, y), x.rows, int(x.cols), int(W.cols), emb.n_emb, scratch,
                             stream_);
    activation_epilogue<T>(act, pre, y, stream_);
  });
}

void CudaOps::linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                                  const View& dy, const View& dx, const View& dW, const View& db) {
  const OpCheck c = check_linear_backward("linear_emb_backward", x, W, act, pre, dy, dx, dW, db, emb.n_emb);
  check_emb_rows(c, emb, x);
  linear_backward_frame(c, x, W, act, pre, dy, dx, dW, db, [&](auto t, auto gt, auto g) {
    using T = decltype(t);
    using G = decltype(gt);
    void* scratch =
        workspace_.get(cuda::linear_emb_scratch_bytes(x.rows, int(x.cols), int(W.cols), sizeof(T)), stream_);
    cuda::linear_emb_backward(*blas_, ptr<const T>(x), ptr<const T>(W), emb.perm, emb.offsets, g, ptr<T>(dx),
                              ptr<G>(dW), ptr<G>(db), x.rows, int(x.cols), int(W.cols), emb.n_emb, scratch, stream_);
  });
}

// ---- norms ----

void CudaOps::layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                                const View& rstd, float eps) {
  const OpCheck c = check_norm("layernorm_forward", x, weight, bias, y, mean, rstd);
  c.expect(!mean.absent(), "mean must be present");
  c.expect(eps > 0, str("eps must be positive, not ", eps));
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"weight", &weight}, {"bias", &bias}, {"y", &y}});
  const DType data = storage(c, {&weight, &bias, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::norm_modulate_forward(cuda::NormKind::layer, ptr<const R>(x), ptr<const T>(weight), ptr<const T>(bias),
                                static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), 0, ptr<T>(y), f(mean),
                                f(rstd), x.rows, int(x.cols), eps, stream_);
  });
}

void CudaOps::layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                 const View& dy, const View& dx, const View& dweight, const View& dbias) {
  const OpCheck c = check_norm("layernorm_backward", x, weight, dbias, dy, mean, rstd);
  c.expect(!mean.absent(), "mean must be present");
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  c.expect(dweight.absent() || dweight.size() == x.cols, "dweight must hold x cols elements");
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"weight", &weight}, {"dy", &dy}, {"dx", &dx}, {"dweight", &dweight}, {"dbias", &dbias}});
  const DType data = storage(c, {&weight, &dy});
  dispatch_mixed(data, residual_storage(c, data, {&x, &dx}), gradient_storage(c, data, {&dweight, &dbias}),
                 [&](auto t, auto r, auto g) {
                   using T = decltype(t);
                   using R = decltype(r);
                   using G = decltype(g);
                   cuda::norm_modulate_backward(cuda::NormKind::layer, ptr<const R>(x), ptr<const T>(weight),
                                                static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), 0,
                                                fp(mean), fp(rstd), ptr<const T>(dy), ptr<R>(dx), ptr<G>(dweight),
                                                ptr<G>(dbias), static_cast<T*>(nullptr), static_cast<T*>(nullptr),
                                                x.rows, int(x.cols), blas_->column_sum_scratch(stream_), stream_);
                 });
}

void CudaOps::rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) {
  const OpCheck c = check_norm("rmsnorm_forward", x, weight, View{}, y, View{}, rstd);
  fp32_views(c, {{"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"weight", &weight}, {"y", &y}});
  const DType data = storage(c, {&weight, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::norm_modulate_forward(cuda::NormKind::rms, ptr<const R>(x), ptr<const T>(weight),
                                static_cast<const T*>(nullptr), static_cast<const T*>(nullptr),
                                static_cast<const T*>(nullptr), 0, ptr<T>(y), nullptr, f(rstd), x.rows, int(x.cols),
                                kNormEps, stream_);
  });
}

void CudaOps::rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                               const View& dweight) {
  const OpCheck c = check_norm("rmsnorm_backward", x, weight, dweight, dy, View{}, rstd);
  c.expect(dx.absent() || (dx.rows == x.rows && dx.cols == x.cols), "dx must have x's shape");
  fp32_views(c, {{"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"weight", &weight}, {"dy", &dy}, {"dx", &dx}, {"dweight", &dweight}});
  const DType data = storage(c, {&weight, &dy});
  dispatch_mixed(data, residual_storage(c, data, {&x, &dx}), gradient_storage(c, data, {&dweight}),
                 [&](auto t, auto r, auto g) {
                   using T = decltype(t);
                   using R = decltype(r);
                   using G = decltype(g);
                   cuda::norm_modulate_backward(cuda::NormKind::rms, ptr<const R>(x), ptr<const T>(weight),
                                                static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), 0,
                                                nullptr, fp(rstd), ptr<const T>(dy), ptr<R>(dx), ptr<G>(dweight),
                                                static_cast<G*>(nullptr), static_cast<T*>(nullptr),
                                                static_cast<T*>(nullptr), x.rows, int(x.cols),
                                                blas_->column_sum_scratch(stream_), stream_);
                 });
}

namespace {
// Both norm_modulate forwards run the fused kernel (gate, r and x_in absent: the norm alone):
// normed = LN(x) (the backward's input) and y = normed·(1 + scale) + shift in one pass over x.
void launch_residual_norm_modulate(const OpCheck& c, const View& x, const View& gate, const View& r, const View& x_in,
                                   const View& scale, const View& shift, const View& normed, const View& y,
                                   const View& mean, const View& rstd, cudaStream_t stream) {
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"r", &r}, {"x_in", &x_in}, {"normed", &normed}, {"y", &y}});
  const DType data = storage(c, {&gate, &r, &scale, &shift, &normed, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x, &x_in}), data, [&](auto t, auto rt, auto) {
    using T = decltype(t);
    using R = decltype(rt);
    const T* none = nullptr;
    cuda::residual_norm_modulate_forward(cuda::NormKind::layer, ptr<R>(x), ptr<const T>(gate), gate.ld,
                                         ptr<const T>(r), ptr<R>(x_in), none, none, ptr<const T>(scale),
                                         ptr<const T>(shift), scale.ld, ptr<T>(normed), ptr<T>(y), f(mean), f(rstd),
                                         x.rows, int(x.cols), stream);
  });
}
}  // namespace

void CudaOps::norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                    const View& y, const View& mean, const View& rstd) {
  launch_residual_norm_modulate(check_norm_modulate_forward(x, scale, shift, normed, y, mean, rstd), x, View{},
                                View{}, View{}, scale, shift, normed, y, mean, rstd, stream_);
}

void CudaOps::residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                             const View& scale, const View& shift, const View& normed, const View& y,
                                             const View& mean, const View& rstd) {
  const OpCheck c = check_residual_norm_modulate_forward(x, gate, r, x_in, scale, shift, normed, y, mean, rstd);
  launch_residual_norm_modulate(c, x, gate, r, x_in, scale, shift, normed, y, mean, rstd, stream_);
}

void CudaOps::norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                     const View& rstd, const View& dy, const View& dx, const View& dscale,
                                     const View& dshift) {
  const OpCheck c = check_norm_modulate_backward(x, normed, scale, mean, rstd, dy, dx, dscale, dshift);
  fp32_views(c, {{"mean", &mean}, {"rstd", &rstd}});
  contiguous(c, {{"x", &x}, {"normed", &normed}, {"dy", &dy}, {"dx", &dx}});
  // The kernel recomputes LN(x) from x, mean and rstd; `normed` is checked but not read.
  const DType data = storage(c, {&normed, &scale, &dy, &dscale, &dshift});
  dispatch_mixed(data, residual_storage(c, data, {&x, &dx}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    const T* none = nullptr;
    cuda::norm_modulate_backward(cuda::NormKind::layer, ptr<const R>(x), none, none, ptr<const T>(scale), scale.ld,
                                 fp(mean), fp(rstd), ptr<const T>(dy), ptr<R>(dx), static_cast<T*>(nullptr),
                                 static_cast<T*>(nullptr), ptr<T>(dscale), ptr<T>(dshift), x.rows, int(x.cols),
                                 nullptr, stream_);
  });
}

void CudaOps::gated_residual_forward(const View& x, const View& gate, const View& y) {
  const OpCheck c = check_gated_residual_forward(x, gate, y);
  contiguous(c, {{"x", &x}, {"y", &y}});
  const DType data = storage(c, {&gate, &y});
  dispatch_mixed(data, residual_storage(c, data, {&x}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::gated_residual_forward(ptr<R>(x), ptr<const T>(gate), gate.ld, ptr<const T>(y), x.rows, int(x.cols),
                                 stream_);
  });
}

void CudaOps::gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                      const View& dgate) {
  OpCheck c("gated_residual_backward", {{"gate", &gate}, {"y", &y}, {"dx", &dx}, {"dy", &dy}, {"dgate", &dgate}});
  c.well_formed();
  c.expect(!y.absent() && !dx.absent(), "y and dx must be present");
  c.same_shape(y, dx, "y", "dx");
  c.expect(dy.absent() || (dy.rows == y.rows && dy.cols == y.cols), "dy must have y's shape");
  c.expect(gate.absent() || (gate.rows == y.rows && gate.cols == y.cols), "gate must have y's shape");
  c.expect(dgate.absent() || (!gate.absent() && dgate.rows == y.rows && dgate.cols == y.cols && dgate.ld == gate.ld),
           "dgate must have gate's shape and row stride");
  contiguous(c, {{"y", &y}, {"dx", &dx}, {"dy", &dy}});
  const DType data = storage(c, {&gate, &y, &dy, &dgate});
  dispatch_mixed(data, residual_storage(c, data, {&dx}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::gated_residual_backward(ptr<const T>(gate), gate.ld, ptr<const T>(y), ptr<const R>(dx), ptr<T>(dy),
                                  ptr<T>(dgate), y.rows, int(y.cols), stream_);
  });
}

// ---- attention, RoPE ----

namespace {
void check_head_dim(const OpCheck& c, const AttnConfig& cfg) {
  c.expect(cuda::attention_head_dim_built(cfg.head_dim),
           str("head_dim ", cfg.head_dim, " is not built on CUDA (", cuda::attention_head_dims_text(), ")"));
}
}  // namespace

// bf16 runs on tensor cores (attention_mma.hpp) when its views are 16-byte aligned, as cp.async
// needs, at the head dims those kernels are built for, forward and backward on the Hopper kernels
// (attention_wgmma.hpp) when the device is sm_90 (attention_wgmma_selected); fp32 (and other
// bf16) keeps the SIMT kernels (attention.hpp), the fp32 path that matches the CPU to 1e-5.
void CudaOps::attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                const AttnConfig& cfg, const AttnIndex& idx) {
  const OpCheck c = check_attention("attention_forward", q, k, v, out, lse, cfg, idx);
  check_head_dim(c, cfg);
  fp32_views(c, {{"lse", &lse}});
  contiguous(c, {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  dispatch(storage(c, {&q, &k, &v, &out}), [&](auto t) {
    using T = decltype(t);
    void* ws = workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_);
    if constexpr (std::is_same_v<T, bf16_t>)
      if (cuda::attention_mma_head_dim_built(cfg.head_dim) &&
          cuda::attention_mma_aligned({q.data, k.data, v.data, out.data}))
        return (wgmma_attention_ ? cuda::attention_wgmma_forward : cuda::attention_mma_forward)(
            ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<T>(out), f(lse), q.rows, k.rows, cfg.heads,
            cfg.head_dim, idx, ws, stream_, keyless_row_);
    cuda::attention_forward(ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<T>(out), f(lse), q.rows, k.rows,
                            cfg.heads, cfg.head_dim, idx, ws, stream_, keyless_row_);
  });
}

void CudaOps::check_deferred_errors() {
  unsigned long long recorded = cuda::kNoKeylessRow;
  download(&recorded, keyless_row_, sizeof recorded);
  if (recorded == cuda::kNoKeylessRow) return;
  check_cuda(cudaMemsetAsync(keyless_row_, 0xff, sizeof recorded, stream_), "CudaOps: reset the keyless row");
  throw Error(cuda::keyless_row_error(recorded));
}

void CudaOps::attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                 const View& dout, const View& dq, const View& dk, const View& dv,
                                 const AttnConfig& cfg, const AttnIndex& idx) {
  const OpCheck c = check_attention("attention_backward", q, k, v, out, lse, cfg, idx);
  OpCheck g("attention_backward", {{"q", &q}, {"k", &k}, {"dout", &dout}, {"dq", &dq}, {"dk", &dk}, {"dv", &dv}});
  g.well_formed();
  g.expect(!dout.absent() && !dq.absent() && !dk.absent() && !dv.absent(), "dout, dq, dk and dv must be present");
  g.same_shape(q, dout, "q", "dout"), g.same_shape(q, dq, "q", "dq");
  g.same_shape(k, dk, "k", "dk"), g.same_shape(k, dv, "k", "dv");
  check_head_dim(c, cfg);
  fp32_views(c, {{"lse", &lse}});
  contiguous(c, {{"q", &q}, {"k", &k}, {"v", &v}, {"out", &out}, {"lse", &lse}});
  contiguous(g, {{"dout", &dout}, {"dq", &dq}, {"dk", &dk}, {"dv", &dv}});
  const DType type = storage(c, {&q, &k, &v, &out});
  g.expect(dout.dtype == type && dq.dtype == type && dk.dtype == type && dv.dtype == type,
           "the data views must share one dtype (fp32 or bf16) on CUDA");
  dispatch(type, [&](auto t) {
    using T = decltype(t);
    if constexpr (std::is_same_v<T, bf16_t>)
      if (cuda::attention_mma_head_dim_built(cfg.head_dim) &&
          cuda::attention_mma_aligned({q.data, k.data, v.data, out.data, dout.data, dq.data, dk.data, dv.data})) {
        if (wgmma_attention_)
          return cuda::attention_wgmma_backward(
              ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse), ptr<const T>(dout),
              ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads, cfg.head_dim, idx,
              workspace_.get(cuda::attention_wgmma_workspace_bytes(q.rows, k.rows, cfg.heads, cfg.head_dim,
                                                                   dq_accumulation_),
                             stream_),
              stream_, dq_accumulation_);
        return cuda::attention_mma_backward(
            ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse), ptr<const T>(dout),
            ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads, cfg.head_dim, idx,
            workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_), stream_);
      }
    void* ws = workspace_.get(cuda::attention_workspace_bytes(q.rows, k.rows, cfg.heads), stream_);
    cuda::attention_backward(ptr<const T>(q), ptr<const T>(k), ptr<const T>(v), ptr<const T>(out), fp(lse),
                             ptr<const T>(dout), ptr<T>(dq), ptr<T>(dk), ptr<T>(dv), q.rows, k.rows, cfg.heads,
                             cfg.head_dim, idx, ws, stream_);
  });
}

namespace {
OpCheck check_rope(const char* op, const View& x, const int32_t* pos, const RopeConfig& cfg) {
  OpCheck c(op, {{"x", &x}});
  c.well_formed();
  c.expect(!x.absent() && pos, "x and pos must be present");
  c.expect(cfg.heads > 0 && cfg.head_dim > 0 && cfg.head_dim % 2 == 0 && x.cols == int64_t(cfg.heads) * cfg.head_dim,
           str("x must be [T, heads·head_dim] with heads ", cfg.heads, " and an even head_dim ", cfg.head_dim));
  c.expect(cfg.mode != RopeMode::d3 || cfg.head_dim / 2 >= 3, str("3d RoPE needs head_dim >= 6, not ", cfg.head_dim));
  contiguous(c, {{"x", &x}});
  return c;
}
}  // namespace

void CudaOps::rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) {
  const OpCheck c = check_rope("rope_forward", x, pos, cfg);
  dispatch(storage(c, {&x}), [&](auto t) {
    using T = decltype(t);
    cuda::rope_forward(ptr<T>(x), pos, x.rows, cfg.heads, cfg.head_dim, cfg.mode, stream_);
  });
}

void CudaOps::rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) {
  const OpCheck c = check_rope("rope_backward", dx, pos, cfg);
  dispatch(storage(c, {&dx}), [&](auto t) {
    using T = decltype(t);
    cuda::rope_backward(ptr<T>(dx), pos, dx.rows, cfg.heads, cfg.head_dim, cfg.mode, stream_);
  });
}

// ---- embeddings, flow matching, losses ----

void CudaOps::sinus_embedding(const View& t, const View& out) {
  OpCheck c("sinus_embedding", {{"t", &t}, {"out", &out}});
  c.well_formed();
  c.expect(!t.absent() && !out.absent() && t.size() == out.rows, "t must hold one timestep per row of out");
  c.expect(out.cols > 0 && out.cols % 2 == 0, "out's width must be positive and even");
  fp32_views(c, {{"t", &t}});
  contiguous(c, {{"t", &t}, {"out", &out}});
  dispatch(storage(c, {&out}), [&](auto tag) {
    using T = decltype(tag);
    cuda::sinus_embedding(fp(t), ptr<T>(out), out.rows, int(out.cols), stream_);
  });
}

void CudaOps::flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                               const RowIndex& t_rows, const View& y) {
  OpCheck c("flow_interpolate", {{"u", &u}, {"w", &w}, {"t", &t}, {"y", &y}});
  c.well_formed();
  c.expect(!u.absent() && !w.absent() && !t.absent() && !y.absent(), "every view must be present");
  c.same_shape(u, w, "u", "w");
  c.expect(u.cols == y.cols, "u and y differ in columns");
  c.expect(src_rows.absent() ? u.rows >= y.rows : src_rows.n == y.rows, "src_rows must give one row of u per row of y");
  c.expect(t.cols == 1 && (t_rows.absent() ? t.rows >= y.rows : t_rows.n == y.rows),
           "t must be [M, 1] with t_rows per row of y");
  fp32_views(c, {{"t", &t}});
  contiguous(c, {{"u", &u}, {"w", &w}, {"t", &t}, {"y", &y}});
  dispatch(storage(c, {&u, &w, &y}), [&](auto tag) {
    using T = decltype(tag);
    cuda::flow_interpolate(ptr<const T>(u), ptr<const T>(w), src_rows.data, fp(t), t_rows.data, ptr<T>(y), y.rows,
                           y.cols, stream_);
  });
}

void CudaOps::mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                       const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                       const View& dpred, double* sum) {
  OpCheck c("mse_loss", {{"pred", &pred}, {"plus", &plus}, {"minus", &minus}, {"mask", &mask}, {"dpred", &dpred}});
  c.well_formed();
  c.expect(!pred.absent() && !plus.absent() && !minus.absent() && sum, "pred, plus, minus and sum must be present");
  c.same_shape(plus, minus, "plus", "minus");
  c.expect(mask.absent() || (mask.rows == plus.rows && mask.cols == plus.cols), "mask must have the targets' shape");
  c.expect(dpred.absent() || (dpred.rows == pred.rows && dpred.cols == pred.cols), "dpred must have pred's shape");
  c.expect(target_rows.absent() ? plus.rows >= pred.rows : target_rows.n == pred.rows,
           "target_rows must give one target row per row of pred");
  c.expect(target_cols.absent() ? plus.cols == pred.cols : target_cols.n == pred.cols,
           "target_cols must give one target column per column of pred");
  c.expect(pred.rows == 0 || cfg.denominator > 0, str("the denominator is ", cfg.denominator));
  contiguous(c, {{"pred", &pred}, {"plus", &plus}, {"minus", &minus}, {"mask", &mask}, {"dpred", &dpred}});
  dispatch(storage(c, {&pred, &plus, &minus, &mask, &dpred}), [&](auto tag) {
    using T = decltype(tag);
    cuda::mse_loss(ptr<const T>(pred), ptr<const T>(plus), ptr<const T>(minus), ptr<const T>(mask), target_rows.data,
                   target_cols.data, plus.cols, cfg.denominator, cfg.weight, ptr<T>(dpred), sum, pred.rows,
                   pred.cols, stream_);
  });
}

// ---- optimizer ----

void CudaOps::sum_squares(const View& g, double* out) {
  OpCheck c("sum_squares", {{"g", &g}});
  c.well_formed();
  c.expect(out != nullptr, "out must be present");
  contiguous(c, {{"g", &g}});
  dispatch(storage(c, {&g}), [&](auto tag) {
    using G = decltype(tag);
    cuda::AdamWTensor<G> tensor;
    tensor.grad = ptr<const G>(g);
    tensor.n = g.size();
    auto* ws = static_cast<double*>(workspace_.get(cuda::kSumSquaresWorkspace * sizeof(double), stream_));
    cuda::global_sum_squares(&tensor, 1, ws, stream_);
    check_cuda(cudaMemcpyAsync(out, ws, sizeof(double), cudaMemcpyDeviceToDevice, stream_), "sum_squares");
  });
}

void CudaOps::adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                         int64_t step, float grad_scale, float decay_mult) {
  const OpCheck c = check_elementwise("adamw_step", {{"param", &param}, {"grad", &grad}, {"m", &m}, {"v", &v}});
  fp32_views(c, {{"param", &param}, {"m", &m}, {"v", &v}});
  contiguous(c, {{"param", &param}, {"grad", &grad}, {"m", &m}, {"v", &v}});
  dispatch(storage(c, {&grad}), [&](auto tag) {
    using G = decltype(tag);
    cuda::AdamWTensor<G> tensor;
    tensor.param = f(param);
    tensor.grad = ptr<const G>(grad);
    tensor.m = f(m);
    tensor.v = f(v);
    tensor.n = param.size();
    tensor.decay_mult = decay_mult;
    cuda::adamw_step(&tensor, 1, cfg, step, grad_scale, 0.0f, nullptr, stream_);  // no clipping here
  });
}

}  // namespace emb
