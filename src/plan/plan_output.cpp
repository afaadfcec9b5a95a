#include "plan/plan_output.hpp"

#include <algorithm>
#include <cstdio>

#include "core/error.hpp"

namespace emb {
namespace {

const char* recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

double gib(double bytes) { return bytes / double(1ull << 30); }

std::string duration(double s) {
  char buf[64];
  if (s < 1)
    std::snprintf(buf, sizeof buf, "%.1f ms", s * 1e3);
  else if (s < 120)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.2f h", s / 3600);
  return buf;
}

std::string fixed_costs_text(const FixedCostPrediction& f, bool graphs) {
  std::string t = str("  fixed costs          ", duration(f.total_s), " = ", f.op_calls, " op calls ",
                      duration(f.op_calls_s), " + ", f.allocations, " host allocations ", duration(f.allocations_s),
                      " + ", f.syncs, " host reductions ", duration(f.syncs_s));
  if (f.noise_draws > 0) t += str(" + ", f.noise_draws, " noise draws ", duration(f.noise_draws_s));
  if (f.launches > 0)
    t += str(" + ", f.launches, graphs ? " graph kernel nodes " : " kernel launches ", duration(f.launches_s));
  return t + "\n";
}

// A pass's compute by the kinds run.profile_ops measures (train/op_profile.hpp).
std::string kinds_text(const ComputeKinds& k) {
  return str("GEMM ", duration(k.gemm), ", attention ", duration(k.attention), ", dropout ", duration(k.dropout),
             ", elementwise ", duration(k.elementwise), ", host time (op calls, noise draws) ", duration(k.host));
}

nlohmann::json fixed_costs_json(const FixedCostPrediction& f) {
  return {{"op_calls", f.op_calls},
          {"allocations", f.allocations},
          {"noise_draws", f.noise_draws},
          {"syncs", f.syncs},
          {"launches", f.launches},
          {"seconds",
           {{"op_calls", f.op_calls_s}, {"allocations", f.allocations_s}, {"noise_draws", f.noise_draws_s},
            {"syncs", f.syncs_s}, {"launches", f.launches_s}, {"total", f.total_s}}}};
}

std::string row(const StepPrediction& s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-5s %-9s %5d %7.0f  %10s %9.3f %6.1f%% %8.1f  %s\n", shard_mode_name(s.w.shard),
                recompute_name(s.w.model.recompute), s.samples_per_mb, s.w.bucket_bytes / (1 << 20),
                duration(s.step_s).c_str(), s.samples_per_s_per_device, 100 * s.mfu, gib(s.memory_bytes),
                s.fits ? "fits" : "does not fit");
  return buf;
}

// The deck keys that turn the deck's configuration into `best`, as --set arguments (empty:
// the deck's is the best). A micro-batch is set by its tokens, as the packer fills it.
std::string settings_of(const StepPrediction& deck, const StepPrediction& best) {
  std::string t;
  if (best.w.shard != deck.w.shard) t += str(" --set train.shard=", shard_mode_name(best.w.shard));
  if (best.w.model.recompute != deck.w.model.recompute)
    t += str(" --set model.recompute=", recompute_name(best.w.model.recompute));
  if (best.samples_per_mb != deck.samples_per_mb) t += str(" --set data.tokens_per_mb=", best.tokens_per_mb);
  if (best.buckets != deck.buckets) t += str(" --set train.bucket_mb=", best.w.bucket_bytes / (1 << 20));
  return t;
}

nlohmann::json kinds_json(const ComputeKinds& k) {
  return {{"gemm", k.gemm}, {"attention", k.attention}, {"dropout", k.dropout}, {"elementwise", k.elementwise},
          {"host", k.host}};
}

}  // namespace

