// `embpack features --backbone CHECKPOINT in.h5 -o out.h5`: the gr00t `vl` features of every step
// computed by GR00T-N1.5's own Eagle 2.5 backbone (src/encoders/eagle) from the file's frames
// and task texts, replacing whatever /features/vl held (the stand-in encoder's), with what
// produced them recorded as attributes of /features/vl (packed_format.hpp) so that training
// refuses features of another backbone (data.vl_backbone).
//
// Per step: the views (/video/<view>, in --views order, else the file's) at that step through
// GR00T's eval frame pipeline (centre crop 0.95, antialiased resize, uint8, normalise), the
// prompt of the episode's task (tokenizers::gr00t_prompt), the backbone forward; --batch steps
// per forward. Under MPI the episodes are split over the ranks (contiguous shares of nearly
// equal steps), every rank runs its own backbone (CPU: its OpenMP threads; CUDA: the GPU of its
// local rank) and all write the one file collectively (write_packed). A rank holds its share
// (frames and fp16 features) in memory. --augment K also stores K variants of every step's
// features under GR00T's training transforms (random crop, colour jitter; one draw per step and
// variant from the seed, the same on any rank count), which training reads one per epoch
// (data.vl_augment).
#pragma once

#include <string>
#include <vector>

#include "comm/world.hpp"
#include "packed_data.hpp"

namespace emb {

struct FeaturesOptions {
  std::string input;
  std::string backbone;      // GR00T checkpoint folder (backbone.eagle_model.* tensors, config.json)
  std::string eagle_folder;  // Isaac-GR00T's eagle2_hg_model (config + tokenizer); "" = CHECKPOINT/eagle2_hg_model
  std::string device = "cpu";    // cpu | cuda
  std::string precision = "auto";  // auto (cpu fp32, cuda bf16 as upstream deploys) | fp32 | bf16
  std::vector<std::string> views;  // prompt order; empty = the file's /video views
  int batch = 4;                   // steps per backbone forward
  int augment = 0;                 // K stored augmented variants per step (/features/vl_aug<k>)
  uint64_t seed = 0;               // their draws: (seed, step, k)
  bool progress = false;
};

struct FeaturesReport {
  int64_t steps = 0, tokens = 0;  // over all ranks
  double seconds = 0, load_seconds = 0;
  int ranks = 1;
  std::string digest, dims;
};

// Collective over world.comm. This rank's share of the input with
// /features/vl replaced, ready for write_packed; an error on any rank is an emb::Error on
// every rank (exit code 2 for input to fix: a missing file, tensor or token, bad frames).
PackedData compute_backbone_features(const FeaturesOptions& o, const World& world, FeaturesReport& report);

}  // namespace emb
