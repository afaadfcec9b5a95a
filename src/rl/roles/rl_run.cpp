// An RL run once its setup is loaded: the checks, the role of each rank and summary.json (rl_roles.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "rl/roles/rl_failure.hpp"
#include "rl/roles/rl_peers.hpp"
#include "rl/roles/rl_roles.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json merge_summary(const RlOptions& o, const RlGroups& g, const std::vector<nlohmann::json>& ranks,
                             double wall_s) {
  int64_t env_steps = 0, episodes = 0, successes = 0;
  std::map<std::string, Utilisation> busy_wait;  // per role, summed over its ranks
  nlohmann::json staleness = nlohmann::json::object(), curve = nlohmann::json::array();
  int64_t used = 0, filtered = 0, dropped = 0, clipped = 0, gen_batches = 0, gen_samples = 0, uniform_groups = 0;
  std::string checkpoint;
  int64_t stages = 0, overruns = 0, diverged = 0, diverged_chunks = 0;
  for (const nlohmann::json& r : ranks) {
    if (r.contains("pacer")) stages += r["pacer"]["stages"].get<int64_t>(), overruns += r["pacer"]["overruns"].get<int64_t>();
    const std::string role = r["role"];
    busy_wait[role].busy_s += r["time"]["busy_s"].get<double>();
    busy_wait[role].wait_s += r["time"]["wait_s"].get<double>();
    if (role == "simulator") {
      env_steps += r["env_steps"].get<int64_t>(), episodes += r["episodes"].get<int64_t>();
      successes += r["successes"].get<int64_t>(), diverged += r["diverged_resets"].get<int64_t>();
      diverged_chunks += r["diverged_chunks"].get<int64_t>();
    } else if (role == "generator") {
      gen_batches += r["batches"].get<int64_t>(), gen_samples += r["samples"].get<int64_t>();
    } else {
      for (auto& [k, n] : r["staleness"].items())
        staleness[k] = staleness.value(k, int64_t(0)) + n.get<int64_t>();
      used += r["used"].get<int64_t>(), filtered += r["filtered"].get<int64_t>();
      dropped += r["dropped_stale"].get<int64_t>(), clipped += r["clipped"].get<int64_t>();
      uniform_groups += r["uniform_groups"].get<int64_t>();
      if (r["rank"] == g.trainers[0]) curve = r["curve"], checkpoint = r["checkpoint"];
    }
  }
  nlohmann::json util = nlohmann::json::object();
  for (auto& [role, u] : busy_wait) util[role] = utilisation_json(u);
  return {{"mode", rl_mode_name(o.mode)}, {"cost_model", o.cost.on ? "on" : "off"}, {"task", o.task},
          {"init", o.init}, {"simulators", g.simulators.size()}, {"generators", g.generators.size()},
          {"trainers", g.trainers.size()}, {"envs_per_simulator", o.envs_per_simulator}, {"updates", o.updates},
          {"update_chunks", o.update_chunks}, {"wall_s", wall_s}, {"env_steps", env_steps},
          {"env_steps_per_s", wall_s > 0 ? double(env_steps) / wall_s : 0.0},
          {"cost_time_scale", o.cost.on ? o.cost.time_scale : 1.0},
          {"modelled_env_steps_per_s", wall_s > 0 && o.cost.on ? double(env_steps) / wall_s * o.cost.time_scale : 0.0},
          {"episodes", episodes}, {"diverged_resets", diverged}, {"diverged_chunks", diverged_chunks},
          {"successes", successes}, {"rollout_success_rate", episodes ? double(successes) / double(episodes) : 0.0},
          {"utilisation", util}, {"paced_stages", stages}, {"paced_overruns", overruns}, {"generator_mean_batch", gen_batches ? double(gen_samples) / double(gen_batches) : 0.0},
          {"trained_transitions", used}, {"filtered_behaviour_weight", filtered}, {"dropped_stale", dropped},
          {"clipped", clipped}, {"staleness_histogram", staleness},
          {"advantage", o.advantage == Advantage::grpo ? "grpo" : "gae"}, {"uniform_groups", uniform_groups},
          {"curve", curve}, {"checkpoint", checkpoint},
          {"ranks", ranks}};
}

void print_start(const RlSetup& s, const std::string& run_dir) {
  const RlOptions& o = s.o;
  const RlGroups& g = s.groups;
  std::printf("embsim rl: %s, task %s, %zu simulators x %d envs, %zu generators, %zu trainers; %d updates of %d "
              "chunks from %s (version %lld); cost model %s\noutputs: %s\n",
              rl_mode_name(o.mode), o.task.c_str(), g.simulators.size(), o.envs_per_simulator, g.generators.size(),
              g.trainers.size(), o.updates, o.update_chunks, s.resume_dir.empty() ? o.init.c_str() : s.resume_dir.c_str(),
              (long long)s.start_version,
              o.cost.on ? "on" : "off", run_dir.c_str());
  std::fflush(stdout);
}

