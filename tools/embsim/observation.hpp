// What a policy sees of an environment, built exactly as its training data were: camera images
// rendered offscreen, turned into vl rows by the encoder the policy's features came from
// (vl_encoder.hpp: the stand-in encoder for `embsim collect`'s files, the Eagle backbone for a
// checkpoint trained on its features), float16 as stored in packed files; plus the state
// vector. Collection stores these; evaluation feeds them to the policy, so a checkpoint is
// evaluated on the inputs it was trained on.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/env.hpp"
#include "sim/renderer.hpp"
#include "vl_encoder.hpp"

namespace emb {

struct ObservationOptions {
  std::vector<std::string> views{"top", "front"};  // MJCF camera names
  int d_vl = 32, vl_grid = 2;                      // stand-in encoder: width, grid² tokens per view
};

class ObservationEncoder {
 public:
  // vl: the encoder of features() (not owned; nullptr when only render() is used).
  ObservationEncoder(const ObservationOptions& o, const mjModel* model, VlEncoder* vl);
  const ObservationOptions& options() const { return o_; }
  // Renders every view of env into frames[v] ([H, W, 3] each).
  void render(const Env& env, std::vector<std::vector<uint8_t>>& frames);
  // Appends the vl rows (float16) of one step's rendered views and instruction.
  void features(const std::vector<std::vector<uint8_t>>& frames, const std::string& instruction,
                std::vector<uint16_t>& out) const;
  int height() const { return renderer_.height(); }
  int width() const { return renderer_.width(); }

 private:
  ObservationOptions o_;
  Renderer renderer_;
  VlEncoder* vl_;
};

}  // namespace emb
