// What a policy sees of an environment, built exactly as training data are: camera images
// rendered offscreen, turned into vl tokens by embpack's stand-in encoder (the `embpack video`
// path: ContextFeatures::add_image per view, then add_instruction), float16 as stored in
// packed files; plus the state vector. Collection stores these; evaluation feeds them to the
// policy, so a checkpoint is evaluated on the inputs it was trained on.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "context_features.hpp"
#include "sim/env.hpp"
#include "sim/renderer.hpp"

namespace emb {

struct ObservationOptions {
  std::vector<std::string> views{"top", "front"};  // MJCF camera names
  int d_vl = 32, vl_grid = 2;                      // stand-in encoder: width, grid² tokens per view
};

class ObservationEncoder {
 public:
  ObservationEncoder(const ObservationOptions& o, const mjModel* model);
  const ObservationOptions& options() const { return o_; }
  // Renders every view of env into frames[v] ([H, W, 3] each).
  void render(const Env& env, std::vector<std::vector<uint8_t>>& frames);
  // Appends the vl token rows (float16) of one step: every view's image tokens, then the instruction's.
  void features(const std::vector<std::vector<uint8_t>>& frames, const std::string& instruction,
                std::vector<uint16_t>& out) const;
  int height() const { return renderer_.height(); }
  int width() const { return renderer_.width(); }

 private:
  ObservationOptions o_;
  Renderer renderer_;
  ContextFeatures encoder_;
};

}  // namespace emb
