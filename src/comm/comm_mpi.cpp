#include "comm/comm_mpi.hpp"

#include <algorithm>
#include <chrono>
#include <climits>
#include <exception>
#include <string>
#include <thread>

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "comm/mpi_error.hpp"
#include "comm/request_wait.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"

namespace emb {

using Clock = PhaseTimers::Clock;

// Completed by whichever thread executes the collective; waited on by the caller.
struct MpiOp final : CommOp {
  Collective collective;
  std::mutex mutex;
  std::condition_variable completed;
  bool done = true;  // idle records count as done
  std::string error;
  Clock::time_point issued, finished;
  double exposed = 0;

  bool idle() {
    std::lock_guard<std::mutex> lock(mutex);
    return done;
  }
  void start(const Collective& c) {
    collective = c;
    done = false;
    error.clear();
    exposed = 0;
    issued = Clock::now();
  }
  void finish(const char* failure) {
    std::lock_guard<std::mutex> lock(mutex);
    error = failure;
    finished = Clock::now();
    done = true;
    completed.notify_all();  // under the lock: the record may be reused once it is seen done
  }

  bool test() override { return idle(); }
  double wait_on_compute_stream() override { return wait(); }  // host memory: the host is the consumer
  double wait() override {
    const Clock::time_point t0 = Clock::now();
    std::unique_lock<std::mutex> lock(mutex);
    completed.wait(lock, [&] { return done; });
    const double blocked = seconds_since(t0);
    exposed += blocked;
    if (!error.empty()) throw Error(error);
    return blocked;
  }
  double seconds() override {
    std::unique_lock<std::mutex> lock(mutex);
    completed.wait(lock, [&] { return done; });
    return std::chrono::duration<double>(finished - issued).count();
  }
  double exposed_seconds() override { return exposed; }
};

static MPI_Comm duplicate(MPI_Comm parent) {
  MPI_Comm comm;
  mpi_check(MPI_Comm_dup(parent, &comm), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  return comm;
}

MpiComm::MpiComm(MPI_Comm parent, CommProgress progress)
    : Comm(parent), comm_(duplicate(parent)), progress_(progress), ring_(comm_, progress) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  counts_.resize(size_);
  displs_.resize(size_);
  if (progress_ == CommProgress::thread) thread_ = std::thread([this] { progress_loop(); });
}

MpiComm::~MpiComm() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();  // runs what was issued first: the other ranks expect it
  }
  MPI_Comm_free(&comm_);
}

CommHandle MpiComm::issue(const Collective& c) {
  std::shared_ptr<MpiOp> op = pool_.acquire();
  op->start(c);
  if (progress_ == CommProgress::none) {
    run(*op);
  } else {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      pending_.push_back(op.get());
    }
    wake_.notify_one();
  }
  return CommHandle(op);
}

void MpiComm::progress_loop() {
  // A collective advances only while this thread runs, and it sleeps between polls; at equal
  // priority a woken poll waits for the compute threads' time slices (all ranks issued ->
  // completed: ~10-13 ms median for a sub-millisecond transfer, 4 ranks on 2 cores; 1.5-4.5 ms
  // raised). It sleeps most of the time, so the raise costs the compute threads little.
  // Best effort: without CAP_SYS_NICE setpriority fails and the thread keeps the default.
  setpriority(PRIO_PROCESS, id_t(syscall(SYS_gettid)), -10);
  std::vector<MpiOp*> batch;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;
      batch.swap(pending_);
    }
    for (MpiOp* op : batch) run(*op);
    batch.clear();
  }
}

void MpiComm::run(MpiOp& op) {
  try {
    execute(op.collective);
    op.finish("");
  } catch (const std::exception& e) {
    op.finish(e.what());
  }
}

float* MpiComm::widen(const void* bf16_data, int64_t n) {
  if (int64_t(wide_.size()) < n) wide_.resize(n);
  const bf16* src = static_cast<const bf16*>(bf16_data);
  for (int64_t i = 0; i < n; ++i) wide_[i] = to_float(src[i]);
  return wide_.data();
}

static void narrow(const float* src, void* bf16_data, int64_t n) {
  bf16* dst = static_cast<bf16*>(bf16_data);
  for (int64_t i = 0; i < n; ++i) dst[i] = to_bf16(src[i]);
}