nlohmann::json prediction_json(const StepPrediction& s) {
  nlohmann::json collectives = nlohmann::json::array();
  for (const CollectiveCost& c : s.collectives)
    collectives.push_back({{"what", c.what}, {"op", collective_name(c.op)}, {"bytes_per_pass", c.bytes},
                           {"buckets", c.buckets}, {"passes_per_step", c.per_step}, {"algorithm", c.algorithm},
                           {"seconds", c.seconds}});
  return {
      {"config",
       {{"ranks", s.w.ranks}, {"nodes", s.nodes}, {"shard", shard_mode_name(s.w.shard)}, {"recompute", recompute_name(s.w.model.recompute)},
        {"precision", s.w.model.precision == Precision::bf16 ? "bf16" : "fp32"}, {"fp8", s.w.fp8},
        {"packing", s.w.packing}, {"context_tokens_per_sample", s.w.sample.context_tokens},
        {"context_tokens_std", s.w.sample.context_tokens_std},
        {"padded_context", s.w.sample.padded_context}, {"global_batch", s.w.global_batch},
        {"samples_per_rank", s.samples_per_rank}, {"samples_per_micro_batch", s.samples_per_mb},
        {"tokens_per_micro_batch", s.tokens_per_mb}, {"micro_batches", s.micro_batches},
        {"bucket_mib", s.w.bucket_bytes / (1 << 20)}, {"buckets", s.buckets}, {"overlap", s.w.overlap},
        {"cuda_graphs", s.w.cuda_graphs}}},
      {"seconds",
       {{"step", s.step_s}, {"compute", s.compute_s}, {"forward", s.fwd_s}, {"backward", s.bwd_s},
        {"recompute", s.recompute_s}, {"imbalance", s.imbalance_s}, {"data_spread", s.data_spread_s}, {"comm_total", s.comm_total_s}, {"comm_exposed", s.comm_exposed_s},
        {"optimizer", s.optimizer_s}, {"fixed", s.fixed.total_s}, {"data_wait", s.data_wait_s}, {"loader", s.loader_s},
        {"loader_beside_gathers", s.loader_beside_gathers_s}, {"epoch", s.epoch_s},
        {"checkpoint", s.checkpoint_s}, {"preemption_signal", s.preemption_signal_s},
        {"comm_core", s.comm_core_fwd_s + s.comm_core_bwd_s}, {"partner_polls", s.partner_polls_s},
        {"comm_head", s.comm_head_s},
        {"weight_traffic", s.weight_traffic_s},
        {"gradient_buffers", s.gradient_backward_s + s.gradient_step_s}, {"bf16_round", s.bf16_round_s}}},
      // The step's parts named as the trainer's summary.json names them (they sum to the step).
      {"phases",
       {{"data_wait", s.phases.data_wait}, {"fwd", s.phases.fwd}, {"bwd", s.phases.bwd},
        {"comm_exposed", s.phases.comm_exposed}, {"optim", s.phases.optim}, {"other", s.phases.other}}},
      // The passes' own compute by the kinds run.profile_ops sums a run's ops in (train/op_profile.hpp).
      {"compute_by_kind", {{"fwd", kinds_json(s.fwd_kinds)}, {"bwd", kinds_json(s.bwd_kinds)}}},
      {"elementwise_bytes", {{"fwd", s.elementwise_bytes_fwd}, {"bwd", s.elementwise_bytes_bwd}}},
      {"flops_per_sample", s.flops_per_sample},
      {"recompute_flops_per_sample", s.recompute_flops_per_sample},
      {"samples_per_s_per_device", s.samples_per_s_per_device},
      {"mfu", s.mfu},
      {"data", {{"bytes_per_sample", s.data_bytes_per_sample}, {"bytes_per_s_per_node", s.data_bytes_per_s_per_node}}},
      {"memory_bytes",
       {{"state", s.state_bytes}, {"activations", s.activation_bytes}, {"blas_workspace", s.blas_workspace_bytes},
        {"comm_library", s.comm_library_bytes}, {"reserved", s.reserved_bytes},
        {"total", s.memory_bytes}, {"capacity", s.capacity_bytes}, {"fits", s.fits}}},
      {"checkpoint_bytes", s.checkpoint_bytes},
      {"fixed_costs", fixed_costs_json(s.fixed)},
      {"collectives", collectives},
  };
}

nlohmann::json plan_json(const Hardware& hw, const StepPrediction& deck, const std::vector<StepPrediction>& ranked) {
  nlohmann::json list = nlohmann::json::array();
  for (const StepPrediction& s : ranked) list.push_back(prediction_json(s));
  return {{"hardware", {{"name", hw.name}, {"file", hw.path}}},
          {"preset", deck.w.model.preset},
          {"deck", prediction_json(deck)},
          {"ranked", list}};
}

