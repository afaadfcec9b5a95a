#include "rl/roles/rl_checkpoint.hpp"

#include "checkpoint/checkpoint.hpp"
#include "checkpoint/checkpoint_dir.hpp"
#include "checkpoint/tensor_checksum.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/h5_file.hpp"

namespace emb {

namespace {

// The run's counts as sidecar attributes (names in count_fields' order; the reward sum is "reward").
constexpr const char* kCounts[] = {"env_steps",     "episodes",    "successes",     "filtered",
                                   "dropped_stale", "transitions", "uniform_groups"};

std::vector<int64_t*> count_fields(UpdateTotals& t) {
  return {&t.env_steps, &t.episodes, &t.successes, &t.filtered, &t.dropped_stale, &t.transitions, &t.uniform_groups};
}

// params ‖ moment1 ‖ moment2, as the sidecar stores them (restore_value_head reads them back).
std::vector<float> value_head_state(ValueHead& vh) {
  std::vector<float> state = vh.params();
  state.insert(state.end(), vh.moment1().begin(), vh.moment1().end());
  state.insert(state.end(), vh.moment2().begin(), vh.moment2().end());
  return state;
}

int64_t crc_of(const std::vector<float>& x) { return checksum_piece(x.data(), int64_t(x.size())).crc; }

void write_sidecar(const RlSetup& s, RlLearner& learner, UpdateTotals totals, const std::string& state_digest,
                   const std::string& path) {
  const std::vector<float> state = value_head_state(learner.value_head());
  const std::string tmp = path + ".tmp";
  {
    H5File f = H5File::create(tmp);
    f.write("value_head", {int64_t(state.size())}, state.data());
    f.set_attr("value_head", "crc32", double(checksum_piece(state.data(), int64_t(state.size())).crc));
    f.set_attr("/", "version", double(learner.version()));
    f.set_attr("/", "value_steps", double(learner.value_steps()));
    f.set_attr("/", "policy_steps", double(learner.policy_steps()));
    f.set_attr("/", "run_start_version", double(s.run_start_version));
    const std::vector<int64_t*> counts = count_fields(totals);
    for (size_t i = 0; i < counts.size(); ++i) f.set_attr("/", kCounts[i], double(*counts[i]));
    f.set_attr("/", "reward", totals.reward);
    f.set_attr("/", "rl_deck", s.o.deck_text);
    // The digest the save line prints, kept with the checkpoint: a resume checks it, and a kill between
    // publishing the checkpoint and printing the line leaves it readable.
    f.set_attr("/", "state", state_digest);
  }
  publish_durably(tmp, path);
}

}  // namespace

bool is_checkpoint_version(const RlOptions& o, int64_t end_version, int64_t v) {
  return v == end_version || (o.ckpt_every > 0 && v % o.ckpt_every == 0);
}

std::string rl_sidecar_path(const std::string& policy_checkpoint) {
  namespace fs = std::filesystem;
  const fs::path p(policy_checkpoint);
  std::string stem = p.filename().string();  // step_XXXXXXXX.h5
  if (stem.rfind("step_", 0) != 0) return "";
  const fs::path side = p.parent_path() / ("rl_" + stem.substr(5));
  return fs::is_regular_file(side) ? side.string() : "";
}

std::string save_rl_checkpoint(const RlSetup& s, RlLearner& learner, const UpdateTotals& totals) {
  namespace fs = std::filesystem;
  const std::string digits = checkpoint_step_digits(learner.version());  // step_<digits>.h5's
  const fs::path side = fs::path(s.o.ckpt_dir) / ("rl_" + digits + ".h5");
  const std::string state_digest = rl_state_digest(learner, totals);
  write_sidecar(s, learner, totals, state_digest, side.string());
  const ParamRegistry& reg = learner.registry();
  std::vector<float> m(size_t(reg.total())), v(size_t(reg.total()));
  learner.optimizer().download_state(OptimizerState{m.data(), v.data()});
  CheckpointMeta meta;
  meta.step = learner.version();
  meta.seed = s.o.seed;
  meta.preset = s.cfg.preset;
  meta.deck_text = s.sft_deck_text;
  meta.run_id = s.o.run_id;
  meta.vl_features = s.sft_vl_features;
  meta.normalization = s.normalization.recorded();
  const std::string path = save_checkpoint(MPI_COMM_SELF, s.o.ckpt_dir, reg, learner.layout(),
                                           learner.params().data(), OptimizerState{m.data(), v.data()}, meta);
  EMB_CHECK(fs::path(path).filename() == checkpoint_file_name(learner.version()), path,
            ": expected the sidecar's step ", digits);
  std::printf("rl checkpoint: %s (+ %s); state: %s\n", path.c_str(), side.filename().string().c_str(),
              state_digest.c_str());
  std::fflush(stdout);
  return path;
}

std::string rl_state_digest(RlLearner& learner, const UpdateTotals& t) {
  const ParamRegistry& reg = learner.registry();
  std::vector<float> m(size_t(reg.total())), v(size_t(reg.total()));
  learner.optimizer().download_state(OptimizerState{m.data(), v.data()});
  return str("version ", learner.version(), ", AdamW steps ", learner.policy_steps(), "/", learner.value_steps(),
             ", crc32 policy ", crc_of(learner.params()), " moments ", crc_of(m), " ", crc_of(v), " value head ",
             crc_of(value_head_state(learner.value_head())), ", totals ", t.env_steps, " ", t.episodes, " ", t.successes,
             " ", t.filtered, " ", t.dropped_stale, " ", t.transitions, " ", t.uniform_groups, " ", t.reward);
}

void read_rl_sidecar(const std::string& sidecar, RlSetup& s) {
  H5File f = H5File::open(sidecar);
  s.value_state = f.read_all<float>("value_head");
  const uint32_t crc = uint32_t(checksum_piece(s.value_state.data(), int64_t(s.value_state.size())).crc);
  EMB_CHECK(f.has_attr("value_head", "crc32") && uint32_t(f.attr_double("value_head", "crc32")) == crc, sidecar,
            ": the value head's checksum does not match (a corrupt or foreign RL sidecar)");
  s.start_version = int64_t(f.attr_double("/", "version"));
  s.start_value_steps = int64_t(f.attr_double("/", "value_steps"));
  s.start_policy_steps = int64_t(f.attr_double("/", "policy_steps"));
  // Sidecars written before runs could resume exactly have neither (a new run from them).
  s.run_start_version = f.has_attr("/", "run_start_version") ? int64_t(f.attr_double("/", "run_start_version"))
                                                              : s.start_version;
  s.resume_sidecar = sidecar;
  if (f.has_attr("/", "state")) s.saved_state = f.attr_string("/", "state");
  if (!f.has_attr("/", "reward")) return;
  const std::vector<int64_t*> counts = count_fields(s.start_totals);
  for (size_t i = 0; i < counts.size(); ++i) *counts[i] = int64_t(f.attr_double("/", kCounts[i]));
  s.start_totals.reward = f.attr_double("/", "reward");
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
