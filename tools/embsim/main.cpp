// embsim: simulated manipulation tasks for embtrain (CLOSED_LOOP.md), one SPMD executable.
//   embsim collect TASK --episodes N --seed S -o demos.h5     expert demonstrations (embpack/1)
//   embsim eval TARGET --task T[,T] --episodes N --seed S      closed-loop success rates
//       TARGET: a checkpoint, checkpoint directory or run directory, or expert | zero | random
//   embsim profile TASK --episodes N --seed S [--json FILE]    step-time distribution (rank 0 measures)
//   embsim rl DECK [--set k=v]                                 RL of a gr00t policy (simulators,
//                                                              generators, trainers: src/rl, rl_roles.hpp)
//   embsim tasks                                               the tasks and their instructions
// Every step runs on every rank and the ranks agree on failure (comm/agreement.hpp): a bad
// task, a missing MJCF file, no rendering backend or a checkpoint that does not fit the task
// prints one line on rank 0 and every rank exits non-zero.
#include <CLI/CLI.hpp>
#include <mpi.h>

#include <ctime>
#include <iostream>

#include "collect.hpp"
#include "comm/agreement.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "eval.hpp"
#include "rl_roles.hpp"
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

int run(const World& world, int argc, char** argv) {
  const MPI_Comm comm = world.comm;
  const int rank = world.rank;
  CLI::App app{"embsim: MuJoCo manipulation tasks, expert demonstrations and closed-loop evaluation"};
  app.require_subcommand(1);
  std::string mjcf_dir = default_mjcf_dir(), views = "top,front", tasks = "reach";

  CollectOptions co;
  CLI::App* collect_cmd = app.add_subcommand("collect", "record scripted-expert demonstrations as an embpack/1 file");
  collect_cmd->add_option("task", co.task, "reach, push or pick_place")->required();
  collect_cmd->add_option("--episodes", co.episodes, "episodes to run (failed ones are not kept)");
  collect_cmd->add_option("--seed", co.seed, "seed of the collect-split initial states");
  collect_cmd->add_option("-o,--output", co.output, "output .h5 file")->required();
  add_observation_options(collect_cmd, co.observation, views);

  EvalOptions eo;
  CLI::App* eval_cmd = app.add_subcommand("eval", "closed-loop success rates of a checkpoint or a baseline");
  eval_cmd->add_option("target", eo.target, "checkpoint, checkpoint dir, run dir, or expert|zero|random")->required();
  eval_cmd->add_option("--task", tasks, "tasks, comma-separated, or all");
  eval_cmd->add_option("--episodes", eo.episodes, "episodes per task");
  eval_cmd->add_option("--seed", eo.seed, "seed of the eval-split initial states (disjoint from collection's)");
  eval_cmd->add_option("--out", eo.out_dir, "output directory (default outputs/eval-<timestamp>)");
  eval_cmd->add_option("--videos", eo.videos, "rollout videos per task (first episodes)");
  eval_cmd->add_option("--set", eo.deck_sets, "section.key=value override of the checkpoint's deck (sim.flow_steps, sim.exec_steps)");
  add_observation_options(eval_cmd, eo.observation, views);

  StepProfileOptions po;
  std::string profile_json_path;
  CLI::App* profile_cmd = app.add_subcommand("profile", "time the expert's control steps: physics and rendering apart");
  profile_cmd->add_option("task", po.task, "reach, push or pick_place")->required();
  profile_cmd->add_option("--episodes", po.episodes, "episodes to run");
  profile_cmd->add_option("--seed", po.seed, "seed of the collect-split initial states");
  profile_cmd->add_option("--chunk-steps", po.chunk_steps, "control steps per chunk (sim.exec_steps)");
  profile_cmd->add_option("--json", profile_json_path, "also write the summaries to this JSON file");
  add_observation_options(profile_cmd, po.observation, views);

  std::string rl_deck;
  std::vector<std::string> rl_sets;
  CLI::App* rl_cmd = app.add_subcommand("rl", "reinforcement learning of a gr00t checkpoint in closed loop ([rl] keys)");
  rl_cmd->add_option("deck", rl_deck, "the RL deck (inputs/rl_push.in)")->required();
  rl_cmd->add_option("--set", rl_sets, "section.key=value override of the deck");

  CLI::App* tasks_cmd = app.add_subcommand("tasks", "list the tasks");
  for (CLI::App* a : {collect_cmd, eval_cmd, profile_cmd, rl_cmd})
    a->add_option("--mjcf-dir", mjcf_dir, "directory of the tasks' MJCF files");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return rank == 0 ? app.exit(e) : (e.get_exit_code() == 0 ? 0 : kExitInput);
  }
  try {
    if (*tasks_cmd) {
      if (rank == 0)
        for (const TaskSpec& t : all_tasks())
          std::cout << t.name << "  (state " << t.state_dim << ", action " << t.action_dim << ", " << t.max_steps
                    << " steps): " << t.instructions[0] << "\n";
      return 0;
    }
    if (*collect_cmd) {
      co.mjcf_dir = mjcf_dir, co.observation.views = split_commas(views);
      CollectSummary s = collect(comm, co, command_line(argc, argv));
      if (rank == 0)
        std::cout << "embsim collect: " << co.task << ": expert succeeded in " << s.successes << "/" << s.episodes
                  << " episodes; wrote " << s.successes << " episodes (" << s.steps << " steps) to " << co.output << "\n";
      return 0;
    }
    if (*profile_cmd) {
      po.mjcf_dir = mjcf_dir, po.observation.views = split_commas(views);
      StepProfile p = profile_steps(comm, po);
      run_agreed(comm, [&] {
        if (rank != 0) return;
        std::cout << profile_table(p);
        if (!profile_json_path.empty()) write_file_atomic(profile_json_path, profile_json(p).dump(2) + "\n");
      });
      return 0;
    }
    if (*rl_cmd) {
      run_rl(world, rl_deck, rl_sets, mjcf_dir);
      return 0;
    }
    eo.mjcf_dir = mjcf_dir, eo.observation.views = split_commas(views), eo.local_rank = world.local_rank;
    if (tasks == "all") {
      for (const TaskSpec& t : all_tasks()) eo.tasks.push_back(t.name);
    } else {
      eo.tasks = split_commas(tasks);
    }
    if (eo.out_dir.empty()) {
      std::string out = rank == 0 ? default_out_dir() : "";
      broadcast_string(comm, out);
      eo.out_dir = out;
    }
    std::string path = run_eval(comm, eo);
    if (rank == 0) std::cout << "embsim eval: report " << path << "\n";
    return 0;
  } catch (const Error& e) {
    if (rank == 0) std::cerr << "embsim: error: " << e.what() << "\n";
    return e.exit_code();
  }
}

}  // namespace

int main(int argc, char** argv) {
  return emb::run_in_world("embsim", &argc, &argv, [&](const emb::World& world) { return run(world, argc, argv); });
}
