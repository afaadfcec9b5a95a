// CUDA graphs of the steady-state micro-batch (README "On GPUs"), one per span of it between
// the trainer's unit hooks (src/model/graph_segments.hpp). A span's ops are captured from the
// compute stream every time, and the capture then updates the executable graph kept under the
// span's key and node count (cudaGraphExecUpdate: the same node sequence with this capture's
// parameters) and is launched: a replay. The key holds what decides the node sequence (the
// model's token-count bucket, the span's index); the node count tells apart what the key leaves
// open (gr00t's one GEMM per embodiment present). A key and count seen for the first time, or
// whose node sequence changed anyway (cuBLASLt choosing other kernels for other shapes), is
// instantiated anew. Each replay thus carries the shapes,
// pointers and scalars captured from that very micro-batch (the host-side embodiment offsets,
// the loss denominators, the gather slot a bucket landed in, a scratch buffer that grew), so no
// graph ever runs a batch it does not fit; what a replay saves is the launch of each node (host
// and device side), not the host's recording of the ops. An empty span is dropped.
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <vector>

#include "kernels/ops.hpp"

namespace emb::cuda {

class GraphCache {
 public:
  // Measures the host cost of one kernel launch on `stream` (GraphStats::launch_seconds).
  explicit GraphCache(cudaStream_t stream);
  ~GraphCache();
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Starts capturing the stream's ops (relaxed mode: allocations may happen meanwhile).
  void begin();
  // Ends the capture and launches it on the stream: as a replay of the graph of key and the
  // capture's node count when the node sequence matches, else as their new graph; nothing when
  // it captured no op.
  void end(const std::vector<int64_t>& key);
  // Ends the capture without running it (the captured micro-batch threw); never throws.
  void abandon();
  GraphStats stats() const { return stats_; }

 private:
  struct Entry {
    cudaGraphExec_t exec = nullptr;
    size_t nodes = 0;
  };
  cudaStream_t stream_;
  std::map<std::vector<int64_t>, Entry> graphs_;  // by key, then node count
  GraphStats stats_;
};

}  // namespace emb::cuda