std::string prediction_text(const Hardware& hw, const StepPrediction& s, const std::vector<StepPrediction>& ranked,
                            size_t top) {
  std::string t;
  t += str("prediction on ", hw.name, " (", hw.path, "), ", s.w.ranks, " ranks on ", s.nodes, " node(s)\n");
  t += str("  per rank             ", s.samples_per_rank, " samples in ", s.micro_batches, " micro-batch(es) of ",
           s.samples_per_mb, ", ", s.buckets, " bucket(s) of <= ", s.w.bucket_bytes / (1 << 20), " MiB\n");
  t += str("  step                 ", duration(s.step_s), " = compute ", duration(s.compute_s), " (forward ",
           duration(s.fwd_s), ", backward ", duration(s.bwd_s), ", recompute ", duration(s.recompute_s),
           s.weight_traffic_s > 0 ? str("; of these, weights read from memory ", duration(s.weight_traffic_s)) : std::string(),
           s.imbalance_s > 0 ? str(", waits for the slowest rank ", duration(s.imbalance_s)) : std::string(),
           s.data_spread_s > 0 ? str(" (a rank's compute spread by its samples' context lengths ", duration(s.data_spread_s),
                                     ": ", s.w.sample.context_tokens, " ± ", std::llround(s.w.sample.context_tokens_std),
                                     " tokens)")
                               : std::string(),
           ")",
           s.comm_core_fwd_s + s.comm_core_bwd_s > 0
               ? str(" + collectives on the compute's core ", duration(s.comm_core_fwd_s + s.comm_core_bwd_s))
               : std::string(),
           s.comm_head_s > 0 ? str(" + first gathers under the step's head ", duration(s.comm_head_s)) : std::string(),
           " + exposed comm ", duration(s.comm_exposed_s), " (of ", duration(s.comm_total_s),
           s.partner_polls_s > 0
               ? str("; it and the core's each hold half of the ", duration(s.partner_polls_s),
                     " that ranks sharing a core poll in the closing collectives while their partners compute")
               : std::string(),
           ") + gradient buffers ",
           duration(s.gradient_backward_s + s.gradient_step_s), " + optimizer ", duration(s.optimizer_s),
           s.bf16_round_s > 0 ? str(" + bf16 copy ", duration(s.bf16_round_s)) : std::string(), " + fixed ",
           duration(s.fixed.total_s), " + data wait ", duration(s.data_wait_s),
           s.loader_s > 0 ? str(" (the loader's assembly and packing of a rank's samples ", duration(s.loader_s),
                                ", timed on this host",
                                s.loader_beside_gathers_s > 0
                                    ? str(", + ", duration(s.loader_beside_gathers_s), " beside the first gathers")
                                    : std::string(),
                                ")")
                          : std::string(),
           "\n");
  t += str("    forward by kind: ", kinds_text(s.fwd_kinds), "\n    backward by kind: ", kinds_text(s.bwd_kinds),
           " (run.profile_ops = on measures them)\n");
  for (const CollectiveCost& c : s.collectives)
    t += str("    ", c.what, ": ", gib(c.bytes), " GiB in ", c.buckets, " call(s), ", c.per_step, " time(s) per step, ",
             c.algorithm, ", ", duration(c.seconds), "\n");
  t += fixed_costs_text(s.fixed, s.w.cuda_graphs);
  t += str("  throughput           ", s.samples_per_s_per_device, " samples/s per device, MFU ", 100 * s.mfu, " %\n");
  t += str("  epoch                ",
           s.epoch_s > 0 ? str(duration(s.epoch_s), " for ", s.w.dataset_samples, " samples")
                         : std::string("unknown (set plan.dataset_samples or data.paths)"),
           "\n");
  t += str("  data                 ", s.data_bytes_per_sample / 1e6, " MB per sample, ",
           s.data_bytes_per_s_per_node / 1e9, " GB/s per node\n");
  t += str("  memory per device    ", gib(s.memory_bytes), " GiB = state ", gib(s.state_bytes), " + activations ",
           gib(s.activation_bytes),
           s.blas_workspace_bytes > 0 ? str(" + cuBLASLt workspace ", gib(s.blas_workspace_bytes)) : std::string(),
           s.comm_library_bytes > 0 ? str(" + NCCL ", gib(s.comm_library_bytes)) : std::string(), " + reserve ",
           gib(s.reserved_bytes), " of ", gib(s.capacity_bytes), " GiB: ",
           s.fits ? str("fits, ", gib(s.capacity_bytes - s.memory_bytes), " GiB headroom") : std::string("DOES NOT FIT"),
           "\n");
  t += str("  checkpoint           ", gib(s.checkpoint_bytes), " GiB in ", duration(s.checkpoint_s),
           "; Slurm pre-emption --signal=B:USR1@", int64_t(s.preemption_signal_s), "\n");
  t += "configurations, best first (shard, recompute, samples per micro-batch, bucket MiB):\n";
  t += "  shard recompute    mb  bucket        step samples/s    MFU   GiB/dev\n";
  for (size_t i = 0; i < std::min(top, ranked.size()); ++i) t += row(ranked[i]);
  if (!ranked.empty()) {
    // Against the deck's own row: the table's micro-batches are of equal samples.
    const auto own = std::find_if(ranked.begin(), ranked.end(),
                                  [&](const StepPrediction& r) { return settings_of(s, r).empty(); });
    const std::string settings = settings_of(s, ranked.front());
    t += settings.empty() ? std::string("  the deck's configuration is the best predicted\n")
                          : str("  to run the best:", settings, " (", duration(ranked.front().step_s), " against ",
                                duration(own != ranked.end() ? own->step_s : s.step_s), " as the deck is)\n");
  }
  return t;
}

