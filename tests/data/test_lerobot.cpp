#define BOOST_TEST_MODULE data_lerobot
#include <boost/test/unit_test.hpp>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "data_fixtures.hpp"
#include "parquet_writer.hpp"
#include "tool_run.hpp"
#include "video_decoder.hpp"

using namespace emb;
namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

const std::string kDir = test::scratch_dir("data_lerobot");
const std::string kFixture = std::string(PROJECT_SOURCE_DIR) + "/../shared/fixtures/lerobot/g1_v21";
const std::string kCam = "observation.images.cam_high";
constexpr int kHeight = 48, kWidth = 64;

std::vector<Json> read_jsonl(const std::string& path) {
  std::ifstream in(path);
  std::vector<Json> rows;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(Json::parse(line));
  return rows;
}

std::string episode_file(const std::string& root, int e, const std::string& kind) {
  return kind == "data" ? str(root, "/data/chunk-000/episode_0000", e, ".parquet")
                        : str(root, "/videos/chunk-000/", kCam, "/episode_0000", e, ".mp4");
}

ToolResult convert(const std::string& args, const std::string& out) {
  fs::remove(out);
  return run_tool(str(EMBPACK_EXE, " lerobot ", args, " --height ", kHeight, " --width ", kWidth, " -o ", out));
}

// The fixture converted once; the other cases compare with it.
const std::string& converted_v21() {
  static std::string out = [] {
    std::string path = kDir + "/g1_v21.h5";
    ToolResult r = convert(kFixture, path);
    BOOST_TEST_INFO(r.err);
    BOOST_REQUIRE(r.code == 0);
    BOOST_TEST(r.err.find("warning") == std::string::npos);  // the data agrees with episodes_stats.jsonl
    BOOST_TEST(r.out.find("frames/s per core") != std::string::npos);
    return path;
  }();
  return out;
}

void check_same_arrays(const std::string& a, const std::string& b, const std::string& view_b) {
  H5File fa = H5File::open(a), fb = H5File::open(b);
  BOOST_TEST(fa.read_all<int64_t>(packed::kEpisodeOffsets) == fb.read_all<int64_t>(packed::kEpisodeOffsets));
  BOOST_TEST(fa.read_all<float>(packed::kState) == fb.read_all<float>(packed::kState));
  BOOST_TEST(fa.read_all<float>(packed::kAction) == fb.read_all<float>(packed::kAction));
  BOOST_TEST(fa.read_strings(packed::kTaskText) == fb.read_strings(packed::kTaskText));
  BOOST_TEST(fa.read_all<uint8_t>("/video/cam_high") == fb.read_all<uint8_t>("/video/" + view_b));
}

// A copy of the fixture (metadata copied, data and videos linked) that a case may damage.
std::string copy_fixture(const std::string& name) {
  std::string root = kDir + "/" + name;
  fs::remove_all(root);
  fs::create_directories(root + "/meta");
  fs::create_directories(root + "/data/chunk-000");
  fs::create_directories(root + "/videos/chunk-000/" + kCam);
  for (const auto& f : fs::directory_iterator(kFixture + "/meta")) fs::copy_file(f.path(), root + "/meta/" + f.path().filename().string());
  for (int e : {10, 11})
    for (const char* kind : {"data", "video"}) fs::create_symlink(episode_file(kFixture, e, kind), episode_file(root, e, kind));
  return root;
}

