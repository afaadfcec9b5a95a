// The command line: options, --help without exiting, and one-line errors with exit code 2.
#include <boost/test/unit_test.hpp>

#include "config/cli.hpp"
#include "config/schema.hpp"
#include "deck_test_dir.hpp"

using emb::CliOptions;
using emb_test::input_error_of;

namespace {

CliOptions parse(std::vector<const char*> args) {
  args.insert(args.begin(), "embtrain");
  return emb::parse_cli(static_cast<int>(args.size()), args.data());
}

// Every bad command line says what is wrong and where the usage is, on one line.
void check_cli_error(std::vector<const char*> args, const std::string& says) {
  std::string message = input_error_of([&] { parse(args); });
  BOOST_TEST(message.rfind("embtrain: ", 0) == 0u, message);
  BOOST_TEST(message.find(says) != std::string::npos, message);
  BOOST_TEST(message.find("(embtrain --help shows the usage)") != std::string::npos, message);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(every_option_is_read) {
  CliOptions o = parse({"inputs/tiny_gr00t.in", "--set", "train.steps=5", "--set=run.seed=3",
                        "--print-deck", "--plan", "--dump", "out.h5"});
  BOOST_TEST(o.deck == "inputs/tiny_gr00t.in");
  BOOST_TEST(o.sets == (std::vector<std::string>{"train.steps=5", "run.seed=3"}));
  BOOST_TEST(o.print_deck);
  BOOST_TEST(o.plan);
  BOOST_TEST(o.dump == "out.h5");
  BOOST_TEST(!o.help);
}

BOOST_AUTO_TEST_CASE(defaults_when_only_the_deck_is_given) {
  CliOptions o = parse({"deck.in"});
  BOOST_TEST(o.deck == "deck.in");
  BOOST_TEST(o.sets.empty());
  BOOST_TEST(!o.print_deck);
  BOOST_TEST(!o.plan);
  BOOST_TEST(o.dump == "");
  BOOST_TEST(!o.help);
}

BOOST_AUTO_TEST_CASE(set_takes_one_value_so_the_deck_may_follow) {
  CliOptions o = parse({"--set", "train.steps=5", "deck.in", "--set", "train.lr=0.1"});
  BOOST_TEST(o.deck == "deck.in");
  BOOST_TEST(o.sets == (std::vector<std::string>{"train.steps=5", "train.lr=0.1"}));
}

BOOST_AUTO_TEST_CASE(help_is_reported_not_printed) {
  BOOST_TEST(parse({"--help"}).help);
  BOOST_TEST(parse({"-h"}).help);
  BOOST_TEST(parse({"deck.in", "--set", "train.steps=1", "--help"}).help);
}

BOOST_AUTO_TEST_CASE(bad_command_lines_are_input_errors) {
  check_cli_error({}, "deck is required");
  check_cli_error({"deck.in", "--bogus"}, "--bogus");
  check_cli_error({"a.in", "b.in"}, "b.in");
  check_cli_error({"deck.in", "--dump"}, "--dump");
  check_cli_error({"deck.in", "--set"}, "--set");
  check_cli_error({"export", "outputs/run"}, "--output");
  check_cli_error({"export", "-o", "out"}, "source");
}

BOOST_AUTO_TEST_CASE(export_takes_a_source_and_an_output_folder) {
  CliOptions o = parse({"export", "outputs/run", "-o", "exported"});
  BOOST_TEST(o.export_weights);
  BOOST_TEST(o.export_source == "outputs/run");
  BOOST_TEST(o.export_dir == "exported");
  BOOST_TEST(!o.export_force);
  BOOST_TEST(parse({"export", "ckpt/step_00000020.h5", "--output", "x", "--force"}).export_force);
  BOOST_TEST(!parse({"deck.in"}).export_weights);
}

BOOST_AUTO_TEST_CASE(help_text_documents_usage_options_and_every_key) {
  std::string help = emb::cli_help_text();
  for (const char* option : {"--set", "--print-deck", "--plan", "--dump", "--help"})
    BOOST_TEST(help.find(option) != std::string::npos, option);
  BOOST_TEST(help.find("embtrain DECK [--set section.key=value]...") != std::string::npos);
  BOOST_TEST(help.find("  tokens_per_mb  (int, default \"4096\", tokens, range [16, 1000000000])\n"
                       "      token budget of one packed micro-batch\n") != std::string::npos);
  BOOST_TEST(help.find("  shard  (enum: none | grads | full, default \"full\")") != std::string::npos);
  BOOST_TEST(help.find("  preset  (enum: tiny_gr00t | tiny_wan | tiny_dreamzero | gr00t_n1.5_3b | "
                       "dreamzero_14b_droid | dreamzero_5b_droid | dreamzero5b | dreamzero14b, required unless train.init_from is set)") != std::string::npos);
  BOOST_TEST(help.find("embtrain export RUN_OR_CHECKPOINT -o DIR [--force]") != std::string::npos);
  // Each key appears after its section header.
  for (const emb::KeySpec& spec : emb::deck_schema()) {
    std::size_t section = help.find("\n[" + spec.section() + "]\n");
    BOOST_TEST_REQUIRE(section != std::string::npos, spec.key);
    BOOST_TEST(help.find("\n  " + spec.name() + "  (", section) != std::string::npos, spec.key);
  }
}

BOOST_AUTO_TEST_SUITE_END()
