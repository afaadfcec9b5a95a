// The DiT block of MODEL.md and the pre-LN transformer block of gr00t's vl_blocks, written
// as a list of residual sublayers (attention or feed-forward), each with its norm
// (adaLN-modulated, or LayerNorm with affine parameters) and optional gate:
//   wan   (ada6): [self attn, mod sc1/sh1, gate g1] [cross attn, norm3] [ffn, mod sc2/sh2, gate g2]
//   gr00t (ada2): [cross attn (even l) or self attn (odd l), mod sc/sh] [ffn, norm3]
//   vl block    : [self attn, ln1] [ffn, ln2]
// Forward saves what backward needs in a BlockActs carved from the model's arena; backward
// accumulates parameter gradients (ParamAccess) and input gradients (llm.c style).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops.hpp"
#include "model/activation_plan.hpp"
#include "config/model_config.hpp"
#include "model/param_registry.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

// LayerNorm eps of each family (MODEL.md): Wan's norms are 1e-6; GR00T-N1.5's nn.LayerNorm
// default 1e-5 (vlln, the vl blocks, the DiT's norm1 and norm3) but 1e-6 in its output norm.
constexpr float kWanNormEps = 1e-6f;
constexpr float kGr00tNormEps = 1e-5f;
constexpr float kGr00tNormOutEps = 1e-6f;

// The dropout sites of a block (MODEL.md "Dropout"), in the order the forward applies them: the
// attention output twice (diffusers' to_out dropout, then the block's final_dropout), the
// feed-forward's hidden after the GELU and its output. A block's site s has the model-wide id
// u·4 + s (DropoutConfig::site), u its unit counted from the head's encoders unit.
enum DropoutSite : int { kAttnOut = 0, kAttnFinal = 1, kFfHidden = 2, kFfOut = 3, kSitesPerBlock = 4 };

struct SublayerSpec {
  bool attention = true;  // false: feed-forward (fc1, gelu_tanh, fc2)
  // Norm: adaLN (LN without affine, then ·(1 + scale) + shift from modulation chunks) when
  // scale_chunk >= 0, else LayerNorm with `norm`'s affine parameters (none when absent).
  int scale_chunk = -1, shift_chunk = -1, gate_chunk = -1;
  NormRef norm;
  float norm_eps = kWanNormEps;
  // Dropout (block's BlockSpec::dropout > 0): the sites applied to the sublayer's output y, in
  // order, and (feed-forward) to the hidden g after the GELU; -1 = none.
  int output_sites[2] = {-1, -1};
  int hidden_site = -1;
  // Attention.
  bool cross = false;  // keys and values from the context
  bool qk_norm = false;
  RopeMode rope = RopeMode::none;
  AttnMask mask = AttnMask::full;  // self-attention mask (cross uses the cross mask)
  LinearRef q, k, v, o;
  NormRef norm_q, norm_k;
  // Wan's I2V cross-attention (a cross sublayer with the CLIP context, model.clip_tokens > 0):
  // the same queries also attend to the image context through k_img (with its RMSNorm
  // norm_k_img) and v_img, and the two attention outputs are summed before o.
  bool image = false;
  LinearRef k_img, v_img;
  NormRef norm_k_img;
  // Feed-forward.
  LinearRef fc1, fc2;
};

enum class Modulation { none, ada6, ada2 };

struct BlockSpec {
  int unit = 0;
  int D = 0, H = 0, F = 0, Dc = 0;  // width, heads, ffn width, context width
  bool fp8 = false;                 // model.fp8: the eligible linears (fp8_eligible) run on the FP8 path
  float dropout = 0;                // p of the sublayers' dropout sites (training only)
  Modulation modulation = Modulation::none;
  int modulation_table = -1;  // ada6: blocks.{l}.modulation [6, D]
  LinearRef ada2_linear;      // ada2: blocks.{l}.norm1.linear D -> 2D
  std::vector<SublayerSpec> sublayers;

  int n_chunks() const { return modulation == Modulation::ada6 ? 6 : modulation == Modulation::ada2 ? 2 : 0; }
};

// The linears model.fp8 sends through the FP8 block-scaled recipe (Ops::fp8_linear_*,
// kernels/cpu/fp8_linear.hpp): a block's attention projections q, k, v, o and feed-forward fc1,
// fc2, which carry nearly all of a step's GEMM FLOPs, when in and out are both multiples of 128,
// so every weight block and activation tile is whole. The ada2 modulation linear (one row per
// timestep) and every linear outside the blocks (encoders, heads, per-embodiment layers) stay in
// the compute precision, as DeepSeek-V3 and Transformer Engine keep the small GEMMs and the
// model's first and last layers out of FP8.
bool fp8_eligible(const LinearRef& l);
// The linears of `spec` on the FP8 path (0 unless spec.fp8).
int fp8_linear_count(const BlockSpec& spec);

// The teacher_forcing mask's settings of a wan model with first_frame_block: fpb and the clean
// stream's window of max_chunk·fpb + 1 latent frames.
TeacherForcing teacher_forcing_of(const ModelConfig& cfg);

// Registers a block's parameters (MODEL.md names) in the currently open unit.
BlockSpec add_wan_block(ParamRegistry& reg, int l, const ModelConfig& cfg);
BlockSpec add_gr00t_block(ParamRegistry& reg, int l, const ModelConfig& cfg);
BlockSpec add_vl_block(ParamRegistry& reg, int l, const ModelConfig& cfg);

// Dropout of one forward/backward: on in training (Model::accumulate), off in evaluation
// (flow_velocity) and RL's regression; the keys of the rows the blocks run over.
struct BlockDropout {
  bool on = false;
  uint64_t seed = 0;
  int64_t step = 0;
  DropoutRows rows;
};

