// MPI backend. Open MPI makes no progress on a non-blocking collective while the rank
// computes (MACHINE.md), so overlap needs a thread that is inside MPI meanwhile: each
// MpiComm owns a duplicated communicator and a progress thread that runs the issued
// collectives in issue order with blocking MPI calls and completes their handles.
// CommProgress::none runs each collective inside issue() instead (no overlap; the baseline).
#pragma once
#include <mpi.h>

#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "comm/comm.hpp"
#include "comm/op_pool.hpp"
#include "comm/ring_reduce_scatter.hpp"
#include "config/comm_config.hpp"

namespace emb {

struct MpiOp;

class MpiComm final : public Comm {
 public:
  MpiComm(MPI_Comm parent, CommProgress progress);
  ~MpiComm() override;
  MpiComm(const MpiComm&) = delete;
  MpiComm& operator=(const MpiComm&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const char* name() const override { return "mpi"; }
  CommHandle issue(const Collective& c) override;

 private:
  void progress_loop();
  void run(MpiOp& op);
  void execute(const Collective& c);
  float* widen(const void* bf16_data, int64_t n);
  void fill_shard_counts(int64_t n);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  CommProgress progress_;
  RingReduceScatter ring_;  // reduce-scatters where it beats libnbc, whose sums all fall on rank 0
  OpPool<MpiOp> pool_;

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<MpiOp*> pending_;  // issued, not yet taken by the progress thread
  bool stopping_ = false;
  std::thread thread_;

  // Scratch of the executing thread, kept across collectives (no steady-state allocation).
  std::vector<float> wide_;        // bf16 data widened to fp32 for summation
  std::vector<float> wide_shard_;  // fp32 reduce_scatter result before rounding to bf16
  std::vector<int> counts_, displs_;
};

}  // namespace emb
