// The global sample order (DATA.md "Sampler contract"). Samples are the steps of all
// episodes of all files, numbered in dataset order (file by file, row by row). The order of
// epoch e is a function of (seed, e) and the dataset only, never of the rank count:
//  1. the dataset is cut into chunks of consecutive rows of one file (chunk_rows each; a
//     file's last chunk may be shorter), so every read is a large contiguous range;
//  2. the chunks are shuffled (Fisher-Yates on Philox draws keyed by (seed, epoch));
//  3. consecutive groups of `chunks_per_buffer` shuffled chunks form shuffle buffers; the
//     samples of buffer b are shuffled again (keyed by (seed, epoch, b)).
// The epoch order is buffer 0's shuffled samples, then buffer 1's, ... A training step
// consumes `global_batch` consecutive positions; rank r of N takes the positions ≡ r
// (mod N) among them, and a step that runs past the end of an epoch continues at position
// 0 of the next. The state (epoch, cursor) therefore restores on any N.
#pragma once
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace emb {

struct SamplerState {
  int64_t epoch = 0;
  int64_t cursor = 0;  // next global position within the epoch
  bool operator==(const SamplerState& o) const { return epoch == o.epoch && cursor == o.cursor; }
};

// One position of the global order: epoch, position within it, and the sample it holds.
struct Position {
  int64_t epoch, pos, sample;
};

class Sampler {
 public:
  // chunk_sizes: samples per chunk in dataset order (chunk c starts at their prefix sum).
  Sampler(std::vector<int64_t> chunk_sizes, int64_t chunks_per_buffer, uint64_t seed);

  int64_t size() const { return chunk_begin_.back(); }  // samples per epoch
  int64_t chunks() const { return int64_t(chunk_size_.size()); }
  int64_t chunk_begin(int64_t c) const { return chunk_begin_[c]; }
  int64_t chunk_size(int64_t c) const { return chunk_size_[c]; }

  Position at(int64_t epoch, int64_t pos);
  // The buffer (index within the epoch) that holds position pos, and its chunks.
  int64_t buffer_of(int64_t epoch, int64_t pos);
  std::vector<int64_t> buffer_chunks(int64_t epoch, int64_t buffer);
  std::pair<int64_t, int64_t> buffer_positions(int64_t epoch, int64_t buffer);  // [begin, end) of the epoch order

  // This rank's positions of the step starting at `state`, and the state after the step.
  std::vector<Position> step(const SamplerState& state, int64_t global_batch, int rank, int ranks);
  SamplerState advance(const SamplerState& state, int64_t global_batch) const;

 private:
  struct Epoch {
    std::vector<int64_t> chunk_order;   // shuffled chunk ids
    std::vector<int64_t> buffer_begin;  // first position of each buffer (+ total)
  };
  struct Buffer {
    std::vector<int64_t> samples;  // local order → sample index
  };
  const Epoch& epoch(int64_t e);
  const Buffer& buffer(int64_t e, int64_t b);

  std::vector<int64_t> chunk_size_, chunk_begin_;
  int64_t chunks_per_buffer_;
  uint64_t seed_;
  std::map<int64_t, Epoch> epochs_;                       // the last two epochs used
  std::map<std::pair<int64_t, int64_t>, Buffer> buffers_;  // the last few buffers used
};

// Fisher-Yates permutation of 0..n-1 from Philox draws keyed by (seed, a, b).
std::vector<int64_t> philox_permutation(int64_t n, uint64_t seed, uint64_t a, uint64_t b);

}  // namespace emb
