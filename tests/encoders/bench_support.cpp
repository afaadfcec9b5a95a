#include "bench_support.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <random>

#include "weights/safetensors_writer.hpp"
#include "weights/weight_source.hpp"

namespace emb::bench {
namespace {

bool same_tensors(const std::string& path, const std::vector<TensorSpec>& specs) {
  if (!std::filesystem::exists(path)) return false;
  const WeightSource existing(path);
  bool same = existing.tensors().size() == specs.size();
  for (const TensorSpec& s : specs) same = same && existing.find(s.name) && existing.info(s.name).shape == s.shape;
  return same;
}

bool is_norm_scale(const TensorSpec& s) {
  const bool per_channel = !s.shape.empty() && s.numel() == s.shape[0];
  return per_channel && (s.name.find("norm") != std::string::npos || s.name.find("gamma") != std::string::npos);
}

}  // namespace

double write_random_checkpoint(const std::string& path, const TensorShapes& shapes) {
  std::vector<TensorSpec> specs;
  for (const auto& [name, shape] : shapes) specs.push_back({name, WeightDType::BF16, shape});
  if (same_tensors(path, specs)) return 0;
  const auto start = std::chrono::steady_clock::now();
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  SafetensorsWriter writer(path, specs, {{"format", "pt"}});
  std::mt19937_64 gen(1);
  std::vector<float> chunk;
  for (const TensorSpec& s : writer.order()) {
    const bool norm = is_norm_scale(s);
    for (int64_t done = 0; done < s.numel();) {
      const int64_t n = std::min<int64_t>(s.numel() - done, 1 << 20);
      chunk.resize(size_t(n));
      for (float& x : chunk) x = norm ? 1.0f : float((double(gen() >> 11) * 0x1.0p-53 - 0.5) * 0.0693);
      writer.write(chunk.data(), n);
      done += n;
    }
  }
  writer.finish();
  return seconds_since(start);
}

Timing time_passes(int repeats, const std::function<void()>& pass) {
  pass();
  Timing t;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    pass();
    t.runs_s.push_back(seconds_since(start));
  }
  std::vector<double> sorted = t.runs_s;
  std::sort(sorted.begin(), sorted.end());
  const size_t mid = sorted.size() / 2;
  t.median_s = sorted.size() % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return t;
}

}  // namespace emb::bench
