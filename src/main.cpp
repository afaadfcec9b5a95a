// embtrain: one SPMD executable (DESIGN.md "Shape").
//   mpirun -np N embtrain DECK [--set section.key=value]... [--print-deck | --plan | --dump F.h5]
//
// Failure policy: set-up (command line, deck, files) runs on every rank and the ranks agree
// on the outcome before going on, so a bad deck prints one line on rank 0 and every rank
// exits with the same code. A failure later, inside collectives, aborts the whole job
// (MPI_Abort, train/fail_run.hpp) so no rank is left hanging.
#include <cstdio>
#include <functional>
#include <iostream>

#include "comm/agreement.hpp"
#include "comm/comm_factory.hpp"
#include "comm/world.hpp"
#include "config/cli.hpp"
#include "config/deck.hpp"
#include "core/error.hpp"
#include "train/commands.hpp"
#include "train/backend.hpp"
#include "train/fail_run.hpp"
#include "train/start_checks.hpp"
#include "train/trainer.hpp"

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
  if (int code = agree(world, [&] { deck = load_deck(cli.deck, cli.sets); })) return code;
  if (cli.print_deck) {
    if (world.rank == 0) std::cout << deck.resolved_text();
    return 0;
  }
  if (cli.plan) return agree(world, [&] { if (world.rank == 0) std::cout << plan_report(deck, world.size); });
  if (!cli.dump.empty()) return agree(world, [&] { write_step_dump(world, deck, cli.dump); });

  // Rank 0 alone reads the data files' index arrays for the start-up checks (serially).
  if (int code = agree(world, [&] {
        validate_training_deck(deck);
        if (world.rank == 0) check_before_training(deck, world.size, world.local_size);
      }))
    return code;
  std::unique_ptr<Comm> comm;
  if (int code = agree(world, [&] {
        comm = make_comm(world, deck.get_string("comm.backend"), deck.get_string("comm.progress"),
                         FabricModel{deck.get_double("comm.fabric_latency_us"), deck.get_double("comm.fabric_gbps")},
                         backend_buffer_memory(deck));
      }))
    return code;
  try {
    train(world, deck, *comm);
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
  emb::World world;
  try {
    world = emb::init_world(&argc, &argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "embtrain: error: %s\n", e.what());
    return emb::kExitFailure;
  }
  int code = run(world, argc, argv);
  emb::finalize_world();
  return code;
}