namespace {

// The throughput and epoch of the deck's step with a frozen encoder's forward (forward_s per
// sample: gr00t's backbone, wan's encoders) added per sample.
struct WithFrozen {
  double head_s = 0, online_s = 0, online_samples_per_s = 0, online_epoch_s = 0, offline_features_s = 0;
};
WithFrozen with_frozen_forward(double forward_s, const StepPrediction& s) {
  WithFrozen w;
  if (s.samples_per_s_per_device <= 0) return w;
  w.head_s = 1 / s.samples_per_s_per_device;
  w.online_s = w.head_s + forward_s;
  w.online_samples_per_s = 1 / w.online_s;
  if (s.epoch_s > 0) {
    w.online_epoch_s = s.epoch_s * w.online_s / w.head_s;
    // embpack features on the same devices: every sample once.
    w.offline_features_s = double(s.w.dataset_samples) * forward_s / std::max(1, s.w.ranks);
  }
  return w;
}

// The two ways a frozen encoder's features reach the step: made once by embpack, or in every
// step as upstream runs it.
std::string offline_online_text(const WithFrozen& w, const StepPrediction& s, const char* trained) {
  std::string t = str("  offline features     ", trained, " alone: ", s.samples_per_s_per_device, " samples/s per device",
                      w.offline_features_s > 0 ? str("; embpack features once: ", duration(w.offline_features_s),
                                                     " on ", s.w.ranks, " device(s)")
                                               : std::string(),
                      "\n");
  t += str("  online (as upstream) ", duration(w.online_s), " per sample per device: ", w.online_samples_per_s,
           " samples/s per device",
           w.online_epoch_s > 0 ? str(", epoch ", duration(w.online_epoch_s)) : std::string(), "\n");
  return t;
}

nlohmann::json online_json(const WithFrozen& w) {
  return {{"s_per_sample", w.online_s}, {"samples_per_s_per_device", w.online_samples_per_s},
          {"epoch_s", w.online_epoch_s}};
}

}  // namespace