// avg = sum / size, in the type the sum was taken in (f64, or fp32 for fp32 and bf16).
static void finish_reduction(void* x, int64_t n, bool f64, ReduceOp op, int size) {
  if (op != ReduceOp::avg) return;
  if (f64)
    for (int64_t i = 0; i < n; ++i) static_cast<double*>(x)[i] /= double(size);
  else
    for (int64_t i = 0; i < n; ++i) static_cast<float*>(x)[i] /= float(size);
}

void MpiComm::fill_shard_counts(int64_t n) {
  for (int r = 0; r < size_; ++r) {
    const ShardRange s = shard_range(n, r, size_);
    counts_[r] = int(s.count);
    displs_[r] = int(s.offset);
  }
}

void MpiComm::execute(const Collective& c) {
  EMB_CHECK(c.n <= INT_MAX, "MPI backend: ", collective_name(c.kind), " of ", c.n,
            " elements exceeds MPI's int counts; split the buffer");
  // bf16 is summed widened to fp32 and rounded once; fp32 and f64 are summed as stored.
  const bool widened = c.dtype == DType::bf16, f64 = c.dtype == DType::f64;
  const MPI_Datatype wire = f64 ? MPI_DOUBLE : widened ? MPI_UINT16_T : MPI_FLOAT;
  const MPI_Datatype sum_type = f64 ? MPI_DOUBLE : MPI_FLOAT;
  const int n = int(c.n);
  switch (c.kind) {
    case CollectiveKind::all_reduce: {
      void* x = widened ? widen(c.out, n) : c.out;
      MPI_Request req;
      mpi_check(MPI_Iallreduce(MPI_IN_PLACE, x, n, sum_type, MPI_SUM, comm_, &req), "MPI_Iallreduce");
      wait_requests(&req, 1, progress_, "MPI_Iallreduce");
      finish_reduction(x, n, f64, c.op, size_);
      if (widened) narrow(static_cast<float*>(x), c.out, n);
      break;
    }
    case CollectiveKind::reduce_scatter: {
      fill_shard_counts(n);
      const int mine = counts_[rank_];
      const void* full = widened ? widen(c.in, n) : c.in;
      if (widened && int(wide_shard_.size()) < mine) wide_shard_.resize(mine);
      void* shard = widened ? wide_shard_.data() : c.out;
      if (ring_reduce_scatter_pays(int64_t(n) * (f64 ? 8 : 4), size_)) {
        ring_.reduce_scatter_sum(full, shard, n, f64);
      } else {
        MPI_Request req;
        mpi_check(MPI_Ireduce_scatter(full, shard, counts_.data(), sum_type, MPI_SUM, comm_, &req),
                  "MPI_Ireduce_scatter");
        wait_requests(&req, 1, progress_, "MPI_Ireduce_scatter");
      }
      finish_reduction(shard, mine, f64, c.op, size_);
      if (widened) narrow(static_cast<float*>(shard), c.out, mine);
      break;
    }
    case CollectiveKind::all_gather: {
      fill_shard_counts(n);
      const char* own_piece = static_cast<const char*>(c.out) + int64_t(displs_[rank_]) * dtype_size(c.dtype);
      const void* send = c.in == own_piece ? MPI_IN_PLACE : c.in;
      MPI_Request req;
      mpi_check(MPI_Iallgatherv(send, counts_[rank_], wire, c.out, counts_.data(), displs_.data(), wire, comm_,
                                &req),
                "MPI_Iallgatherv");
      wait_requests(&req, 1, progress_, "MPI_Iallgatherv");
      break;
    }
    case CollectiveKind::broadcast: {
      MPI_Request req;
      mpi_check(MPI_Ibcast(c.out, n, wire, c.root, comm_, &req), "MPI_Ibcast");
      wait_requests(&req, 1, progress_, "MPI_Ibcast");
      break;
    }
    case CollectiveKind::barrier: {
      MPI_Request req;
      mpi_check(MPI_Ibarrier(comm_, &req), "MPI_Ibarrier");
      wait_requests(&req, 1, progress_, "MPI_Ibarrier");
      break;
    }
  }
}

}  // namespace emb
