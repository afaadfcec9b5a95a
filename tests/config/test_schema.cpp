// The schema table, value checking and key suggestions.
#include <boost/test/unit_test.hpp>
#include <cctype>
#include <set>

#include "config/schema.hpp"
#include "config/value.hpp"
#include "deck_test_dir.hpp"

using emb::KeySpec;
using emb::KeyType;
using emb_test::input_error_of;

BOOST_AUTO_TEST_SUITE(schema_table)

BOOST_AUTO_TEST_CASE(keys_are_unique_and_grouped_by_section_in_order) {
  std::set<std::string> keys;
  std::vector<std::string> order;
  for (const KeySpec& spec : emb::deck_schema()) {
    BOOST_TEST(keys.insert(spec.key).second, spec.key);
    BOOST_TEST(spec.key == spec.section() + "." + spec.name());
    for (const std::string& part : {spec.section(), spec.name()})
      for (char c : part) BOOST_TEST((std::islower(c) || std::isdigit(c) || c == '_'), spec.key);
    BOOST_TEST(!spec.doc.empty(), spec.key);
    if (order.empty() || order.back() != spec.section()) order.push_back(spec.section());
  }
  // A section that came back later would show up twice here.
  BOOST_TEST(order == (std::vector<std::string>{"run", "model", "data", "train", "comm", "plan", "sim", "rl", "debug"}));
  BOOST_TEST(emb::deck_sections() == order);
}

BOOST_AUTO_TEST_CASE(defaults_are_valid_canonical_values) {
  std::vector<std::string> required;
  for (const KeySpec& spec : emb::deck_schema()) {
    if (spec.required) {
      required.push_back(spec.key);
      continue;
    }
    BOOST_TEST(emb::canonical_value(spec, spec.default_value) == spec.default_value, spec.key);
  }
  BOOST_TEST(required == std::vector<std::string>{"model.preset"});
}

