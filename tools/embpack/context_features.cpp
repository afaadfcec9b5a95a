#include "context_features.hpp"

#include <cmath>

#include "core/rng.hpp"
#include "core/half.hpp"
#include "data/tokenizer.hpp"

namespace emb {

ContextFeatures::ContextFeatures(int dim, uint64_t seed) : dim_(dim) {
  CounterRng tokens(seed, RngStream::synth, 1000, uint64_t(dim)), proj(seed, RngStream::synth, 1001, uint64_t(dim));
  token_table_.resize(size_t(kVocabSize) * dim);
  tokens.normals(0, int64_t(token_table_.size()), token_table_.data());
  rgb_proj_.resize(size_t(4) * dim);
  proj.normals(0, int64_t(rgb_proj_.size()), rgb_proj_.data());
}

void ContextFeatures::add_instruction(const std::string& text, std::vector<uint16_t>& out) const {
  std::vector<int32_t> tokens = tokenize(text);
  for (size_t k = 0; k < tokens.size(); ++k)
    for (int c = 0; c < dim_; ++c)
      out.push_back(float_to_half(token_table_[size_t(tokens[k]) * dim_ + c] + 0.1f * std::sin(0.5f * float(k) + float(c))));
}

void ContextFeatures::add_image(const uint8_t* rgb, int64_t h, int64_t w, int grid, std::vector<uint16_t>& out) const {
  for (int gy = 0; gy < grid; ++gy)
    for (int gx = 0; gx < grid; ++gx) {
      int64_t y0 = gy * h / grid, y1 = (gy + 1) * h / grid, x0 = gx * w / grid, x1 = (gx + 1) * w / grid;
      double sum[3] = {0, 0, 0};
      for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x)
          for (int c = 0; c < 3; ++c) sum[c] += rgb[(y * w + x) * 3 + c];
      double n = double(std::max<int64_t>(1, (y1 - y0) * (x1 - x0))) * 255.0;
      float cell = float(gy * grid + gx);
      for (int d = 0; d < dim_; ++d) {
        float z = rgb_proj_[size_t(3) * dim_ + d] * cell;
        for (int c = 0; c < 3; ++c) z += rgb_proj_[size_t(c) * dim_ + d] * float(sum[c] / n);
        out.push_back(float_to_half(std::sin(z)));
      }
    }
}

void add_step_context(const ContextFeatures& features, const std::vector<VideoView>& views, int64_t step,
                      const std::string& instruction, int grid, VarlenFeatures& vl) {
  for (const VideoView& v : views)
    features.add_image(&v.frames[size_t(step * v.height * v.width * 3)], v.height, v.width, grid, vl.values);
  features.add_instruction(instruction, vl.values);
  vl.offsets.push_back(int64_t(vl.values.size()) / features.dim());
}

}  // namespace emb
