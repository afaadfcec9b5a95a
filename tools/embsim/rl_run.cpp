#include "rl_run.hpp"

#include <csignal>
#include <memory>

#include "app/fail_run.hpp"
#include "app/run_config_from_deck.hpp"
#include "app/run_dir.hpp"
#include "comm/agreement.hpp"
#include "config/deck.hpp"
#include "core/stop_request.hpp"
#include "rl/roles/rl_roles.hpp"
#include "rl_options_from_deck.hpp"
#include "rl_start.hpp"

namespace emb {

std::string run_rl(const World& w, const std::string& deck_path, const std::vector<std::string>& sets,
                   const std::string& mjcf_dir) {
  const MPI_Comm world = w.comm;
  // A graceful stop (SIGTERM or Ctrl-C to mpirun_graceful.sh's mpirun arrives as SIGUSR1): the
  // trainers agree on it at an update. SIGTERM to a rank stays Open MPI's abort (rl_failure.hpp).
  catch_stop_signals({SIGUSR1, SIGINT});
  const ObservationOptions observation;  // the cameras and stand-in encoder of embsim collect
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
    load_rl_run_start(world, {str("run.device=", device_name(o.backend.device))}, observation, *setup);
    check_rl_setup(*setup);
  });
  run_agreed(world, [&] { run_dir = create_run_dir(world, run); });
  if (o.ckpt_dir.empty()) o.ckpt_dir = run_dir + "/ckpt";
  mark_failures_in(run_dir);
  setup->node = w.node;
  setup->claim_failure = write_failure_marker;
  return run_rl_roles(world, *setup, run_dir);
}

}  // namespace emb
