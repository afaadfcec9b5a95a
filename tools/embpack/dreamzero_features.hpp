// `embpack features --dreamzero CHECKPOINT in.h5 -o out.h5`: what DreamZero's DiT trains on,
// computed by its own frozen encoders (src/encoders: Wan2.1's VAE, umT5-XXL, CLIP ViT-H/14) from a
// packed file's camera frames and task texts (as `embpack lerobot` writes them), into a wan file in
// the DreamZero layout (packed_format.hpp, DATA.md):
//   per step t, the clip of --frames T = 1 + 4k frames starting at t (every --frame-stride-th step;
//   past the episode's end its last frame repeats: data/dreamzero_alignment.hpp), each frame the step's
//   views tiled (--tiling, --tile: RLinf's DROID 2×2 of 176×320 by default,
//   encoders/dreamzero/view_tiling.hpp), through the VAE in causal
//   chunks (frame 0, then 4 at a time): F = 1 + k latent frames, stored with the I2V conditioning
//   y = [mask (4) | VAE(first frame, T − 1 zero frames)] in upstream's channel order
//   [latents | mask | image latents] (/latents/dreamzero); the CLIP features of the clip's first
//   frame (/features/clip, [257, 1280] per step); per task, the umT5 rows of the DreamZero prompt
//   (--robot's template, Wan's cleaning, </s>; /features/txt, real rows only: the loader pads them
//   with zero rows to model.text_len, 512 upstream).
// The features come from encoders/dreamzero/dreamzero_encoders.hpp, which the training step's
// model.encoders = online runs too (train/online_encoders.hpp): one implementation for both.
// What produced them (the encoders' digest, the folder, the recipe, the preprocessing) is recorded
// so that training refuses features of other encoders (data.dreamzero_encoders).
// Multi-rank as --backbone (features_driver.hpp): episodes split over the ranks, one collective
// write; rank 0 computes the per-task text rows.
#pragma once

#include <string>
#include <vector>

#include "comm/world.hpp"
#include "encoders/dreamzero/encoder_folder.hpp"
#include "packed_data.hpp"

namespace emb {

struct DreamZeroFeaturesOptions {
  std::string input;
  std::string checkpoint;                  // the encoders' folder (encoder_folder.hpp)
  encoders::DreamZeroEncoderFiles files;   // overrides of the folder's files ("" = the folder's)
  std::vector<std::string> views;          // tiling order; empty = the file's /video views
  std::string tiling = "2x2", tile = "176x320";
  int frames = 33;                         // clip frames T (1 + 4k): 33 -> 9 latent frames (DROID)
  int frame_stride = 3;                    // steps between a clip's frames (upstream DROID: 3)
  int chunk_frames = 4;                    // the VAE's causal chunks after frame 0 (upstream's 4)
  std::string robot = "oxe_droid";         // DreamZero's prompt template
  std::string device = "cpu";              // cpu | cuda
  bool progress = false;
};

struct DreamZeroFeaturesReport {
  int64_t steps = 0, latent_frames = 0, text_rows = 0;  // over all ranks
  double seconds = 0, load_seconds = 0;
  int ranks = 1;
  std::string digest, dims;
};

// Collective over world.comm: this rank's share of the output, ready for write_packed; an error on
// any rank is an emb::Error on every rank (exit 2 for input to fix).
PackedData compute_dreamzero_features(const DreamZeroFeaturesOptions& o, const World& world,
                                      DreamZeroFeaturesReport& report);

}  // namespace emb
