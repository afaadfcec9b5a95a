// The handle an asynchronous collective returns. Timers (DESIGN.md "Timers") read two
// figures from it: exposed time (how long the caller was held up waiting) and total time
// (issue to completion), so overlap shows as total > exposed.
#pragma once
#include <memory>

namespace emb {

// Completion state of one issued collective, owned and recycled by its backend.
class CommOp {
 public:
  virtual ~CommOp() = default;
  virtual bool test() = 0;
  virtual double wait() = 0;
  virtual double wait_on_compute_stream() = 0;
  virtual double seconds() = 0;
  virtual double exposed_seconds() = 0;
};

class CommHandle {
 public:
  CommHandle() = default;  // refers to nothing: complete, zero seconds
  explicit CommHandle(std::shared_ptr<CommOp> op) : op_(std::move(op)) {}

  // For a host consumer: blocks the calling thread until the collective completed and its
  // result can be read by the host (NCCL: the device buffer is final, so a copy on any stream
  // or the host sees it). Returns the seconds the thread was blocked; throws emb::Error if
  // the collective failed.
  double wait() { return op_ ? op_->wait() : 0.0; }
  // For a device consumer: work issued after this call on the compute stream (the Ops
  // stream the Comm was made with) sees the result. NCCL does not block the host (returns
  // 0; the stream's stall is exposed_seconds()); host backends block exactly as wait().
  double wait_on_compute_stream() { return op_ ? op_->wait_on_compute_stream() : 0.0; }
  // True once the collective completed (never blocks).
  bool test() { return op_ ? op_->test() : true; }
  // Issue-to-completion seconds (total communication time); blocks until completion.
  double seconds() { return op_ ? op_->seconds() : 0.0; }
  // Seconds the caller's work stood still for this collective: the host time blocked in
  // wait(), plus on NCCL the compute stream's stall at a wait_on_compute_stream() point.
  // Valid after a wait.
  double exposed_seconds() { return op_ ? op_->exposed_seconds() : 0.0; }

 private:
  std::shared_ptr<CommOp> op_;
};

}  // namespace emb
