#include "plan/model_cost.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "kernels/op_types.hpp"
#include "model/activation_rows.hpp"
#include "model/dit_block.hpp"
#include "model/model.hpp"
#include "model/self_mask.hpp"

namespace emb {
namespace {

// Allowed (query, key) pairs under `mask`, counted per (seq, blk, grp) class so a 28k-token
// dreamzero14b sample costs a handful of attn_pair_allowed calls, not 28k².
int64_t self_pairs(const ModelConfig& c, const PackedBatch& b, AttnMask mask) {
  std::map<std::tuple<int32_t, int32_t, int32_t>, int64_t> classes;
  for (int64_t t = 0; t < b.n_tokens; ++t) ++classes[{b.seq[size_t(t)], b.blk[size_t(t)], b.grp[size_t(t)]}];
  std::vector<int32_t> seq, blk, grp;
  std::vector<int64_t> count;
  for (const auto& [key, n] : classes) {
    seq.push_back(std::get<0>(key)), blk.push_back(std::get<1>(key)), grp.push_back(std::get<2>(key));
    count.push_back(n);
  }
  const AttnIndex idx{mask, seq.data(), blk.data(), grp.data(), seq.data(), blk.data(), grp.data(), teacher_forcing_of(c)};
  int64_t pairs = 0;
  for (size_t i = 0; i < count.size(); ++i)
    for (size_t j = 0; j < count.size(); ++j)
      if (attn_pair_allowed(idx, int64_t(i), int64_t(j))) pairs += count[i] * count[j];
  return pairs;
}

// Σ over samples of (query tokens of s)·(context tokens of s), or (context tokens of s)².
int64_t per_sample_pairs(const PackedBatch& b, bool context_only) {
  std::map<int32_t, int64_t> nq, nc;
  for (int32_t s : b.seq)
    if (s >= 0) ++nq[s];
  for (int32_t s : b.cseq)
    if (s >= 0) ++nc[s];
  int64_t pairs = 0;
  for (const auto& [s, n] : nc) pairs += n * (context_only ? n : nq[s]);
  return pairs;
}

int64_t count_kind(const PackedBatch& b, int32_t kind) {
  return std::count(b.kind.begin(), b.kind.end(), kind);
}

// Forward GEMM FLOPs of every linear the model runs (2·rows·in·out, over the rows it runs on),
// by the linear's narrower dimension (gemm_by_narrow), and the elements of their outputs that
// the activation each fuses runs on (src/model: act(pre) of linear_forward).
struct LinearFlops {
  std::map<double, double> by_narrow;
  std::map<Activation, double> activated;
  // `n` linears of `in` -> `out` features on `rows` rows, their outputs through `act`.
  void add(double rows, double in, double out, double n = 1, Activation act = Activation::none) {
    by_narrow[std::min(in, out)] += n * 2 * rows * in * out;
    if (act != Activation::none && rows > 0) activated[act] += n * rows * out;
  }
};

void gr00t_linears(const ModelConfig& c, const PackedBatch& b, double Tu, LinearFlops& f) {
  const double T = double(b.n_tokens), Tc = double(b.n_context), D = c.d_model, F = c.d_ff;
  const double na = double(count_kind(b, kAction)), Dvl = c.d_ctx, Dh = c.d_hidden_enc, A = c.action_dim;
  f.add(double(b.n_samples), c.state_dim, Dh, 1, Activation::relu), f.add(double(b.n_samples), Dh, D);  // state encoder
  f.add(na, A, D), f.add(na, 2 * D, D, 1, Activation::silu), f.add(na, D, D);  // action encoder
  for (int l = 0; l < c.n_layers_vl; ++l)  // the vl blocks: q, k, v, o and the FFN
    f.add(Tc, Dvl, Dvl, 4), f.add(Tc, Dvl, 4 * Dvl, 1, Activation::gelu_tanh), f.add(Tc, 4 * Dvl, Dvl);
  for (int l = 0; l < c.n_layers; ++l) {
    f.add(Tu, D, 2 * D), f.add(T, D, D, 2);  // adaLN, q and o
    if (l % 2 == 0)
      f.add(Tc, Dvl, D, 2);  // k, v: cross-attention to the vl features
    else
      f.add(T, D, D, 2);     // k, v: self-attention
    f.add(T, D, F, 1, Activation::gelu_tanh), f.add(T, F, D);
  }
  f.add(Tu, D, 2 * D), f.add(na, D, c.d_out), f.add(na, c.d_out, Dh, 1, Activation::relu), f.add(na, Dh, A);  // final norm, decoder
}

void wan_linears(const ModelConfig& c, const PackedBatch& b, double Tu, LinearFlops& f) {
  const double T = double(b.n_tokens), Tc = double(b.n_context), D = c.d_model, F = c.d_ff;
  const double na = double(count_kind(b, kAction)), Dh = c.d_hidden_enc;
  const double nv = double(count_kind(b, kClean) + count_kind(b, kNoisyVideo)), nn = double(count_kind(b, kNoisyVideo));
  f.add(Tu, D, 6 * D);
  f.add(nv, double(c.embed_patch_dim()), D);
  f.add(na, c.action_dim, D), f.add(na, 2 * D, D, 1, Activation::silu), f.add(na, D, D);  // action_enc
  f.add(double(count_kind(b, kState)), c.state_dim, Dh, 1, Activation::relu), f.add(double(count_kind(b, kState)), Dh, D);
  f.add(Tc, c.d_ctx, D, 1, Activation::gelu_tanh), f.add(Tc, D, D);
  // Per block: self q, k, v, o; cross q, o; cross k, v on the context; the FFN.
  f.add(T, D, D, 6.0 * c.n_layers), f.add(Tc, D, D, 2.0 * c.n_layers);
  f.add(T, D, F, c.n_layers, Activation::gelu_tanh), f.add(T, F, D, c.n_layers);
  // The CLIP context: img_emb's two linears, then every cross-attention's k_img and v_img.
  const double Nci = double(b.n_samples) * c.clip_tokens, Dclip = c.d_clip;
  f.add(Nci, Dclip, Dclip, 1, Activation::gelu_erf), f.add(Nci, Dclip, D), f.add(Nci, D, D, 2.0 * c.n_layers);
  f.add(nn, D, double(c.patch_dim_out())), f.add(na, D, Dh, 1, Activation::relu), f.add(na, Dh, c.action_dim);
}

LinearFlops gemm_flops(const ModelConfig& c, const PackedBatch& b) {
  const double Tu = double(activation_rows(c, b).time_rows), D = c.d_model;
  LinearFlops f;
  f.add(Tu, 256, D, 1, Activation::silu), f.add(Tu, D, D, 1, Activation::silu);  // time_enc
  c.family == Family::gr00t ? gr00t_linears(c, b, Tu, f) : wan_linears(c, b, Tu, f);
  return f;
}

}  // namespace

void attention_work(const ModelConfig& c, StepFlops& f) {
  const double D = c.d_model;
  if (c.family == Family::gr00t) {
    const int n_self = c.n_layers / 2, n_cross = c.n_layers - n_self;
    f.attn_fwd = 4 * D * (double(n_self) * double(f.self_pairs) + double(n_cross) * double(f.cross_pairs));
    f.attn_fwd += 4.0 * c.d_ctx * c.n_layers_vl * double(f.context_pairs);
    f.attn_pair_heads = c.n_heads * (double(n_self) * double(f.self_pairs) + double(n_cross) * double(f.cross_pairs)) +
                        double(c.n_heads_vl) * c.n_layers_vl * double(f.context_pairs);
  } else {
    f.attn_fwd = 4 * D * c.n_layers * double(f.self_pairs + f.cross_pairs + f.image_pairs);
    f.attn_pair_heads = double(c.n_heads) * c.n_layers * double(f.self_pairs + f.cross_pairs + f.image_pairs);
  }
}

StepFlops batch_flops(const ModelConfig& c, const PackedBatch& b) {
  StepFlops f;
  f.self_pairs = self_pairs(c, b, dit_self_mask(c));
  f.cross_pairs = per_sample_pairs(b, false);
  if (c.family == Family::gr00t) f.context_pairs = per_sample_pairs(b, true);
  f.image_pairs = int64_t(std::count_if(b.seq.begin(), b.seq.end(), [](int32_t s) { return s >= 0; })) * c.clip_tokens;
  attention_work(c, f);
  const LinearFlops linears = gemm_flops(c, b);
  for (const auto& [narrow, flops] : linears.by_narrow) {
    f.gemm_by_narrow.emplace_back(narrow, flops);
    f.gemm_fwd += flops;
  }
  f.activated = linears.activated;
  f.fwd = f.gemm_fwd + f.attn_fwd;
  f.bwd = 2 * f.gemm_fwd + 2.5 * f.attn_fwd;
  return f;
}

PlanReport make_plan(const ModelConfig& c, int ranks, int64_t token_budget, const PlanSample& shape, DType blocks,
                     const PlanSharding& sharding) {
  EMB_ASSERT(ranks > 0);
  PlanReport p;
  p.preset = c.preset;
  p.ranks = ranks;
  std::unique_ptr<Model> model = make_model(c, nullptr);  // the registry only: no parameter memory
  const ParamRegistry& reg = model->params();
  p.n_params = reg.total();
  p.n_units = reg.n_units();
  p.max_unit_params = reg.max_unit_count();

  const std::shared_ptr<const PackedBatch> one_sample = plan_batch(c, 1, shape);
  const PackedBatch& sample = *one_sample;
  p.tokens_per_sample = sample.n_tokens;
  p.context_per_sample = sample.n_context;
  p.clip_per_sample = c.clip_tokens;
  // The packer's budget counts query and context tokens (DATA.md "Packing").
  p.samples_per_mb = int(std::max<int64_t>(1, token_budget / std::max<int64_t>(1, sample.n_tokens + sample.n_context)));
  p.tokens_per_mb = p.samples_per_mb * sample.n_tokens;
  p.context_per_mb = p.samples_per_mb * sample.n_context;

  const StepFlops f = batch_flops(c, sample);
  p.self_pairs_per_sample = f.self_pairs;
  p.cross_pairs_per_sample = f.cross_pairs;
  p.image_pairs_per_sample = f.image_pairs;
  p.gemm_flops_fwd = f.gemm_fwd;
  p.gemm_flops_fwd_by_narrow = f.gemm_by_narrow;
  p.activated_per_sample = f.activated;
  p.attn_flops_fwd = f.attn_fwd;
  p.attn_pair_heads = f.attn_pair_heads;
  p.flops_fwd = f.fwd;
  p.flops_bwd = f.bwd;

  for (const Model::DropoutSite& site : model->dropout_sites())
    p.dropout_elements += double(site.context ? sample.n_context : sample.n_tokens) * site.width;
  p.dropout_bytes_fwd = 2 * p.dropout_elements * double(dtype_size(blocks));
  p.dropout_bytes_bwd = 4 * p.dropout_elements * double(dtype_size(blocks));

  const ActivationBytes act = model->activation_bytes(plan_activation_rows(c, p.samples_per_mb, shape), blocks);
  p.activation_bytes = double(act.total);
  p.blocks_dtype = blocks;
  p.block_activation_bytes = double(act.in_activation_dtype);
  p.block_conversion_bytes = double(act.conversions);
  p.trainable_params = p.n_params;
  for (size_t i = 0; i < sharding.frozen.size(); ++i)
    if (sharding.frozen[i]) p.trainable_params -= reg.all()[i].numel;
  for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full})
    if (sharding.count_state) p.state_bytes[size_t(mode)] = state_bytes_per_rank(reg, mode, ranks, sharding, c.precision == Precision::bf16);
  return p;
}

