// What every gr00t policy in the loop shares (evaluation's Gr00tPolicy, RL's generators and
// trainers): observations packed into one batch exactly as training data are, and the
// integration of the learned flow from noise to an action chunk, optionally with one
// Flow-SDE step per sample (rl/flow_sde.hpp) whose transition RL stores.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "batch/packed_batch.hpp"
#include "core/rng.hpp"
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
// With stochastic steps: sample s takes steps k_first[s] .. k_first[s] + k_count[s] − 1 as
// Flow-SDE transitions of noise_level, the j-th of them x' = μ + std·xi[s, j]; the x before
// each of them and after the last are kept in chain[s] and the velocities there in velocity[s].
// Without: ODE only.
struct StochasticSteps {
  double noise_level = 0.5;
  std::vector<int> k_first, k_count;  // [B]
  std::vector<float> xi;              // [B, K, Hz·A] standard normal (rows past k_count unused)
  std::vector<float> chain;           // output [B, K + 1, Hz·A] (rows 0 .. k_count)
  std::vector<float> velocity;        // output [B, K, Hz·A] (rows 0 .. k_count − 1)
  void resize(int B, int K, size_t per);
};
void integrate_flow(Model& model, const float* params, PackedBatch& batch, int K, StochasticSteps* stochastic);

// Which denoising steps of a chunk are stochastic (rl.sde_steps): `one` drawn uniformly per chunk
// (πRL's Flow-SDE as RLinf runs it: the cheapest log π), or `all` K (DPPO / ReinFlow: the whole
// chain's noise is the policy's, so the log-probability accounts for all of it but x₀).
enum class SdeSteps { one, all };
SdeSteps sde_steps_from_name(const std::string& name);

// Sample b's draws (RL's rollouts and `sim.sde_noise` evaluation sample alike): its steps (`one`:
// k uniform over the K steps from `k_draw`), xi[b] (`per` = Hz·A normals a step) from `xi_draw`.
// `sde` must already be resized to the batch.
void draw_stochastic_steps(StochasticSteps& sde, SdeSteps which, int b, size_t per, int K, const CounterRng& k_draw,
                           const CounterRng& xi_draw);

}  // namespace emb