// What a block reads besides its parameters, in the backend's memory; gradient pointers accumulate.
// The inputs are in the blocks' activation dtype (ActivationPlan); their gradients are fp32 (the
// head and the encoders add to them too), which the blocks add to through scratch in the
// activation dtype (BlockScratch::dinput) when that is bf16.
struct BlockIO {
  int64_t T = 0, Tc = 0;
  // Per distinct timestep (time_rows.hpp): ada6 silu(temb)·time_proj [n_cond, 6D]; ada2
  // silu(temb) [n_cond, D]; token i uses row cond_row[i].
  TensorPtr cond;
  float* dcond = nullptr;
  int64_t n_cond = 0;
  RowIndex cond_row;  // [T]
  TensorPtr context;  // [Tc, Dc]
  float* dcontext = nullptr;
  // The image context of SublayerSpec::image [Tci, D] (the CLIP rows of the batch's samples).
  int64_t Tci = 0;
  TensorPtr image_context;
  float* dimage_context = nullptr;
  AttnIndex self_index, cross_index, image_index;
  const int32_t* pos = nullptr;  // [T, 3]
  // [T]: each token's RopeMode instead of the block's (wan: video d3, actions d1); null: the block's.
  const int32_t* rope_modes = nullptr;
  BlockDropout dropout;
};

// With bf16 activations the residual stream (x_in, the sublayer's input x [T, D] saved) and the
// per-row statistics (mean, rstd [T, 1], rstd_q, rstd_k [T or Tk, 1], lse [T, H]) stay fp32;
// the rest is in the activation dtype.
struct SublayerActs {
  float *x_in = nullptr, *mean = nullptr, *rstd = nullptr;
  TensorPtr y;  // [T, D], the sublayer's output before the gated residual
  // The normalised input (ln_out before modulation, h after) [T, D]. Of attention sublayers,
  // these and the attention core's activations below are what selective recompute re-runs.
  TensorPtr ln_out, h;
  TensorPtr q_pre, k_pre, q, k, v;  // attention: [T, D] (q) and [Tk, D] (k, v)
  float *rstd_q = nullptr, *rstd_k = nullptr, *lse = nullptr;
  TensorPtr att;   // [T, D]
  // SublayerSpec::image: the image attention's keys [Tci, D] (before and after norm_k_img),
  // values, output [T, D] and log-sum-exp; att_sum = att + att_img [T, D], o's input.
  TensorPtr k_img_pre, k_img, v_img, att_img, att_sum;
  float *rstd_k_img = nullptr, *lse_img = nullptr;
  TensorPtr a, g;  // feed-forward: fc1 output, gelu output [T, F]
};

struct BlockActs {
  TensorPtr mod;       // [T, n_chunks·D]
  TensorPtr mod_rows;  // ada2: [n_cond, 2D] before the per-token gather
  std::vector<SublayerActs> sub;
};

// Gradient scratch shared by all blocks of a model (sized for the widest block, rows = max(T, Tc, Tci)),
// in the activation dtype: dmod [rows, n_chunks·D], dmod_rows [rows, 2D], dg [rows, F], the others
// [rows, D]. Only what some block reads: dmod_rows with ada2, dq_pre and dk_pre with qk_norm.
struct BlockScratch {
  TensorPtr dmod, dmod_rows, dh, dy, datt, dq, dk, dv, dq_pre, dk_pre, dg;
  TensorPtr ddrop;  // [rows, max(D, F)]: a gradient through the dropouts' backward (blocks with dropout)
  // bf16 activations: a linear's dx into an fp32 input gradient from outside the block (the
  // context's, ada2's conditioning's) before it is added there; absent with fp32 activations.
  TensorPtr dinput;
};

// Which of a block's activations plan_block_acts carves: all of them, or (selective
// recompute) the attention cores apart — the normalised inputs and core activations of the
// attention sublayers, which block_recompute_attention rebuilds — from everything else.
enum class BlockActsPart { all, all_but_attention_cores, attention_cores };
// Tci: the image context's rows (SublayerSpec::image).
void plan_block_acts(const BlockSpec& spec, int64_t T, int64_t Tc, int64_t Tci, ActivationPlan& plan,
                     BlockActs& acts, BlockActsPart part = BlockActsPart::all);
// Whether plan_block_acts lays out a's and b's activations alike (the same tensors of the same
// sizes for any rows), so that blocks of either can share one BlockActs.
bool same_activation_layout(const BlockSpec& a, const BlockSpec& b);
// Points acts' attention-core activations at those of `cores` (planned with
// BlockActsPart::attention_cores for a block of the same shape).
void share_attention_cores(const BlockSpec& spec, const BlockActs& cores, BlockActs& acts);
void plan_block_scratch(const std::vector<const BlockSpec*>& specs, int64_t T, int64_t Tc, int64_t Tci,
                        ActivationPlan& plan, BlockScratch& scratch);

// x [T, D] (fp32, the residual stream): block input in, block output out.
void block_forward(Ops& ops, const BlockSpec& spec, const ParamAccess& params, const BlockIO& io, BlockActs& acts,
                   float* x);
// Re-runs the attention cores of a block from its saved sublayer inputs (selective recompute),
// bit-identical to what block_forward wrote there.
void block_recompute_attention(Ops& ops, const BlockSpec& spec, const ParamAccess& params, const BlockIO& io,
                               BlockActs& acts);
// dx [T, D]: gradient of the block output in, of the block input out. Needs the acts of the
// forward of this very input (after recompute, the forward must be re-run first).
void block_backward(Ops& ops, const BlockSpec& spec, const ParamAccess& params, const BlockIO& io,
                    const BlockActs& acts, const BlockScratch& scratch, float* dx);

}  // namespace emb
