#include "model/model.hpp"

#include <algorithm>
#include <chrono>

#include "core/activity.hpp"
#include "core/error.hpp"
#include "model/activation_plan.hpp"

namespace emb {

// The families, each with its own file.
std::unique_ptr<Model> make_gr00t_model(const ModelConfig& cfg, Ops* ops);  // gr00t.cpp
std::unique_ptr<Model> make_wan_model(const ModelConfig& cfg, Ops* ops);    // wan.cpp

Model::Model(const ModelConfig& cfg, Ops* ops) : cfg_(cfg), ops_(ops), segments_(ops) {
  // Activations live in the backend's memory (a GPU's); host backends keep the arena's huge pages.
  if (ops_ && !ops_->host_memory())
    arena_.use_memory({[ops](size_t bytes) { return ops->allocate(bytes); }, [ops](void* p) { ops->deallocate(p); }});
}

int Model::fp8_linear_count() const {
  int n = 0;
  for (const BlockStack* stack : {&trunk_.context_blocks, &trunk_.blocks})
    for (const BlockSpec& spec : stack->specs()) n += emb::fp8_linear_count(spec);
  return n;
}

std::vector<Model::DropoutSite> Model::dropout_sites() const {
  static const char* const kinds[kSitesPerBlock] = {"attn_out", "attn_final", "ff_hidden", "ff_out"};
  std::vector<DropoutSite> sites;
  for (const BlockStack* stack : {&trunk_.context_blocks, &trunk_.blocks}) {
    const bool context = stack == &trunk_.context_blocks;
    for (size_t l = 0; l < stack->specs().size(); ++l) {
      const BlockSpec& spec = stack->specs()[l];
      if (spec.dropout <= 0) continue;
      for (const SublayerSpec& s : spec.sublayers)
        for (int site : {s.hidden_site, s.output_sites[0], s.output_sites[1]}) {
          if (site < 0) continue;
          const int kind = site % kSitesPerBlock;
          sites.push_back({str(context ? "vl." : "dit.", l, ".", kinds[kind]), uint32_t(site), spec.dropout, context,
                           kind == kFfHidden ? spec.F : spec.D});
        }
    }
  }
  std::sort(sites.begin(), sites.end(), [](const DropoutSite& a, const DropoutSite& b) { return a.id < b.id; });
  return sites;
}

DType training_blocks_dtype(const ModelConfig& cfg, bool mixed_storage) {
  return cfg.precision == Precision::bf16 && mixed_storage ? DType::bf16 : DType::f32;
}

DType Model::training_blocks_dtype() const {
  return emb::training_blocks_dtype(cfg_, ops_ && ops_->mixed_storage());
}

std::vector<DType> Model::unit_param_dtypes() const {
  std::vector<DType> dtypes(size_t(reg_.n_units()), DType::f32);
  for (const BlockStack* stack : {&trunk_.context_blocks, &trunk_.blocks})
    for (const BlockSpec& spec : stack->specs()) dtypes[size_t(spec.unit)] = planned_blocks_;
  return dtypes;
}

double Model::forward_backward(const float* params, float* grads, const PackedBatch& batch, int64_t step,
                               uint64_t seed, const std::vector<double>& denominators, UnitHooks* hooks) {
  accumulate(params, grads, batch, step, seed, denominators, hooks);
  return take_loss();
}

double Model::take_loss() {
  std::vector<double> sums(2 * pending_losses_.size());
  if (!sums.empty()) ops_->download(sums.data(), loss_sums_.data(), sums.size() * sizeof(double));
  ops_->check_deferred_errors();
  double total = taken_early_;
  for (size_t i = 0; i < pending_losses_.size(); ++i) {
    const LossTerms& t = pending_losses_[i];
    total += sums[2 * i] / t.den0 + (t.second ? t.lambda * sums[2 * i + 1] / t.den1 : 0.0);
  }
  pending_losses_.clear();
  taken_early_ = 0;
  return total;
}

void Model::accumulate(const float* params, float* grads, const PackedBatch& batch, int64_t step, uint64_t seed,
                       const std::vector<double>& denominators, UnitHooks* hooks) {
  EMB_CHECK(batch.family == family_name(cfg_.family), "packed batch of family '", batch.family, "' for a ",
            family_name(cfg_.family), " model");
  EMB_ASSERT(denominators.size() == loss_counts(batch).size());
  EMB_CHECK(ops_ != nullptr, "model: forward_backward on a model made without a backend (Ops)");
  build_token_layout(cfg_, batch, layout_);
  draw_flow(cfg_, batch, layout_, step, seed, draws_);
  build_time_rows(draws_.temb_t, draws_.temb_t_lo, time_rows_);
  prepare(batch, hooks ? training_blocks_dtype() : DType::f32);
  ParamAccess access(reg_, params, grads, hooks, unit_param_dtypes(), frozen_, &segments_);
  const bool backward = grads != nullptr || hooks != nullptr;
  trunk_.set_dropout(backward, seed, step);  // training drops, as upstream's train mode; evaluation does not
  ++micro_batches_;
  if (graphs_) segments_.start(graph_key(batch));
  try {
    run(access, backward, batch, step, denominators);
  } catch (...) {
    segments_.abandon();
    throw;
  }
  segments_.finish();
}

// Micro-batches of the same key share their spans' graphs, each updated from its capture
// (graph_segments.hpp, kernels/cuda/graph_cache.hpp). The key holds what decides the node
// sequences: the query and context tokens rounded up to a power of two, so that shapes close
// enough for cuBLASLt to pick the same kernels share a graph while the packed micro-batches'
// token counts vary below data.tokens_per_mb. gr00t's per-embodiment linears issue one GEMM per
// embodiment present; the cache tells those spans apart by their node count, so the blocks'
// spans, which do not depend on the embodiments, share graphs across embodiment mixes. With the
// CLIP context its rows (samples × clip_tokens) are rounded alike.
std::vector<int64_t> Model::graph_key(const PackedBatch& batch) const {
  auto bucket = [](int64_t tokens) {
    int64_t b = 1;
    while (b < tokens) b *= 2;
    return b;
  };
  std::vector<int64_t> key = {bucket(batch.n_tokens), bucket(batch.n_context)};
  if (cfg_.clip_tokens > 0) key.push_back(bucket(int64_t(batch.n_samples) * cfg_.clip_tokens));
  return key;
}

// Uploads the micro-batch to the backend (timed as h2d) and lays out the activations of its
// rows (planned again only when the rows or the blocks' dtype change).
void Model::prepare(const PackedBatch& batch, DType blocks) {
  const auto upload_start = std::chrono::steady_clock::now();
  dev_.upload(*ops_, cfg_, batch, layout_, draws_, time_rows_);
  upload_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - upload_start).count();
  const ActivationRows rows = activation_rows(cfg_, batch);
  EMB_ASSERT(dev_.time_t.rows <= rows.time_rows);
  if (!planned_rows_ || rows != *planned_rows_ || blocks != planned_blocks_) {
    ActivationPlan measure(nullptr, blocks);
    plan_activations(measure, rows);
    const ActivityLabel allocating("activations");  // what an out-of-memory error names
    arena_.reserve(measure.bytes());
    arena_.reset();
    ActivationPlan real(&arena_, blocks);
    plan_activations(real, rows);
    planned_rows_ = rows;
    planned_blocks_ = blocks;
  }
}

