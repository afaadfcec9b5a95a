#include "rl/roles/rl_checkpoint.hpp"

#include <filesystem>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "checkpoint/checkpoint.hpp"

namespace emb {

std::string rl_sidecar_path(const std::string& policy_checkpoint) {
  namespace fs = std::filesystem;
  const fs::path p(policy_checkpoint);
  std::string stem = p.filename().string();  // step_XXXXXXXX.h5
  if (stem.rfind("step_", 0) != 0) return "";
  const fs::path side = p.parent_path() / ("rl_" + stem.substr(5));
  return fs::is_regular_file(side) ? side.string() : "";
}

std::string save_rl_checkpoint(const RlSetup& s, RlLearner& learner) {
  const ParamRegistry& reg = learner.registry();
  std::vector<float> m(size_t(reg.total())), v(size_t(reg.total()));
  learner.optimizer().download_state(OptimizerState{m.data(), v.data()});
  CheckpointMeta meta;
  meta.step = learner.version();
  meta.seed = s.o.seed;
  meta.preset = s.cfg.preset;
  meta.deck_text = s.sft_deck_text;
  const std::string path = save_checkpoint(MPI_COMM_SELF, s.o.ckpt_dir, reg, learner.layout(),
                                           learner.params().data(), OptimizerState{m.data(), v.data()}, meta);
  namespace fs = std::filesystem;
  const fs::path side = fs::path(s.o.ckpt_dir) / ("rl_" + fs::path(path).filename().string().substr(5));
  const std::string tmp = side.string() + ".tmp";
  {
    ValueHead& vh = learner.value_head();
    std::vector<float> state = vh.params();
    state.insert(state.end(), vh.moment1().begin(), vh.moment1().end());
    state.insert(state.end(), vh.moment2().begin(), vh.moment2().end());
    H5File f = H5File::create(tmp);
    f.write("value_head", {int64_t(state.size())}, state.data());
    f.set_attr("/", "version", double(learner.version()));
    f.set_attr("/", "value_steps", double(learner.value_steps()));
    f.set_attr("/", "policy_steps", double(learner.policy_steps()));
    f.set_attr("/", "rl_deck", s.o.deck_text);
  }
  fs::rename(tmp, side);
  std::printf("rl checkpoint: %s (+ %s)\n", path.c_str(), side.filename().string().c_str());
  return path;
}

void read_rl_sidecar(const std::string& sidecar, RlSetup& s) {
  H5File f = H5File::open(sidecar);
  s.start_version = int64_t(f.attr_double("/", "version"));
  s.start_value_steps = int64_t(f.attr_double("/", "value_steps"));
  s.start_policy_steps = int64_t(f.attr_double("/", "policy_steps"));
  s.value_state = f.read_all<float>("value_head");
}

void restore_value_head(ValueHead& v, const std::vector<float>& state) {
  const size_t n = v.params().size();
  EMB_CHECK(state.size() == 3 * n, "rl: the checkpoint's value head has ", state.size() / 3,
            " parameters, this run's ", n);
  std::copy(state.begin(), state.begin() + int64_t(n), v.params().begin());
  std::copy(state.begin() + int64_t(n), state.begin() + int64_t(2 * n), v.moment1().begin());
  std::copy(state.begin() + int64_t(2 * n), state.end(), v.moment2().begin());
}

}  // namespace emb