// This rank's statistics; a role failing alone cannot agree with ranks that wait on it: it takes
// the job down (rl_failure.hpp).
nlohmann::json run_role(const RlSetup& s, const RlPeers& peers) {
  try {
    switch (s.groups.role) {
      case RlGroups::Role::simulator: return run_simulator(s);
      case RlGroups::Role::generator: return run_generator(s);
      case RlGroups::Role::trainer: return run_trainer(s);
    }
  } catch (const std::exception& e) {
    fail_rl_run(s.claim_failure, rl_failure_line(peers, s.groups.world_rank, e.what()));
  }
  return nlohmann::json();
}

void write_summary(const RlOptions& o, const nlohmann::json& summary, double wall_s, const std::string& path) {
  std::ofstream out(path + ".tmp");
  out << summary.dump(2) << "\n";
  out.close();
  EMB_CHECK(out, path, ": cannot write");
  std::filesystem::rename(path + ".tmp", path);
  std::printf("rl done: %s, %lld env steps in %.1f s = %.1f env steps/s%s, rollout success %.3f; summary %s\n",
              rl_mode_name(o.mode), (long long)summary["env_steps"].get<int64_t>(), wall_s,
              summary["env_steps_per_s"].get<double>(),
              o.cost.on ? str(" (modelled ", summary["modelled_env_steps_per_s"].get<double>(), ", ",
                              summary["paced_overruns"].get<int64_t>(), "/", summary["paced_stages"].get<int64_t>(),
                              " paced stages overran)").c_str()
                        : "",
              summary["rollout_success_rate"].get<double>(), path.c_str());
}

}  // namespace

void check_rl_setup(RlSetup& s) {
  const RlOptions& o = s.o;
  const RlGroups& g = s.groups;
  const int S = int(g.simulators.size()), T = int(g.trainers.size());
  EMB_CHECK(s.cfg.preset == o.preset, o.deck_path, ": model.preset = ", o.preset, " but rl.init ", o.init, " is a ",
            s.cfg.preset, " checkpoint");
  EMB_CHECK(o.micro_chunks % T == 0, o.deck_path, ": rl.micro_chunks = ", o.micro_chunks,
            " must split evenly over the ", T, " trainers");
  EMB_CHECK(S % T == 0, o.deck_path, ": ", S, " simulators cannot feed ", T, " trainers evenly (rl.simulators % rl.trainers)");
  if (o.mode != RlMode::async)
    EMB_CHECK(o.update_chunks % (S * o.envs_per_simulator) == 0, o.deck_path, ": rl.mode = ", rl_mode_name(o.mode),
              " runs rounds of rl.update_chunks = ", o.update_chunks, " chunks over ", S * o.envs_per_simulator,
              " environments; make it a multiple of simulators x envs_per_simulator");
  EMB_CHECK(s.exec_steps <= s.cfg.horizon, o.init, ": sim.exec_steps = ", s.exec_steps, " exceeds the horizon ", s.cfg.horizon);
  s.round_chunks_per_env = o.update_chunks / (S * o.envs_per_simulator);
}

std::string run_rl_roles(MPI_Comm world, const RlSetup& s, const std::string& run_dir) {
  const bool root = s.groups.world_rank == 0;
  if (root) std::filesystem::create_directories(s.o.ckpt_dir);
  const RlPeers peers(world, s.groups, s.node);
  nlohmann::json mine;
  const Clock::time_point start = Clock::now();
  {
    const AbortWatch watch(peers, s.groups.world_rank, s.claim_failure);
    // The start line only once this rank watches for Open MPI's abort: a peer killed the moment the
    // run says it started is named (before, one killed during the peers' pid exchange ended the job
    // without a line).
    if (root) print_start(s, run_dir);
    mine = run_role(s, peers);
  }
  const double wall_s = max_over_ranks(world, seconds_since(start));
  const std::string text = mine.dump();
  const std::vector<std::vector<uint8_t>> all = gather_bytes(world, std::vector<uint8_t>(text.begin(), text.end()));
  const std::string path = run_dir + "/summary.json";
  run_agreed(world, [&] {
    if (!root) return;
    std::vector<nlohmann::json> ranks;
    for (const auto& b : all) ranks.push_back(nlohmann::json::parse(std::string(b.begin(), b.end())));
    write_summary(s.o, merge_summary(s.o, s.groups, ranks, wall_s), wall_s, path);
  });
  return path;
}

}  // namespace emb
