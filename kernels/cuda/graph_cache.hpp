// CUDA graphs of the steady-state micro-batch (README "On GPUs"). The ops of a micro-batch are
// captured from the compute stream every time, and the capture then updates the executable
// graph kept under the micro-batch's key (cudaGraphExecUpdate: the same node sequence with
// this capture's parameters) and is launched: a replay. The key holds what decides the node
// sequence (the model's token-count bucket, samples and embodiments present: one GEMM per
// embodiment with rows); a key seen for the first time, or whose node sequence changed anyway
// (cuBLASLt choosing another number of kernels for other shapes), is instantiated anew. Each replay thus carries the shapes,
// pointers and scalars captured from that very micro-batch (the host-side embodiment offsets,
// the loss denominators, a scratch buffer that grew), so no graph ever runs a batch it does not
// fit; what a replay saves is the launch of each node (host and device side), not the host's
// recording of the ops.
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
  // Ends the capture and launches it on the stream: as a replay of key's graph when the node
  // sequence matches, else as the key's new graph.
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
  std::map<std::vector<int64_t>, Entry> graphs_;
  GraphStats stats_;
};

}  // namespace emb::cuda
