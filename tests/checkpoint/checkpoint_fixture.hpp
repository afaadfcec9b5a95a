// Shared by the checkpoint tests and the ckpt_writer helper: state values that are an exact
// function of (state, flat index, step), so any element restored to the wrong place is caught
// exactly, and a scratch directory every rank of a communicator agrees on.
#pragma once
#include <mpi.h>
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "comm/agreement.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

// Small integers (< 2^24), hence exact in fp32; consecutive indices and the three states differ.
inline float state_value(int state, int64_t flat_index, int64_t step) {
  return float((flat_index * 31 + state * 7919 + step * 104729) % 16777213);
}

inline std::vector<float> flat_state(int state, int64_t total, int64_t step) {
  std::vector<float> v(static_cast<size_t>(total));
  for (int64_t i = 0; i < total; ++i) v[size_t(i)] = state_value(state, i, step);
  return v;
}

// The three owned states of one rank: params, exp_avg, exp_avg_sq.
struct OwnedStates {
  std::vector<float> params, exp_avg, exp_avg_sq;
};

// What a rank of `layout` holds at `step`.
inline OwnedStates expected_states(const ShardLayout& layout, int64_t step) {
  OwnedStates s;
  std::vector<float>* states[3] = {&s.params, &s.exp_avg, &s.exp_avg_sq};
  for (int i = 0; i < 3; ++i) {
    std::vector<float> flat = flat_state(i, layout.flat_total(), step);
    states[i]->resize(size_t(layout.owned_total()));
    layout.gather_owned(flat.data(), states[i]->data());
  }
  return s;
}

// Buffers to load into, filled with a value no state has.
inline OwnedStates blank_states(const ShardLayout& layout) {
  const size_t n = size_t(layout.owned_total());
  return OwnedStates{std::vector<float>(n, -1.0f), std::vector<float>(n, -1.0f), std::vector<float>(n, -1.0f)};
}

// A fresh directory under /tmp created by rank 0 of comm; removed by the destructor.
class ScratchDir {
 public:
  explicit ScratchDir(MPI_Comm comm, const char* prefix) : comm_(comm) {
    MPI_Comm_rank(comm, &rank_);
    if (rank_ == 0) {
      std::string pattern = std::string("/tmp/") + prefix + ".XXXXXX";
      path_ = mkdtemp(pattern.data());
    }
    broadcast_string(comm, path_);
  }
  ~ScratchDir() {
    MPI_Barrier(comm_);
    if (rank_ == 0) std::filesystem::remove_all(path_);
  }
  const std::string& path() const { return path_; }

 private:
  MPI_Comm comm_;
  int rank_ = 0;
  std::string path_;
};

}  // namespace emb
