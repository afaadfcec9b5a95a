#include "comm/comm_fabric.hpp"

#include <algorithm>
#include <thread>

#include "core/timer.hpp"

namespace emb {

using Clock = PhaseTimers::Clock;

double FabricModel::bytes_per_rank(const Collective& c, int size) {
  if (size == 1) return 0;
  const double bytes = double(c.n) * double(dtype_size(c.dtype));
  const double others = double(size - 1) / size;
  switch (c.kind) {
    case CollectiveKind::all_reduce: return 2 * others * bytes;  // reduce-scatter + all-gather
    case CollectiveKind::reduce_scatter:
    case CollectiveKind::all_gather: return others * bytes;
    case CollectiveKind::broadcast: return bytes;  // pipelined chain: every rank forwards it once
    case CollectiveKind::barrier: return 0;
  }
  return 0;
}

double FabricModel::seconds(const Collective& c, int size) const {
  const double transfer = gbps > 0 ? bytes_per_rank(c, size) / (gbps * 1e9) : 0.0;
  return latency_us * 1e-6 + transfer;
}

// The real collective's handle plus the time the modelled fabric releases it.
struct FabricOp final : CommOp {
  CommHandle real;
  Clock::time_point issued, deadline;
  double exposed = 0;

  bool idle() const { return true; }  // holds no thread: free once no handle refers to it
  bool test() override { return Clock::now() >= deadline && real.test(); }
  double wait() override {
    const Clock::time_point t0 = Clock::now();
    real.wait();
    std::this_thread::sleep_until(deadline);
    const double blocked = seconds_since(t0);
    exposed += blocked;
    return blocked;
  }
  double wait_on_compute_stream() override { return wait(); }  // wraps host backends only
  double seconds() override {
    return std::max(real.seconds(), std::chrono::duration<double>(deadline - issued).count());
  }
  double exposed_seconds() override { return exposed; }
};

FabricComm::FabricComm(std::unique_ptr<Comm> inner, FabricModel model)
    : Comm(inner->host_comm()), inner_(std::move(inner)), model_(model) {}

FabricComm::~FabricComm() = default;

CommHandle FabricComm::issue(const Collective& c) {
  std::shared_ptr<FabricOp> op = pool_.acquire();
  op->issued = Clock::now();
  const Clock::time_point start = std::max(op->issued, fabric_free_);
  op->deadline = start + std::chrono::duration_cast<Clock::duration>(
                             std::chrono::duration<double>(model_.seconds(c, size())));
  fabric_free_ = op->deadline;
  op->exposed = 0;
  op->real = inner_->issue(c);
  return CommHandle(op);
}

}  // namespace emb