void replace_file(const std::string& path, const std::string& content) {
  fs::remove(path);
  std::ofstream(path, std::ios::binary) << content;
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The fixture laid out as LeRobot v3.0: both episodes in one data file (the real files'
// row groups copied page for page), one concatenated video, meta/episodes and
// meta/tasks as Parquet. `to_timestamp_10` overrides episode 10's video end.
std::string make_v30(const std::string& name, double to_timestamp_10 = -1) {
  using test::TestColumn;
  using parquet::PhysicalType;
  std::string root = kDir + "/" + name;
  fs::remove_all(root);
  for (const char* d : {"/meta/episodes/chunk-000", "/data/chunk-000", "/videos/observation.images.cam_high/chunk-000"})
    fs::create_directories(root + d);
  Json info = Json::parse(bytes_of(kFixture + "/meta/info.json"));
  info["codebase_version"] = "v3.0";
  info["data_path"] = "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet";
  info["video_path"] = "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4";
  std::ofstream(root + "/meta/info.json") << info.dump(2);

  test::concat_parquet({episode_file(kFixture, 10, "data"), episode_file(kFixture, 11, "data")},
                       root + "/data/chunk-000/file-000.parquet");
  std::ofstream(kDir + "/concat.txt") << "file '" << episode_file(kFixture, 10, "video") << "'\nfile '"
                                      << episode_file(kFixture, 11, "video") << "'\n";
  BOOST_REQUIRE(run_tool(str("ffmpeg -y -loglevel error -f concat -safe 0 -i ", kDir, "/concat.txt -c copy ", root,
                             "/videos/", kCam, "/chunk-000/file-000.mp4")).code == 0);

  Json task = read_jsonl(kFixture + "/meta/tasks.jsonl")[0];
  TestColumn task_index{"task_index", PhysicalType::int64, false, false, {{double(task["task_index"])}}, {}};
  TestColumn task_text{"task", PhysicalType::byte_array, false, false, {}, {{task["task"]}}};
  test::ParquetTestWriter({task_index, task_text}).write(root + "/meta/tasks.parquet");

  std::vector<Json> episodes = read_jsonl(kFixture + "/meta/episodes.jsonl");
  std::vector<Json> stats = read_jsonl(kFixture + "/meta/episodes_stats.jsonl");
  std::vector<TestColumn> cols;
  auto flat = [&](const std::string& n, PhysicalType t) { cols.push_back({n, t, false, false, {}, {}}); return &cols.back(); };
  std::vector<std::string> names = {"episode_index", "length", "data/chunk_index", "data/file_index", "dataset_from_index",
                                    "dataset_to_index", "videos/" + kCam + "/chunk_index", "videos/" + kCam + "/file_index"};
  for (const std::string& n : names) flat(n, PhysicalType::int64);
  flat("videos/" + kCam + "/from_timestamp", PhysicalType::float64);
  flat("videos/" + kCam + "/to_timestamp", PhysicalType::float64);
  cols.push_back({"tasks", PhysicalType::byte_array, true, false, {}, {}});
  for (const char* column : {"observation.state", "action"})
    for (const char* s : {"mean", "min", "max"})
      cols.push_back({str("stats/", column, "/", s), PhysicalType::float64, true, false, {}, {}});
  double fps = info["fps"], from = 0;
  for (size_t e = 0; e < episodes.size(); ++e) {
    int64_t index = episodes[e]["episode_index"], length = episodes[e]["length"];
    int64_t first = parquet::ParquetFile::open(episode_file(kFixture, int(index), "data")).read("index").ints[0];
    double to = from + double(length) / fps;
    if (e == 0 && to_timestamp_10 > 0) to = to_timestamp_10;
    std::vector<double> values = {double(index), double(length), 0, 0, double(first), double(first + length), 0, 0, from, to};
    for (size_t c = 0; c < values.size(); ++c) cols[c].rows.push_back({values[c]});
    cols[10].text_rows.push_back(episodes[e]["tasks"].get<std::vector<std::string>>());
    size_t c = 11;
    for (const char* column : {"observation.state", "action"})
      for (const char* s : {"mean", "min", "max"}) cols[c++].rows.push_back(stats[e]["stats"][column][s].get<std::vector<double>>());
    from += double(length) / fps;
  }
  test::PageOptions snappy;
  snappy.codec = parquet::Codec::snappy;
  test::ParquetTestWriter(cols, snappy).write(root + "/meta/episodes/chunk-000/file-000.parquet");
  return root;
}

// Runs a conversion that must fail with `message` (a prefix of the one stderr line) and
// `exit_code` (2: input the user must fix), and leave nothing behind.
void expect_failure(const std::string& args, const std::string& message, int exit_code = kExitFailure) {
  std::string out = kDir + "/bad.h5";
  ToolResult r = convert(args, out);
  BOOST_TEST_CONTEXT(args) {
    BOOST_TEST(r.code == exit_code);
    BOOST_TEST(r.err.find("embpack: " + message) == 0u, r.err);
    BOOST_TEST(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    BOOST_TEST(!fs::exists(out));
    BOOST_TEST(!fs::exists(out + ".tmp"));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(fixture_round_trip) {
  H5File f = H5File::open(converted_v21());
  PackedSummary s = verify_packed(f);
  std::vector<Json> episodes = read_jsonl(kFixture + "/meta/episodes.jsonl");
  std::vector<Json> stats = read_jsonl(kFixture + "/meta/episodes_stats.jsonl");
  BOOST_REQUIRE(s.episodes == int64_t(episodes.size()));
  BOOST_TEST(s.state_dim == 26);
  BOOST_TEST(s.action_dim == 26);
  std::vector<int64_t> offsets = f.read_all<int64_t>(packed::kEpisodeOffsets);
  std::vector<float> state = f.read_all<float>(packed::kState), action = f.read_all<float>(packed::kAction);
  for (size_t e = 0; e < episodes.size(); ++e) {
    BOOST_TEST(offsets[e + 1] - offsets[e] == episodes[e]["length"].get<int64_t>());
    BOOST_TEST(stats[e]["episode_index"] == episodes[e]["episode_index"]);
    for (const auto& [column, rows] : {std::pair<std::string, std::vector<float>*>{"observation.state", &state}, {"action", &action}}) {
      const Json& want = stats[e]["stats"][column];
      for (int64_t c = 0; c < 26; ++c) {
        double sum = 0, lo = INFINITY, hi = -INFINITY;
        for (int64_t t = offsets[e]; t < offsets[e + 1]; ++t) {
          double v = (*rows)[size_t(t * 26 + c)];
          sum += v, lo = std::min(lo, v), hi = std::max(hi, v);
        }
        double mean = sum / double(offsets[e + 1] - offsets[e]);
        BOOST_TEST(std::abs(mean - want["mean"][c].get<double>()) <= 1e-5 * (1 + std::abs(mean)), column << " mean " << c);
        BOOST_TEST(lo == want["min"][c].get<double>());
        BOOST_TEST(hi == want["max"][c].get<double>());
      }
    }
  }
  BOOST_TEST(f.read_strings(packed::kTaskText) == std::vector<std::string>{read_jsonl(kFixture + "/meta/tasks.jsonl")[0]["task"]});
  BOOST_TEST((f.dims("/video/cam_high") == std::vector<int64_t>{s.steps, kHeight, kWidth, 3}));
  // Every step shows its frame: the frames equal ffmpeg's own decode of each episode's video
  // (same scaler), no row is left black, and the scene changes over the episodes.
  std::vector<uint8_t> frames = f.read_all<uint8_t>("/video/cam_high");
  std::string expected;
  for (int e : {10, 11}) {
    std::string raw = str(kDir, "/ffmpeg_", e, ".rgb");
    BOOST_REQUIRE(run_tool(str("ffmpeg -y -loglevel error -i ", episode_file(kFixture, e, "video"), " -vf scale=", kWidth,
                               ":", kHeight, " -sws_flags bilinear -f rawvideo -pix_fmt rgb24 ", raw)).code == 0);
    expected += bytes_of(raw);
  }
  BOOST_TEST((std::string(frames.begin(), frames.end()) == expected));
  size_t fb = size_t(kHeight * kWidth * 3);
  std::set<std::string> distinct;
  for (int64_t t = 0; t < s.steps; ++t) {
    std::string frame(frames.begin() + t * fb, frames.begin() + (t + 1) * fb);
    BOOST_REQUIRE(std::any_of(frame.begin(), frame.end(), [](char c) { return c != 0; }));
    distinct.insert(frame);
  }
  BOOST_TEST(distinct.size() > size_t(s.steps) / 2);
  ToolResult verify = run_tool(str(EMBPACK_EXE, " verify ", converted_v21()));
  BOOST_TEST(verify.code == 0, verify.err);
}

// GR00T's modality.json: slices covering every column, a renamed video key and the task
// annotation column give the same arrays as the whole columns.
BOOST_AUTO_TEST_CASE(modality_json_gives_the_same_arrays) {
  nlohmann::ordered_json m;  // slices concatenate in the file's order
  m["state"]["left_arm"] = {{"start", 0}, {"end", 7}};
  m["state"]["right_arm"] = {{"start", 7}, {"end", 14}};
  m["state"]["hands"] = {{"start", 14}, {"end", 26}};
  m["action"]["arms"] = {{"start", 0}, {"end", 14}, {"original_key", "action"}};
  m["action"]["hands"] = {{"start", 14}, {"end", 26}};
  m["video"]["ego_view"] = {{"original_key", kCam}};
  m["annotation"]["human.task_description"] = {{"original_key", "task_index"}};
  std::string path = kDir + "/modality.json", out = kDir + "/modality.h5";
  std::ofstream(path) << m.dump(2);
  ToolResult r = convert(str(kFixture, " --modality ", path), out);
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  check_same_arrays(converted_v21(), out, "ego_view");

  // A rotation type upstream's RotationType does not know is one line (data.upstream_config
  // converts a key from the type the packed modality carries).
  m["state"]["left_arm"]["rotation_type"] = "quat";
  const std::string bad_rotation = kDir + "/modality_bad_rotation.json";
  std::ofstream(bad_rotation) << m.dump(2);
  expect_failure(str(kFixture, " --modality ", bad_rotation),
                 bad_rotation + ": state.left_arm: rotation_type 'quat' is not one of upstream's (axis_angle, "
                                "quaternion, rotation_6d, matrix, euler_angles_rpy, euler_angles_ryp, euler_angles_pry, "
                                "euler_angles_pyr, euler_angles_yrp, euler_angles_ypr)");
}

// The same episodes as a v3.0 dataset: one data file of the real pages, one video.
BOOST_AUTO_TEST_CASE(v30_layout_gives_the_same_arrays) {
  std::string root = make_v30("g1_v30"), out = kDir + "/g1_v30.h5";
  ToolResult r = convert(root, out);
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  BOOST_TEST(r.err.find("warning") == std::string::npos);
  check_same_arrays(converted_v21(), out, "cam_high");
}

// Episode 11 starts in the middle of the v3.0 video (frame 290): decoded from a keyframe seek,
// its frames equal decoding from the start byte for byte, directly (frames [351, 400), 351 not
// a keyframe) and in a 2-rank conversion whose rank 1 holds episode 11 alone.
BOOST_AUTO_TEST_CASE(v30_episode_mid_file_decodes_from_a_keyframe_seek_to_the_same_frames) {
  std::string root = make_v30("g1_v30_seek"), out = kDir + "/g1_v30_np2.h5";
  const std::string video = root + "/videos/" + kCam + "/chunk-000/file-000.mp4";
  const size_t frame_bytes = size_t(kHeight) * kWidth * 3;
  auto frames_from_351 = [&](FrameRange range) {
    std::vector<uint8_t> frames;
    VideoInfo info = decode_video(video, kHeight, kWidth, 1, range, [&](int64_t f, const uint8_t* rgb) {
      if (f >= 351) frames.insert(frames.end(), rgb, rgb + frame_bytes);
    });
    BOOST_TEST(info.frames == 400);
    return frames;
  };
  const std::vector<uint8_t> from_start = frames_from_351({0, 400});
  BOOST_TEST(from_start.size() == 49 * frame_bytes);
  BOOST_TEST((frames_from_351({351, 400}) == from_start));

  fs::remove(out);
  ToolResult r = run_tool(str("mpirun -np 2 --oversubscribe ", EMBPACK_EXE, " lerobot ", root, " --threads 1 --height ",
                              kHeight, " --width ", kWidth, " -o ", out));
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  check_same_arrays(converted_v21(), out, "cam_high");
}

BOOST_AUTO_TEST_CASE(embtrain_trains_on_the_result) {
  std::string name = "test-lerobot-train";
  fs::remove_all(str(PROJECT_SOURCE_DIR, "/outputs/", name));
  ToolResult r = run_tool(str(EMBTRAIN_EXE, " inputs/tiny_gr00t.in --set data.paths=", converted_v21(),
                              " --set model.state_dim=26 --set model.action_dim=26 --set train.steps=3",
                              " --set train.global_batch=4 --set run.log_every=1 --set run.name=", name));
  BOOST_TEST_INFO(r.out + r.err);
  BOOST_REQUIRE(r.code == 0);
  std::ifstream loss(str(PROJECT_SOURCE_DIR, "/outputs/", name, "/loss.csv"));
  std::string header, line;
  std::getline(loss, header);
  int steps = 0;
  while (std::getline(loss, line)) {
    double value = std::stod(line.substr(line.find(',') + 1));
    BOOST_TEST(std::isfinite(value));
    ++steps;
  }
  BOOST_TEST(steps == 3);
  fs::remove_all(str(PROJECT_SOURCE_DIR, "/outputs/", name));
}

int count_lines_starting(const std::string& text, const std::string& prefix) {
  int n = 0;
  for (size_t at = 0; at < text.size(); at = text.find('\n', at) + 1) {
    n += text.compare(at, prefix.size(), prefix) == 0;
    if (text.find('\n', at) == std::string::npos) break;
  }
  return n;
}

// Two ranks split the episodes and give the file one rank writes, with rank 1's warning
// (a recorded statistic that disagrees with the data) printed; an error met by rank 1
// alone is printed once and both ranks exit non-zero.
BOOST_AUTO_TEST_CASE(two_ranks_give_the_same_file) {
  std::string out = kDir + "/g1_np2.h5", mpirun = "mpirun -np 2 --oversubscribe ";
  std::string stats_root = copy_fixture("stats_11");
  std::vector<Json> stats = read_jsonl(kFixture + "/meta/episodes_stats.jsonl");
  stats[1]["stats"]["observation.state"]["mean"][0] = 5.0;
  replace_file(stats_root + "/meta/episodes_stats.jsonl", stats[0].dump() + "\n" + stats[1].dump() + "\n");
  fs::remove(out);
  ToolResult r = run_tool(str(mpirun, EMBPACK_EXE, " lerobot ", stats_root, " --threads 1 --height ", kHeight,
                              " --width ", kWidth, " -o ", out));
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  BOOST_TEST(r.out.find("(2 rank(s) x 1 thread(s))") != std::string::npos);
  BOOST_TEST(count_lines_starting(r.err, "embpack: warning: ") == 1, r.err);
  BOOST_TEST(r.err.find("embpack: warning: " + stats_root + "/meta/episodes_stats.jsonl: episode 11 observation.state "
                        "mean[0]: computed -0.7") == 0u, r.err);
  check_same_arrays(converted_v21(), out, "cam_high");
  H5File a = H5File::open(converted_v21()), b = H5File::open(out);
  BOOST_TEST(a.read_all<uint16_t>(packed::kVlFeatures) == b.read_all<uint16_t>(packed::kVlFeatures));
  BOOST_TEST(a.read_all<int64_t>(packed::kVlOffsets) == b.read_all<int64_t>(packed::kVlOffsets));

  std::string root = copy_fixture("length_11");
  std::string episodes = bytes_of(root + "/meta/episodes.jsonl");
  replace_file(root + "/meta/episodes.jsonl", episodes.replace(episodes.find("421"), 3, "400"));
  fs::remove(out);
  r = run_tool(str(mpirun, EMBPACK_EXE, " lerobot ", root, " --threads 1 -o ", out));
  BOOST_TEST(r.code != 0);
  BOOST_TEST(count_lines_starting(r.err, "embpack: ") == 1, r.err);
  BOOST_TEST(r.err.find("embpack: " + episode_file(root, 11, "data") +
                        ": column episode_index: episode 11 has 421 rows, the metadata says length 400\n") !=
             std::string::npos);
  BOOST_TEST(!fs::exists(out));
  BOOST_TEST(!fs::exists(out + ".tmp"));
}

// Three ranks over two episodes: rank 2 converts none and still takes part in every
// collective write, and the file holds the same arrays. An output no rank can create is
// one line and a non-zero exit.
BOOST_AUTO_TEST_CASE(a_rank_without_episodes_writes_nothing_and_the_file_is_the_same) {
  std::string out = kDir + "/g1_np3.h5", mpirun = "mpirun -np 3 --oversubscribe ";
  fs::remove(out);
  ToolResult r = run_tool(str(mpirun, EMBPACK_EXE, " lerobot ", kFixture, " --threads 1 --height ", kHeight,
                              " --width ", kWidth, " -o ", out));
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  BOOST_TEST(r.out.find("(3 rank(s) x 1 thread(s))") != std::string::npos, r.out);
  check_same_arrays(converted_v21(), out, "cam_high");
  H5File a = H5File::open(converted_v21()), b = H5File::open(out);
  BOOST_TEST(a.read_all<uint16_t>(packed::kVlFeatures) == b.read_all<uint16_t>(packed::kVlFeatures));
  BOOST_TEST(a.read_all<int64_t>(packed::kVlOffsets) == b.read_all<int64_t>(packed::kVlOffsets));

  std::string missing = kDir + "/no_such_folder/g1.h5";
  r = run_tool(str(mpirun, EMBPACK_EXE, " lerobot ", kFixture, " --threads 1 --height ", kHeight, " --width ", kWidth,
                   " -o ", missing));
  BOOST_TEST(r.code != 0);
  BOOST_TEST(count_lines_starting(r.err, "embpack: ") == 1, r.err);
  BOOST_TEST(r.err.find("embpack: " + missing + ".lock: cannot create the lock file: No such file or directory\n") !=
                 std::string::npos,
             r.err);
}

// An unknown embodiment tag is a command line to fix: exit 2, one line listing the accepted tags.
BOOST_AUTO_TEST_CASE(unknown_embodiment_tag_is_refused_with_the_accepted_tags) {
  expect_failure(kFixture + " --embodiment-tag gr2",
                 "lerobot: --embodiment-tag 'gr2' is not one of GR00T's tags (accepted: new_embodiment 31, "
                 "oxe_droid 17, agibot_genie1 26, gr1 24)\n",
                 kExitInput);
}

BOOST_AUTO_TEST_CASE(bad_input_fails_with_one_clear_line) {
  std::string root = copy_fixture("missing_meta");
  fs::remove(root + "/meta/episodes.jsonl");
  expect_failure(root, root + "/meta/episodes.jsonl: missing (a LeRobot v2.1 dataset needs it)");

  root = copy_fixture("version");
  std::string info = bytes_of(root + "/meta/info.json");
  replace_file(root + "/meta/info.json", std::string(info).replace(info.find("v2.1"), 4, "v1.6"));
  expect_failure(root, root + "/meta/info.json: codebase_version v1.6 is not supported (v2.1 or v3.0)");

  root = copy_fixture("length");
  std::string episodes = bytes_of(root + "/meta/episodes.jsonl");
  replace_file(root + "/meta/episodes.jsonl", episodes.replace(episodes.find("290"), 3, "300"));
  expect_failure(root, episode_file(root, 10, "data") +
                           ": column episode_index: episode 10 has 290 rows, the metadata says length 300");

  std::string data = bytes_of(episode_file(kFixture, 10, "data"));
  root = copy_fixture("truncated");
  replace_file(episode_file(root, 10, "data"), data.substr(0, data.size() / 2));
  expect_failure(root, episode_file(root, 10, "data") + ": bad magic at the end (truncated Parquet file)");

  root = copy_fixture("magic");
  replace_file(episode_file(root, 10, "data"), "XXXX" + data.substr(4));
  expect_failure(root, episode_file(root, 10, "data") + ": not a Parquet file (bad magic at the start)");

  // The episode's table rewritten with a codec the reader does not have.
  root = copy_fixture("codec");
  {
    parquet::ParquetFile src = parquet::ParquetFile::open(episode_file(kFixture, 10, "data"));
    std::vector<test::TestColumn> cols;
    for (const parquet::LeafColumn& l : src.leaves()) {
      parquet::ColumnData c = src.read(l.path);
      test::TestColumn t{l.field, l.type, c.list, false, {}, {}};
      for (int64_t r = 0; r < c.rows(); ++r) {
        std::vector<double> row;
        for (int64_t k = c.row_offsets[size_t(r)]; k < c.row_offsets[size_t(r) + 1]; ++k) row.push_back(c.number(k));
        t.rows.push_back(row);
      }
      cols.push_back(t);
    }
    test::PageOptions gzip;
    gzip.codec = parquet::Codec::gzip;
    fs::remove(episode_file(root, 10, "data"));
    test::ParquetTestWriter(cols, gzip).write(episode_file(root, 10, "data"));
  }
  expect_failure(root, episode_file(root, 10, "data") + ": column episode_index, row group 0, page at byte 0: "
                                                        "unsupported compression codec GZIP");

  root = copy_fixture("no_video");
  fs::remove(episode_file(root, 11, "video"));
  expect_failure(root, episode_file(root, 11, "video") + ": missing (video of episode 11)");

  root = copy_fixture("short_video");
  fs::remove(episode_file(root, 10, "video"));
  BOOST_REQUIRE(run_tool(str("ffmpeg -y -loglevel error -i ", episode_file(kFixture, 10, "video"),
                             " -c copy -frames:v 100 ", episode_file(root, 10, "video"))).code == 0);
  // step 100 shows frame 99 (one frame past the end: the nearest, as Isaac-GR00T decodes); step 101 fails
  expect_failure(root, episode_file(root, 10, "video") +
                           ": frame 101 (episode 10, step 101) beyond the video's 100 frames (video shorter than its episode)");

  root = make_v30("v30_span", 5.0);
  expect_failure(root, root + "/data/chunk-000/file-000.parquet: column timestamp: row 151 (episode 10): timestamp 5.03");
}