std::string backbone_text(const Hardware& hw, const BackboneCost& b, const StepPrediction& s) {
  const WithFrozen w = with_frozen_forward(b.forward_s, s);
  std::string t = str("backbone (GR00T-N1.5 Eagle 2.5, frozen, bf16 forward) per sample of ", b.views, " view(s), ",
                      b.prompt_tokens, " tokens on ", hw.name, ":\n");
  t += str("  backbone             ", b.flops() / 1e12, " TFLOP (vision ", b.vision_flops / 1e12, ", LLM ",
           b.llm_flops / 1e12, "; attention ", b.attention_flops / 1e12, ") = ", duration(b.forward_s), "; weights ",
           gib(b.weight_bytes), " GiB\n");
  t += str("  head (this deck)     ", (s.flops_per_sample + s.recompute_flops_per_sample) / 1e12,
           " TFLOP forward + backward = ", duration(w.head_s), " per sample per device\n");
  return t + offline_online_text(w, s, "head");
}

nlohmann::json backbone_json(const BackboneCost& b, const StepPrediction& s) {
  const WithFrozen w = with_frozen_forward(b.forward_s, s);
  return {{"views", b.views},
          {"prompt_tokens", b.prompt_tokens},
          {"flops_per_sample", {{"vision", b.vision_flops}, {"llm", b.llm_flops}, {"attention", b.attention_flops}}},
          {"forward_s_per_sample", b.forward_s},
          {"weight_bytes", b.weight_bytes},
          {"forward_bytes_per_sample", b.forward_bytes},
          {"head_s_per_sample", w.head_s},
          {"online", online_json(w)},
          {"offline_features_s", w.offline_features_s}};
}

std::string encoders_text(const Hardware& hw, const EncoderSample& sample, const EncoderCost& e,
                          const StepPrediction& s) {
  const WithFrozen w = with_frozen_forward(e.forward_s, s);
  std::string t = str("encoders (DreamZero's frozen ", sample.vae.name(), ", umT5-XXL, CLIP ViT-H/14; bf16 forward) per "
                      "sample of ", sample.frames, " frames at ", sample.height, "x", sample.width, ", ",
                      sample.text_rows, " text rows on ", hw.name, ":\n");
  t += str("  encoders             ", e.flops() / 1e12, " TFLOP (VAE ", e.vae_flops / 1e12,
           sample.i2v_condition ? " with the I2V y pass" : "", ", umT5 ", e.umt5_flops / 1e12, ", CLIP ",
           e.clip_flops / 1e12, "; attention ", e.attention_flops() / 1e12, ") = ", duration(e.forward_s),
           "; weights ", gib(e.weight_bytes), " GiB, forward activations ", gib(e.forward_bytes), " GiB\n");
  t += str("  upstream's work      ", e.upstream_flops / 1e12, " TFLOP = ", duration(e.upstream_forward_s),
           ": umT5 over all 512 padded rows (", e.umt5_padded_flops / 1e12,
           " TFLOP; embtrain computes the real ones) and the I2V y pass (DreamZero computes it on every model)\n");
  t += str("  DiT (this deck)      ", (s.flops_per_sample + s.recompute_flops_per_sample) / 1e12,
           " TFLOP forward + backward = ", duration(w.head_s), " per sample per device\n");
  return t + offline_online_text(w, s, "DiT");
}

nlohmann::json encoders_json(const EncoderSample& sample, const EncoderCost& e, const StepPrediction& s) {
  const WithFrozen w = with_frozen_forward(e.forward_s, s);
  return {{"vae", sample.vae.name()},
          {"frames", sample.frames},
          {"height", sample.height},
          {"width", sample.width},
          {"i2v_condition", sample.i2v_condition},
          {"text_rows", sample.text_rows},
          {"flops_per_sample", {{"vae", e.vae_flops}, {"umt5", e.umt5_flops}, {"clip", e.clip_flops},
                                {"attention", e.attention_flops()}, {"umt5_padded_rows", e.umt5_padded_flops}}},
          {"forward_s_per_sample", e.forward_s},
          {"weight_bytes", e.weight_bytes},
          {"forward_bytes_per_sample", e.forward_bytes},
          {"dit_s_per_sample", w.head_s},
          {"online", online_json(w)},
          {"upstream_work", {{"flops_per_sample", e.upstream_flops}, {"forward_s_per_sample", e.upstream_forward_s},
                             {"online", online_json(with_frozen_forward(e.upstream_forward_s, s))}}},
          {"offline_features_s", w.offline_features_s}};
}

}  // namespace emb