// Units forward in order, backward in reverse (unit_hooks.hpp): a trained context source's
// units first (context_source.hpp), then time_enc and the family's encoders, the trunk's blocks
// (a unit each), last the head. The gradients handed from one
// step to the next gather the shares of several (the head's and the blocks' of the
// conditioning, wan's head's and time_proj's of temb), so they start at zero before the first.
void Model::run(ParamAccess& P, bool backward, const PackedBatch& b, int64_t step,
                const std::vector<double>& denominators) {
  const int head_unit = reg_.n_units() - 1;
  if (context_source_) context_source_->forward(P, trained_context_, b, step);
  P.enter_forward(encoders_unit_);
  Ops& ops = *ops_;
  const int64_t Tu = dev_.time_t.rows;
  time_enc_.forward(ops, P, dev_.time_t);
  encode(P, b);
  trunk_.forward(ops, P, b, dev_);
  P.enter_forward(head_unit);
  if (loss_sums_.empty()) loss_sums_ = OpsBuffer<double>(ops, 2 * kLossSlots);
  if (pending_losses_.size() == size_t(kLossSlots)) segments_.outside([&] { taken_early_ = take_loss(); });
  pending_losses_.push_back(head(P, b, denominators, backward, loss_sums_.data() + 2 * pending_losses_.size()));
  if (!backward) return;

  trunk_.zero_grads(ops, b, dev_);
  time_enc_.zero_grads(ops, Tu);
  P.enter_backward(head_unit);
  head_backward(P);
  P.leave_backward(head_unit);
  trunk_.backward(ops, P, b, dev_);
  P.enter_backward(encoders_unit_);
  encode_backward(P, b);
  time_enc_.backward(ops, P, Tu);
  P.leave_backward(encoders_unit_);
  if (context_source_) context_source_->backward(P, trained_context_, context_gradient_);
}

ActivationBytes Model::activation_bytes(const PackedBatch& batch, DType blocks) {
  return activation_bytes(activation_rows(cfg_, batch), blocks);
}

ActivationBytes Model::activation_bytes(const ActivationRows& rows, DType blocks) {
  ActivationPlan measure(nullptr, blocks);
  plan_activations(measure, rows);
  planned_rows_.reset();  // measuring nulled the layout pointers: the next step plans again
  return measure.measured();
}

std::unique_ptr<Model> make_model(const ModelConfig& cfg, Ops* ops) {
  if (cfg.family == Family::gr00t) return make_gr00t_model(cfg, ops);
  return make_wan_model(cfg, ops);
}

}  // namespace emb
