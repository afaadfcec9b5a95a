// The backend interface (BACKENDS.md "The ops layer"): every computation the model does on
// tensor data, at the level of the fused operations the fastest backend wants. The model holds
// an `Ops&` and never sees a kernel; CpuOps (kernels/cpu/cpu_ops.hpp) composes the reference
// kernels behind these calls, CudaOps launches kernels/cuda on its stream.
//
// What crosses the interface:
//   - View: a row-major matrix (pointer, dtype, rows, cols, leading dimension) in the memory of
//     this backend (device memory for CUDA). A view with a null pointer is "absent": an optional
//     bias, or a gradient that is not needed.
//   - RowIndex and AttnIndex: int32 index arrays already in this backend's memory (the model
//     uploads its packed index once per micro-batch, through upload(), timed as h2d).
//   - plain config structs and scalars.
// There is no stream argument: each Ops owns its stream (queue) and runs every call on it in
// order; stream() exposes it so Comm can order its collectives after the compute.
//
// Conventions: forward outputs are written; backward outputs accumulate (+=) into gradients,
// like every kernel (kernels/cpu/README.md); the caller zeroes them. Every op checks its views
// and throws emb::Error with one line naming the op and the shapes on a mismatch, and on a
// dtype or head dim the backend does not support.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device_clock.hpp"
#include "kernels/op_types.hpp"

namespace emb {

// A row-major [rows, cols] matrix with row stride ld (elements, ld ≥ cols) in backend memory.
struct View {
  void* data = nullptr;
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0, ld = 0;

  bool absent() const { return data == nullptr; }
  bool contiguous() const { return ld == cols; }
  int64_t size() const { return rows * cols; }
  float* f32() const { return static_cast<float*>(data); }
  // Rows [begin, begin + n) / columns [begin, begin + n), same ld (a chunk of a [T, 6D] tensor).
  View rows_range(int64_t begin, int64_t n) const;
  View cols_range(int64_t begin, int64_t n) const;
  // The same elements as one row [1, rows·cols] (contiguous views only: a [6, D] table as a bias).
  View flat() const;
  // "[rows, cols]" ("[rows, cols; ld L]" when strided, "absent" when null), for error messages.
  std::string shape() const;
};

// An fp32 view of `rows` × `cols` at p (ld 0 = contiguous). Also for inputs: the view does not
// carry constness, the op's documentation says what it reads and writes.
View view(const float* p, int64_t rows, int64_t cols, int64_t ld = 0);

// int32 row indices in backend memory: data[0 .. n). An absent index (null data) is the
// identity over the rows the op processes.
struct RowIndex {
  const int32_t* data = nullptr;
  int64_t n = 0;
  bool absent() const { return data == nullptr; }
};

// Per-embodiment rows (linear_emb_*): ids [N] in backend memory, E slots; a backend that runs
// one GEMM per embodiment also reads the grouping (group_rows_by_embodiment, made on the host
// when the batch is packed): perm [N] in backend memory, offsets [E + 1] in host memory.
struct EmbRows {
  const int32_t* ids = nullptr;
  int64_t n = 0;
  int n_emb = 0;
  const int32_t* perm = nullptr;
  const int64_t* offsets = nullptr;
};

struct AttnConfig {
  int heads = 0, head_dim = 0;  // q, k, v, out are [T, heads·head_dim], lse [Tq, heads]
};

struct RopeConfig {
  RopeMode mode = RopeMode::none;
  int heads = 0, head_dim = 0;
  // int32 [T] in backend memory, values of RopeMode: each token's own mode instead of `mode`
  // (absent: every token takes `mode`).
  const int32_t* token_modes = nullptr;
};

// The flow-matching MSE of MODEL.md over rows r of pred [N, C]:
//   target[r, c] = plus[t, col(c)] − minus[t, col(c)],  t = target_rows[r], col = target_cols
//   sum  = Σ w_r·m·(pred − target)²      (m = mask[t, col(c)], or 1 when mask is absent;
//                                         w_r = row_weight[r], or 1 when it is absent)
//   dpred[r, c] = 2·weight·w_r·m·(pred − target) / denominator   (written, when dpred is present)
// The sum is accumulated in double in row order and written to *sum (backend memory).
class InputSlots;

// What a backend's CUDA graphs did (kernels/cuda/graph_cache.hpp): spans captured (a
// micro-batch is one per stretch between unit hooks, src/model/graph_segments.hpp; empty ones
// are not counted), replays (a key's graph updated from the capture and launched), graphs
// cached and their nodes, nodes launched by replays, and the measured host cost of one kernel
// launch.
struct GraphStats {
  int64_t captures = 0, replays = 0, graphs = 0, nodes = 0, replayed_nodes = 0;
  double launch_seconds = 0;
};

// ---- the frozen encoders' ops (src/encoders; issue 33: Eagle 2.5, issue 34: CLIP, umT5, Wan VAE) ----

// HF's rotate-half rotary embedding (Qwen3, Llama): in each head, pair (x_i, x_{i+hd/2}) for
// i < hd/2 rotates by angle_i = float32(pos · inv_freq_i), inv_freq_i = 1 / θ^(2i/hd) in float32,
// cos and sin of the float32 angle: the float32 tables transformers builds, so that features
// equal upstream's at long positions too.
struct RopeHalfConfig {
  int heads = 0, head_dim = 0;
  float theta = 10000.0f;
};

struct LossConfig {
  double denominator = 1.0;
  double weight = 1.0;
  View row_weight;  // [N, 1] fp32, one weight per row of pred (DreamZero's per-timestep loss weights)
  LossConfig(double denominator_ = 1.0, double weight_ = 1.0, View row_weight_ = {})
      : denominator(denominator_), weight(weight_), row_weight(row_weight_) {}
};

class Ops {
 public:
  virtual ~Ops() = default;
  virtual const char* name() const = 0;

