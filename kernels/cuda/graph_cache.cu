#include "kernels/cuda/graph_cache.hpp"

#include <chrono>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/rows.hpp"

namespace emb::cuda {
namespace {

// Host seconds per kernel launch: the mean over a burst of tiny launches, which the stream
// runs after the clock stopped.
double measure_launch_seconds(cudaStream_t stream) {
  constexpr int kLaunches = 64;
  float* x = nullptr;
  check_cuda(cudaMalloc(&x, sizeof(float)), "graphs: launch probe");
  zero_rows(x, 1, 1, 1, stream);  // the first launch pays one-time costs outside the clock
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kLaunches; ++i) zero_rows(x, 1, 1, 1, stream);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  check_cuda(cudaStreamSynchronize(stream), "graphs: launch probe");
  check_cuda(cudaFree(x), "graphs: launch probe");
  return seconds / kLaunches;
}

size_t node_count(cudaGraph_t graph) {
  size_t n = 0;
  check_cuda(cudaGraphGetNodes(graph, nullptr, &n), "graphs: count the nodes");
  return n;
}

}  // namespace

GraphCache::GraphCache(cudaStream_t stream) : stream_(stream) { stats_.launch_seconds = measure_launch_seconds(stream); }

GraphCache::~GraphCache() {
  for (auto& [key, entry] : graphs_) cudaGraphExecDestroy(entry.exec);
}

void GraphCache::begin() {
  check_cuda(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeRelaxed), "graphs: begin the capture");
}

void GraphCache::abandon() {
  cudaGraph_t graph = nullptr;
  if (cudaStreamEndCapture(stream_, &graph) == cudaSuccess && graph) cudaGraphDestroy(graph);
  cudaGetLastError();  // an invalidated capture's error belongs to the failure being reported
}

void GraphCache::end(const std::vector<int64_t>& key) {
  cudaGraph_t graph = nullptr;
  check_cuda(cudaStreamEndCapture(stream_, &graph), "graphs: end the capture");
  const size_t nodes = node_count(graph);
  if (nodes == 0) {  // a span between two hooks with no op in it: nothing to run
    check_cuda(cudaGraphDestroy(graph), "graphs: drop the capture");
    return;
  }
  ++stats_.captures;
  // Captures of one key with another node count (gr00t's encoders with another number of
  // embodiments present) can never update each other's graph: each count keeps its own.
  std::vector<int64_t> sequence_key = key;
  sequence_key.push_back(int64_t(nodes));
  Entry& entry = graphs_[sequence_key];
  bool replay = false;
  if (entry.exec) {
    cudaGraphExecUpdateResultInfo info{};
    replay = cudaGraphExecUpdate(entry.exec, graph, &info) == cudaSuccess;
    if (!replay) {
      cudaGetLastError();  // a refused update is not an error: the graph is instantiated anew
      check_cuda(cudaGraphExecDestroy(entry.exec), "graphs: drop the key's graph");
      stats_.nodes -= int64_t(entry.nodes);
      --stats_.graphs;
      entry = Entry{};
    }
  }
  if (!replay) {
    check_cuda(cudaGraphInstantiate(&entry.exec, graph, 0), "graphs: instantiate");
    entry.nodes = nodes;
    stats_.nodes += int64_t(nodes);
    ++stats_.graphs;
  } else {
    ++stats_.replays;
    stats_.replayed_nodes += int64_t(nodes);
  }
  check_cuda(cudaGraphDestroy(graph), "graphs: drop the capture");
  check_cuda(cudaGraphLaunch(entry.exec, stream_), "graphs: launch");
}

}  // namespace emb::cuda
