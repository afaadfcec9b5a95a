#include "eval.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "checkpoint/checkpoint_dir.hpp"
#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"
#include "gr00t_policy.hpp"
#include "video_writer.hpp"
#include "rl/byte_message.hpp"

namespace emb {

namespace {

constexpr int kVideoScale = 3, kVideoFps = 25;

// Both views side by side: [H, views·W, 3].
std::vector<uint8_t> side_by_side(const std::vector<std::vector<uint8_t>>& views, int h, int w) {
  std::vector<uint8_t> out(size_t(h) * w * 3 * views.size());
  const size_t row = size_t(w) * 3, out_row = row * views.size();
  for (size_t v = 0; v < views.size(); ++v)
    for (int y = 0; y < h; ++y) std::copy_n(&views[v][y * row], row, &out[y * out_row + v * row]);
  return out;
}

nlohmann::json task_json(const TaskResult& r, uint64_t seed) {
  const int64_t n = int64_t(r.success.size());
  std::array<double, 2> ci = wilson95(r.successes(), n);
  double mean_length = 0;
  for (int l : r.lengths) mean_length += l;
  nlohmann::json seeds = nlohmann::json::array();
  for (int64_t i = 0; i < n; ++i) seeds.push_back({seed, i});
  return {{"success_rate", r.rate()}, {"ci95", {ci[0], ci[1]}}, {"successes", r.successes()}, {"episodes", n},
          {"mean_length", n > 0 ? mean_length / double(n) : 0.0}, {"lengths", r.lengths}, {"success", r.success},
          {"seeds", seeds}};
}

}  // namespace

namespace {

// Runs f; an emb::Error from it is about what the user gave (a checkpoint of another family
// or size, a truncated one, an unknown task or target): exit code 2. (An MJCF file that does
// not compile and a missing rendering backend say so themselves.)
template <class F>
void as_input_error(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    throw Error(e.what(), kExitInput);
  }
}

}  // namespace

int64_t TaskResult::successes() const {
  int64_t k = 0;
  for (int s : success) k += s;
  return k;
}

double TaskResult::rate() const { return success.empty() ? 0.0 : double(successes()) / double(success.size()); }

