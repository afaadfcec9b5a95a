// The policy of an embtrain gr00t checkpoint. The model comes from the deck stored in the
// checkpoint (its [sim] keys, overridable with --set, give K = sim.flow_steps and
// n = sim.exec_steps). Each call packs this rank's observations into ONE batch (state
// zero-padded to the model's Sd, vl features as context, the sample's embodiment) and
// samples a chunk for all of them at once: x₀ ~ N(0, I) keyed by (seed, episode, step), then
// K Euler steps x ← x + v_θ(x, k/K)/K of Model::flow_velocity (GR00T's t: 0 noise, 1 data);
// the first n actions (the task's columns, clipped to [-1, 1]) are executed. With
// sim.sde_noise = a > 0 one of the K steps, drawn per chunk, is the Flow-SDE step of RL's
// rollouts instead (policy_batch.hpp): the stochastic policy RL trains, evaluated as such.
// The observations' vl rows come from the encoder the checkpoint's features came from
// (checkpoint_vl.hpp, make_vl_encoder); a train.tune_visual checkpoint's model holds its tuned
// vision tower and mlp1 (with_tuned_backbone, as the trainer, init_from and export build it),
// which that encoder computes with. States and actions are normalised with the statistics the
// checkpoint recorded (policy_normalization.hpp), as its training run's loader normalised them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "kernels/ops_buffer.hpp"
#include "model/model.hpp"
#include "checkpoint_vl.hpp"
#include "observation.hpp"
#include "policy.hpp"
#include "rl/roles/policy_normalization.hpp"

namespace emb {

class Gr00tPolicy final : public Policy {
 public:
  // Throws emb::Error (one line naming the file) for a checkpoint that is not a complete
  // gr00t checkpoint. The policy computes on its deck's run.device (kernels/make_ops.hpp), on
  // the GPU of `local_rank`.
  Gr00tPolicy(const std::string& checkpoint, const std::vector<std::string>& deck_sets, uint64_t seed,
              int local_rank);
  std::string name() const override { return "checkpoint"; }
  // The encoder of this checkpoint's vl rows on its backend: the stand-in encoder sized by
  // `o` (--d-vl, --vl-grid) or the Eagle backbone (checkpoint_vl.hpp).
  std::unique_ptr<VlEncoder> make_vl_encoder(const ObservationOptions& o) override;
  void act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) override;

  // Throws emb::Error when the model cannot act in `task`: state/action widths narrower than
  // the task's, no slot for its embodiment, vl width not its encoder's (d_vl: the stand-in
  // encoder's; an Eagle backbone's hidden size), or training data (when its files are still
  // there) without the task's embodiment at the task's widths, or normalisation statistics
  // without it.
  void check_task(const TaskSpec& task, int d_vl) const;
  const CheckpointVl& vl_source() const { return vl_source_; }
  int64_t step() const { return step_; }
  int flow_steps() const { return flow_steps_; }
  int exec_steps() const { return exec_steps_; }
  double sde_noise() const { return sde_noise_; }
  const ModelConfig& config() const { return model_->config(); }
  // The checkpoint's parameters and AdamW moments (RL starts or resumes from them).
  const std::vector<float>& params() const { return params_; }
  const std::vector<float>& exp_avg() const { return exp_avg_; }
  const std::vector<float>& exp_avg_sq() const { return exp_avg_sq_; }
  const std::string& deck_text() const { return deck_text_; }  // the checkpoint's resolved deck
  // The checkpoint's record of its vl encoder (encoder "" when it has none).
  const VlFeaturesRecord& vl_features() const { return vl_features_; }
  const PolicyNormalization& normalization() const { return normalization_; }

 private:
  std::string path_, deck_text_;
  VlFeaturesRecord vl_features_;
  int64_t step_ = 0;
  uint64_t seed_;
  int flow_steps_ = 4, exec_steps_ = 4;
  double sde_noise_ = 0;  // sim.sde_noise: 0 = the ODE; > 0 = RL's rollout sampler
  std::vector<std::string> data_paths_;
  CheckpointVl vl_source_;
  PolicyNormalization normalization_;
  std::unique_ptr<Ops> ops_;  // the backend the policy computes on
  std::unique_ptr<Model> model_;
  std::vector<float> params_, exp_avg_, exp_avg_sq_;
  OpsBuffer<float> backend_params_;  // params_ in the backend's memory
};

}  // namespace emb
