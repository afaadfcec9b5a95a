// embtrain: one SPMD executable (DESIGN.md "Shape").
//   mpirun -np N embtrain DECK [--set section.key=value]... [--print-deck | --plan | --dump F.h5]
//   embtrain export RUN_OR_CHECKPOINT -o DIR [--force]
//
// Failure policy: set-up (command line, deck, files) runs on every rank and the ranks agree
// on the outcome before going on, so a bad deck prints one line on rank 0 and every rank
// exits with the same code. A failure later, inside collectives, aborts the whole job
// (MPI_Abort, app/fail_run.hpp) so no rank is left hanging.
#include <cstdio>
#include <functional>
#include <iostream>

#include "app/commands.hpp"
#include "app/fail_run.hpp"
#include "app/init_from_source.hpp"
#include "app/run_config_from_deck.hpp"
#include "app/start_checks.hpp"
#include "app/training_run.hpp"
#include "app/feature_encoders.hpp"
#include "comm/agreement.hpp"
#include "comm/world.hpp"
#include "config/cli.hpp"
#include "config/deck.hpp"
#include "core/activity.hpp"
#include "core/error.hpp"
#include "kernels/make_ops.hpp"

namespace {

using namespace emb;

// Runs `phase` on every rank; if any rank failed, rank 0 prints the lowest failing rank's
// message and every rank gets its exit code. Returns 0 when all succeeded.
int agree(const World& world, const std::function<void()>& phase) {
  try {
    run_agreed(world.comm, phase);
    return 0;
  } catch (const Error& e) {
    if (world.rank == 0) std::fprintf(stderr, "embtrain: error: %s\n", e.what());
    return e.exit_code();
  }
}

int run(const World& world, int argc, char** argv) {
  CliOptions cli;
  Deck deck;
  if (int code = agree(world, [&] { cli = parse_cli(argc, argv); })) return code;
  if (cli.help) {
    if (world.rank == 0) std::cout << cli_help_text();
    return 0;
  }
  if (cli.export_weights)  // one writer: rank 0 (an export is a small serial job)
    return agree(world, [&] { if (world.rank == 0) export_weights(cli.export_source, cli.export_dir, cli.export_force); });
  if (int code = agree(world, [&] { deck = load_deck(cli.deck, cli.sets); })) return code;
  if (cli.print_deck) {
    if (world.rank == 0) std::cout << deck.resolved_text();
    return 0;
  }
  RunConfig cfg;
  if (int code = agree(world, [&] { cfg = run_config_from_deck(deck); })) return code;
  if (cli.plan) return agree(world, [&] { if (world.rank == 0) std::cout << plan_report(cfg, world.size); });
  // The released weights' headers on every rank, checked against the model before any output.
  std::unique_ptr<InitFrom> init_from;
  if (int code = agree(world, [&] { init_from = open_init_from(cfg); })) return code;
  if (!cli.dump.empty()) return agree(world, [&] { write_step_dump(world, cfg, cli.dump, init_from.get()); });

  // data.vl_backbone: the digest of the backbone the vl features must come from (rank 0 reads it).
  if (int code = agree(world, [&] { resolve_feature_encoders(cfg, world.comm); })) return code;
  // Rank 0 alone reads the data files' index arrays for the start-up checks (serially).
  if (int code = agree(world, [&] {
        check_backend(cfg);
        if (world.rank == 0) check_before_training(cfg, world.size, world.local_size);
      }))
    return code;
  if (int code = agree(world, [&] { verify_data_values(cfg, world.comm); })) return code;
  // The backend first, then the Comm made from it (its memory decides MPI or NCCL).
  std::unique_ptr<Ops> ops;
  std::unique_ptr<Comm> comm;
  set_current_phase("init", -1);  // the backend's set-up is the run's init: an out-of-memory error says so
  if (int code = agree(world, [&] {
        ops = make_ops(cfg.backend, world.local_rank);
        check_ops(cfg, *ops);
        comm = make_comm(world, cfg.comm, *ops);
      }))
    return code;
  try {
    train(world, cfg, *ops, *comm, init_from.get());
  } catch (const std::exception& e) {
    const int code = report_failure(world, e);
    // Every rank has an agreed error at the same point (set-up): all can finish normally.
    if (world.size > 1 && !dynamic_cast<const AgreedError*>(&e)) abort_world(code);
    return code;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  return emb::run_in_world("embtrain", &argc, &argv, [&](const emb::World& world) { return run(world, argc, argv); });
}