BOOST_AUTO_TEST_CASE(lookup_gives_the_declared_spec) {
  const KeySpec* tokens = emb::find_key_spec("data.tokens_per_mb");
  BOOST_TEST_REQUIRE(tokens != nullptr);
  BOOST_TEST((tokens->type == KeyType::integer));
  BOOST_TEST(tokens->default_value == "4096");
  BOOST_TEST(tokens->unit == "tokens");
  BOOST_TEST(tokens->range.text() == "[16, 1000000000]");
  const KeySpec* shard = emb::find_key_spec("train.shard");
  BOOST_TEST_REQUIRE(shard != nullptr);
  BOOST_TEST(shard->choices == (std::vector<std::string>{"none", "grads", "full"}));
  const KeySpec* patch = emb::find_key_spec("model.patch");
  BOOST_TEST_REQUIRE(patch != nullptr);
  BOOST_TEST(patch->list_size == 3u);
  BOOST_TEST(emb::find_key_spec("train.stpes") == nullptr);
  BOOST_TEST(emb::find_key_spec("steps") == nullptr);
  BOOST_TEST(emb::is_deck_section("comm"));
  BOOST_TEST(!emb::is_deck_section("optim"));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(schema_suggestions)

BOOST_AUTO_TEST_CASE(edit_distance_counts_single_character_edits) {
  BOOST_TEST(emb::edit_distance("kitten", "sitting") == 3u);
  BOOST_TEST(emb::edit_distance("", "abc") == 3u);
  BOOST_TEST(emb::edit_distance("abc", "") == 3u);
  BOOST_TEST(emb::edit_distance("steps", "steps") == 0u);
  BOOST_TEST(emb::edit_distance("stpes", "steps") == 2u);
}

BOOST_AUTO_TEST_CASE(closest_key_forgives_small_typos_and_wrong_sections) {
  BOOST_TEST(emb::closest_key("train.stpes") == "train.steps");
  BOOST_TEST(emb::closest_key("train.step") == "train.steps");
  BOOST_TEST(emb::closest_key("trian.steps") == "train.steps");
  BOOST_TEST(emb::closest_key("train.seed") == "run.seed");
  BOOST_TEST(emb::closest_key("model.dmodel") == "model.d_model");
  BOOST_TEST(emb::closest_key("train.qqqqqqqq") == "");
  BOOST_TEST(emb::closest_section("trian") == "train");
  BOOST_TEST(emb::closest_section("comms") == "comm");
  BOOST_TEST(emb::closest_section("optimizer") == "");
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(schema_values)

BOOST_AUTO_TEST_CASE(ranges_are_open_or_closed_as_declared) {
  emb::Range unit_interval = emb::from_below(0, 1);
  BOOST_TEST(unit_interval.contains(0.0));
  BOOST_TEST(unit_interval.contains(0.999));
  BOOST_TEST(!unit_interval.contains(1.0));
  BOOST_TEST(!unit_interval.contains(-1e-12));
  BOOST_TEST(unit_interval.text() == "[0, 1)");
  BOOST_TEST(!emb::above(0).contains(0.0));
  BOOST_TEST(emb::above(0).text() == "> 0");
  BOOST_TEST(emb::at_least(1).contains(1.0));
  BOOST_TEST(emb::at_least(1).text() == ">= 1");
  BOOST_TEST(emb::between(0, 64).text() == "[0, 64]");
  BOOST_TEST(emb::any_number().text() == "");
}

BOOST_AUTO_TEST_CASE(numbers_print_shortest_exact) {
  BOOST_TEST(emb::format_number(3e-4) == "0.0003");
  BOOST_TEST(emb::format_number(0.1) == "0.1");
  BOOST_TEST(emb::format_number(1e-8) == "1e-08");
  BOOST_TEST(emb::format_number(1e9) == "1000000000");
  BOOST_TEST(emb::format_number(-2.5) == "-2.5");
  double third = 1.0 / 3.0;
  BOOST_TEST(std::stod(emb::format_number(third)) == third);
}

BOOST_AUTO_TEST_CASE(readers_take_whole_values_only) {
  int64_t i = 0;
  BOOST_TEST(emb::parse_int("-12", &i));
  BOOST_TEST(i == -12);
  BOOST_TEST(!emb::parse_int("12x", &i));
  BOOST_TEST(!emb::parse_int("0x10", &i));
  BOOST_TEST(!emb::parse_int("99999999999999999999", &i));
  double d = 0;
  BOOST_TEST(emb::parse_real("2.5e-3", &d));
  BOOST_TEST(d == 2.5e-3);
  BOOST_TEST(!emb::parse_real("inf", &d));
  BOOST_TEST(!emb::parse_real("1.0.0", &d));
  BOOST_TEST(emb::split_list(" a , b ,c") == (std::vector<std::string>{"a", "b", "c"}));
  BOOST_TEST(emb::split_list("  ").empty());
}

BOOST_AUTO_TEST_CASE(booleans_accept_the_usual_spellings) {
  KeySpec flag;
  flag.key = "test.flag";
  flag.type = KeyType::boolean;
  BOOST_TEST(emb::canonical_value(flag, "on") == "true");
  BOOST_TEST(emb::canonical_value(flag, "yes") == "true");
  BOOST_TEST(emb::canonical_value(flag, "0") == "false");
  BOOST_TEST(emb::canonical_value(flag, "false") == "false");
  BOOST_TEST(input_error_of([&] { emb::canonical_value(flag, "maybe"); }) ==
             "test.flag: expected true or false, got 'maybe'");
}

BOOST_AUTO_TEST_CASE(canonical_text_normalises_spelling) {
  BOOST_TEST(emb::canonical_value(*emb::find_key_spec("train.steps"), "+0070") == "70");
  BOOST_TEST(emb::canonical_value(*emb::find_key_spec("train.lr"), "3.0E-4") == "0.0003");
  BOOST_TEST(emb::canonical_value(*emb::find_key_spec("model.patch"), "1,2 ,  2") == "1, 2, 2");
  BOOST_TEST(emb::canonical_value(*emb::find_key_spec("data.paths"), "a ,b") == "a, b");
  BOOST_TEST(emb::canonical_value(*emb::find_key_spec("data.paths"), "") == "");
}

BOOST_AUTO_TEST_SUITE_END()
