#define BOOST_TEST_MODULE data_format
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>

#include "core/error.hpp"
#include "core/half.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "data/tokenizer.hpp"
#include "data_fixtures.hpp"
#include "tool_run.hpp"

using namespace emb;
namespace fs = std::filesystem;

namespace {

const std::string kDir = test::scratch_dir("data_format");

// Overwrites element `index` (flat) of dataset `ds` with `value`.
template <class T>
void poke(const std::string& path, const std::string& ds, hsize_t index, T value, hid_t mem_type) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  hid_t d = H5Dopen2(f, ds.c_str(), H5P_DEFAULT);
  hid_t space = H5Dget_space(d);
  int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<size_t>(rank)), coord(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  for (int i = rank - 1; i >= 0; --i) coord[i] = index % dims[i], index /= dims[i];
  H5Sselect_elements(space, H5S_SELECT_SET, 1, coord.data());
  hsize_t one = 1;
  hid_t mem = H5Screate_simple(1, &one, nullptr);
  BOOST_REQUIRE(H5Dwrite(d, mem_type, mem, space, H5P_DEFAULT, &value) >= 0);
  H5Sclose(mem), H5Sclose(space), H5Dclose(d), H5Fclose(f);
}

void unlink_object(const std::string& path, const std::string& obj) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  BOOST_REQUIRE(H5Ldelete(f, obj.c_str(), H5P_DEFAULT) >= 0);
  H5Fclose(f);
}

void set_format(const std::string& path, const std::string& value) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  H5Adelete(f, "format");
  H5File::create(kDir + "/unused.h5");  // keeps H5File's error-stack settings in place
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, value.size());
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = H5Acreate2(f, "format", type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, type, value.c_str());
  H5Aclose(a), H5Sclose(space), H5Tclose(type), H5Fclose(f);
}

