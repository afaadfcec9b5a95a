// The fixtures of the Eagle backbone's end-to-end tests (embpack features, model.backbone =
// online): the tiny upstream-format checkpoint with the real Eagle 2.5 tokenizer, and a packed
// gr00t file with two camera views and three episodes of two tasks.
#pragma once
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "core/half.hpp"
#include "data/packed_format.hpp"
#include "packed_writer.hpp"
#include "python_reference.hpp"

namespace emb::test {

namespace fs = std::filesystem;

inline const std::string kSource = PROJECT_SOURCE_DIR;
inline const std::string kTokenizer = kSource + "/../shared/fixtures/eagle2_5_tokenizer";

struct ToolResult {
  int code = 0;
  std::string out, err;
};

inline ToolResult run_tool(const std::string& command, const std::string& dir) {
  const int status = std::system((command + " >" + dir + "/tool.out 2>" + dir + "/tool.err").c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, emb::test::read_file(dir + "/tool.out"),
          emb::test::read_file(dir + "/tool.err")};
}

// A case of the CPU backend only: run where the build is not the CUDA emulation (there the CPU
// cases are the same code as in the CPU build, which covers them).
#ifdef EMBTRAIN_CUDA_EMULATED
inline constexpr bool kCpuCases = false;
#else
inline constexpr bool kCpuCases = true;
#endif
inline const auto cpu_case = boost::unit_test::enable_if<kCpuCases>();

// The tiny checkpoint folder with its Eagle folder (tiny config, real tokenizer files).
struct Tiny {
  std::string dir, checkpoint, eagle;
  Tiny() {
    dir = emb::test::make_temp_dir("features");
    BOOST_REQUIRE(std::system(("/usr/bin/python3 " + kSource + "/tests/encoders_ref/make_tiny_encoders.py --which "
                               "eagle --out " + dir + " > /dev/null").c_str()) == 0);
    checkpoint = dir + "/eagle", eagle = checkpoint + "/eagle2_hg_model";
    for (const auto& entry : fs::directory_iterator(kTokenizer))
      if (entry.path().filename() != "config.json") fs::copy(entry.path(), eagle + "/" + entry.path().filename().string());
  }
};
inline const Tiny& tiny() {
  static const Tiny t;
  return t;
}

inline const std::vector<std::string> kTasks = {"pick the pear and place it in the plate", "open the drawer"};

// Three episodes (5, 3, 4 steps; tasks 0, 1, 0) with views "front" and "wrist" of H × W frames.
inline PackedData dataset(int64_t H, int64_t W) {
  PackedData p;
  p.family = "gr00t", p.fps = 20, p.source = "test";
  p.state_dim = 3, p.action_dim = 2;
  p.task_text = kTasks;
  const int64_t lengths[] = {5, 3, 4};
  const int32_t tasks[] = {0, 1, 0};
  std::mt19937 gen(5);
  std::uniform_real_distribution<float> u(-1, 1);
  for (int e = 0; e < 3; ++e) {
    p.add_episode(lengths[e], tasks[e], 0);
    for (int64_t s = 0; s < lengths[e] * 3; ++s) p.state.push_back(u(gen));
    for (int64_t s = 0; s < lengths[e] * 2; ++s) p.action.push_back(u(gen));
  }
  for (const char* name : {"front", "wrist"}) {
    VideoView v;
    v.name = name, v.height = H, v.width = W;
    v.frames.resize(size_t(p.steps() * H * W * 3));
    std::uniform_int_distribution<int> byte(0, 255);
    for (uint8_t& b : v.frames) b = uint8_t(byte(gen));
    p.videos.push_back(std::move(v));
  }
  // The stand-in encoder's features, which the backbone's replace.
  VarlenFeatures& vl = p.features["vl"];
  vl.dim = 4;
  for (int64_t s = 0; s < p.steps(); ++s) {
    for (int k = 0; k < 8; ++k) vl.values.push_back(float_to_half(0.5f));
    vl.offsets.push_back(vl.offsets.back() + 2);
  }
  return p;
}

inline std::string features_command(const std::string& in, const std::string& out, const std::string& extra = "") {
  return str(EMBPACK_EXE, " features --backbone ", tiny().checkpoint, " ", in, " -o ", out, " ", extra);
}

inline std::vector<float> stored_vl(const std::string& path, std::vector<int64_t>& offsets) {
  const H5File f = H5File::open(path);
  offsets = f.read_all<int64_t>(packed::kVlOffsets);
  std::vector<float> v;
  for (uint16_t h : f.read_all<uint16_t>(packed::kVlFeatures)) v.push_back(half_to_float(h));
  return v;
}

// Takes <IMG_CONTEXT> out of the tokenizer files of `folder` (an unknown special token).
inline void remove_image_token(const std::string& folder) {
  const std::string script =
      "import json; d = '" + folder + "'; c = json.load(open(d + '/tokenizer_config.json')); "
      "c['added_tokens_decoder'] = {k: v for k, v in c['added_tokens_decoder'].items() if "
      "v['content'] != '<IMG_CONTEXT>'}; json.dump(c, open(d + '/tokenizer_config.json', 'w')); "
      "a = json.load(open(d + '/added_tokens.json')); a.pop('<IMG_CONTEXT>'); "
      "json.dump(a, open(d + '/added_tokens.json', 'w'))";
  const int status = std::system(("/usr/bin/python3 -c \"" + script + "\"").c_str());
  if (status != 0) throw Error("remove_image_token: python3 failed on " + folder);
}

// The online run's flags: the tiny backbone, augmentation off unless `augment`.
inline std::string online_flags(bool augment) {
  return emb::str("--set model.backbone=online --set model.backbone_dir=", tiny().checkpoint,
                  augment ? "" : " --set model.backbone_augment=off");
}

#ifdef EMBTRAIN_EXE
// embtrain on the tiny gr00t deck over `data` (the fixture's state and action sizes, 4 samples a
// step, a loss line each step), its outputs in dir/name and checkpoints in dir/ckpt_name.
inline std::string train_command(const std::string& dir, const std::string& name, const std::string& data,
                                 const std::string& extra, int steps = 3) {
  return emb::str(EMBTRAIN_EXE, " inputs/tiny_gr00t.in --set data.paths=", data, " --set model.state_dim=3",
                  " --set model.action_dim=2 --set train.steps=", steps, " --set train.global_batch=4",
                  " --set run.log_every=1 --set data.tokens_per_mb=4096 --set run.output_dir=", dir,
                  " --set train.ckpt_dir=", dir, "/ckpt_", name, " --set train.ckpt_every=0 --set run.name=", name, " ",
                  extra);
}
#endif

// The losses of a run's loss.csv, in step order.
inline std::vector<double> losses(const std::string& run_dir) {
  std::ifstream in(run_dir + "/loss.csv");
  std::string line;
  std::getline(in, line);
  std::vector<double> out;
  while (std::getline(in, line)) out.push_back(std::stod(line.substr(line.find(',') + 1)));
  return out;
}

}  // namespace emb::test
