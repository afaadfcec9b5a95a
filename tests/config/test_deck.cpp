// Deck parsing: values, defaults, origins, includes, --set, resolved_text, and every error a
// user can cause, each with its exact FILE:LINE prefix and exit code 2.
#include <boost/test/unit_test.hpp>
#include <string>
#include <vector>

#include "config/deck.hpp"
#include "config/schema.hpp"
#include "deck_test_dir.hpp"

using emb::Deck;
using emb::load_deck;
using emb_test::DeckTestDir;
using emb_test::input_error_of;

namespace {

const char* kMinimal = "[model]\npreset = tiny_gr00t\n";

// The error load_deck raises for the deck "bad.in" whose text is `text`.
std::string deck_error(const DeckTestDir& dir, const std::string& text) {
  std::string file = dir.write("bad.in", text);
  return input_error_of([&] { load_deck(file); });
}

// A deck text that load_deck must refuse, and the message it must give after the deck's path.
struct RefusedDeck {
  std::string text;
  std::string message_after_path;
};

// Checks each refused deck in turn, written as "bad.in" in `dir`; a failure names the deck text.
void check_deck_errors(const DeckTestDir& dir, const std::vector<RefusedDeck>& decks) {
  const std::string file = dir.path("bad.in");
  for (const RefusedDeck& deck : decks) {
    BOOST_TEST_CONTEXT("deck text:\n" << deck.text) {
      BOOST_TEST(deck_error(dir, deck.text) == file + deck.message_after_path);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(deck_values)

BOOST_AUTO_TEST_CASE(defaults_fill_every_key_not_given) {
  DeckTestDir dir;
  std::string file = dir.write("run.in", std::string("# a comment line\n\n") + kMinimal);
  Deck deck = load_deck(file);
  BOOST_TEST(deck.get_string("model.preset") == "tiny_gr00t");
  BOOST_TEST(deck.is_set("model.preset"));
  BOOST_TEST(deck.origin("model.preset") == file + ":4");
  BOOST_TEST(deck.get_int("train.steps") == 100);
  BOOST_TEST(deck.get_int("run.seed") == 1234);
  BOOST_TEST(deck.get_double("train.lr") == 3e-4);
  BOOST_TEST(deck.get_double("train.eps") == 1e-8);
  BOOST_TEST(deck.get_string("train.shard") == "full");
  BOOST_TEST(deck.get_string("run.name") == "");
  BOOST_TEST(deck.get_list("data.paths").empty());
  BOOST_TEST(deck.get_int_list("model.patch") == (std::vector<int64_t>{0, 0, 0}));
  for (const emb::KeySpec& spec : emb::deck_schema()) {
    if (spec.required) continue;
    BOOST_TEST(!deck.is_set(spec.key), spec.key);
    BOOST_TEST(deck.origin(spec.key) == "default", spec.key);
  }
}

BOOST_AUTO_TEST_CASE(values_are_read_with_their_types) {
  DeckTestDir dir;
  std::string file = dir.write("typed.in",
                               "[run]\r\n"
                               "  name =   my run   # trailing comment\n"
                               "seed = +7\n"
                               "[model]\n"
                               "preset=tiny_wan\n"
                               "patch = 1, 2,2\n"
                               "shift = 2.5e0\n"
                               "[data]\n"
                               "paths = a.h5 , shards/b*.h5\n"
                               "[train]\n"
                               "lr = 3e-4\n"
                               "steps = 0\n");
  Deck deck = load_deck(file);
  BOOST_TEST(deck.get_string("run.name") == "my run");
  BOOST_TEST(deck.get_int("run.seed") == 7);
  BOOST_TEST(deck.get_string("model.preset") == "tiny_wan");
  BOOST_TEST(deck.get_int_list("model.patch") == (std::vector<int64_t>{1, 2, 2}));
  BOOST_TEST(deck.get_double("model.shift") == 2.5);
  BOOST_TEST(deck.get_list("data.paths") == (std::vector<std::string>{"a.h5", "shards/b*.h5"}));
  BOOST_TEST(deck.get_double("train.lr") == 3e-4);
  BOOST_TEST(deck.get_int("train.steps") == 0);
  BOOST_TEST(deck.origin("model.patch") == file + ":6");
  BOOST_TEST(deck.path() == file);
  BOOST_TEST(deck.stem() == "typed");
}

BOOST_AUTO_TEST_CASE(asking_for_a_wrong_type_or_unknown_key_is_an_internal_error) {
  DeckTestDir dir;
  Deck deck = load_deck(dir.write("run.in", kMinimal));
  for (auto ask : {+[](const Deck& d) { d.get_int("train.lr"); },
                   +[](const Deck& d) { d.get_double("train.steps"); },
                   +[](const Deck& d) { d.get_string("train.steps"); },
                   +[](const Deck& d) { d.get_int("train.nope"); },
                   +[](const Deck& d) { d.origin("nope"); }}) {
    try {
      ask(deck);
      BOOST_FAIL("expected an internal error");
    } catch (const emb::Error& e) {
      BOOST_TEST(e.exit_code() == emb::kExitFailure);
      BOOST_TEST(std::string(e.what()).find("internal error") != std::string::npos);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(deck_includes)

BOOST_AUTO_TEST_CASE(relative_includes_nest_and_later_values_win) {
  DeckTestDir dir;
  std::string extra = dir.write("common/more/extra.in", "[data]\ntokens_per_mb = 128\n");
  std::string base = dir.write("common/base.in",
                               "[model]\n"
                               "preset = tiny_gr00t\n"
                               "[train]\n"
                               "steps = 3\n"
                               "lr = 0.5\n"
                               "include = more/extra.in\n"
                               "warmup_steps = 2\n");
  std::string main = dir.write("main.in",
                               "include = common/base.in\n"
                               "[model]\n"
                               "preset = tiny_wan\n"
                               "[train]\n"
                               "steps = 7\n");
  Deck deck = load_deck(main);
  BOOST_TEST(deck.get_string("model.preset") == "tiny_wan");
  BOOST_TEST(deck.origin("model.preset") == main + ":3");
  BOOST_TEST(deck.get_int("train.steps") == 7);
  BOOST_TEST(deck.get_double("train.lr") == 0.5);
  BOOST_TEST(deck.origin("train.lr") == base + ":5");
  BOOST_TEST(deck.get_int("data.tokens_per_mb") == 128);
  BOOST_TEST(deck.origin("data.tokens_per_mb") == extra + ":2");
  // The including file stays in its section after the include line.
  BOOST_TEST(deck.get_int("train.warmup_steps") == 2);
  BOOST_TEST(deck.origin("train.warmup_steps") == base + ":7");
}

BOOST_AUTO_TEST_CASE(include_overrides_earlier_lines_and_set_overrides_all) {
  DeckTestDir dir;
  dir.write("b.in", "[train]\nsteps = 2\nlr = 0.25\n");
  std::string main = dir.write("a.in",
                               "[model]\npreset = tiny_gr00t\n"
                               "[train]\nsteps = 1\ninclude = b.in\n");
  Deck deck = load_deck(main, {"train.steps=9", "train.lr = 0.125"});
  BOOST_TEST(deck.get_int("train.steps") == 9);
  BOOST_TEST(deck.origin("train.steps") == "--set");
  BOOST_TEST(deck.get_double("train.lr") == 0.125);
  BOOST_TEST(load_deck(main).get_int("train.steps") == 2);
  BOOST_TEST(load_deck(main).origin("train.steps") == dir.path("b.in") + ":2");
}

BOOST_AUTO_TEST_CASE(absolute_and_diamond_includes_are_allowed) {
  DeckTestDir dir;
  std::string shared = dir.write("shared.in", "[run]\nseed = 5\n");
  dir.write("left.in", "include = shared.in\n");
  dir.write("right.in", "include = " + shared + "\n");
  std::string main = dir.write("main.in",
                               std::string(kMinimal) + "include = left.in\ninclude = right.in\n");
  Deck deck = load_deck(main);
  BOOST_TEST(deck.get_int("run.seed") == 5);
  BOOST_TEST(deck.origin("run.seed") == shared + ":2");
}

BOOST_AUTO_TEST_CASE(include_cycle_names_the_chain) {
  DeckTestDir dir;
  std::string a = dir.write("a.in", std::string(kMinimal) + "include = b.in\n");
  std::string b = dir.write("b.in", "[run]\nseed = 1\ninclude = ./a.in\n");
  BOOST_TEST(input_error_of([&] { load_deck(a); }) ==
             b + ":3: include cycle: " + a + " -> " + b + " -> " + a);
  std::string self = dir.write("self.in", "include = self.in\n");
  BOOST_TEST(input_error_of([&] { load_deck(self); }) ==
             self + ":1: include cycle: " + self + " -> " + self);
}

BOOST_AUTO_TEST_CASE(missing_include_names_the_include_line) {
  DeckTestDir dir;
  std::string main = dir.write("main.in", std::string(kMinimal) + "[train]\ninclude = gone.in\n");
  BOOST_TEST(input_error_of([&] { load_deck(main); }) ==
             main + ":4: cannot open the included file " + dir.path("gone.in") +
                 ": No such file or directory");
}

BOOST_AUTO_TEST_CASE(an_included_file_starts_outside_any_section) {
  DeckTestDir dir;
  std::string inner = dir.write("inner.in", "steps = 3\n");
  std::string main = dir.write("main.in", std::string(kMinimal) + "[train]\ninclude = inner.in\n");
  BOOST_TEST(input_error_of([&] { load_deck(main); }) ==
             inner + ":1: key 'steps' comes before any [section] header");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(deck_errors)

BOOST_AUTO_TEST_CASE(missing_or_unreadable_deck_file) {
  DeckTestDir dir;
  std::string gone = dir.path("gone.in");
  BOOST_TEST(input_error_of([&] { load_deck(gone); }) ==
             gone + ": cannot open the deck file: No such file or directory");
  std::string folder = dir.write("folder/x.in", "");
  BOOST_TEST(input_error_of([&] { load_deck(dir.path("folder")); }) ==
             dir.path("folder") + ": cannot open the deck file: it is a directory");
}

BOOST_AUTO_TEST_CASE(unknown_key_suggests_the_closest) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {std::string(kMinimal) + "[train]\nstpes = 5\n",
       ":4: unknown key train.stpes (did you mean train.steps?)"},
      {std::string(kMinimal) + "[train]\nseed = 5\n",
       ":4: unknown key train.seed (did you mean run.seed?)"},
      {"[train]\nqqqqqqqq = 1\n", ":2: unknown key train.qqqqqqqq (embtrain --help lists every key)"},
  });
}

BOOST_AUTO_TEST_CASE(unknown_section) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {std::string(kMinimal) + "\n[trian]\n", ":4: unknown section [trian] (did you mean [train]?)"},
      {"[optimizer]\n",
       ":1: unknown section [optimizer]; sections are run, model, data, train, comm, plan, sim, rl, debug"},
  });
}

BOOST_AUTO_TEST_CASE(wrong_type) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {"[train]\nsteps = abc\n", ":2: train.steps: expected an integer, got 'abc'"},
      {"[train]\nsteps = 1.5\n", ":2: train.steps: expected an integer, got '1.5'"},
      {"[train]\nlr = fast\n", ":2: train.lr: expected a number, got 'fast'"},
      {"[run]\nseed =\n", ":2: run.seed: expected an integer, got ''"},
      {"[data]\nprefetch = soon\n", ":2: data.prefetch: expected an integer or auto, got 'soon'"},
      {"[data]\nprefetch = 65\n", ":2: data.prefetch: 65 is out of range [0, 64] steps"},
  });
}