std::string plan_text(const PlanReport& p) {
  auto g = [](double bytes) { return str(bytes / double(1ull << 30), " GiB"); };
  std::string s;
  s += str("plan: ", p.preset, " on ", p.ranks, " ranks\n");
  s += str("  parameters           ", p.n_params, " (", double(p.n_params) / 1e9, " B) in ", p.n_units,
           " units, largest unit ", p.max_unit_params,
           p.trainable_params < p.n_params ? str(", ", p.trainable_params, " trained (train.tune_*)") : std::string(),
           "\n");
  s += str("  typical sample       ", p.tokens_per_sample, " tokens + ", p.context_per_sample, " context tokens",
           p.clip_per_sample ? str(" + ", p.clip_per_sample, " CLIP rows") : std::string(), "\n");
  s += str("  micro-batch          ", p.samples_per_mb, " samples = ", p.tokens_per_mb, " tokens + ", p.context_per_mb,
           " context tokens\n");
  s += str("  attention pairs      self ", p.self_pairs_per_sample, ", cross ", p.cross_pairs_per_sample,
           p.image_pairs_per_sample ? str(", CLIP image ", p.image_pairs_per_sample) : std::string(), " per sample\n");
  s += str("  FLOPs per sample     forward ", p.flops_fwd / 1e12, " T (GEMM ", p.gemm_flops_fwd / 1e12,
           " T, attention ", p.attn_flops_fwd / 1e12, " T), backward ", p.flops_bwd / 1e12, " T\n");
  if (p.dropout_bytes_fwd > 0)
    s += str("  dropout traffic      ", (p.dropout_bytes_fwd + p.dropout_bytes_bwd) / 1e6,
             " MB per sample (forward and backward; the masks are drawn, not stored)\n");
  s += str("  activations per rank ", g(p.activation_bytes), " per micro-batch (",
           g(p.block_activation_bytes + p.block_conversion_bytes), " of it the blocks' in ", dtype_name(p.blocks_dtype),
           "; recompute changes it)\n");
  s += str("  state (largest rank) shard none ", g(p.state(ShardMode::none)), ", grads ", g(p.state(ShardMode::grads)),
           ", full ", g(p.state(ShardMode::full)), "\n");
  return s;
}

}  // namespace emb
