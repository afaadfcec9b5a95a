// Offscreen camera images without a display (CLOSED_LOOP.md): Mesa's EGL surfaceless platform
// gives an OpenGL context no window or X server backs, and MuJoCo renders into its offscreen
// framebuffer (size from the MJCF's <visual><global offwidth offheight>). The process makes
// one context current once; each Renderer holds MuJoCo's scene and GPU-side context for one
// model. Software rendering (llvmpipe) of the same scene is bit-for-bit repeatable.
#pragma once
#include <mujoco/mujoco.h>

#include <cstdint>
#include <string>
#include <vector>

namespace emb {

// Makes the process's EGL context current on first use; throws emb::Error with one line
// ("no rendering backend: ...") when EGL cannot give one.
void ensure_gl_context();

class Renderer {
 public:
  explicit Renderer(const mjModel* model);
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  int height() const { return height_; }
  int width() const { return width_; }
  // RGB [height, width, 3], top row first, from the named MJCF camera.
  void render(const mjData* data, const std::string& camera, std::vector<uint8_t>& rgb);

 private:
  const mjModel* model_;
  mjvScene scene_;
  mjvOption option_;
  mjrContext context_;
  int height_ = 0, width_ = 0;
  std::vector<uint8_t> flipped_;
};

}  // namespace emb