// An integer key that takes "auto" keeps the word for the caller to resolve, or reads as a number.
BOOST_AUTO_TEST_CASE(an_integer_key_that_takes_auto_keeps_it_or_reads_its_number) {
  DeckTestDir dir;
  const Deck automatic = load_deck(dir.write("auto.in", kMinimal));
  BOOST_TEST(automatic.is_auto("data.prefetch"));
  const Deck three = load_deck(dir.write("three.in", std::string(kMinimal) + "[data]\nprefetch = 3\n"));
  BOOST_TEST(!three.is_auto("data.prefetch"));
  BOOST_TEST(three.get_int("data.prefetch") == 3);
}

BOOST_AUTO_TEST_CASE(out_of_range_says_the_range_and_unit) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {"[data]\ntokens_per_mb = 8\n",
       ":2: data.tokens_per_mb: 8 is out of range [16, 1000000000] tokens"},
      {"[train]\nbeta1 = 1\n", ":2: train.beta1: 1 is out of range [0, 1)"},
      {"[model]\nshift = 0\n", ":2: model.shift: 0 is out of range > 0"},
      {"[train]\nsteps = -1\n", ":2: train.steps: -1 is out of range >= 0 steps"},
      {"[model]\npatch = 1, -2, 2\n", ":2: model.patch: -2 is out of range >= 0"},
  });
}

