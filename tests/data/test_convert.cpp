#define BOOST_TEST_MODULE data_convert
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "data/packed_format.hpp"
#include "data/packed_verify.hpp"
#include "data_fixtures.hpp"
#include "tool_run.hpp"

using namespace emb;
namespace fs = std::filesystem;

namespace {

const std::string kDir = test::scratch_dir("data_convert");

bool has_encoder(const std::string& name) {
  return run_tool("ffmpeg -hide_banner -encoders").out.find(" " + name + " ") != std::string::npos;
}

// A testsrc video of `frames` frames at 32x24.
std::string make_video(const std::string& name, int frames) {
  std::string path = kDir + "/" + name + ".mp4";
  std::string codec = has_encoder("libx264") ? "libx264 -pix_fmt yuv420p" : "mpeg4";
  ToolResult r = run_tool(str("ffmpeg -y -loglevel error -f lavfi -i testsrc=size=32x24:rate=10 -frames:v ", frames,
                              " -c:v ", codec, " ", path));
  BOOST_REQUIRE(r.code == 0);
  return path;
}

void write_table(const std::string& path, int steps, int frame_step, int last_frame_override = -1) {
  std::ofstream out(path);
  out << "episode,frame,state_0,state_1,action_0\n";
  for (int s = 0; s < steps; ++s) {
    int frame = s == steps - 1 && last_frame_override >= 0 ? last_frame_override : s * frame_step;
    out << (s < steps / 2 ? 0 : 1) << "," << frame << "," << 0.1 * s << "," << -0.2 * s << "," << 0.5 * s << "\n";
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(libero_conversion) {
  std::string src = kDir + "/pick_up_the_bowl_demo.hdf5", out = kDir + "/libero.h5";
  BOOST_REQUIRE(run_tool(str("/usr/bin/python3 tests/data/make_libero.py ", src, " 3")).code == 0);
  ToolResult r = run_tool(str(EMBPACK_EXE, " libero ", src, " -o ", out));
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  H5File f = H5File::open(out);
  PackedSummary s = verify_packed(f);
  BOOST_TEST(s.episodes == 3);
  BOOST_TEST(s.steps == 6 + 7 + 8);
  BOOST_TEST(s.state_dim == 7 + 2 + 6);
  BOOST_TEST(s.action_dim == 7);
  BOOST_TEST(s.video_views.size() == 2u);
  BOOST_TEST(f.read_strings(packed::kTaskText)[0] == "put the bowl on the plate");
  std::vector<int64_t> vl = f.read_all<int64_t>(packed::kVlOffsets);
  BOOST_TEST(vl[1] - vl[0] == 2 * 4 + 25);  // 2 views × 2² cells + instruction bytes
  BOOST_TEST(f.read_all<uint8_t>(packed::kDone)[5] == 1);
}

BOOST_AUTO_TEST_CASE(libero_bad_input_names_file_and_path) {
  std::string src = kDir + "/nan_demo.hdf5", out = kDir + "/nan.h5";
  BOOST_REQUIRE(run_tool(str("/usr/bin/python3 tests/data/make_libero.py ", src, " 2 --nan")).code == 0);
  ToolResult r = run_tool(str(EMBPACK_EXE, " libero ", src, " -o ", out));
  BOOST_TEST(r.code != 0);
  BOOST_TEST(r.err == "embpack: " + src + ":/data/demo_1/obs/joint_states: non-finite value at row 2\n");
  BOOST_TEST(!fs::exists(out));
  BOOST_TEST(!fs::exists(out + ".tmp"));
}

BOOST_AUTO_TEST_CASE(video_conversion_aligns_frames) {
  std::string video = make_video("cam", 20), table = kDir + "/open_the_drawer.csv", out = kDir + "/video.h5";
  write_table(table, 10, 2);
  ToolResult r = run_tool(str(EMBPACK_EXE, " video ", video, " --table ", table, " --height 12 --width 16 -o ", out));
  BOOST_TEST_INFO(r.err);
  BOOST_REQUIRE(r.code == 0);
  H5File f = H5File::open(out);
  PackedSummary s = verify_packed(f);
  BOOST_TEST(s.episodes == 2);
  BOOST_TEST(s.steps == 10);
  BOOST_TEST((f.dims("/video/cam") == std::vector<int64_t>{10, 12, 16, 3}));
  BOOST_TEST(f.read_strings(packed::kTaskText)[0] == "open the drawer");
  BOOST_TEST(f.read_all<float>(packed::kAction)[3] == 1.5f);
  // testsrc changes between frames: consecutive steps (2 frames apart) differ.
  std::vector<uint8_t> frames = f.read_all<uint8_t>("/video/cam");
  size_t fb = 12 * 16 * 3;
  BOOST_TEST(!std::equal(frames.begin(), frames.begin() + fb, frames.begin() + fb));
}

BOOST_AUTO_TEST_CASE(video_errors) {
  std::string video = make_video("short", 5), out = kDir + "/bad_video.h5";
  std::string table = kDir + "/range.csv";
  write_table(table, 4, 1, 9);
  ToolResult r = run_tool(str(EMBPACK_EXE, " video ", video, " --table ", table, " -o ", out));
  BOOST_TEST(r.err == "embpack: " + table + ": step 3: frame 9 out of range (" + video + " has 5 frames)\n");
  // A truncated video file.
  std::string cut = kDir + "/cut.mp4";
  {
    std::ifstream in(video, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 3);
  }
  r = run_tool(str(EMBPACK_EXE, " video ", cut, " --table ", table, " -o ", out));
  BOOST_TEST(r.code != 0);
  BOOST_TEST(r.err.find("embpack: " + cut + ": ") == 0);
  std::ofstream(kDir + "/noise.mp4") << "not a video";
  r = run_tool(str(EMBPACK_EXE, " video ", kDir, "/noise.mp4 --table ", table, " -o ", out));
  BOOST_TEST(r.err.find("embpack: " + kDir + "/noise.mp4: cannot open video") == 0);
  BOOST_TEST(!fs::exists(out));
  BOOST_TEST(!fs::exists(out + ".tmp"));
}
