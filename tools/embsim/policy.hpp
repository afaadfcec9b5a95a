// Policies `embsim eval` runs in closed loop. Each call gets the observations of every
// environment of this rank that needs actions and returns one action chunk per environment,
// executed until it runs out (or the episode ends) before the policy is asked again.
//   checkpoint  the gr00t action head of an embtrain checkpoint (gr00t_policy.hpp)
//   expert      the scripted expert (sim/expert.hpp), one action per call
//   zero        all-zero actions: the arm holds still (a baseline)
//   random      uniform actions in [-1, 1] keyed by (seed, episode, step) (a baseline)
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "observation.hpp"
#include "sim/env.hpp"
#include "sim/expert.hpp"

namespace emb {

struct PolicyInput {
  const Env* env = nullptr;
  int64_t episode = 0;                 // eval-split episode index (its RNG key)
  std::string instruction;
  std::vector<float> state;            // [task.state_dim]
  std::vector<uint16_t> vl;            // float16 vl rows (empty when the policy needs no images)
};

class Policy {
 public:
  virtual ~Policy() = default;
  virtual std::string name() const = 0;
  // The encoder of the vl rows act() reads from PolicyInput::vl; nullptr when it reads none
  // (baselines: no rendering).
  virtual std::unique_ptr<VlEncoder> make_vl_encoder(const ObservationOptions&) { return nullptr; }
  // chunks[i]: [len, task.action_dim] for inputs[i], len >= 1.
  virtual void act(const std::vector<PolicyInput>& inputs, std::vector<std::vector<float>>& chunks) = 0;
};

// "expert", "zero" or "random"; nullptr for any other name.
std::unique_ptr<Policy> make_baseline_policy(const std::string& name, uint64_t seed);

}  // namespace emb
