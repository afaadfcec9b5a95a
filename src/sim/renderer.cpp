#include "sim/renderer.hpp"

#include <EGL/egl.h>
#include <EGL/eglext.h>

#include <cstring>

#include "core/error.hpp"

namespace emb {

namespace {

[[noreturn]] void no_backend(const char* what) {
  throw Error(str("no rendering backend: ", what, " (EGL error 0x", std::hex, eglGetError(),
                  "; needs Mesa's EGL: libegl1 and libgl1-mesa-dri)"),
              kExitInput);  // the node's set-up, not a fault of the run: exit 2
}

}  // namespace

void ensure_gl_context() {
  static bool current = false;
  if (current) return;
  auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(eglGetProcAddress("eglGetPlatformDisplayEXT"));
  if (!get_platform_display) no_backend("eglGetPlatformDisplayEXT is not available");
  EGLDisplay display = get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr);
  EGLint major = 0, minor = 0;
  if (display == EGL_NO_DISPLAY || eglInitialize(display, &major, &minor) != EGL_TRUE)
    no_backend("cannot initialise an EGL surfaceless display");
  const EGLint attributes[] = {EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8, EGL_ALPHA_SIZE, 8,
                               EGL_DEPTH_SIZE, 24, EGL_STENCIL_SIZE, 8, EGL_COLOR_BUFFER_TYPE, EGL_RGB_BUFFER,
                               EGL_SURFACE_TYPE, EGL_PBUFFER_BIT, EGL_RENDERABLE_TYPE, EGL_OPENGL_BIT, EGL_NONE};
  EGLConfig config;
  EGLint configs = 0;
  if (eglChooseConfig(display, attributes, &config, 1, &configs) != EGL_TRUE || configs < 1)
    no_backend("no EGL config with 8-bit RGBA, depth and stencil");
  if (eglBindAPI(EGL_OPENGL_API) != EGL_TRUE) no_backend("cannot bind the OpenGL API");
  EGLContext context = eglCreateContext(display, config, EGL_NO_CONTEXT, nullptr);
  if (context == EGL_NO_CONTEXT) no_backend("cannot create an OpenGL context");
  if (eglMakeCurrent(display, EGL_NO_SURFACE, EGL_NO_SURFACE, context) != EGL_TRUE)
    no_backend("cannot make the context current");
  current = true;
}

Renderer::Renderer(const mjModel* model) : model_(model) {
  ensure_gl_context();
  mjv_defaultOption(&option_);
  mjv_defaultScene(&scene_);
  mjr_defaultContext(&context_);
  mjv_makeScene(model, &scene_, 1000);
  mjr_makeContext(model, &context_, mjFONTSCALE_100);
  mjr_setBuffer(mjFB_OFFSCREEN, &context_);
  height_ = context_.offHeight, width_ = context_.offWidth;
  EMB_CHECK(height_ > 0 && width_ > 0, "renderer: the MJCF's offscreen buffer is empty (set <visual><global offwidth offheight>)");
}

Renderer::~Renderer() {
  mjr_freeContext(&context_);
  mjv_freeScene(&scene_);
}

void Renderer::render(const mjData* data, const std::string& camera, std::vector<uint8_t>& rgb) {
  int id = mj_name2id(model_, mjOBJ_CAMERA, camera.c_str());
  EMB_CHECK(id >= 0, "renderer: the MJCF has no camera named '", camera, "'");
  mjvCamera cam;
  mjv_defaultCamera(&cam);
  cam.type = mjCAMERA_FIXED, cam.fixedcamid = id;
  mjrRect viewport{0, 0, width_, height_};
  mjv_updateScene(model_, const_cast<mjData*>(data), &option_, nullptr, &cam, mjCAT_ALL, &scene_);
  mjr_render(viewport, &scene_, &context_);
  size_t row = size_t(width_) * 3;
  flipped_.resize(row * size_t(height_));
  rgb.resize(flipped_.size());
  mjr_readPixels(flipped_.data(), nullptr, viewport, &context_);
  for (int y = 0; y < height_; ++y)  // OpenGL's rows start at the bottom
    std::memcpy(&rgb[size_t(y) * row], &flipped_[size_t(height_ - 1 - y) * row], row);
}

}  // namespace emb
