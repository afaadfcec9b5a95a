// The Wan video VAE encoders' dimensions (UPSTREAM.md "DreamZero's frozen encoders",
// spec_dreamzero_encoders.md §1-2): Wan2.1's 16-channel VAE (the 14B models) and Wan2.2's
// 48-channel "VAE38" (the 5B), their stage layout in execution order and the tensors the encoder
// reads, by the names of the released state dicts (Wan2.1_VAE.pth, Wan2.2_VAE.pth).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "weights/weight_source.hpp"

namespace emb::encoders {

enum class VaeKind { wan21, wan22 };

struct VaeDims {
  VaeKind kind = VaeKind::wan21;
  int dim = 96;  // stage widths dim · [1, 1, 2, 4, 4]
  int z = 16;    // latent channels (the head makes 2z: mu | log-variance)
  // Wan's _video_vae fixes these three for both releases (vae.py 597-604, vae2_2.py 863-885).
  std::vector<int> dim_mult = {1, 2, 4, 4};
  int res_blocks = 2;
  std::vector<bool> temporal_down = {false, true, true};

  static VaeDims wan21() { return {}; }
  static VaeDims wan22() { return {VaeKind::wan22, 160, 48}; }
  // dim, dim·dim_mult[0], ...: the widths before and after each stage.
  std::vector<int> stage_dims() const;
  int stages() const { return int(dim_mult.size()); }
  int top_dim() const { return stage_dims().back(); }
  // 3 (RGB) or 12 (Wan2.2's 2×2 patchify in front)
  int in_channels() const { return kind == VaeKind::wan22 ? 12 : 3; }
  // Pixels per latent along H and W (8; 16 with the patchify) and frames per latent after the
  // first (4).
  int spatial_factor() const;
  int temporal_factor() const;
  // The latent normalisation z = (mu − mean)·(1/std), the released constants (vae.py 629-639,
  // vae2_2.py 904-1012).
  const std::vector<float>& latent_mean() const;
  const std::vector<float>& latent_std() const;
  const char* name() const { return kind == VaeKind::wan22 ? "Wan2.2 VAE38" : "Wan2.1 VAE"; }
};

// One step of the encoder's stages, in execution order (Wan2.1: encoder.downsamples.{k} numbered
// through the stages; Wan2.2: encoder.downsamples.{i}.downsamples.{j} inside each stage's
// Down_ResidualBlock, whose average-pool shortcut adds at the stage's end).
struct VaeStep {
  enum Kind { residual, down2d, down3d, shortcut_begin, shortcut_end } kind;
  std::string prefix;       // the tensors' name prefix ("encoder.downsamples.3.")
  int in = 0, out = 0;      // channels
  int ft = 1, fs = 1;       // shortcut_end: AvgDown3D's time and space factors
};
std::vector<VaeStep> vae_layout(const VaeDims& d);

// Every tensor the encoder reads with its stored shape (Conv3d [Co, Ci, kt, kh, kw], Conv2d
// [Co, Ci, kh, kw], gammas [C, 1, 1, 1] or [C, 1, 1]); the decoder's and conv2 stay unread.
std::vector<std::pair<std::string, std::vector<int64_t>>> vae_tensor_shapes(const VaeDims& d);

// The dimensions of a released VAE checkpoint, from its tensors: Wan2.2 when encoder.conv1 reads
// 12 channels, dim from encoder.conv1's output channels, z from conv1's; every other shape is then
// checked by the loader against these. Throws emb::Error (exit 2) naming the file when
// encoder.conv1.weight or conv1.weight is missing or not 5-dimensional.
VaeDims read_vae_dims(const WeightSource& source);

}  // namespace emb::encoders
