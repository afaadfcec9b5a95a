// The messages between RL's groups (CLOSED_LOOP.md "Asynchrony"), serialised with
// rl/byte_message.hpp onto rl/channel.hpp's channels:
//   simulator → generator   ActionRequest: an environment's observation, asking for a chunk
//   generator → simulator   ActionReply: the chunk, and the stochastic transition that made it
//   simulator → trainer     Segment: an environment's consecutive transitions with rewards
//   trainer → everyone      Control: stop
// Every sample carries the policy version (trainer updates) whose weights produced it.
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

struct Observation {
  int32_t embodiment = 0;
  std::vector<float> state;   // the task's state
  std::vector<uint16_t> vl;   // float16 vl rows
};

struct ActionRequest {
  int32_t env = 0;          // global environment index (simulator · envs_per_simulator + slot)
  int64_t episode = 0;      // the environment's episode key (collect split)
  int32_t chunk = 0;        // chunks of this episode so far
  int32_t round = 0;        // sync / async_rollout: the simulator's round (0 in async)
  Observation obs;
};

struct ActionReply {
  int32_t env = 0;
  int64_t version = 0;       // policy version of the weights used
  int32_t k_first = 0, k_count = 1;  // the stochastic denoising steps: k_first .. k_first + k_count − 1
  double logp = 0;                   // log π_behav of those transitions (executed elements only)
  std::vector<float> chain;          // [k_count + 1, Hz·A] the chunk before each of them and after the last
  std::vector<float> actions;            // [exec_steps, task action_dim], clipped to [-1, 1]
};

struct Transition {
  Observation obs;
  int64_t version = 0;
  int32_t k_first = 0, k_count = 1;  // as in ActionReply
  double logp_behav = 0;
  std::vector<float> chain;
  float reward = 0;
  uint8_t done = 0;     // the episode ended with this chunk (success or time limit)
  uint8_t success = 0;  // it ended in success
  int32_t steps = 0;    // control steps this chunk executed
};

struct Segment {
  int32_t env = 0;
  std::vector<Transition> transitions;
  std::vector<float> next_state;  // the state after the last transition (bootstraps GAE when not done)
  int64_t episode = 0;  // the episode key its transitions belong to (a GRPO group's shared reset key)
  uint8_t diverged = 0;  // round modes: the unsent chunks of an episode whose physics diverged (never trained on)
};

std::vector<uint8_t> encode(const ActionRequest& m);
std::vector<uint8_t> encode(const ActionReply& m);
std::vector<uint8_t> encode(const Segment& m);
void decode(const std::vector<uint8_t>& bytes, ActionRequest& m);
void decode(const std::vector<uint8_t>& bytes, ActionReply& m);
void decode(const std::vector<uint8_t>& bytes, Segment& m);

}  // namespace emb
