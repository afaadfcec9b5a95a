// embsim: simulated manipulation tasks for embtrain (CLOSED_LOOP.md), one SPMD executable.
//   embsim collect TASK --episodes N --seed S -o demos.h5     expert demonstrations (embpack/1)
//   embsim eval TARGET --task T[,T] --episodes N --seed S      closed-loop success rates
//       TARGET: a checkpoint, checkpoint directory or run directory, or expert | zero | random
//   embsim profile TASK --episodes N --seed S [--json FILE]    step-time distribution (rank 0 measures)
//   embsim rl DECK [--set k=v]                                 RL of a gr00t policy (simulators,
//                                                              generators, trainers: src/rl/roles)
//   embsim tasks                                               the tasks and their instructions
// Every step runs on every rank and the ranks agree on failure (comm/agreement.hpp): a bad
// task, a missing MJCF file, no rendering backend or a checkpoint that does not fit the task
// prints one line on rank 0 and every rank exits non-zero.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <ctime>
#include <iostream>

#include "collect.hpp"
#include "comm/agreement.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "eval.hpp"
#include "rl_run.hpp"
#include "sim/task.hpp"
#include "step_profile.hpp"

namespace {

using namespace emb;

std::string command_line(int argc, char** argv) {
  std::string s = "embsim 1.0:";
  for (int i = 0; i < argc; ++i) s += std::string(" ") + argv[i];
  return s;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

void add_observation_options(CLI::App* app, ObservationOptions& o, std::string& views) {
  app->add_option("--views", views, "camera views, comma-separated (MJCF camera names)");
  app->add_option("--d-vl", o.d_vl, "vl feature dim (Dvl) of the stand-in encoder");
  app->add_option("--vl-grid", o.vl_grid, "vl tokens per view = grid²");
}

std::string default_out_dir() {
  char stamp[32];
  std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return std::string("outputs/eval-") + stamp;
}

// Every option of every subcommand, as parsed.
struct Options {
  std::string mjcf_dir = default_mjcf_dir(), views = "top,front", tasks = "reach";
  CollectOptions collect;
  EvalOptions eval;
  StepProfileOptions profile;
  std::string profile_json_path;
  std::string rl_deck;
  std::vector<std::string> rl_sets;
};

struct Subcommands {
  CLI::App *collect, *eval, *profile, *rl, *tasks;
};

Subcommands add_subcommands(CLI::App& app, Options& o) {
  Subcommands c{};
  CollectOptions& co = o.collect;
  c.collect = app.add_subcommand("collect", "record scripted-expert demonstrations as an embpack/1 file");
  c.collect->add_option("task", co.task, "reach, push or pick_place")->required();
  c.collect->add_option("--episodes", co.episodes, "episodes to run (failed ones are not kept)");
  c.collect->add_option("--seed", co.seed, "seed of the collect-split initial states");
  c.collect->add_option("-o,--output", co.output, "output .h5 file")->required();
  add_observation_options(c.collect, co.observation, o.views);

  EvalOptions& eo = o.eval;
  c.eval = app.add_subcommand("eval", "closed-loop success rates of a checkpoint or a baseline");
  c.eval->add_option("target", eo.target, "checkpoint, checkpoint dir, run dir, or expert|zero|random")->required();
  c.eval->add_option("--task", o.tasks, "tasks, comma-separated, or all");
  c.eval->add_option("--episodes", eo.episodes, "episodes per task");
  c.eval->add_option("--seed", eo.seed, "seed of the eval-split initial states (disjoint from collection's)");
  c.eval->add_option("--out", eo.out_dir, "output directory (default outputs/eval-<timestamp>)");
  c.eval->add_option("--videos", eo.videos, "rollout videos per task (first episodes)");
  c.eval->add_option("--set", eo.deck_sets, "section.key=value override of the checkpoint's deck (sim.flow_steps, sim.exec_steps)");
  add_observation_options(c.eval, eo.observation, o.views);

  StepProfileOptions& po = o.profile;
  c.profile = app.add_subcommand("profile", "time the expert's control steps: physics and rendering apart");
  c.profile->add_option("task", po.task, "reach, push or pick_place")->required();
  c.profile->add_option("--episodes", po.episodes, "episodes to run");
  c.profile->add_option("--seed", po.seed, "seed of the collect-split initial states");
  c.profile->add_option("--chunk-steps", po.chunk_steps, "control steps per chunk (sim.exec_steps)");
  c.profile->add_option("--json", o.profile_json_path, "also write the summaries to this JSON file");
  add_observation_options(c.profile, po.observation, o.views);

  c.rl = app.add_subcommand("rl", "reinforcement learning of a gr00t checkpoint in closed loop ([rl] keys)");
  c.rl->add_option("deck", o.rl_deck, "the RL deck (inputs/rl_push.in)")->required();
  c.rl->add_option("--set", o.rl_sets, "section.key=value override of the deck");

  c.tasks = app.add_subcommand("tasks", "list the tasks");
  for (CLI::App* a : {c.collect, c.eval, c.profile, c.rl})
    a->add_option("--mjcf-dir", o.mjcf_dir, "directory of the tasks' MJCF files");
  return c;
}

void print_tasks(int rank) {
  if (rank == 0)
    for (const TaskSpec& t : all_tasks())
      std::cout << t.name << "  (state " << t.state_dim << ", action " << t.action_dim << ", " << t.max_steps
                << " steps): " << t.instructions[0] << "\n";
}

void run_collect(const World& world, Options& o, const std::string& created_by) {
  CollectOptions& co = o.collect;
  co.mjcf_dir = o.mjcf_dir, co.observation.views = split_commas(o.views);
  CollectSummary s = collect(world.comm, co, created_by);
  if (world.rank == 0)
    std::cout << "embsim collect: " << co.task << ": expert succeeded in " << s.successes << "/" << s.episodes
              << " episodes; wrote " << s.successes << " episodes (" << s.steps << " steps) to " << co.output << "\n";
}

void run_profile(const World& world, Options& o) {
  o.profile.mjcf_dir = o.mjcf_dir, o.profile.observation.views = split_commas(o.views);
  StepProfile p = profile_steps(world.comm, o.profile);
  run_agreed(world.comm, [&] {
    if (world.rank != 0) return;
    std::cout << profile_table(p);
    if (!o.profile_json_path.empty()) write_file_atomic(o.profile_json_path, profile_json(p).dump(2) + "\n");
  });
}

void run_eval_command(const World& world, Options& o) {
  EvalOptions& eo = o.eval;
  eo.mjcf_dir = o.mjcf_dir, eo.observation.views = split_commas(o.views), eo.local_rank = world.local_rank;
  if (o.tasks == "all") {
    for (const TaskSpec& t : all_tasks()) eo.tasks.push_back(t.name);
  } else {
    eo.tasks = split_commas(o.tasks);
  }
  if (eo.out_dir.empty()) {
    std::string out = world.rank == 0 ? default_out_dir() : "";
    broadcast_string(world.comm, out);
    eo.out_dir = out;
  }
  std::string path = run_eval(world.comm, eo);
  if (world.rank == 0) std::cout << "embsim eval: report " << path << "\n";
}

int run(const World& world, int argc, char** argv) {
  CLI::App app{"embsim: MuJoCo manipulation tasks, expert demonstrations and closed-loop evaluation"};
  app.require_subcommand(1);
  Options o;
  const Subcommands c = add_subcommands(app, o);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return world.rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : kExitInput);
  }
  try {
    if (*c.tasks) {
      print_tasks(world.rank);
    } else if (*c.collect) {
      run_collect(world, o, command_line(argc, argv));
    } else if (*c.profile) {
      run_profile(world, o);
    } else if (*c.rl) {
      run_rl(world, o.rl_deck, o.rl_sets, o.mjcf_dir);
    } else {
      run_eval_command(world, o);
    }
    return 0;
  } catch (const Error& e) {
    if (world.rank == 0) std::cerr << "embsim: error: " << e.what() << "\n";
    return e.exit_code();
  }
}

}  // namespace

int main(int argc, char** argv) {
  // Every line leaves the rank in one write: mpirun forwards each rank's pipe in the chunks it
  // reads, so a line split across two writes (a full block buffer) can be cut by another rank's
  // line, and scripts that read the run's lines (regression/rl_hostile.sh) see a broken one.
  std::setvbuf(stdout, nullptr, _IOLBF, 1 << 16);
  return emb::run_in_world("embsim", &argc, &argv, [&](const emb::World& world) { return run(world, argc, argv); });
}