  // ---- memory and ordering ----
  // Backend memory, 64-byte aligned, uninitialised.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* p) = 0;
  // host → backend (h2d), ordered on the stream; the host buffer may be reused on return.
  virtual void upload(void* dst, const void* src, size_t bytes) = 0;
  // The slots the model's micro-batches are uploaded through (kernels/input_slots.hpp): on a
  // GPU from pinned memory on a copy stream; by default staged host memory and upload().
  virtual std::unique_ptr<InputSlots> make_input_slots();
  // CUDA graphs: begin_graph() starts capturing the ops issued from now on and returns true
  // (false: this backend has no graphs and runs them at once, as the CPU); end_graph() runs
  // what was captured, as a replay of the graph kept under `key` (what decides the captured
  // node sequence) when it matches. Between the two nothing may wait for the stream
  // (download, synchronize) or order another stream against it. abandon_graph() ends the
  // capture of a micro-batch that threw, running none of it, so the error's own line is what
  // the run reports.
  virtual bool begin_graph() { return false; }
  virtual void end_graph(const std::vector<int64_t>& key) { (void)key; }
  virtual void abandon_graph() {}
  virtual GraphStats graph_stats() const { return {}; }
  // backend → host; returns when the bytes are on the host (waits for earlier ops).
  virtual void download(void* dst, const void* src, size_t bytes) = 0;
  // Returns when every op issued so far is done.
  virtual void synchronize() = 0;
  // The stream/queue the ops run on (a cudaStream_t for CUDA; null on the CPU, whose ops
  // return when done).
  virtual void* stream() const = 0;
  // True when backend memory is host memory that the host may read once synchronize() returned
  // (CPU; the CUDA emulation is not, since its kernels run lazily, but its memory is host-addressable).
  virtual bool host_memory() const = 0;
  // True when the ops take bf16 data beside fp32 parameter gradients and an fp32 residual stream
  // (kernels/cuda/README.md, mixed_storage.cuh): model.precision = bf16 then computes the
  // model's blocks on bf16 activations (Model::training_blocks_dtype). A backend without (the
  // CPU, whose ops are fp32) computes bf16 mode in fp32 on the bf16-rounded weights.
  virtual bool mixed_storage() const { return false; }
  // The most device memory this backend held at once (allocations, workspaces); 0 for host
  // backends, whose memory the process's peak resident size counts.
  virtual size_t device_peak_bytes() const { return 0; }
  // Of device_peak_bytes, the GEMM library's workspace (cuBLASLt's), held from start to end.
  virtual size_t blas_workspace_bytes() const { return 0; }
  // Throws the first error an op found in the data since the last call (emb::Error, the message
  // a host backend throws at the op itself): a GPU records such errors without synchronising
  // (a query row without an allowed key in attention_forward) and reports them here, once per
  // step (Model::take_loss). Waits for the stream.
  virtual void check_deferred_errors() {}
  // The clock of the device the stream runs on, for the phase timers (null: the host's clock
  // is the device's, as on the CPU, whose ops return when done).
  virtual DeviceClock* device_clock() { return nullptr; }

