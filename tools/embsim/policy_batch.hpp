// What every gr00t policy in the loop shares (evaluation's Gr00tPolicy, RL's generators and
// trainers): observations packed into one batch exactly as training data are, and the
// integration of the learned flow from noise to an action chunk, optionally with one
// Flow-SDE step per sample (rl/flow_sde.hpp) whose transition RL stores.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batch/packed_batch.hpp"
#include "model/model.hpp"

namespace emb {

struct PolicyObservation {
  int embodiment = 0;
  const std::vector<float>* state = nullptr;  // the task's state, zero-padded to the model's Sd
  const std::vector<uint16_t>* vl = nullptr;  // float16 vl rows
};

// [horizon · action_dim]: 1 on the elements a chunk executes (its first exec_steps rows, the
// task's first task_action_dim columns), 0 elsewhere: what RL's log-probabilities sum over.
std::vector<float> executed_mask(const ModelConfig& cfg, int exec_steps, int task_action_dim);

// One gr00t batch of the observations (sample_id[s] = index into obs; actions 0, mask 1).
// `what` names the source in packing errors.
PackedBatch pack_policy_batch(const ModelConfig& cfg, const std::vector<PolicyObservation>& obs,
                              const std::string& what);

// K Euler steps x ← μ_k(x, v_θ(x, k/K)) from x₀ = batch.actions, which ends as the chunk.
// With stochastic steps: sample s takes step k_star[s] as the Flow-SDE transition of
// noise_level, x' = μ + std·xi[s], and its x before / after that step are kept in
// x_before / x_after [B, Hz·A] and its velocity there in v_before. k_star empty: ODE only.
struct StochasticStep {
  std::vector<int> k_star;          // [B]
  std::vector<float> xi;            // [B, Hz·A] standard normal
  double noise_level = 0.5;
  std::vector<float> x_before, x_after, v_before;  // outputs
};
void integrate_flow(Model& model, const float* params, PackedBatch& batch, int K, StochasticStep* stochastic);

}  // namespace emb
