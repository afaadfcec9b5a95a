// What the encoder benchmarks share (bench_eagle_backbone, bench_dreamzero_encoders; never timed
// tests): a checkpoint of random weights with an encoder's upstream names and shapes, written once
// and reused, and the median wall time of repeated passes after a warm-up.
#pragma once
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace emb::bench {

using TensorShapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

// A bf16 safetensors file at `path` with these tensors: uniform values of standard deviation
// 0.02 (a fast stand-in for N(0, 0.02²); the values do not change the time), per-channel norm
// scales ("norm" or "gamma" in the name) 1. Skipped when a file with exactly these tensors exists.
// Returns the seconds spent writing (0 when reused).
double write_random_checkpoint(const std::string& path, const TensorShapes& shapes);

inline double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Wall times of the passes.
struct Timing {
  std::vector<double> runs_s;
  double median_s = 0;
};
// One warm-up pass (first touch of the activations), then `repeats` timed passes.
Timing time_passes(int repeats, const std::function<void()>& pass);

}  // namespace emb::bench