std::array<double, 2> wilson95(int64_t k, int64_t n) {
  if (n <= 0) return {0.0, 1.0};
  const double z = 1.959963984540054, p = double(k) / double(n), z2n = z * z / double(n);
  const double centre = (p + z2n / 2) / (1 + z2n);
  const double half = z * std::sqrt(p * (1 - p) / double(n) + z2n / (4 * double(n))) / (1 + z2n);
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

TaskResult evaluate_task(MPI_Comm comm, Policy& policy, const TaskSpec& task, const EvalOptions& o,
                         const std::string& video_prefix) {
  const int rank = rank_in(comm), size = ranks_in(comm);
  struct Slot {
    int64_t episode;
    std::unique_ptr<Env> env;
    std::vector<std::vector<uint8_t>> video;
  };
  std::vector<Slot> slots;
  std::unique_ptr<VlEncoder> vl;
  std::unique_ptr<ObservationEncoder> obs;
  ByteWriter mine;
  run_agreed(comm, [&] {
    auto model = load_task_model(task, o.mjcf_dir);
    for (int64_t i = rank; i < o.episodes; i += size) {
      slots.push_back({i, std::make_unique<Env>(task, model), {}});
      slots.back().env->reset(o.seed, EpisodeSplit::eval, i);
    }
    const bool record = !video_prefix.empty() && o.videos > rank;
    vl = policy.make_vl_encoder(o.observation);
    if (vl || record) obs = std::make_unique<ObservationEncoder>(o.observation, model.get(), vl.get());
    std::vector<std::vector<uint8_t>> frames;
    auto capture = [&](Slot& s) {
      if (record && s.episode < o.videos) {
        obs->render(*s.env, frames);
        s.video.push_back(side_by_side(frames, obs->height(), obs->width()));
      }
    };
    for (Slot& s : slots) capture(s);
    std::vector<PolicyInput> inputs;
    std::vector<Slot*> active;
    std::vector<std::vector<float>> chunks;
    const int A = task.action_dim;
    for (;;) {
      inputs.clear(), active.clear();
      for (Slot& s : slots) {
        if (s.env->done()) continue;
        PolicyInput in;
        in.env = s.env.get(), in.episode = s.episode;
        in.instruction = task.instructions[size_t(s.episode % int64_t(task.instructions.size()))];
        in.state.resize(size_t(task.state_dim));
        s.env->observe(in.state.data());
        if (vl) {
          obs->render(*s.env, frames);
          obs->features(frames, in.instruction, in.vl);
        }
        inputs.push_back(std::move(in));
        active.push_back(&s);
      }
      if (active.empty()) break;
      policy.act(inputs, chunks);
      for (size_t i = 0; i < active.size(); ++i) {
        Slot& s = *active[i];
        for (size_t h = 0; h * A < chunks[i].size() && !s.env->done(); ++h) {
          s.env->step(&chunks[i][h * A]);
          capture(s);
        }
      }
    }
    for (Slot& s : slots) {
      mine.put(s.episode), mine.put(int32_t(s.env->success())), mine.put(int32_t(s.env->steps()));
      if (s.video.empty()) continue;
      std::filesystem::create_directories(std::filesystem::path(video_prefix).parent_path());
      write_mp4(str(video_prefix, "_ep", s.episode, ".mp4"), s.video, obs->height(),
                obs->width() * int(o.observation.views.size()), kVideoFps, kVideoScale);
    }
  });
  std::vector<std::vector<uint8_t>> blobs = gather_bytes(comm, mine.take());
  TaskResult r;
  r.task = task.name;
  if (rank != 0) return r;
  r.success.assign(size_t(o.episodes), 0), r.lengths.assign(size_t(o.episodes), 0);
  for (const auto& blob : blobs)
    for (ByteReader in(blob); !in.done();) {
      int64_t e = in.get<int64_t>("episode");
      r.success[size_t(e)] = in.get<int32_t>("success");
      r.lengths[size_t(e)] = in.get<int32_t>("length");
    }
  return r;
}

std::string run_eval(MPI_Comm comm, const EvalOptions& o) {
  const int rank = rank_in(comm);
  std::vector<const TaskSpec*> tasks;
  std::vector<std::string> checkpoints;
  std::unique_ptr<Policy> baseline;
  run_agreed(comm, [&] {
    as_input_error([&] {
      EMB_CHECK(o.episodes >= 1, "eval: --episodes must be at least 1");
      for (const std::string& t : o.tasks) tasks.push_back(&task_spec(t));
      baseline = make_baseline_policy(o.target, o.seed);
      if (!baseline) checkpoints = verified_checkpoints(o.target, CheckedTensors::parameters);
      std::reverse(checkpoints.begin(), checkpoints.end());  // by step
    });
  });
  nlohmann::json report = {{"target", o.target}, {"policy", baseline ? o.target : "checkpoint"}, {"seed", o.seed},
                           {"episodes", o.episodes}, {"split", "eval"}, {"checkpoints", nlohmann::json::array()}};
  auto evaluate_all = [&](Policy& policy, int64_t step, const std::string& path, bool videos) {
    nlohmann::json entry = {{"step", step}, {"path", path}, {"tasks", nlohmann::json::object()}};
    for (const TaskSpec* t : tasks) {
      std::string prefix = videos ? str(o.out_dir, "/videos/", t->name, "_", baseline ? o.target : str("step", step)) : "";
      TaskResult r = evaluate_task(comm, policy, *t, o, prefix);
      if (rank != 0) continue;
      entry["tasks"][t->name] = task_json(r, o.seed);
      std::array<double, 2> ci = wilson95(r.successes(), int64_t(r.success.size()));
      std::cout << "embsim eval: " << (baseline ? o.target : str("step ", step)) << "  " << t->name << "  success "
                << r.successes() << "/" << r.success.size() << " = " << r.rate() << "  (95% CI " << ci[0] << " .. "
                << ci[1] << ")" << std::endl;
    }
    report["checkpoints"].push_back(entry);
  };
  if (baseline) {
    evaluate_all(*baseline, 0, "", o.videos > 0);
  } else {
    for (size_t c = 0; c < checkpoints.size(); ++c) {
      std::unique_ptr<Gr00tPolicy> policy;
      run_agreed(comm, [&] {
        as_input_error([&] {
          policy = std::make_unique<Gr00tPolicy>(checkpoints[c], o.deck_sets, o.seed, o.local_rank);
          for (const TaskSpec* t : tasks) policy->check_task(*t, o.observation.d_vl);
        });
      });
      report["flow_steps"] = policy->flow_steps(), report["exec_steps"] = policy->exec_steps();
      report["sde_noise"] = policy->sde_noise();
      report["vl_encoder"] = describe(policy->vl_source());
      evaluate_all(*policy, policy->step(), checkpoints[c], o.videos > 0 && c + 1 == checkpoints.size());
    }
  }
  std::string path = (std::filesystem::path(o.out_dir) / "eval.json").string();
  run_agreed(comm, [&] {
    if (rank != 0) return;
    report["tasks"] = report["checkpoints"].back()["tasks"];
    std::filesystem::create_directories(o.out_dir);  // only now: a refused evaluation leaves nothing
    std::ofstream out(path + ".tmp");
    out << report.dump(2) << "\n";
    out.close();
    EMB_CHECK(out, path, ": cannot write");
    std::filesystem::rename(path + ".tmp", path);
  });
  return path;
}

}  // namespace emb