BOOST_AUTO_TEST_CASE(enum_value_lists_the_choices) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {"[train]\nshard = ful\n",
       ":2: train.shard: 'ful' is not allowed; choose one of none, grads, full"},
      {"[model]\npreset = big\n",
       ":2: model.preset: 'big' is not allowed; choose one of tiny_gr00t, tiny_wan, tiny_dreamzero, "
       "gr00t_n1.5_3b, dreamzero_14b_droid, dreamzero_5b_droid, dreamzero5b, dreamzero14b"},
  });
}

BOOST_AUTO_TEST_CASE(lists_with_wrong_shape) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {"[model]\npatch = 1,2\n",
       ":2: model.patch: expected 3 comma-separated integers, got 2 in '1,2'"},
      {"[model]\npatch = 1,x,2\n", ":2: model.patch: expected an integer, got 'x'"},
      {"[data]\npaths = a.h5,,b.h5\n", ":2: data.paths: empty item in the list 'a.h5,,b.h5'"},
  });
}

BOOST_AUTO_TEST_CASE(missing_required_key_names_file_key_and_section) {
  DeckTestDir dir;
  const std::string file = dir.path("bad.in");
  std::string message = deck_error(dir, "[train]\nsteps = 5\n");
  BOOST_TEST(message == file + ": missing required key model.preset: add 'preset = ...' under "
                                "[model] (one of tiny_gr00t, tiny_wan, tiny_dreamzero, gr00t_n1.5_3b, "
                                "dreamzero_14b_droid, dreamzero_5b_droid, dreamzero5b, dreamzero14b) or set train.init_from");
  Deck deck = load_deck(file, {"model.preset=dreamzero5b"});
  BOOST_TEST(deck.get_string("model.preset") == "dreamzero5b");
}