  // ---- elementwise and rows ----
  // y = 0
  virtual void zero(const View& y) = 0;
  // y = x
  virtual void copy(const View& x, const View& y) = 0;
  // y = x in y's dtype (fp32 ↔ bf16, round to nearest even): the mixed-precision compute copies
  virtual void convert(const View& x, const View& y) = 0;
  // y = a + b
  virtual void add(const View& a, const View& b, const View& y) = 0;
  // y[r] += b for every row r (b [1, cols])
  virtual void add_bias(const View& y, const View& b) = 0;
  // dst[dst_rows[r]] = src[src_rows[r]] for r < n (an absent index is the identity; n is the
  // length of a present index, else src.rows)
  virtual void copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) = 0;
  // dst[dst_rows[r]] += src[src_rows[r]], in row order (rows may repeat: the backward of copy_rows)
  virtual void add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) = 0;
  // out[c] += Σ_rows x[r, c]   (out [1, cols]; a parameter gradient: reduced in double)
  virtual void column_sums(const View& x, const View& out) = 0;

  // ---- activations ----
  // y = act(x); act ≠ none
  virtual void activation_forward(Activation act, const View& x, const View& y) = 0;
  // dx += act'(x)·dy
  virtual void activation_backward(Activation act, const View& x, const View& dy, const View& dx) = 0;

  // ---- linear layers, W [in, out] (MODEL.md) ----
  // pre = x·W + b (b absent: no bias), y = act(pre). With act = none, y is written and pre must
  // be absent; otherwise pre [N, out] is written (the backward reads it) and so is y.
  virtual void linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                              const View& y) = 0;
  // dy is the gradient of y; dpre = act'(pre)·dy (scratch of the backend; dy itself when act =
  // none, pre absent). dx += dpre·Wᵀ; dW += xᵀ·dpre; db += Σ_rows dpre (any may be absent).
  virtual void linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                               const View& dx, const View& dW, const View& db) = 0;
  // Per-embodiment: row i uses W[ids[i]] (W is [E·in, out]) and b[ids[i]] (b [E, out]).
  virtual void linear_emb_forward(const View& x, const View& W, const View& b, const EmbRows& emb, Activation act,
                                  const View& pre, const View& y) = 0;
  virtual void linear_emb_backward(const View& x, const View& W, const EmbRows& emb, Activation act,
                                   const View& pre, const View& dy, const View& dx, const View& dW,
                                   const View& db) = 0;

  // ---- frozen linears (the encoders' weights): packed once into the layout this backend's
  // forward GEMM reads fastest, then only multiplied ----
  // Elements of the packed form of a W [in, out] (in W's dtype).
  virtual int64_t packed_linear_elements(int64_t in, int64_t out) const { return in * out; }
  // packed [1, packed_linear_elements] = W [in, out] in this backend's layout. The default (and
  // CUDA's, whose cuBLASLt reads W as it is) is a copy; the CPU's are AVX-512 panels
  // (kernels/cpu/packed_linear.hpp).
  virtual void pack_linear(const View& W, const View& packed);
  // As linear_forward with W = the packed form of a W [x cols, y cols]; forward only.
  virtual void packed_linear_forward(const View& x, const View& packed, const View& b, Activation act,
                                     const View& pre, const View& y);

  // ---- FP8 linear layers (model.fp8): kernels/cpu/fp8_linear.hpp's block-scaled recipe ----
  // As linear_forward / linear_backward, with the input-side GEMMs in FP8 E4M3 and fp32
  // accumulation: forward x (1×128 tiles) · W (128×128 blocks); backward dx += dpre (1×128 tiles)
  // · Wᵀ (the same blocks, transposed exactly); dW and db from x and dpre unquantised, in the
  // views' dtype. W is quantised per call (no cache across calls). in and out must be multiples
  // of 16 (the FP8 GEMM's alignment, kernels/cuda/fp8_gemm.hpp).
  virtual void fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                  const View& y) = 0;
  virtual void fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                   const View& dx, const View& dW, const View& db) = 0;

  // ---- norms, statistics saved per row (mean [N, 1], rstd [N, 1]) ----
  // LayerNorm's eps is the caller's (rstd = 1/√(var + eps): GR00T-N1.5 uses 1e-5 but 1e-6 in its
  // output norm, Wan 1e-6); RMSNorm's is 1e-6 (Wan's qk-norm). The backwards read the saved rstd.
  // y = (x − mean)·rstd·weight + bias (weight/bias absent: no affine)
  virtual void layernorm_forward(const View& x, const View& weight, const View& bias, const View& y,
                                 const View& mean, const View& rstd, float eps) = 0;
  virtual void layernorm_backward(const View& x, const View& weight, const View& mean, const View& rstd,
                                  const View& dy, const View& dx, const View& dweight, const View& dbias) = 0;
  // y = x·rstd·weight, rstd = 1/√(mean(x²) + eps)
  virtual void rmsnorm_forward(const View& x, const View& weight, const View& y, const View& rstd) = 0;
  virtual void rmsnorm_backward(const View& x, const View& weight, const View& rstd, const View& dy,
                                const View& dx, const View& dweight) = 0;
  // adaLN: n = LN(x) without affine (written to `normed`, the backward reads it), then
  // y = n·(1 + scale) + shift; scale/shift [N, C] are per token (chunks of a modulation tensor).
  virtual void norm_modulate_forward(const View& x, const View& scale, const View& shift, const View& normed,
                                     const View& y, const View& mean, const View& rstd, float eps) = 0;
  // dx += ∂/∂x; dscale += dy·n; dshift += dy
  virtual void norm_modulate_backward(const View& x, const View& normed, const View& scale, const View& mean,
                                      const View& rstd, const View& dy, const View& dx, const View& dscale,
                                      const View& dshift) = 0;
  // x += gate·y (gate absent: x += y); gate per token [N, C]
  virtual void gated_residual_forward(const View& x, const View& gate, const View& y) = 0;
  // The DiT block's sublayer boundary as one op: the previous sublayer's gated residual
  // x += gate·r (gate absent: x += r), the next sublayer's saved input x_in = x (absent: not
  // saved), then norm_modulate_forward of the updated x. The same values as those three ops in a
  // row, in one pass over x on a GPU. Its backward is theirs: norm_modulate_backward accumulates
  // into the stream's dx, which gated_residual_backward then reads; the fusion changes no
  // gradient's data flow, so it has no backward op of its own.
  virtual void residual_norm_modulate_forward(const View& x, const View& gate, const View& r, const View& x_in,
                                              const View& scale, const View& shift, const View& normed,
                                              const View& y, const View& mean, const View& rstd, float eps) = 0;
  // dy += dx·gate (or dx); dgate += dx·y
  virtual void gated_residual_backward(const View& gate, const View& y, const View& dx, const View& dy,
                                       const View& dgate) = 0;

  // ---- attention over the packed index (kernels/op_types.hpp masks, cross included) ----
  // q [Tq, H·hd], k, v [Tk, H·hd] → out [Tq, H·hd], lse [Tq, H]. Scale 1/√hd.
  virtual void attention_forward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                 const AttnConfig& cfg, const AttnIndex& idx) = 0;
  // dq, dk, dv += ...
  virtual void attention_backward(const View& q, const View& k, const View& v, const View& out, const View& lse,
                                  const View& dout, const View& dq, const View& dk, const View& dv,
                                  const AttnConfig& cfg, const AttnIndex& idx) = 0;
  // x [T, H·hd] rotated in place by pos [T, 3] (f, h, w) in backend memory
  virtual void rope_forward(const View& x, const int32_t* pos, const RopeConfig& cfg) = 0;
  // dx: gradient w.r.t. the rotated tensor in, w.r.t. the input out (in place)
  virtual void rope_backward(const View& dx, const int32_t* pos, const RopeConfig& cfg) = 0;

  // ---- dropout (kernels/op_types.hpp DropoutConfig, kernels/dropout_keep.hpp) ----
  // y = x·keep/(1 − p) over x [N, C] whose rows `rows` keys; y may be x (in place). Nothing is
  // stored: the backward (and a recomputed forward) draws the same keep-mask again.
  virtual void dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) = 0;
  // dx += dy·keep/(1 − p)
  virtual void dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg,
                                const DropoutRows& rows) = 0;
  // ---- the frozen encoders (src/encoders) ----
  // Encoder attention: q [Tq, Hq·hd], k, v [Tk, Hkv·hd] (row strides allowed: q, k, v may be
  // column chunks of one fused QKV output), out [Tq, Hq·hd] (contiguous). Grouped-query: query head
  // h reads kv head h / (Hq / Hkv) (Hkv divides Hq; Hkv = Hq is plain multi-head).
  //   out_i = Σ_j softmax_j(scale · q_i·k_j + bias_h(i, j)) v_j   over the keys j of i's segment
  // (causal: local j ≤ local i + Lk − Lq, i.e. j ≤ i in self-attention). lse [Tq, Hq] (fp32,
  // optional) gets the log-sum-exp of the scaled, biased scores. Forward only (the encoders are
  // frozen); softmax in fp32 on every backend. A segment without keys is an error. The types
  // (kernels/op_types.hpp): EncoderAttnConfig's heads and scale, over `segments`; bias: the table
  // of `bias_kind` (absent for none): dense [H·Lq, Lk] or relative_buckets [H, n_buckets].
  // The encoders' other steps are ops above: the embedding gather is copy_rows(table, ids,
  // out, absent) and the scatter of image rows into their token positions copy_rows(rows,
  // absent, out, positions); per-head RMSNorm (Qwen3's q_norm, k_norm) is rmsnorm_forward on
  // the [T·H, hd] view of a contiguous [T, H·hd].
  virtual void encoder_attention_forward(const View& q, const View& k, const View& v, const View& bias,
                                         const AttnBias& bias_kind, const View& out, const View& lse,
                                         const EncoderAttnConfig& cfg, const AttnSegments& segments) = 0;
  // x [T, H·hd] rotated in place by positions pos [T] (int32, backend memory); the backward
  // rotates the gradient by −angle.
  virtual void rope_half_forward(const View& x, const int32_t* pos, const RopeHalfConfig& cfg) = 0;
  virtual void rope_half_backward(const View& dx, const int32_t* pos, const RopeHalfConfig& cfg) = 0;
  // Gated activation (SwiGLU with silu: Qwen3's MLP; gated GELU with gelu_tanh: umT5's FFN):
  // y = act(gate)·up, gate, up, y [N, C] (gate and up may be column chunks of one [N, 2C]
  // GEMM output: row strides allowed). Backward: dgate += dy·up·act'(gate), dup += dy·act(gate).
  virtual void gated_activation_forward(Activation act, const View& gate, const View& up, const View& y) = 0;
  virtual void gated_activation_backward(Activation act, const View& gate, const View& up, const View& dy,
                                         const View& dgate, const View& dup) = 0;

  // The Wan VAE's video ops (ConvConfig, UnshuffleConfig in op_types.hpp), forward only: y is
  // written, never read, and may not overlap x. (Frames are resized on the host: encoders/frames.)
  virtual void conv3d_forward(const View& x, const View& weight, const View& bias, const View& y,
                              const ConvConfig& cfg) = 0;
  // The frozen convolutions (the VAE's weights), packed once as the frozen linears are: the packed
  // form of a weight [kt·S, Co] (S = kh·kw·Ci) is its kt time taps' row blocks [S, Co], each in
  // pack_linear's form, back to back (packed [1, packed_conv3d_elements(kt, S, Co)]); a frame
  // whose causal padding drops taps then starts at a tap's first packed row.
  int64_t packed_conv3d_elements(int64_t kt, int64_t spatial, int64_t out) const {
    return kt * packed_linear_elements(spatial, out);
  }
  void pack_conv3d(const View& weight, int kt, const View& packed);
  // As conv3d_forward with the weight in that packed form. The default (CUDA's, whose packed
  // form is the weight itself) is conv3d_forward; the CPU's is an implicit GEMM on the packed
  // micro-kernel (kernels/cpu/packed_conv3d.hpp).
  virtual void packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                                     const ConvConfig& cfg);
  virtual void pixel_unshuffle_forward(const View& x, const View& y, const UnshuffleConfig& cfg) = 0;
  // The Wan VAE's channel RMS norm (RMS_norm: F.normalize over channels), per row of C channels:
  //   y = act(x / max(‖x‖₂, 1e-12) · √C · gamma),  gamma [1, C], act none or silu (norm → SiLU
  // fused). y may be x.
  virtual void channel_rmsnorm_forward(const View& x, const View& gamma, Activation act, const View& y) = 0;

  // ---- embeddings, flow matching, losses ----
  // out[i] = the sinusoid of t[i] over out.cols in cfg's layout, formed in double; the input is a
  // timestep: no backward. t is [N, 1], or [N, 2] holding t[i] = t[i, 0] + t[i, 1] for timesteps
  // that are not fp32 values (wan's 1000·σ of the shift-5 table)
  virtual void sinus_embedding(const View& t, const View& out, const SinusConfig& cfg) = 0;
  // y[r] = (1 − s)·u[i] + s·w[i], s = t[t_rows[r]], i = src_rows[r] (t [M, 1]): the flow
  // interpolation of noise and data (gr00t: u = ε, w = a; wan: u = x0, w = ε). u, w and y may be
  // strided (the latent columns of wan's [latents | y] patch rows)
  virtual void flow_interpolate(const View& u, const View& w, const RowIndex& src_rows, const View& t,
                                const RowIndex& t_rows, const View& y) = 0;
  // LossConfig's MSE; sum: one double in backend memory
  virtual void mse_loss(const View& pred, const View& plus, const View& minus, const View& mask,
                        const RowIndex& target_rows, const RowIndex& target_cols, const LossConfig& cfg,
                        const View& dpred, double* sum) = 0;

  // ---- optimizer, over flat fp32 [1, n] shards ----
  // Σ g² in double, written to *out (backend memory)
  virtual void sum_squares(const View& g, double* out) = 0;
  // One AdamW step at 1-based `step` (kernels/cpu/adamw.hpp); grad_scale multiplies g first.
  virtual void adamw_step(const View& param, const View& grad, const View& m, const View& v,
                          const AdamWConfig& cfg, int64_t step, float grad_scale, float decay_mult) = 0;
};

// The per-embodiment grouping a GEMM-per-embodiment backend reads (EmbRows::perm, offsets):
// rows of embodiment 0 first, in row order. Host memory; ids outside [0, E) throw.
struct EmbGrouping {
  std::vector<int32_t> perm;
  std::vector<int64_t> offsets;  // [E + 1]
};
EmbGrouping group_rows_by_embodiment(const int32_t* ids, int64_t n, int n_emb);

}  // namespace emb
