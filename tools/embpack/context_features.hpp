// Stand-ins for the frozen encoders whose outputs packed files carry as context features
// (MODEL.md: SigLIP2+Qwen3 vl tokens for gr00t, umT5 text tokens for wan). They are fixed,
// deterministic functions, so equal inputs give equal features and the signal in images
// and instructions survives into the features a model can learn from:
//  - instruction tokens: a fixed N(0,1) embedding per byte token plus a small positional term;
//  - image tokens: the image average-pooled on a grid × grid raster, each cell's mean RGB
//    mapped through a fixed random 3 → dim projection with a sine nonlinearity.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "packed_data.hpp"

namespace emb {

class ContextFeatures {
 public:
  ContextFeatures(int dim, uint64_t seed);
  int dim() const { return dim_; }
  // Appends one float16 row of `dim` values per byte token of `text`.
  void add_instruction(const std::string& text, std::vector<uint16_t>& out) const;
  // Appends grid*grid rows for an RGB image [h, w, 3].
  void add_image(const uint8_t* rgb, int64_t h, int64_t w, int grid, std::vector<uint16_t>& out) const;

 private:
  int dim_;
  std::vector<float> token_table_;  // [kVocabSize, dim]
  std::vector<float> rgb_proj_;     // [3 + 1, dim]: 3 colour weights and a per-cell phase
};

// Appends step `step`'s vl row of a gr00t file: every view's frame, then the instruction.
void add_step_context(const ContextFeatures& features, const std::vector<VideoView>& views, int64_t step,
                      const std::string& instruction, int grid, VarlenFeatures& vl);

}  // namespace emb
