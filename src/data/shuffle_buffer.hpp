// The rows one shuffle buffer's samples need: for each chunk [a, b) of a file, its state
// rows, the action rows the action windows reach (gr00t: up to b+Hz-1; wan: from the first
// block of the history on; DreamZero layout: up to the clip's end) and the feature rows of its samples (gr00t: vl features of its
// steps; wan: latent frames of its windows including history). Ranges are merged per file,
// so k chunks of one file cost one large read per range of merged rows.
// Every rank loads the same buffers in the same order (the buffers of a step's global
// position range), as the matched MPI-IO calls require. The small arrays (state, action)
// are read whole on every rank, and so are the frames of model.backbone and model.encoders =
// online (which have no feature array; size data.shuffle_buffer for their frames). The feature array, nearly all the bytes, is read once over
// all ranks: each rank reads an equal share of its rows straight into its node's shared
// block, where every rank of the node assembles from it (no copy, no exchange: within a
// node the exchange cost as much as the read, ~6 ms per 67 MB on the development VM).
// With several nodes, the rows a node's samples need from other nodes' shares are sent by
// one MPI_Alltoallv into the block. Storage is kept across loads: fresh pages cost ~10 µs
// each on the development VM (MACHINE.md).
#pragma once

#include <cstdint>
#include <vector>

#include "core/arena.hpp"
#include "data/h5_file.hpp"
#include "data/node_layout.hpp"
#include "data/node_shared_block.hpp"
#include "data/packed_dataset.hpp"

namespace emb {

// A sample of the buffer and the data-parallel rank that assembles it (< 0: none).
struct BufferSample {
  int32_t file;
  int64_t row;
  int rank;
};

class ShuffleBuffer {
 public:
  // Returns the bytes this rank read from the files. Collective over nodes.ranks. `epoch`
  // selects the feature variant (PackedFileIndex::feature_dataset).
  int64_t load(const PackedDataset& data, const std::vector<Chunk>& chunks, const TokenConfig& cfg,
               const std::vector<BufferSample>& samples, const NodeLayout& nodes, int64_t epoch = 0);
  // The file bytes of the rows this buffer covers (what the ranks read together).
  int64_t file_bytes() const { return file_bytes_; }

  const float* state(int32_t file, int64_t row) const;
  const float* action(int32_t file, int64_t row) const;
  // Row `feature_row` of the file's feature array (vl features or latent frames), float16.
  const uint16_t* feature(int32_t file, int64_t feature_row) const;
  // DreamZero layout: the CLIP rows [tokens, Dclip] of step `row`, float16.
  const uint16_t* clip(int32_t file, int64_t row, int64_t tokens) const;
  // Online encoders: the frame [H, W, 3] of step `row` in /video view `view` (PackedFileIndex::video_views).
  const uint8_t* frame(int32_t file, size_t view, int64_t row) const;

 private:
  struct FileRows {
    RowRanges steps, actions, features, clip_rows;
    float* state = nullptr;
    float* action = nullptr;
    uint16_t* feature_values = nullptr;
    uint16_t* clip = nullptr;  // DreamZero layout: CLIP rows of the buffer's steps
    int64_t state_dim = 0, action_dim = 0, feature_elems = 0, clip_dim = 0;
    std::vector<uint8_t*> frames;  // online vl: per /video view, the frames of the step rows
    int64_t frame_bytes = 0;
  };
  int64_t read_frames(const PackedFileIndex& x, FileRows& r);
  void exchange_between_nodes(const PackedFileIndex& x, FileRows& r, int32_t file, const TokenConfig& cfg,
                              const std::vector<BufferSample>& samples, const NodeLayout& nodes);

  std::vector<FileRows> files_;
  Arena rows_, staging_;
  NodeSharedBlock features_;
  int64_t file_bytes_ = 0;
};

}  // namespace emb
