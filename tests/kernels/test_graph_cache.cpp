// CUDA graphs (kernels/cuda/graph_cache.hpp) through Ops::begin_graph and end_graph: every
// capture runs what it captured, whether the graph of its key and node count is replayed (the
// update carries this capture's parameters), made for a key or a node count not cached yet, or
// made anew because its node sequence no longer matches; an abandoned capture runs nothing and
// leaves the stream usable; the CPU backend has no graphs.
#define BOOST_TEST_MODULE graph_cache
#include <boost/test/unit_test.hpp>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/cuda/rows.hpp"
#include "tests/kernels/cuda_device.hpp"

using namespace emb;

namespace {

constexpr size_t kBytes = 256;

// Sets the buffer's halves to `low` and `high` on the ops' stream: one memset when they are the
// same byte, else two (another node sequence).
void fill(Ops& ops, void* buffer, int low, int high) {
  auto* stream = static_cast<cudaStream_t>(ops.stream());
  auto* bytes = static_cast<unsigned char*>(buffer);
  if (low == high) {
    BOOST_TEST_REQUIRE(cudaMemsetAsync(bytes, low, kBytes, stream) == cudaSuccess);
    return;
  }
  BOOST_TEST_REQUIRE(cudaMemsetAsync(bytes, low, kBytes / 2, stream) == cudaSuccess);
  BOOST_TEST_REQUIRE(cudaMemsetAsync(bytes + kBytes / 2, high, kBytes / 2, stream) == cudaSuccess);
}

// The same node count as fill(low, high) with low != high, another sequence: the low half zeroed
// by a kernel, the high half set by a memset.
void zero_low_fill_high(Ops& ops, void* buffer, int high) {
  auto* stream = static_cast<cudaStream_t>(ops.stream());
  constexpr int64_t floats = kBytes / 2 / sizeof(float);
  cuda::zero_rows(static_cast<float*>(buffer), floats, 1, floats, stream);
  BOOST_TEST_REQUIRE(cudaMemsetAsync(static_cast<unsigned char*>(buffer) + kBytes / 2, high, kBytes / 2, stream) ==
                     cudaSuccess);
}

// Captures fill(low, high) (low < 0: zero_low_fill_high) under key and returns what the buffer
// holds after it.
std::vector<unsigned char> run_micro_batch(Ops& ops, void* buffer, const std::vector<int64_t>& key, int low, int high) {
  BOOST_TEST_REQUIRE(ops.begin_graph());
  if (low < 0)
    zero_low_fill_high(ops, buffer, high);
  else
    fill(ops, buffer, low, high);
  ops.end_graph(key);
  std::vector<unsigned char> out(kBytes);
  ops.download(out.data(), buffer, kBytes);
  return out;
}

std::vector<unsigned char> halves(int low, int high) {
  std::vector<unsigned char> v(kBytes, static_cast<unsigned char>(low));
  std::fill(v.begin() + kBytes / 2, v.end(), static_cast<unsigned char>(high));
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_micro_batch_runs_its_own_capture) {
  if (!testing::cuda_device_or_skip()) return;
  CudaOps ops(0);
  void* buffer = ops.allocate(kBytes);
  const std::vector<int64_t> a = {128, 512, 0}, b = {256, 512, 0, 1};

  BOOST_TEST(run_micro_batch(ops, buffer, a, 1, 1) == halves(1, 1));  // a's first: a new graph
  GraphStats s = ops.graph_stats();
  BOOST_TEST(s.captures == 1);
  BOOST_TEST(s.replays == 0);
  BOOST_TEST(s.graphs == 1);
  BOOST_TEST(s.nodes == 1);
  BOOST_TEST(s.launch_seconds > 0);

  BOOST_TEST(run_micro_batch(ops, buffer, a, 2, 2) == halves(2, 2));  // a replayed with this capture's value
  s = ops.graph_stats();
  BOOST_TEST(s.replays == 1);
  BOOST_TEST(s.replayed_nodes == 1);
  BOOST_TEST(s.graphs == 1);

  BOOST_TEST(run_micro_batch(ops, buffer, b, 3, 4) == halves(3, 4));  // a key not cached: falls back to a new graph
  s = ops.graph_stats();
  BOOST_TEST(s.replays == 1);
  BOOST_TEST(s.graphs == 2);
  BOOST_TEST(s.nodes == 3);

  BOOST_TEST(run_micro_batch(ops, buffer, a, 5, 6) == halves(5, 6));  // a with another node count: its own graph
  s = ops.graph_stats();
  BOOST_TEST(s.captures == 4);
  BOOST_TEST(s.replays == 1);
  BOOST_TEST(s.graphs == 3);
  BOOST_TEST(s.nodes == 5);

  BOOST_TEST(run_micro_batch(ops, buffer, a, 7, 8) == halves(7, 8));  // replayed, beside a's one-node graph
  s = ops.graph_stats();
  BOOST_TEST(s.replays == 2);
  BOOST_TEST(s.replayed_nodes == 3);

  BOOST_TEST(run_micro_batch(ops, buffer, a, -1, 9) == halves(0, 9));  // the same count, another sequence: made anew
  s = ops.graph_stats();
  BOOST_TEST(s.captures == 6);
  BOOST_TEST(s.replays == 2);
  BOOST_TEST(s.graphs == 3);
  BOOST_TEST(s.nodes == 5);

  BOOST_TEST(run_micro_batch(ops, buffer, a, -1, 10) == halves(0, 10));  // and replayed from then on
  s = ops.graph_stats();
  BOOST_TEST(s.replays == 3);
  BOOST_TEST(s.replayed_nodes == 5);
  BOOST_TEST(run_micro_batch(ops, buffer, a, 11, 11) == halves(11, 11));  // a's one-node graph is still cached
  BOOST_TEST(ops.graph_stats().replays == 4);
  ops.deallocate(buffer);
}

BOOST_AUTO_TEST_CASE(an_abandoned_capture_runs_nothing) {
  if (!testing::cuda_device_or_skip()) return;
  CudaOps ops(0);
  void* buffer = ops.allocate(kBytes);
  BOOST_TEST(run_micro_batch(ops, buffer, {1}, 1, 1) == halves(1, 1));
  BOOST_TEST_REQUIRE(ops.begin_graph());
  fill(ops, buffer, 2, 2);
  ops.abandon_graph();
  std::vector<unsigned char> out(kBytes);
  ops.download(out.data(), buffer, kBytes);  // the stream no longer captures
  BOOST_TEST(out == halves(1, 1));
  BOOST_TEST(ops.graph_stats().captures == 1);
  BOOST_TEST(run_micro_batch(ops, buffer, {1}, 3, 3) == halves(3, 3));
  BOOST_TEST(ops.graph_stats().replays == 1);
  ops.deallocate(buffer);
}

BOOST_AUTO_TEST_CASE(the_cpu_has_no_graphs) {
  CpuOps ops;
  BOOST_TEST(!ops.begin_graph());
  BOOST_TEST(ops.graph_stats().captures == 0);
}
