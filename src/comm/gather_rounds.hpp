// How a gather of one vector per rank, of any length, is cut into rounds that MPI's int
// counts and displacements can describe (Open MPI 4.1 has no MPI-4 large-count calls): in
// round r every rank sends its elements [r·per_rank, (r+1)·per_rank), the round's blocks land
// back to back in a staging buffer of at most `round_limit` elements, and each block is then
// copied to its 64-bit place in the output. Pure arithmetic, so it is tested at sizes far
// beyond 2^31 without allocating them.
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

struct GatherRound {
  std::vector<int> counts, displs;       // MPI's view: elements of each rank, staging offsets
  std::vector<int64_t> source, target;   // each rank's first element in its vector / in the output
};

class GatherRounds {
 public:
  // counts: every rank's element count (the same on every rank). round_limit: most elements
  // one round moves in all (at least one per rank; at most 2^31 - 1).
  GatherRounds(const std::vector<int64_t>& counts, int64_t round_limit);

  int64_t total() const { return total_; }
  int64_t rounds() const { return rounds_; }
  GatherRound round(int64_t r) const;

 private:
  std::vector<int64_t> counts_, offsets_;  // offsets_[i]: rank i's first element in the output
  int64_t total_ = 0, per_rank_ = 1, rounds_ = 0;
};

}  // namespace emb