std::string verify_error(const std::string& path) {
  try {
    verify_packed(H5File::open(path));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string corrupt_copy(const std::string& good, const std::string& name, const std::function<void(const std::string&)>& edit) {
  std::string path = kDir + "/" + name + ".h5";
  fs::copy_file(good, path, fs::copy_options::overwrite_existing);
  edit(path);
  return path;
}

}  // namespace

BOOST_AUTO_TEST_CASE(gr00t_round_trip) {
  SynthOptions o = test::tiny_synth("gr00t", 12, 5);
  PackedData d = synthesize(o);
  std::string path = kDir + "/g.h5";
  write_packed(d, path, "test");
  BOOST_TEST(!fs::exists(path + ".tmp"));
  H5File f = H5File::open(path);
  PackedSummary s = verify_packed(f);
  BOOST_TEST(s.family == "gr00t");
  BOOST_TEST(s.episodes == 12);
  BOOST_TEST(s.steps == d.steps());
  BOOST_TEST((f.read_all<int64_t>(packed::kEpisodeOffsets) == d.episode_offsets));
  BOOST_TEST((f.read_all<float>(packed::kState) == d.state));
  BOOST_TEST((f.read_all<float>(packed::kAction) == d.action));
  BOOST_TEST((f.read_all<uint16_t>(packed::kVlFeatures) == d.features.at("vl").values));
  BOOST_TEST((f.read_all<int64_t>(packed::kVlOffsets) == d.features.at("vl").offsets));
  BOOST_TEST((f.read_strings(packed::kTaskText) == d.task_text));
  std::vector<int32_t> tokens = f.read_all<int32_t>(packed::kTaskTokens);
  std::vector<int64_t> off = f.read_all<int64_t>(packed::kTaskTokenOffsets);
  for (size_t t = 0; t < d.task_text.size(); ++t) {
    std::vector<int32_t> one(tokens.begin() + off[t], tokens.begin() + off[t + 1]);
    BOOST_TEST(detokenize(one) == d.task_text[t]);
    BOOST_TEST((one.size() >= 5 && one.size() <= 60));
  }
  // Statistics match a direct computation of column 0.
  double sum = 0;
  for (int64_t r = 0; r < d.steps(); ++r) sum += d.state[size_t(r * d.state_dim)];
  BOOST_TEST(f.read_all<float>("/stats/state/mean")[0] == float(sum / double(d.steps())), boost::test_tools::tolerance(1e-5f));
  // Several embodiments with different widths; unused columns are zero.
  std::vector<int32_t> widths = f.read_all<int32_t>(packed::kEmbodimentActionDim);
  BOOST_TEST(*std::min_element(widths.begin(), widths.end()) < *std::max_element(widths.begin(), widths.end()));
}

BOOST_AUTO_TEST_CASE(wan_round_trip) {
  PackedData d = synthesize(test::tiny_synth("wan", 6, 2));
  std::string path = kDir + "/w.h5";
  write_packed(d, path, "test");
  H5File f = H5File::open(path);
  PackedSummary s = verify_packed(f);
  BOOST_TEST(s.latent_views.size() == 3u);
  BOOST_TEST((f.read_all<uint16_t>("/latents/view1") == d.latents[1].values));
  BOOST_TEST((f.read_all<int64_t>("/latents/view1_offsets") == d.latents[1].offsets));
  BOOST_TEST(f.attr_double("/latents/view1", "steps_per_latent") == 4.0);
  BOOST_TEST((f.read_all<uint16_t>(packed::kTxtFeatures) == d.features.at("txt").values));
}

BOOST_AUTO_TEST_CASE(half_conversion_round_trips) {
  for (float x : {0.f, 1.f, -2.5f, 0.000061035156f, 65504.f, 3.1415926f, -1e-7f}) {
    float back = half_to_float(float_to_half(x));
    BOOST_TEST(std::fabs(back - x) <= std::fabs(x) * 1e-3f + 6e-8f);
  }
  BOOST_TEST(std::isinf(half_to_float(float_to_half(1e6f))));
  BOOST_TEST(std::isnan(half_to_float(float_to_half(std::nanf("")))));
}

BOOST_AUTO_TEST_CASE(verify_catches_each_corruption) {
  std::string good = kDir + "/good.h5";
  write_packed(synthesize(test::tiny_synth("gr00t", 6, 1)), good, "test");
  BOOST_TEST(verify_error(good).empty());
  struct Case {
    std::string name, expect;
    std::function<void(const std::string&)> edit;
    bool bulk = false;  // in the bulk rows training checks as it reads them, not at start-up
  };
  std::vector<Case> cases = {
      {"offsets", ":/episodes/offsets: not monotonic at index 3",
       [](const std::string& p) { poke<int64_t>(p, packed::kEpisodeOffsets, 3, 1, H5T_NATIVE_INT64); }},
      {"offsets_last", ":/episodes/offsets: last entry is",
       [](const std::string& p) { poke<int64_t>(p, packed::kEpisodeOffsets, 6, 100000, H5T_NATIVE_INT64); }},
      {"vl_offsets", ":/features/vl_offsets: not monotonic at index 5",
       [](const std::string& p) { poke<int64_t>(p, packed::kVlOffsets, 5, 0, H5T_NATIVE_INT64); }},
      {"nan_state", ":/steps/state: non-finite value at row 2",
       [](const std::string& p) { poke<float>(p, packed::kState, 2 * 16 + 1, std::nanf(""), H5T_NATIVE_FLOAT); }, true},
      {"inf_action", ":/steps/action: non-finite value at row 0",
       [](const std::string& p) { poke<float>(p, packed::kAction, 3, INFINITY, H5T_NATIVE_FLOAT); }, true},
      {"nan_stats", ":/stats/action/std: non-finite value",
       [](const std::string& p) { poke<float>(p, "/stats/action/std", 0, std::nanf(""), H5T_NATIVE_FLOAT); }},
      {"nan_feature", ":/features/vl: non-finite value at row 4",
       [](const std::string& p) { poke<float>(p, packed::kVlFeatures, 4 * 32, std::nanf(""), H5T_NATIVE_FLOAT); }, true},
      {"task", ":/episodes/task: task id 99 at index 1 out of range",
       [](const std::string& p) { poke<int32_t>(p, packed::kEpisodeTask, 1, 99, H5T_NATIVE_INT32); }},
      {"embodiment", ":/episodes/embodiment: embodiment id -1 at index 0",
       [](const std::string& p) { poke<int32_t>(p, packed::kEpisodeEmbodiment, 0, -1, H5T_NATIVE_INT32); }},
      {"token", ":/tasks/tokens: token id 999",
       [](const std::string& p) { poke<int32_t>(p, packed::kTaskTokens, 0, 999, H5T_NATIVE_INT32); }},
      {"done", ":/steps/done: value 7 at row 0",
       [](const std::string& p) { poke<uint8_t>(p, packed::kDone, 0, 7, H5T_NATIVE_UINT8); }},
      {"missing", ":/steps/action: missing", [](const std::string& p) { unlink_object(p, packed::kAction); }},
      {"missing_vl", ":/features/vl: missing (required for gr00t)", [](const std::string& p) {
         unlink_object(p, packed::kVlFeatures);
         unlink_object(p, packed::kVlOffsets);
       }},
      {"format", ":/: format attribute is 'embpack/0'", [](const std::string& p) { set_format(p, "embpack/0"); }},
  };
  for (const Case& c : cases) {
    std::string path = corrupt_copy(good, c.name, c.edit);
    std::string message = verify_error(path);
    BOOST_TEST_INFO("case " << c.name << ": " << message);
    BOOST_TEST(message.find(path + c.expect) == 0);
    // What training checks at start-up refuses the same files with the same line (issue 19:
    // training started on files verify rejects), except the bulk rows.
    std::string at_start;
    try {
      verify_small_values(H5File::open(path));
    } catch (const Error& e) {
      at_start = e.what();
    }
    BOOST_TEST_INFO("at start-up: " << at_start);
    BOOST_TEST((c.bulk ? at_start.empty() : at_start == message));
  }
}

// The ids and per-embodiment widths that index the model's tables are checked by the
// structural verification training runs on open (issue 19: they crashed training).
BOOST_AUTO_TEST_CASE(structure_check_catches_ids_and_embodiment_widths) {
  std::string good = kDir + "/good_ids.h5";
  write_packed(synthesize(test::tiny_synth("gr00t", 6, 1)), good, "test");
  struct Case {
    std::string name, expect;
    std::function<void(const std::string&)> edit;
  };
  std::vector<Case> cases = {
      {"task_1e6", ":/episodes/task: task id 1000000 at index 2 out of range",
       [](const std::string& p) { poke<int32_t>(p, packed::kEpisodeTask, 2, 1000000, H5T_NATIVE_INT32); }},
      {"embodiment_1e6", ":/episodes/embodiment: embodiment id 1000000 at index 0 out of range",
       [](const std::string& p) { poke<int32_t>(p, packed::kEpisodeEmbodiment, 0, 1000000, H5T_NATIVE_INT32); }},
      {"action_dim_1000", ":/embodiments/action_dim: value 1000 at index 0 not in [1, ",
       [](const std::string& p) { poke<int32_t>(p, packed::kEmbodimentActionDim, 0, 1000, H5T_NATIVE_INT32); }},
  };
  for (const Case& c : cases) {
    std::string path = corrupt_copy(good, c.name, c.edit);
    std::string message;
    try {
      verify_structure(H5File::open(path));
    } catch (const Error& e) {
      message = e.what();
    }
    BOOST_TEST_INFO("case " << c.name << ": " << message);
    BOOST_TEST(message.find(path + c.expect) == 0);
  }
}

BOOST_AUTO_TEST_CASE(cli_errors_are_one_line_and_leave_no_output) {
  std::string out = kDir + "/cli_out.h5";
  fs::remove(out);
  std::string junk = kDir + "/junk.h5";
  std::ofstream(junk) << "this is not hdf5";
  std::string good = kDir + "/cli_good.h5";
  ToolResult ok = run_tool(str(EMBPACK_EXE, " synth --family gr00t --episodes 3 --min-steps 5 --max-steps 9 -o ", good));
  BOOST_TEST(ok.code == 0);
  BOOST_TEST(run_tool(str(EMBPACK_EXE, " verify ", good)).out.find(": ok (gr00t, 3 episodes") != std::string::npos);
  BOOST_TEST(run_tool(str(EMBPACK_EXE, " info ", good)).out.find("episodes 3") != std::string::npos);
  std::string bad_format = corrupt_copy(good, "cli_format", [](const std::string& p) { set_format(p, "other"); });
  struct Case {
    std::string args, expect;
  };
  std::vector<Case> cases = {
      {" verify " + kDir + "/nope.h5", kDir + "/nope.h5: cannot open: No such file or directory"},
      {" verify " + junk, junk + ": not an HDF5 file"},
      {" verify " + bad_format, bad_format + ":/: format attribute is 'other'"},
      {" libero " + kDir + "/nope.hdf5 -o " + out, kDir + "/nope.hdf5: cannot open: No such file or directory"},
      {" libero " + good + " -o " + out, good + ":/data: missing group"},
      {" synth --family gr00t --episodes 2 --views 5 -o " + out, "synth: --views must be 1..3"},
  };
  for (const Case& c : cases) {
    ToolResult r = run_tool(EMBPACK_EXE + c.args);
    BOOST_TEST_INFO(c.args << " -> " << r.err);
    BOOST_TEST(r.code != 0);
    BOOST_TEST(r.err.find("embpack: " + c.expect) == 0);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    BOOST_TEST(!fs::exists(out));
    BOOST_TEST(!fs::exists(out + ".tmp"));
  }
}
