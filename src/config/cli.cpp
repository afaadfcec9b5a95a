#include "config/cli.hpp"

#include <CLI/CLI.hpp>
#include <memory>

#include "config/deck.hpp"
#include "core/error.hpp"

namespace emb {

namespace {

// The one description of the command line, shared by parsing and --help.
std::unique_ptr<CLI::App> make_app(CliOptions* options) {
  auto app = std::make_unique<CLI::App>(
      "embtrain: SPMD training of robot foundation models.\n"
      "  embtrain DECK [--set section.key=value]... [--print-deck] [--plan] [--dump FILE.h5]\n"
      "  embtrain export RUN_OR_CHECKPOINT -o DIR [--force]",
      "embtrain");
  app->add_option("deck", options->deck, "input deck (.in)")->type_name("DECK");
  app->add_option("--set", options->sets, "override one deck key; repeat for more")
      ->type_name("section.key=value")
      ->allow_extra_args(false);
  app->add_flag("--print-deck", options->print_deck, "print the resolved deck and exit");
  app->add_flag("--plan", options->plan,
                "print the memory and time plan for train.ranks ranks and exit");
  app->add_option("--dump", options->dump,
                  "run the first step's forward/backward (every rank's micro-batches, fp32) and write its parity dump "
                  "here (MODEL.md Dump)")
      ->type_name("FILE.h5");
  CLI::App* exporter = app->add_subcommand(
      "export", "write a run's weights as the released checkpoint it was fine-tuned from (train.init_from), "
                "for upstream inference: GR00T-N1.5's folder with action_head.* replaced and "
                "experiment_cfg/metadata.json; DreamZero's shards and index (README, Fine-tuning released weights)");
  exporter->add_option("source", options->export_source,
                       "a run's output folder, its checkpoint folder (the newest intact checkpoint) or one checkpoint file")
      ->required()
      ->type_name("RUN_OR_CHECKPOINT");
  exporter->add_option("-o,--output", options->export_dir, "the folder to write; it must not exist")
      ->required()
      ->type_name("DIR");
  exporter->add_flag("--force", options->export_force, "replace DIR when it exists");
  exporter->callback([options] { options->export_weights = true; });
  app->footer(deck_schema_help());
  return app;
}

// CLI11 messages can span lines; ours are one line.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n') c = ' ';
  return text;
}

}  // namespace

CliOptions parse_cli(int argc, const char* const* argv) {
  CliOptions options;
  std::unique_ptr<CLI::App> app = make_app(&options);
  try {
    app->parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    CliOptions help;
    help.help = true;
    return help;
  } catch (const CLI::ParseError& e) {
    throw Error(str("embtrain: ", one_line(e.what()), " (embtrain --help shows the usage)"),
                kExitInput);
  }
  if (!options.export_weights && options.deck.empty())
    throw Error("embtrain: deck is required (embtrain --help shows the usage)", kExitInput);
  return options;
}

std::string cli_help_text() {
  CliOptions unused;
  return make_app(&unused)->help();
}

}  // namespace emb
