// EMB_LAUNCH under emulation (kernels/cuda/launch.cuh): the kernel's arguments are copied at
// the launch, as CUDA copies them into parameter memory, and every thread of the grid calls
// the kernel with its own copy.
#pragma once
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/cuda/emu/runtime.hpp"

namespace emb::emu {

template <class Body>
struct Launcher {
  LaunchConfig config;
  Body body;
  template <class... Args>
  void operator()(Args&&... args) const {
    launch(config, [body = body, params = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)] {
      std::apply(body, params);
    });
  }
};
template <class Body>
Launcher(LaunchConfig, Body) -> Launcher<Body>;

}  // namespace emb::emu

#define EMB_EMU_LAUNCH(kernel, grid, block, shared_bytes, stream)                               \
  ::emb::emu::Launcher {                                                                        \
    ::emb::emu::LaunchConfig{#kernel, dim3(grid), dim3(block), size_t(shared_bytes), (stream)}, \
        [](auto... emb_emu_args) { kernel(emb_emu_args...); }                                   \
  }
