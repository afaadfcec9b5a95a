#include "gr00t_policy.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "data/h5_file.hpp"
#include "data/packed_dataset.hpp"
#include "data/packed_format.hpp"
#include "app/run_config_from_deck.hpp"
#include "kernels/make_ops.hpp"
#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "rl/roles/policy_batch.hpp"
#include "train/online_backbone.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {

namespace {

constexpr uint64_t kPolicyNoiseStream = 1ull << 62;  // flow_noise substreams beyond any training step
constexpr uint64_t kPolicySdeStream = (1ull << 62) + (1ull << 60);  // sim.sde_noise's draws, apart from x0's

// The deck stored in a checkpoint, parsed as embtrain would (a temporary file for load_deck).
Deck checkpoint_deck(const std::string& text, const std::vector<std::string>& sets) {
  namespace fs = std::filesystem;
  fs::path tmp = fs::temp_directory_path() / str("embsim-deck-", getpid(), ".in");
  {
    std::ofstream out(tmp);
    out << text;
  }
  try {
    Deck deck = load_deck(tmp.string(), sets);
    fs::remove(tmp);
    return deck;
  } catch (...) {
    fs::remove(tmp);
    throw;
  }
}

}  // namespace

Gr00tPolicy::Gr00tPolicy(const std::string& checkpoint, const std::vector<std::string>& deck_sets, uint64_t seed,
                         int local_rank)
    : path_(checkpoint), seed_(seed) {
  {
    CheckpointFile f(checkpoint, MPI_COMM_NULL, CheckpointFile::Access::read);
    f.expect_complete();
    const CheckpointMeta meta = read_checkpoint_meta(f);
    deck_text_ = meta.deck_text;
    step_ = meta.step;
    vl_features_ = meta.vl_features;
    normalization_ = PolicyNormalization(meta.normalization, checkpoint);
  }
  const RunConfig run = run_config_from_deck(checkpoint_deck(deck_text_, deck_sets));
  const ModelConfig& cfg = run.model;
  EMB_CHECK(cfg.family == Family::gr00t, checkpoint, ": a ", family_name(cfg.family),
            " checkpoint; embsim eval runs gr00t policies");
  flow_steps_ = run.sim.flow_steps;
  exec_steps_ = run.sim.exec_steps;
  sde_noise_ = run.sim.sde_noise;
  EMB_CHECK(exec_steps_ <= cfg.horizon, checkpoint, ": sim.exec_steps = ", exec_steps_, " exceeds the model's horizon ",
            cfg.horizon);
  data_paths_ = run.data.paths;
  vl_source_ = checkpoint_vl(checkpoint, run, vl_features_);
  ops_ = make_ops(run.backend, local_rank);
  model_ = make_model(with_tuned_backbone(cfg), ops_.get());  // train.tune_visual: the tuned tensors too
  const ParamRegistry& reg = model_->params();
  params_.resize(size_t(reg.total()));
  exp_avg_.resize(params_.size()), exp_avg_sq_.resize(params_.size());
  load_checkpoint(MPI_COMM_SELF, checkpoint, cfg.preset, reg, ShardLayout(reg, ShardMode::none, 0, 1), params_.data(),
                  OptimizerState{exp_avg_.data(), exp_avg_sq_.data()});
  backend_params_ = OpsBuffer<float>(*ops_, reg.total());
  ops_->upload(backend_params_.data(), params_.data(), params_.size() * sizeof(float));
}

