// The command line: `embtrain DECK [--set section.key=value]... [--print-deck] [--plan]
// [--dump FILE.h5]`, or `embtrain export RUN_OR_CHECKPOINT -o DIR [--force]`. Parsing never
// prints and never exits, so that every MPI rank takes the same decision and main() alone
// prints (rank 0) and exits.
#pragma once
#include <string>
#include <vector>

namespace emb {

struct CliOptions {
  std::string deck;               // the deck file
  std::vector<std::string> sets;  // "section.key=value" overrides, in command-line order
  bool print_deck = false;        // print the resolved deck and exit
  bool plan = false;              // print the memory and time plan for train.ranks and exit
  std::string dump;               // one-step parity dump to this HDF5 file ("" = none)
  bool help = false;              // --help was given: print cli_help_text() and exit 0

  // `embtrain export SOURCE -o DIR`: upstream-format weights of a run's checkpoint.
  bool export_weights = false;
  std::string export_source;  // a run directory, a checkpoint directory or a checkpoint file
  std::string export_dir;     // the folder to write (must not exist unless export_force)
  bool export_force = false;  // replace an existing export_dir
};

// Parses argv (argv[0] is the program). Throws emb::Error with exit code 2 and a one-line
// message for a bad command line; with --help returns options with `help` set and nothing
// else checked.
CliOptions parse_cli(int argc, const char* const* argv);

// Usage, options and every deck key (deck_schema_help()).
std::string cli_help_text();

}  // namespace emb
