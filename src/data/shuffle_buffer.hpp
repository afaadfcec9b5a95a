// The rows one shuffle buffer's samples need, read with one collective HDF5 read per file
// and array: for each chunk [a, b) of a file, its state rows, the action rows the action
// windows reach (gr00t: up to b+Hz-1; wan: from the first block of the history on), the vl
// feature rows of its steps (gr00t) and the latent frames of its windows including history
// (wan). Ranges are merged per file, so k chunks of one file cost one large read per array.
// Every rank loads the same buffers in the same order (the buffers of a step's global
// position range), as collective MPI-IO requires; each rank then assembles only its samples.
#pragma once
#include <cstdint>
#include <vector>

#include "data/h5_file.hpp"
#include "data/packed_dataset.hpp"

namespace emb {

class ShuffleBuffer {
 public:
  // Returns the bytes read.
  int64_t load(const PackedDataset& data, const std::vector<Chunk>& chunks, const ModelConfig& cfg);

  const float* state(int32_t file, int64_t row) const;
  const float* action(int32_t file, int64_t row) const;
  const uint16_t* vl(int32_t file, int64_t feature_row) const;
  const uint16_t* latent(int32_t file, int64_t frame) const;

 private:
  struct FileRows {
    RowRanges steps, actions, vl, latents;
    std::vector<float> state, action;
    std::vector<uint16_t> vl_values, latent_values;
    int64_t state_dim = 0, action_dim = 0, vl_dim = 0, latent_elems = 0;
  };
  std::vector<FileRows> files_;
};

}  // namespace emb
