// The data settings of a run: deck [data] keys plus train.global_batch and run.seed.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/h5_file.hpp"

namespace emb {

class Deck;

struct DataConfig {
  std::vector<std::string> paths;  // files or globs
  bool packing = true;
  int64_t tokens_per_mb = 4096;
  int64_t pad_context = 0;        // packing off: context tokens per padded sample; 0 = the data's longest
  int64_t lookahead = 64;         // FFD window, samples
  int prefetch = 2;               // steps kept ready (0: load on demand)
  MpioTransfer mpio_transfer = MpioTransfer::independent;
  int64_t shuffle_buffer = 65536; // samples per shuffle buffer (rounded to whole chunks)
  int64_t chunk_rows = 256;       // rows per contiguous chunk (not a deck key yet)
  std::string view;               // wan latent view; "" = the file's first
  // gr00t: the checkpoint whose backbone must have made the vl features (data.vl_backbone; ""
  // = not checked) and its eagle_weights_digest, which the trainer fills in (src/train/vl_backbone).
  std::string vl_backbone, vl_backbone_digest;
  bool vl_augment = false;  // data.vl_augment: epoch e reads the stored variant e mod K
  int64_t global_batch = 8;
  uint64_t seed = 1234;
};

DataConfig data_config_from_deck(const Deck& deck);

}  // namespace emb
