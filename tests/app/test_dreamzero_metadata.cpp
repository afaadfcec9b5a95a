// A DreamZero export's experiment_cfg/metadata.json (app/dreamzero_metadata.hpp): the run's
// statistics in the entry upstream inference is launched with, the release's other entries kept;
// the cases it refuses.
#define BOOST_TEST_MODULE dreamzero_metadata
#include <boost/test/unit_test.hpp>

#include <string>

#include "app/dreamzero_metadata.hpp"
#include "core/error.hpp"

using namespace emb;
using json = nlohmann::json;

namespace {

// One DatasetMetadata entry with sub-key `key` of state and action, every statistic `value`.
json entry(const std::string& tag, const std::string& key, double value) {
  const json stats = {{"min", {value}}, {"max", {value}}, {"mean", {value}}, {"std", {value}}, {"q01", {value}},
                      {"q99", {value}}};
  const json modality = {{"absolute", true}, {"rotation_type", nullptr}, {"shape", {1}}, {"continuous", true}};
  return {{"statistics", {{"state", {{key, stats}}}, {"action", {{key, stats}}}}},
          {"modalities", {{"state", {{key, modality}}}, {"action", {{key, modality}}}, {"video", json::object()}}},
          {"embodiment_tag", tag}};
}

// The exit code and message dreamzero_metadata throws with ("" and 0: none).
std::pair<int, std::string> refusal(const json& released, const json& run) {
  try {
    dreamzero_metadata(released, run, "rel/experiment_cfg/metadata.json");
  } catch (const Error& e) {
    return {e.exit_code(), e.what()};
  }
  return {0, ""};
}

}  // namespace

BOOST_AUTO_TEST_CASE(the_release_s_only_entry_takes_the_run_s_statistics) {
  const json released = {{"oxe_droid", entry("oxe_droid", "joint_position", 7.0)}};
  const json run = {{"new_embodiment", entry("new_embodiment", "joint_position", 0.5)}};
  const DreamZeroMetadata m = dreamzero_metadata(released, run, "rel/experiment_cfg/metadata.json");
  BOOST_TEST(m.tag == "oxe_droid");
  BOOST_TEST(m.json.size() == 1u);
  BOOST_TEST(m.json["oxe_droid"]["embodiment_tag"] == "oxe_droid");
  BOOST_TEST(m.json["oxe_droid"]["statistics"] == run["new_embodiment"]["statistics"]);
  BOOST_TEST(m.json["oxe_droid"]["modalities"] == run["new_embodiment"]["modalities"]);
  BOOST_TEST(m.note.empty());
}

BOOST_AUTO_TEST_CASE(the_run_s_tag_is_replaced_and_the_other_entries_kept) {
  const json released = {{"oxe_droid", entry("oxe_droid", "joint_position", 7.0)},
                         {"agibot", entry("agibot", "arm", 3.0)}};
  const json run = {{"oxe_droid", entry("oxe_droid", "joint_position", 0.5)}};
  const DreamZeroMetadata m = dreamzero_metadata(released, run, "rel/experiment_cfg/metadata.json");
  BOOST_TEST(m.tag == "oxe_droid");
  BOOST_TEST(m.json["oxe_droid"] == run["oxe_droid"]);
  BOOST_TEST(m.json["agibot"] == released["agibot"]);
}

BOOST_AUTO_TEST_CASE(sub_keys_the_release_does_not_have_are_noted) {
  const json released = {{"oxe_droid", entry("oxe_droid", "joint_position", 7.0)}};
  const json run = {{"new_embodiment", entry("new_embodiment", "left_arm", 0.5)}};
  const DreamZeroMetadata m = dreamzero_metadata(released, run, "rel/experiment_cfg/metadata.json");
  BOOST_TEST(m.note == "state sub-keys left_arm where the release has joint_position; "
                       "action sub-keys left_arm where the release has joint_position");
}

BOOST_AUTO_TEST_CASE(several_embodiments_or_an_ambiguous_release_are_refused) {
  const json two_run = {{"oxe_droid", entry("oxe_droid", "j", 0.5)}, {"gr1", entry("gr1", "j", 0.5)}};
  const auto [code, text] = refusal(json{{"oxe_droid", entry("oxe_droid", "j", 1.0)}}, two_run);
  BOOST_TEST(code == kExitInput);
  BOOST_TEST(text == "the run's data holds 2 embodiment tags (gr1, oxe_droid); DreamZero serves one embodiment, "
                     "so its metadata.json takes one entry");
  const json released = {{"agibot", entry("agibot", "j", 1.0)}, {"yam", entry("yam", "j", 1.0)}};
  const auto [code2, text2] = refusal(released, json{{"oxe_droid", entry("oxe_droid", "j", 0.5)}});
  BOOST_TEST(code2 == kExitInput);
  BOOST_TEST(text2 == "rel/experiment_cfg/metadata.json: entries agibot, yam and none is the run's data's tag "
                      "oxe_droid; DreamZero serves one embodiment: keep the release's entry of it alone in "
                      "rel/experiment_cfg/metadata.json");
  const auto [code3, text3] = refusal(json::object(), json{{"oxe_droid", entry("oxe_droid", "j", 0.5)}});
  BOOST_TEST(code3 == kExitInput);
  BOOST_TEST(text3 == "rel/experiment_cfg/metadata.json: no embodiment entries; DreamZero's release holds its embodiment's");
}