void Gr00tPolicy::check_task(const TaskSpec& task, int d_vl) const {
  const ModelConfig& c = model_->config();
  EMB_CHECK(task.embodiment < c.n_embodiments, path_, ": the model has ", c.n_embodiments,
            " embodiments; task ", task.name, " is embodiment ", task.embodiment);
  normalization_.check(task.embodiment, task.state_dim, task.action_dim);
  const int state_width = normalization_.state_width(task.embodiment, task.state_dim);  // as the model sees it
  EMB_CHECK(c.state_dim >= state_width && c.action_dim >= task.action_dim, path_, ": model state/action widths ",
            c.state_dim, "/", c.action_dim, " are narrower than task ", task.name, "'s ", state_width, "/",
            task.action_dim, state_width != task.state_dim ? " (its state per-key transformed)" : "");
  if (vl_source_.kind == CheckpointVl::Kind::stand_in)
    EMB_CHECK(c.d_ctx == d_vl, path_, ": the model's vl width is ", c.d_ctx, ", the observations' (--d-vl) ", d_vl);
  else  // trained on Eagle features: the backbone's width (its config) must be the head's
    online_backbone_dims(with_backbone_of(vl_source_, c));
  bool any_file = false;
  std::string seen;
  for (const std::string& p : data_paths_) {
    if (!std::filesystem::is_regular_file(p)) continue;
    any_file = true;
    H5File f = H5File::open(p);
    if (!f.has(packed::kEmbodimentStateDim)) continue;
    std::vector<int32_t> sd = f.read_all<int32_t>(packed::kEmbodimentStateDim);
    std::vector<int32_t> ad = f.read_all<int32_t>(packed::kEmbodimentActionDim);
    for (int32_t e : f.read_all<int32_t>(packed::kEpisodeEmbodiment)) {
      bool match = e == task.embodiment && size_t(e) < sd.size() && sd[size_t(e)] == task.state_dim &&
                   ad[size_t(e)] == task.action_dim;
      if (match) return;
    }
    seen += (seen.empty() ? "" : ", ") + p;
  }
  EMB_CHECK(!any_file, path_, ": trained on data without task ", task.name, "'s embodiment ", task.embodiment,
            " (state ", task.state_dim, ", action ", task.action_dim, "): ", seen);
}

std::unique_ptr<VlEncoder> Gr00tPolicy::make_vl_encoder(const ObservationOptions& o) {
  const ModelConfig& c = model_->config();
  const float* tuned = nullptr;
  if (vl_source_.kind == CheckpointVl::Kind::tuned_eagle)
    tuned = backend_params_.data() + model_->params().get(c.trained_context.front().name).offset;
  return emb::make_vl_encoder(vl_source_, c, o, ops_.get(), tuned);
}

void Gr00tPolicy::act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) {
  const ModelConfig& cfg = model_->config();
  const size_t per_sample = size_t(cfg.horizon) * cfg.action_dim;
  std::vector<std::vector<float>> states;  // as the model saw states in training
  for (const PolicyInput& in : inputs) states.push_back(normalization_.state(in.env->task().embodiment, in.state));
  std::vector<PolicyObservation> obs;
  for (size_t i = 0; i < inputs.size(); ++i) obs.push_back({inputs[i].env->task().embodiment, &states[i], &inputs[i].vl});
  PackedBatch batch = pack_policy_batch(cfg, obs, path_);
  const int B = batch.n_samples;
  // Noise of the input in slot s (and with sim.sde_noise its stochastic step's draws), keyed by
  // its episode and step: the same whatever the batch.
  const bool stochastic = sde_noise_ > 0;
  StochasticSteps sde;
  sde.noise_level = sde_noise_;
  if (stochastic) sde.resize(B, flow_steps_, per_sample);
  for (int s = 0; s < B; ++s) {
    const PolicyInput& in = inputs[size_t(batch.sample_id[size_t(s)])];
    const uint64_t episode = uint64_t(in.episode), step = uint64_t(in.env->steps());
    CounterRng noise(seed_, RngStream::flow_noise, kPolicyNoiseStream + episode, step);
    noise.normals(0, int64_t(per_sample), &batch.actions[s * per_sample]);
    if (stochastic)
      draw_stochastic_steps(sde, SdeSteps::one, s, per_sample, flow_steps_,
                            CounterRng(seed_, RngStream::flow_time, kPolicySdeStream + episode, step),
                            CounterRng(seed_, RngStream::flow_noise, kPolicySdeStream + episode, step));
  }
  integrate_flow(*model_, backend_params_.data(), batch, flow_steps_, stochastic ? &sde : nullptr);
  chunks.resize(inputs.size());
  for (int s = 0; s < B; ++s) {
    const size_t i = size_t(batch.sample_id[size_t(s)]);
    const int task_A = inputs[i].env->task().action_dim;
    normalization_.unnormalize_actions(inputs[i].env->task().embodiment, &batch.actions[s * per_sample], exec_steps_,
                                       cfg.action_dim, task_A);
    normalization_.add_observed_state(inputs[i].env->task().embodiment, inputs[i].state, &batch.actions[s * per_sample],
                                      exec_steps_, cfg.action_dim);
    chunks[i].resize(size_t(exec_steps_) * task_A);
    for (int h = 0; h < exec_steps_; ++h)
      for (int k = 0; k < task_A; ++k)
        chunks[i][size_t(h * task_A + k)] =
            std::clamp(batch.actions[s * per_sample + size_t(h * cfg.action_dim + k)], -1.f, 1.f);
  }
}

}  // namespace emb