// model.fp8 runs on either device (CpuOps has the reference recipe); off by default.
BOOST_AUTO_TEST_CASE(fp8_on_either_device) {
  DeckTestDir dir;
  const std::string ok = dir.write("ok.in", kMinimal);
  BOOST_TEST(load_deck(ok).get_string("model.fp8") == "off");
  BOOST_TEST(load_deck(ok, {"model.fp8=on"}).get_string("model.fp8") == "on");
  BOOST_TEST(load_deck(ok, {"model.fp8=on", "run.device=cuda"}).get_string("model.fp8") == "on");
}

BOOST_AUTO_TEST_CASE(duplicate_key_in_one_file_says_where_it_was_first_set) {
  DeckTestDir dir;
  const std::string first_set_at_line_2 = " (first set at " + dir.path("bad.in") + ":2)";
  check_deck_errors(dir, {
      {"[train]\nsteps = 1\nlr = 0.1\nsteps = 2\n",
       ":4: duplicate key train.steps" + first_set_at_line_2},
      {"[train]\nsteps = 1\n[run]\nseed = 2\n[train]\nsteps = 1\n",
       ":6: duplicate key train.steps" + first_set_at_line_2},
  });
}

BOOST_AUTO_TEST_CASE(malformed_lines) {
  DeckTestDir dir;
  const std::string expected = "': expected [section], key = value, include = FILE or # comment";
  check_deck_errors(dir, {
      {"[train]\nsteps 5\n", ":2: malformed line 'steps 5" + expected},
      {"[train\n", ":1: malformed line '[train" + expected},
      {"[train]\n= 5\n", ":2: malformed line '= 5" + expected},
      {"[train]\ntrain.steps = 5\n", ":2: malformed line 'train.steps = 5" + expected},
      {"\nsteps = 5\n", ":2: key 'steps' comes before any [section] header"},
      {"include =   # nothing\n", ":1: include needs a file name"},
  });
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(deck_overrides)

BOOST_AUTO_TEST_CASE(set_overrides_in_order) {
  DeckTestDir dir;
  std::string file = dir.write("run.in", std::string(kMinimal) + "[train]\nsteps = 5\n");
  Deck deck = load_deck(file, {"train.steps=6", "data.paths=x.h5,y.h5", "train.steps=8"});
  BOOST_TEST(deck.get_int("train.steps") == 8);
  BOOST_TEST(deck.is_set("data.paths"));
  BOOST_TEST(deck.origin("data.paths") == "--set");
  BOOST_TEST(deck.get_list("data.paths") == (std::vector<std::string>{"x.h5", "y.h5"}));
  BOOST_TEST(!deck.is_set("train.lr"));
}

BOOST_AUTO_TEST_CASE(set_errors_name_the_override) {
  DeckTestDir dir;
  std::string file = dir.write("run.in", kMinimal);
  auto set_error = [&](const std::string& set) {
    return input_error_of([&] { load_deck(file, {set}); });
  };
  BOOST_TEST(set_error("train.steps") == "--set train.steps: expected section.key=value");
  BOOST_TEST(set_error("train.stpes=5") ==
             "--set train.stpes=5: unknown key train.stpes (did you mean train.steps?)");
  BOOST_TEST(set_error("train.steps=abc") ==
             "--set train.steps=abc: train.steps: expected an integer, got 'abc'");
  BOOST_TEST(set_error("train.beta2=1.5") ==
             "--set train.beta2=1.5: train.beta2: 1.5 is out of range [0, 1)");
  BOOST_TEST(set_error("comm.backend=gloo") ==
             "--set comm.backend=gloo: comm.backend: 'gloo' is not allowed; choose one of auto, "
             "mpi, nccl");
  BOOST_TEST(set_error("run.name=a#b") ==
             "--set run.name=a#b: run.name: '#' starts a comment in a deck and cannot be part of "
             "a value, got 'a#b'");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(deck_resolved)

BOOST_AUTO_TEST_CASE(resolved_text_parses_back_to_the_same_values) {
  DeckTestDir dir;
  std::string file = dir.write("run.in",
                               "[run]\nname = round trip\n"
                               "[model]\npreset = tiny_wan\npatch = 1,2,2\n"
                               "[data]\npaths = a.h5, b.h5\n"
                               "[train]\nlr = 3e-4\nsteps = 7\n");
  Deck deck = load_deck(file, {"comm.fabric_gbps=12.5", "train.resume=auto"});
  std::string text = deck.resolved_text();
  BOOST_TEST(text.find("\n[train]\nsteps = 7   # " + file + ":10\n") != std::string::npos);
  BOOST_TEST(text.find("\nfabric_gbps = 12.5   # --set\n") != std::string::npos);
  BOOST_TEST(text.find("\nckpt_dir =    # default\n") != std::string::npos);

  Deck again = load_deck(dir.write("resolved.in", text));
  std::size_t compared = 0;
  for (const emb::KeySpec& spec : emb::deck_schema()) {
    BOOST_TEST_CONTEXT(spec.key) {
      switch (spec.type) {
        case emb::KeyType::integer:
          BOOST_TEST(again.is_auto(spec.key) == deck.is_auto(spec.key));
          if (!deck.is_auto(spec.key)) BOOST_TEST(again.get_int(spec.key) == deck.get_int(spec.key));
          break;
        case emb::KeyType::real:
          BOOST_TEST(again.get_double(spec.key) == deck.get_double(spec.key));
          break;
        case emb::KeyType::boolean:
          BOOST_TEST(again.get_bool(spec.key) == deck.get_bool(spec.key));
          break;
        case emb::KeyType::string:
        case emb::KeyType::enumeration:
          BOOST_TEST(again.get_string(spec.key) == deck.get_string(spec.key));
          break;
        case emb::KeyType::list:
          BOOST_TEST(again.get_list(spec.key) == deck.get_list(spec.key));
          break;
        case emb::KeyType::int_list:
          BOOST_TEST(again.get_int_list(spec.key) == deck.get_int_list(spec.key));
          break;
      }
      BOOST_TEST(again.is_set(spec.key));
      ++compared;
    }
  }
  BOOST_TEST(compared == emb::deck_schema().size());
  BOOST_TEST(again.get_string("run.name") == "round trip");
  BOOST_TEST(again.get_double("train.lr") == 3e-4);
}

BOOST_AUTO_TEST_SUITE_END()

// Hostile decks (issue 19): each refused with one short line, none crashes or reads forever.
BOOST_AUTO_TEST_SUITE(hostile_decks)

BOOST_AUTO_TEST_CASE(include_depth_is_limited) {
  DeckTestDir dir;
  for (int i = 0; i < 40; ++i) dir.write("d" + std::to_string(i) + ".in", "include = d" + std::to_string(i + 1) + ".in\n");
  const std::string error = input_error_of([&] { load_deck(dir.path("d0.in")); });
  BOOST_TEST(error == dir.path("d31.in") + ":1: includes nested deeper than 32 files (" + dir.path("d32.in") + ")");
}

BOOST_AUTO_TEST_CASE(non_regular_include_is_refused) {
  DeckTestDir dir;
  const std::string main = dir.write("main.in", std::string(kMinimal) + "include = /dev/zero\n");
  BOOST_TEST(input_error_of([&] { load_deck(main); }) ==
             main + ":3: cannot open the included file /dev/zero: not a regular file");
}

BOOST_AUTO_TEST_CASE(long_input_is_truncated_in_messages) {
  DeckTestDir dir;
  const std::string line(10 << 20, 'x');
  check_deck_errors(dir, {
      {"[run]\n" + line + "\n", ":2: malformed line '" + std::string(60, 'x') +
                                    "... (10485760 bytes, truncated)': expected [section], key = value, "
                                    "include = FILE or # comment"},
      {"[" + std::string(1 << 20, 's') + "]\n",
       ":1: unknown section [" + std::string(60, 's') + "... (1048576 bytes, truncated)]; sections are run, model, "
                                                        "data, train, comm, plan, sim, rl, debug"},
      {"[train]\nsteps = " + std::string(100, '9') + "\n",
       ":2: train.steps: expected an integer, got '" + std::string(60, '9') + "... (100 bytes, truncated)'"},
  });
}

BOOST_AUTO_TEST_CASE(embedded_nul_is_not_a_number) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {std::string("[train]\nsteps = 4\0junk\n", 23), ":2: train.steps: expected an integer, got '4\\x00junk'"},
  });
}

BOOST_AUTO_TEST_CASE(sizes_are_range_checked_before_narrowing) {
  DeckTestDir dir;
  check_deck_errors(dir, {
      {"[model]\nd_model = 4294967360\n", ":2: model.d_model: 4294967360 is out of range [0, 2147483647]"},
      {"[model]\nd_model = 2147483648\n", ":2: model.d_model: 2147483648 is out of range [0, 2147483647]"},
  });
}

BOOST_AUTO_TEST_CASE(utf8_byte_order_mark_is_skipped) {
  DeckTestDir dir;
  const std::string file = dir.write("bom.in", std::string("\xEF\xBB\xBF") + kMinimal);
  BOOST_TEST(load_deck(file).get_string("model.preset") == "tiny_gr00t");
}

BOOST_AUTO_TEST_SUITE_END()
