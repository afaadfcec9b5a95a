// How parameters are grouped for communication and which part of each group this rank owns
// (DESIGN.md "Parallelism"). The model's units (one per block, plus embeddings and heads)
// are contiguous ranges of the flat parameter buffer; consecutive units are merged into
// buckets of at most `bucket_bytes` (a unit larger than that is a bucket alone), and one
// bucket is what ZeRO-3 gathers into one slot and whose gradients are reduced together. A
// bucket is cut into pieces wherever its tensors turn from trained to frozen or back (one
// piece when it has no frozen tensors), and ZeRO shards each piece 1/N over the ranks with
// shard_range() and gathers or reduce-scatters it with a collective of its own: split by
// elements as a whole, a bucket mixing frozen and trained tensors would give the ranks whose
// share fell on frozen tensors next to no AdamW moments and the others all of them (GR00T's
// encoders and head units under train.tune_projector = off: 1.37x the mean on the largest of
// 1024 ranks). The owned pieces are stored back to back in the rank's "owned" buffers (fp32
// master weights, AdamW moments, reduced gradients), a bucket's together. Without sharding
// (DDP) a rank owns every piece whole and the owned layout is the flat layout. The gradients'
// reductions, DDP's all-reduces as ZeRO's reduce-scatters, run over the trained pieces only.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config/train_config.hpp"
#include "model/param_registry.hpp"

namespace emb {

// A run of a bucket's tensors that are all trained or all frozen: what one sharded collective moves.
struct Piece {
  int64_t offset = 0;        // start in the flat buffer
  int64_t count = 0;         // elements
  int64_t begin = 0;         // owned range within the piece
  int64_t owned_count = 0;
  int64_t owned_offset = 0;  // where the owned range lives in the owned buffers
  bool frozen = false;       // its tensors are frozen: no gradient reduction
};

struct Bucket {
  int first_unit = 0, last_unit = 0;    // model units [first_unit, last_unit]
  int first_piece = 0, last_piece = 0;  // the layout's pieces [first_piece, last_piece]
  int64_t offset = 0;                   // start in the flat buffer
  int64_t count = 0;                    // elements
  int64_t owned_offset = 0;             // its pieces' owned ranges, back to back in the owned buffers
  int64_t owned_count = 0;
  bool frozen = false;                  // every tensor of its units is frozen: no gradient reduction
};

// A run of owned elements with one weight-decay setting (trainable tensors only). The AdamW
// moments exist for trainable elements only: state_offset is where the run's lie in them.
struct DecaySegment {
  int64_t owned_offset = 0, count = 0;
  float decay_mult = 1;
  int64_t state_offset = 0;
};

class ShardLayout {
 public:
  // bucket_bytes = 0: every unit is its own bucket. frozen: per tensor of reg (empty: none), the
  // tensors that are not trained (train/freezing.hpp): they get no AdamW segment nor moments, and a unit
  // whose tensors are all frozen is never merged with a trained one, so its bucket is skipped by
  // the gradient reductions, as is every frozen piece of a bucket that mixes them.
  ShardLayout(const ParamRegistry& reg, ShardMode mode, int rank, int size, int64_t bucket_bytes = 0,
              const std::vector<bool>& frozen = {});

  ShardMode mode() const { return mode_; }
  int n_buckets() const { return int(buckets_.size()); }
  const Bucket& bucket(int b) const { return buckets_[size_t(b)]; }
  int n_pieces() const { return int(pieces_.size()); }
  const Piece& piece(int p) const { return pieces_[size_t(p)]; }
  // The piece holding tensor t of the registry.
  const Piece& piece_of(const ParamInfo& t) const;
  // Calls f(piece) for each piece of bucket b in flat order, the frozen ones only when frozen_too
  // (the gradients' reductions run over the trained pieces only).
  template <class F>
  void for_each_piece(int b, bool frozen_too, F&& f) const {
    const Bucket& k = bucket(b);
    for (int p = k.first_piece; p <= k.last_piece; ++p)
      if (frozen_too || !piece(p).frozen) f(piece(p));
  }
  int n_units() const { return int(bucket_of_unit_.size()); }
  int bucket_of_unit(int u) const { return bucket_of_unit_[size_t(u)]; }
  int64_t unit_offset(int u) const { return unit_offsets_[size_t(u)]; }
  int64_t max_bucket_count() const;
  int64_t owned_total() const { return owned_total_; }
  int64_t flat_total() const { return flat_total_; }
  // The owned elements of trainable tensors: the length of the AdamW moments.
  int64_t trainable_owned_total() const { return trainable_owned_total_; }
  // Tensor i of reg is frozen (no gradient, no optimizer state; train/freezing.hpp).
  bool frozen(int tensor) const { return !frozen_.empty() && frozen_[size_t(tensor)]; }
  const std::vector<DecaySegment>& decay_segments() const { return segments_; }
  // The owned trainable elements as maximal runs (decay ignored): what the gradient norm sums.
  const std::vector<DecaySegment>& trainable_runs() const { return trainable_runs_; }

  // Copies this rank's owned elements out of a flat buffer (tests: the shards of a reference).
  void gather_owned(const float* flat, float* owned) const;

 private:
  // Appends the piece [offset, offset + count) of the flat buffer, sharded, to pieces_.
  void add_piece(int64_t offset, int64_t count, bool frozen, int rank, int size);

  ShardMode mode_;
  int64_t owned_total_ = 0, flat_total_ = 0, trainable_owned_total_ = 0;
  std::vector<bool> frozen_;
  std::vector<Bucket> buckets_;
  std::vector<Piece> pieces_;
  std::vector<int> bucket_of_unit_;
  std::vector<int64_t> unit_offsets_;
  std::vector<DecaySegment> segments_;
  std::vector<DecaySegment> trainable_runs_;
};

}  // namespace emb
