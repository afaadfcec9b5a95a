// CudaOps: the Ops interface (kernels/ops.hpp) on one GPU. Each call runs the shared shape rules
// (kernels/ops_check.hpp), checks the dtypes this backend takes, unpacks the views into
// pointers and launches the kernels of this folder on the Ops' own stream (cuBLASLt through
// blas.cu for the linears); nothing synchronises except download(), synchronize() and the
// attention forward's check for rows without an allowed key (attention.hpp).
//
// Dtypes: the data views of one call share one storage type, fp32 or bf16 (math fp32); parameter
// gradients (linear dW and db, norm weight and bias gradients, column sums' out) may be fp32
// beside bf16 data, as bf16 activations accumulate into fp32 parameter gradients; per-row
// statistics (mean, rstd, lse), timesteps and AdamW's parameters and moments are fp32 (AdamW's
// gradient may be bf16). Contiguity: the kernels that take no row stride need ld = cols (the
// linears, norms, attention, RoPE, activations, losses); the row ops, column sums and the
// modulation chunks (scale, shift, gate) take strides. Head dims 48, 64, 128.
// Where Ops fuses and a kernel does not (silu/relu after a linear, activation backwards, the
// per-embodiment linears' activations), CudaOps composes kernels as CpuOps does; the
// composition is the CPU reference.
// This class keeps what is not an op (cuda_ops.cu: device memory, the stream, graphs, scratch,
// deferred errors); each op's entry is defined in the file of its kernels (op_entry.hpp;
// kernels/README.md lists them).
#pragma once
#include <cuda_runtime_api.h>

#include <memory>
#include <unordered_map>
#include <vector>

#include "kernels/cuda/attention_wgmma.hpp"
#include "kernels/cuda/event_clock.hpp"
#include "kernels/ops.hpp"

namespace emb::cuda {
class Blas;
class GraphCache;
}

namespace emb {

class OpCheck;  // kernels/ops_check.hpp

// The device bytes one CudaOps holds (its allocations, scratch and the cuBLASLt workspace), and
// cudaMalloc through it: running out is one line saying what was asked, what is held and what
// to change.
class DeviceMemory {
 public:
  void* allocate(size_t bytes, const char* what);
  void release(void* p);
  size_t peak() const { return peak_; }

 private:
  std::unordered_map<void*, size_t> sizes_;
  size_t in_use_ = 0, peak_ = 0;
};

// Device memory that grows on demand and is reused by the ops of one stream.
class DeviceScratch {
 public:
  explicit DeviceScratch(DeviceMemory& memory) : memory_(memory) {}
  ~DeviceScratch();
  DeviceScratch(const DeviceScratch&) = delete;
  DeviceScratch& operator=(const DeviceScratch&) = delete;
  // At least `bytes` (uninitialised). Growing waits for `stream`, whose ops may use the old
  // buffer, before freeing it; while the stream is capturing a graph it cannot wait, so the old
  // buffer is kept until the next growth outside a capture.
  void* get(size_t bytes, cudaStream_t stream);

 private:
  DeviceMemory& memory_;
  void* data_ = nullptr;
  size_t bytes_ = 0;
  std::vector<void*> retired_;  // outgrown during a capture, which may still read them
};

class CudaOps final : public Ops {
 public:
  // Runs on CUDA device `device` (cudaSetDevice) with a stream of its own (non-blocking).
  // deterministic (run.deterministic): the Hopper attention backward forms dQ without atomics
  // (attention_wgmma.hpp, DqAccumulation), so that a run repeats bit for bit.
  explicit CudaOps(int device = 0, bool deterministic = true);
  ~CudaOps() override;
  CudaOps(const CudaOps&) = delete;
  CudaOps& operator=(const CudaOps&) = delete;

  const char* name() const override { return "cuda"; }

  void* allocate(size_t bytes) override;
  void deallocate(void* p) override;
  void upload(void* dst, const void* src, size_t bytes) override;
  std::unique_ptr<InputSlots> make_input_slots() override;
  bool begin_graph() override;
  void end_graph(const std::vector<int64_t>& key) override;
  void abandon_graph() override;
  GraphStats graph_stats() const override;
  void download(void* dst, const void* src, size_t bytes) override;
  void synchronize() override;
  void* stream() const override { return stream_; }
  bool host_memory() const override { return false; }
  bool mixed_storage() const override { return true; }
  size_t device_peak_bytes() const override { return memory_.peak(); }
  size_t blas_workspace_bytes() const override;
  void check_deferred_errors() override;
  DeviceClock* device_clock() override { return clock_.get(); }

