// `embsim rl`: setup, the role of each rank, and summary.json (rl_roles.hpp).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "comm/rank_gather.hpp"
#include "config/deck.hpp"
#include "core/error.hpp"
#include "rl/byte_message.hpp"
#include "rl_checkpoint.hpp"
#include "rl_roles.hpp"
#include "app/run_config_from_deck.hpp"
#include "app/run_dir.hpp"

namespace emb {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Checks of the deck against the ranks and the policy: one line each, the same on every rank.
void check_setup(const RlOptions& o, const RlGroups& g, const RlSetup& s) {
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
}

nlohmann::json merge_summary(const RlOptions& o, const RlGroups& g, const std::vector<nlohmann::json>& ranks,
                             double wall_s) {
  int64_t env_steps = 0, episodes = 0, successes = 0;
  std::map<std::string, Utilisation> busy_wait;  // per role, summed over its ranks
  nlohmann::json staleness = nlohmann::json::object(), curve = nlohmann::json::array();
  int64_t used = 0, filtered = 0, dropped = 0, clipped = 0, gen_batches = 0, gen_samples = 0, uniform_groups = 0;
  std::string checkpoint;
  int64_t stages = 0, overruns = 0;
  for (const nlohmann::json& r : ranks) {
    if (r.contains("pacer")) stages += r["pacer"]["stages"].get<int64_t>(), overruns += r["pacer"]["overruns"].get<int64_t>();
    const std::string role = r["role"];
    busy_wait[role].busy_s += r["time"]["busy_s"].get<double>();
    busy_wait[role].wait_s += r["time"]["wait_s"].get<double>();
    if (role == "simulator") {
      env_steps += r["env_steps"].get<int64_t>(), episodes += r["episodes"].get<int64_t>();
      successes += r["successes"].get<int64_t>();
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
          {"episodes", episodes},
          {"successes", successes}, {"rollout_success_rate", episodes ? double(successes) / double(episodes) : 0.0},
          {"utilisation", util}, {"paced_stages", stages}, {"paced_overruns", overruns}, {"generator_mean_batch", gen_batches ? double(gen_samples) / double(gen_batches) : 0.0},
          {"trained_transitions", used}, {"filtered_behaviour_weight", filtered}, {"dropped_stale", dropped},
          {"clipped", clipped}, {"staleness_histogram", staleness},
          {"advantage", o.advantage == Advantage::grpo ? "grpo" : "gae"}, {"uniform_groups", uniform_groups},
          {"curve", curve}, {"checkpoint", checkpoint},
          {"ranks", ranks}};
}

}  // namespace

void LoopClock::busy_since(Clock::time_point start) { u_.busy_s += seconds_since(start); }
void LoopClock::wait_since(Clock::time_point start) { u_.wait_s += seconds_since(start); }
nlohmann::json utilisation_json(const Utilisation& u) {
  return {{"busy_s", u.busy_s}, {"wait_s", u.wait_s}, {"busy_fraction", u.busy_fraction()}};
}

nlohmann::json LoopClock::json() const { return utilisation_json(u_); }

nlohmann::json pacer_json(const StagePacer& p) {
  return {{"stages", p.stages()}, {"real_s", p.real_s()}, {"modelled_s", p.modelled_s()}, {"slept_s", p.slept_s()},
          {"overruns", p.overruns()}, {"overrun_s", p.overrun_s()}};
}

bool Outbox::flush() {
  bool sent = false;
  while (!queue_.empty() && to_.try_send(std::move(queue_.front()))) queue_.pop_front(), sent = true;
  return sent;
}

void Watchdog::check(const RlGroups& g, const std::string& waiting_for) const {
  const double idle = std::chrono::duration<double>(std::chrono::steady_clock::now() - last_).count();
  EMB_CHECK(idle < timeout_s_, "rl: ", role_name(g.role), " rank ", g.world_rank, " heard nothing for ",
            int(timeout_s_), " s waiting for ", waiting_for, " (train.watchdog_s); a rank may have died");
}

std::string run_rl(const World& w, const std::string& deck_path, const std::vector<std::string>& sets,
                   const std::string& mjcf_dir) {
  const MPI_Comm world = w.comm;
  const int rank = w.rank;
  RlOptions o;
  RunConfig run;
  std::unique_ptr<RlGroups> groups;
  std::unique_ptr<RlSetup> setup;
  std::string run_dir;
  run_agreed(world, [&] {
    const Deck deck = load_deck(deck_path, sets);
    run = run_config_from_deck(deck);
    o = rl_options_from_deck(deck, run);
    o.mjcf_dir = mjcf_dir;
    groups = std::make_unique<RlGroups>(make_rl_groups(world, o.simulators, o.generators, o.trainers));
  });
  run_agreed(world, [&] {
    setup = std::make_unique<RlSetup>(o, *groups, task_spec(o.task));
    setup->local_rank = w.local_rank;
    // The policy computes on this run's run.device, whatever its SFT run used.
    load_rl_start(o.init, {str("run.device=", device_name(o.backend.device))}, *setup);
    check_setup(o, *groups, *setup);
    setup->round_chunks_per_env = o.update_chunks / (int(groups->simulators.size()) * o.envs_per_simulator);
  });
  run_agreed(world, [&] { run_dir = create_run_dir(world, run); });
  if (o.ckpt_dir.empty()) o.ckpt_dir = run_dir + "/ckpt";
  if (rank == 0) {
    std::filesystem::create_directories(o.ckpt_dir);
    std::printf("embsim rl: %s, task %s, %zu simulators x %d envs, %zu generators, %zu trainers; %d updates of %d "
                "chunks from %s (version %lld); cost model %s\noutputs: %s\n",
                rl_mode_name(o.mode), o.task.c_str(), groups->simulators.size(), o.envs_per_simulator,
                groups->generators.size(), groups->trainers.size(), o.updates, o.update_chunks, o.init.c_str(),
                (long long)setup->start_version, o.cost.on ? "on" : "off", run_dir.c_str());
    std::fflush(stdout);
  }
  barrier(world);
  const Clock::time_point start = Clock::now();
  nlohmann::json mine;
  try {
    switch (groups->role) {
      case RlGroups::Role::simulator: mine = run_simulator(*setup); break;
      case RlGroups::Role::generator: mine = run_generator(*setup); break;
      case RlGroups::Role::trainer: mine = run_trainer(*setup); break;
    }
  } catch (const std::exception& e) {
    // A role failing alone cannot agree with ranks that wait on it: it takes the job down.
    std::fprintf(stderr, "embsim rl: %s rank %d: %s\n", role_name(groups->role), groups->world_rank, e.what());
    std::fflush(stderr);
    abort_world(1);
  }
  const double wall_s = max_over_ranks(world, seconds_since(start));
  const std::string text = mine.dump();
  const std::vector<std::vector<uint8_t>> all = gather_bytes(world, std::vector<uint8_t>(text.begin(), text.end()));
  const std::string path = run_dir + "/summary.json";
  run_agreed(world, [&] {
    if (rank != 0) return;
    std::vector<nlohmann::json> ranks;
    for (const auto& b : all) ranks.push_back(nlohmann::json::parse(std::string(b.begin(), b.end())));
    const nlohmann::json summary = merge_summary(o, *groups, ranks, wall_s);
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
  });
  return path;
}

}  // namespace emb
