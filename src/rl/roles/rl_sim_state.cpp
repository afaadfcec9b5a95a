#include "rl/roles/rl_sim_state.hpp"

#include <filesystem>

#include "checkpoint/checkpoint_dir.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/h5_file.hpp"

namespace emb {

std::string sim_state_path(const std::string& ckpt_dir, int64_t version, int sim_index) {
  return str(ckpt_dir, "/sim", sim_index, "_", checkpoint_step_digits(version), ".h5");
}

void save_sim_state(const std::string& path, const SimState& state) {
  std::vector<int64_t> slots;  // [slots, 4]: episode, started, chunk, actions
  std::vector<float> actions;  // every slot's, in slot order
  for (const SimSlotState& s : state.slots) {
    slots.insert(slots.end(), {s.episode, s.started, s.chunk, int64_t(s.actions.size())});
    actions.insert(actions.end(), s.actions.begin(), s.actions.end());
  }
  const int64_t counts[6] = {state.env_steps,       state.episodes,       state.successes,
                             state.chunks,          state.diverged_resets, state.diverged_chunks};
  const std::string tmp = path + ".tmp";
  {
    H5File f = H5File::create(tmp);
    f.write("slots", {int64_t(state.slots.size()), 4}, slots.data());
    if (!actions.empty()) f.write("actions", {int64_t(actions.size())}, actions.data());  // none at episode starts
    f.write("counts", {6}, counts);
  }
  publish_durably(tmp, path);
}

SimState load_sim_state(const std::string& path) {
  EMB_CHECK(std::filesystem::is_regular_file(path), path,
            ": no such simulator state (train.resume continues a round-mode run from the checkpoint's version)");
  H5File f = H5File::open(path);
  const std::vector<int64_t> slots = f.read_all<int64_t>("slots"), counts = f.read_all<int64_t>("counts");
  const std::vector<float> actions = f.has("actions") ? f.read_all<float>("actions") : std::vector<float>();
  EMB_CHECK(slots.size() % 4 == 0 && (counts.size() == 4 || counts.size() == 6), path, ": not a simulator state");
  SimState state;
  size_t next = 0;
  for (size_t e = 0; e < slots.size() / 4; ++e) {
    const size_t n = size_t(slots[4 * e + 3]);
    EMB_CHECK(next + n <= actions.size(), path, ": environment ", e, "'s actions are cut short");
    state.slots.push_back({slots[4 * e], slots[4 * e + 1], slots[4 * e + 2],
                           std::vector<float>(actions.begin() + int64_t(next), actions.begin() + int64_t(next + n))});
    next += n;
  }
  state.env_steps = counts[0], state.episodes = counts[1], state.successes = counts[2], state.chunks = counts[3];
  if (counts.size() == 6) state.diverged_resets = counts[4], state.diverged_chunks = counts[5];
  return state;
}

}  // namespace emb