  void zero(const View& y) override;
  void copy(const View& x, const View& y) override;
  void convert(const View& x, const View& y) override;
  void add(const View& a, const View& b, const View& y) override;
  void add_bias(const View& y, const View& b) override;
  void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override;
  void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) override;
  void column_sums(const View& x, const View& out) override;

  void activation_forward(Activation act, const View& x, const View& y) override;
  void activation_backward(Activation act, const View& x, const View& dy, const View& dx) override;

  void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                      const View& y) override;
  void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                       const View& dx, const View& dW, const View& db) override;
  void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                          const View& y) override;
  void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                           const View& dx, const View& dW, const View& db) override;
  void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                          const View& pre, const View& y) override;
  void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act, const View& pre,
                           const View& dy, const View& dx, const View& dW, const View& db) override;

  void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y, const View& mean,
                         const View& rstd, float eps) override;
  void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd, const View& dy,
                          const View& dx, const View& dweight, const View& dbias) override;
  void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) override;
  void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy, const View& dx,
                        const View& dweight) override;
  void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                             const View& y, const View& mean, const View& rstd, float eps) override;
  void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                              const View& rstd, const View& dy, const View& dx, const View& dscale,
                              const View& dshift) override;
  void gated_residual_forward(const View& x, const View& gate, const View& y) override;
  void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                      const View& scale, const View& shift, const View& normed, const View& y,
                                      const View& mean, const View& rstd, float eps) override;
  void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                               const View& dgate) override;

  void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                         const AttnConfig& cfg, const AttnIndex& idx) override;
  void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                          const View& dout, const View& dq, const View& dk, const View& dv, const AttnConfig& cfg,
                          const AttnIndex& idx) override;
  void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) override;
  void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) override;

  void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) override;
  void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) override;
  void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                 const AttnBias& bias_kind, const View& out, const View& lse,
                                 const EncoderAttnConfig& cfg, const AttnSegments& segments) override;
  void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) override;
  void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) override;
  void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) override;
  void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy,
                                 const View& dgate, const View& dup) override;
  void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                      const ConvConfig& cfg) override;
  void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) override;
  void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) override;

  void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) override;
  void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                        const RowIndex& t_rows, const View& y) override;
  void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg, const View& dpred,
                double* sum) override;

  void sum_squares(const View& g, double* out) override;
  void adamw_step(const View& param, const View& grad, const View& m, const View& v, const AdamWConfig& cfg,
                  int64_t step, float grad_scale, float decay_mult) override;

 private:
  // A zeroed gradient of a fused epilogue's input (linear's dpre), n elements of `elem` bytes.
  void* zeroed_gradient(int64_t n, size_t elem);
  // The gradient at a linear's activation input: dy itself without an activation, else
  // dy·act'(pre) in zeroed_gradient's scratch.
  template <class T>
  const T* activation_input_gradient(Activation act, const View& pre, const View& dy);
  // What every linear forward and backward shares (op_entry.hpp): contiguity, storage dispatch,
  // the activation after the forward's GEMM and before the backward's. gemm(o) and gemms(o) run
  // the family's GEMMs on the typed operands o (cuda::entry::LinearOperands, LinearGradients).
  template <class Gemm>
  void linear_forward_frame(const OpCheck& c, const View& x, const View& W, const View& b, Activation act,
                            const View& pre, const View& y, Gemm&& gemm);
  template <class Gemms>
  void linear_backward_frame(const OpCheck& c, const View& x, const View& W, Activation act, const View& pre,
                             const View& dy, const View& dx, const View& dW, const View& db, Gemms&& gemms);

  cudaStream_t stream_ = nullptr;
  DeviceMemory memory_;
  std::unique_ptr<cuda::Blas> blas_;
  DeviceScratch workspace_{memory_};  // attention summaries, per-embodiment gathers, Σg² partials, FP8 operands
  DeviceScratch gradient_{memory_};   // zeroed_gradient()
  // bf16 attention forwards and backwards on the Hopper kernels (attention_wgmma.hpp), decided at
  // construction.
  bool wgmma_attention_ = false;
  cuda::DqAccumulation dq_accumulation_;  // of their backward
  // The first query row without an allowed key since the last check_deferred_errors (attention.hpp).
  unsigned long long* keyless_row_ = nullptr;
  std::unique_ptr<cuda::EventClock> clock_;
  std::unique_ptr<cuda::GraphCache> graphs_;  // made at the first begin_graph()
};

}  // namespace emb
