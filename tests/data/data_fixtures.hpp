// Shared helpers of the data tests: a scratch folder per suite, tiny model shapes matching
// `embpack synth` defaults and small synthetic packed files.
#pragma once
#include <filesystem>
#include <string>

#include "config/model_config.hpp"
#include "packed_writer.hpp"
#include "synth.hpp"

namespace emb::test {

// Creates (if missing) and returns the folder the suite `suite` writes its files into; each
// suite names its own so that suites ctest runs at the same time never share a file.
inline std::string scratch_dir(const std::string& suite) {
  std::string dir = "/tmp/embtrain_test_" + suite;
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

}  // namespace emb::test
