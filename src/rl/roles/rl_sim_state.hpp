// What a simulator keeps for train.resume: at the end of every round (rl.mode = sync or
// async_rollout; rl_checkpoint.hpp; a stop signal may checkpoint any version), each
// environment's episode key, its started-episode count, its chunk and the actions executed so
// far in its episode, and the rank's counts (the diverged ones too). An episode is fixed by its key and its actions (Env::reset, MuJoCo steps are
// deterministic), so replaying them restores the physics exactly without storing MuJoCo's
// state. <ckpt_dir>/sim<index>_<8 digits>.h5, written before the round's segments leave the
// simulator: a checkpoint of that version cannot exist without it. Async runs have no round
// boundary to cut at and keep none: a resumed async run starts new episodes.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb {

struct SimSlotState {
  int64_t episode = 0, started = 0;
  int64_t chunk = 0;
  std::vector<float> actions;  // executed in this episode, action_dim per control step
};

struct SimState {
  std::vector<SimSlotState> slots;
  int64_t env_steps = 0, episodes = 0, successes = 0, chunks = 0;
  int64_t diverged_resets = 0, diverged_chunks = 0;  // 0 in states written before they were kept
};

std::string sim_state_path(const std::string& ckpt_dir, int64_t version, int sim_index);

// Written through "<path>.tmp" and renamed into place.
void save_sim_state(const std::string& path, const SimState& state);

// Throws emb::Error naming the file when it is missing or not a simulator state.
SimState load_sim_state(const std::string& path);

}  // namespace emb
