// Shared helpers of the data tests: a scratch folder per suite, tiny model shapes matching
// `embpack synth` defaults and small synthetic packed files.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "config/model_config.hpp"
#include "core/error.hpp"
#include "core/half.hpp"
#include "packed_writer.hpp"
#include "synth.hpp"

namespace emb::test {

// Creates (if missing) and returns the folder the suite `suite` writes its files into; each
// suite names its own so that suites ctest runs at the same time never share a file.
inline std::string scratch_dir(const std::string& suite) {
  std::string dir = std::string(EMBTRAIN_TEST_TMP) + "/" + suite;
  std::filesystem::create_directories(dir);
  return dir;
}

inline ModelConfig tiny_model(Family f) {
  ModelConfig c;
  c.family = f;
  c.d_model = 64, c.n_layers = 2, c.n_heads = 4, c.d_ff = 256, c.d_ctx = 32;
  c.n_embodiments = 3, c.state_dim = 16, c.action_dim = 8, c.horizon = 4, c.n_future = 2;
  c.latent_channels = c.out_channels = 4, c.latent_frames = 3, c.latent_height = 4, c.latent_width = 4;
  c.frames_per_block = 2, c.actions_per_block = 2, c.max_text_tokens = 64;
  return c;
}

inline SynthOptions tiny_synth(const std::string& family, int64_t episodes, uint64_t seed) {
  SynthOptions o;
  o.family = family, o.episodes = episodes, o.seed = seed;
  o.min_steps = 5, o.max_steps = 40;
  return o;
}

inline std::string write_synth(const SynthOptions& o, const std::string& path) {
  write_packed(synthesize(o), path, "test");
  return path;
}

// The shapes of a DreamZero-layout test file (embpack features --dreamzero's layout).
struct DreamZeroLayout {
  int64_t frames = 4, stride = 2;                   // latent frames F per clip, steps between clip frames
  int64_t height = 4, width = 4, channels = 4;      // latent Hl, Wl, C
  int64_t cond = 8, clip_rows = 2, clip_dim = 4;    // I2V channels, CLIP rows and width
};

// A DreamZero-layout file of one task ("pick", 3 text rows of 32) with episodes of `lengths`
// steps: step t's clip has latent frame j = t·F + j in every latent channel (0 in the I2V ones),
// CLIP rows 0.25, and `rows(t, state, action)` fills its state and action rows.
inline PackedData dreamzero_layout_file(const DreamZeroLayout& d, const std::vector<int64_t>& lengths,
                                        int64_t state_dim, int64_t action_dim,
                                        const std::function<void(int64_t, float*, float*)>& rows) {
  PackedData p;
  p.family = "wan", p.fps = 15, p.source = "test", p.state_dim = state_dim, p.action_dim = action_dim;
  p.task_text = {"pick"};
  for (int64_t len : lengths) p.add_episode(len, 0, 0);
  LatentView lat{"dreamzero", d.height, d.width, d.channels + d.cond, 1, {}, {0}, {}};
  lat.attributes = {{"clip_frames", std::to_string(d.frames)}, {"frame_stride", std::to_string(d.stride)},
                    {"cond_channels", std::to_string(d.cond)}};
  VarlenFeatures clip;
  clip.dim = d.clip_dim;
  p.state.resize(size_t(p.steps() * state_dim));
  p.action.resize(size_t(p.steps() * action_dim));
  for (int64_t t = 0; t < p.steps(); ++t) {
    rows(t, &p.state[size_t(t * state_dim)], &p.action[size_t(t * action_dim)]);
    for (int64_t j = 0; j < d.frames; ++j)
      for (int64_t px = 0; px < d.height * d.width; ++px)
        for (int64_t c = 0; c < d.channels + d.cond; ++c)
          lat.values.push_back(float_to_half(c < d.channels ? float(t * d.frames + j) : 0.f));
    clip.values.insert(clip.values.end(), size_t(d.clip_rows * d.clip_dim), float_to_half(0.25f));
    clip.offsets.push_back(clip.offsets.back() + d.clip_rows);
  }
  for (int64_t len : lengths) lat.offsets.push_back(lat.offsets.back() + d.frames * len);
  p.latents.push_back(lat);
  p.features["clip"] = clip;
  VarlenFeatures txt;
  txt.dim = 32;
  txt.values.assign(size_t(3 * txt.dim), float_to_half(0.1f));
  txt.offsets = {0, 3};
  p.features["txt"] = txt;
  return p;
}

// The message of the input error (exit code 2) that `f` throws; fails the test when it throws none.
inline std::string input_error_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    BOOST_TEST(e.exit_code() == kExitInput);
    return e.what();
  }
  BOOST_FAIL("no error");
  return "";
}

}  // namespace emb::test
