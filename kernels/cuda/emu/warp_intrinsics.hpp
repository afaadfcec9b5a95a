// Warp shuffles, votes and __syncwarp as warp collectives of the block scheduler: all 32
// lanes must take part with the full mask (block_scheduler.hpp), and the values are exchanged
// once every lane has arrived, with CUDA's rules for width segments and out-of-range lanes.
#pragma once
#include <cstring>
#include <type_traits>

#include "kernels/cuda/emu/block_scheduler.hpp"

namespace emb::emu {

enum class ShuffleMode { index, up, down, bfly };

template <class T>
struct ShuffleIn {
  T value;
  int param;  // source lane, delta or lane mask
  int width;
};

// The source lane of `lane` for one shuffle (PTX shfl.sync: out-of-segment sources read the
// lane's own value).
template <ShuffleMode M>
int shuffle_source(int lane, int param, int width) {
  const int segment = lane / width * width;
  switch (M) {
    case ShuffleMode::index:
      return segment + (param % width + width) % width;
    case ShuffleMode::up:
      return lane - segment >= param ? lane - param : lane;
    case ShuffleMode::down:
      return lane - segment + param < width ? lane + param : lane;
    default: {
      const int src = lane ^ param;
      return src >= segment && src < segment + width ? src : lane;
    }
  }
}

template <class T, ShuffleMode M>
void combine_shuffle(const void* const* in, void* const* out) {
  for (int lane = 0; lane < 32 && in[lane]; ++lane) {
    const auto& mine = *static_cast<const ShuffleIn<T>*>(in[lane]);
    if (mine.width <= 0 || mine.width > 32 || (mine.width & (mine.width - 1)))
      device_fault("shuffle width " + std::to_string(mine.width) + " is not a power of two in 1..32");
    int src = shuffle_source<M>(lane, mine.param, mine.width);
    if (!in[src]) src = lane;  // a lane beyond a partial warp
    *static_cast<T*>(out[lane]) = static_cast<const ShuffleIn<T>*>(in[src])->value;
  }
}

template <class T, ShuffleMode M>
T shuffle(const char* what, const char* file, int line, unsigned mask, T value, int param, int width) {
  static_assert(std::is_trivially_copyable_v<T>, "shuffles move trivially copyable values");
  const ShuffleIn<T> in{value, param, width};
  T out;
  warp_collective(what, file, line, mask, &in, &out, &combine_shuffle<T, M>);
  return out;
}

enum class Vote { all, any, ballot };

template <Vote V>
void combine_vote(const void* const* in, void* const* out) {
  unsigned ballot = 0;
  int lanes = 0;
  for (; lanes < 32 && in[lanes]; ++lanes) ballot |= (*static_cast<const int*>(in[lanes]) != 0 ? 1u : 0u) << lanes;
  const unsigned full = lanes == 32 ? 0xffffffffu : (1u << lanes) - 1u;
  const unsigned result = V == Vote::ballot ? ballot
                          : V == Vote::all  ? unsigned(ballot == full)
                                            : unsigned(ballot != 0);
  for (int lane = 0; lane < lanes; ++lane) *static_cast<unsigned*>(out[lane]) = result;
}

template <Vote V>
unsigned vote(const char* what, const char* file, int line, unsigned mask, int predicate) {
  unsigned out;
  warp_collective(what, file, line, mask, &predicate, &out, &combine_vote<V>);
  return out;
}

inline void combine_nothing(const void* const*, void* const*) {}

}  // namespace emb::emu

#define EMB_EMU_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

template <class T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = 32, EMB_EMU_SITE) {
  return ::emb::emu::shuffle<T, ::emb::emu::ShuffleMode::index>("__shfl_sync", file, line, mask, var, src_lane, width);
}
template <class T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = 32, EMB_EMU_SITE) {
  return ::emb::emu::shuffle<T, ::emb::emu::ShuffleMode::up>("__shfl_up_sync", file, line, mask, var, int(delta),
                                                             width);
}
template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = 32, EMB_EMU_SITE) {
  return ::emb::emu::shuffle<T, ::emb::emu::ShuffleMode::down>("__shfl_down_sync", file, line, mask, var, int(delta),
                                                               width);
}
template <class T>
inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = 32, EMB_EMU_SITE) {
  return ::emb::emu::shuffle<T, ::emb::emu::ShuffleMode::bfly>("__shfl_xor_sync", file, line, mask, var, lane_mask,
                                                               width);
}
inline int __all_sync(unsigned mask, int predicate, EMB_EMU_SITE) {
  return int(::emb::emu::vote<::emb::emu::Vote::all>("__all_sync", file, line, mask, predicate));
}
inline int __any_sync(unsigned mask, int predicate, EMB_EMU_SITE) {
  return int(::emb::emu::vote<::emb::emu::Vote::any>("__any_sync", file, line, mask, predicate));
}
inline unsigned __ballot_sync(unsigned mask, int predicate, EMB_EMU_SITE) {
  return ::emb::emu::vote<::emb::emu::Vote::ballot>("__ballot_sync", file, line, mask, predicate);
}
inline void __syncwarp(unsigned mask = 0xffffffffu, EMB_EMU_SITE) {
  ::emb::emu::warp_collective("__syncwarp", file, line, mask, nullptr, nullptr, &::emb::emu::combine_nothing);
}
