// Which part of every unit this rank owns (DESIGN.md "Parallelism"). A unit is a contiguous
// range of the flat parameter buffer; with sharding each unit is split 1/N by shard_range(),
// so every rank owns a piece of every unit. The owned pieces are stored back to back in the
// rank's "owned" buffers (fp32 master weights, AdamW moments, reduced gradients).
// Without sharding (DDP) a rank owns every unit whole and the owned layout is the flat layout.
#pragma once
#include <cstdint>
#include <vector>

#include "model/param_registry.hpp"

namespace emb {

enum class ShardMode { none, grads, full };
ShardMode shard_mode_from_name(const std::string& name);

struct OwnedPiece {
  int64_t unit_offset = 0;   // the unit's start in the flat buffer
  int64_t unit_count = 0;    // the unit's size
  int64_t begin = 0;         // owned range within the unit
  int64_t count = 0;
  int64_t owned_offset = 0;  // where it lives in the owned buffers
};

// A run of owned elements with one weight-decay setting.
struct DecaySegment {
  int64_t owned_offset = 0, count = 0;
  float decay_mult = 1;
};

class ShardLayout {
 public:
  ShardLayout(const ParamRegistry& reg, ShardMode mode, int rank, int size);

  ShardMode mode() const { return mode_; }
  int n_units() const { return int(pieces_.size()); }
  const OwnedPiece& piece(int u) const { return pieces_[size_t(u)]; }
  int64_t owned_total() const { return owned_total_; }
  int64_t flat_total() const { return flat_total_; }
  const std::vector<DecaySegment>& decay_segments() const { return segments_; }

  // Copies this rank's owned elements out of a flat buffer (e.g. after initialisation).
  void gather_owned(const float* flat, float* owned) const;

 private:
  ShardMode mode_;
  int64_t owned_total_ = 0, flat_total_ = 0;
  std::vector<OwnedPiece> pieces_;
  std::vector<DecaySegment> segments_;
};

}  // namespace emb
