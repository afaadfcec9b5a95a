// CUDA graphs of a micro-batch, one per span between unit boundaries (Ops::begin_graph,
// kernels/cuda/graph_cache.hpp). The trainer's unit hooks run at the boundaries, and they may
// communicate: a ZeRO-3 all-gather, a reduce-scatter after a bucket's backward, an event wait
// for a collective, a bf16 bucket widened; the loss sums may be read when every slot is used.
// None of that may happen while the stream is being captured (NCCL's calls would join its
// stream into the capture, the emulation's MPI cannot be captured, a read waits for the
// stream), so each hook pauses the capture: the span before it is ended and launched as a
// replay of its own graph, and the next span is captured after it. As Megatron-LM's per-layer
// graphs, this covers every shard mode, mixed precision and the step's last micro-batch (whose
// hooks issue the reductions) with one rule, at the cost of one graph launch per span (two per
// unit and micro-batch) instead of one per micro-batch.
//
// A span's key is the micro-batch's key (Model::graph_key) and its index in the micro-batch,
// so a span is replayed by the same span of another micro-batch with the same key.
#pragma once
#include <cstdint>
#include <vector>

#include "kernels/ops.hpp"

namespace emb {

class GraphSegments {
 public:
  // ops null: no graphs (every call below does nothing).
  explicit GraphSegments(Ops* ops) : ops_(ops) {}
  // Ends a capture left open by a micro-batch that threw past its caller (never throws).
  ~GraphSegments() { abandon(); }
  GraphSegments(const GraphSegments&) = delete;
  GraphSegments& operator=(const GraphSegments&) = delete;

  // Starts the micro-batch's first span; false when the backend has no graphs.
  bool start(std::vector<int64_t> key);
  // Runs host-side work that may wait for or order against the stream between two spans: the
  // span captured so far is ended and run, the next one captured after the work. When the
  // work throws, the capture stays ended (abandon then does nothing).
  template <class Work>
  void outside(Work&& work) {
    pause();
    work();
    resume();
  }
  // Ends the micro-batch's last span and runs it.
  void finish() { pause(), active_ = false; }
  // Ends an open capture without running it (the micro-batch threw); never throws.
  void abandon();

 private:
  void pause();   // ends the span being captured and runs it
  void resume();  // captures the next span

  Ops* ops_;
  std::vector<int64_t> key_;  // the micro-batch's key, then the span's index
  bool active_ = false;       // between start() and finish()
  bool capturing_ = false;    // a span is being captured
};

}  // namespace emb
