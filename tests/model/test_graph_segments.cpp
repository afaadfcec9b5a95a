// A micro-batch as CUDA graphs of its spans between unit hooks (src/model/graph_segments.hpp),
// on CudaOps (emulated in CI): work run outside() finds the span before it already run and
// the stream not capturing (a download would fail during a capture); the same spans of a later
// micro-batch with the same key replay their graphs with that micro-batch's values; an empty
// span is not a graph; a hook that throws leaves nothing captured, and a span that throws runs
// none of its ops; without a backend's graphs outside() only runs the work.
#define BOOST_TEST_MODULE graph_segments
#include <boost/test/unit_test.hpp>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#include "model/graph_segments.hpp"
#include "tests/kernels/cuda_device.hpp"

using namespace emb;

namespace {

constexpr size_t kBytes = 64;

struct Buffer {
  CudaOps& ops;
  void* data = ops.allocate(kBytes);
  ~Buffer() { ops.deallocate(data); }
  void fill(int value) {
    BOOST_TEST_REQUIRE(cudaMemsetAsync(data, value, kBytes, static_cast<cudaStream_t>(ops.stream())) == cudaSuccess);
  }
  // The first byte, read back (synchronises the stream: fails while it is capturing).
  int read() {
    unsigned char first = 0;
    ops.download(&first, data, 1);
    return first;
  }
};

// One micro-batch: span 0 fills `a`, a hook reads it back, span 1 fills `b`, an empty span
// between two hooks, the last span fills `c`. Returns what the first hook read.
int micro_batch(GraphSegments& segments, Buffer& buffer, int a, int b, int c) {
  BOOST_TEST_REQUIRE(segments.start({128, 7}));
  buffer.fill(a);
  int read_in_hook = -1;
  segments.outside([&] { read_in_hook = buffer.read(); });
  buffer.fill(b);
  segments.outside([] {});
  segments.outside([] {});
  buffer.fill(c);
  segments.finish();
  return read_in_hook;
}

}  // namespace

BOOST_AUTO_TEST_CASE(hooks_run_between_spans_and_spans_replay) {
  if (!testing::cuda_device_or_skip()) return;
  CudaOps ops(0);
  Buffer buffer{ops};
  GraphSegments segments(&ops);

  BOOST_TEST(micro_batch(segments, buffer, 1, 2, 3) == 1);  // span 0 ran before the hook
  BOOST_TEST(buffer.read() == 3);
  GraphStats s = ops.graph_stats();
  BOOST_TEST(s.captures == 3);  // spans 0, 1 and 3: the empty span 2 is no graph
  BOOST_TEST(s.graphs == 3);
  BOOST_TEST(s.replays == 0);

  BOOST_TEST(micro_batch(segments, buffer, 4, 5, 6) == 4);  // the same spans, this micro-batch's values
  BOOST_TEST(buffer.read() == 6);
  s = ops.graph_stats();
  BOOST_TEST(s.captures == 6);
  BOOST_TEST(s.graphs == 3);
  BOOST_TEST(s.replays == 3);
  BOOST_TEST(s.replayed_nodes == 3);
}

BOOST_AUTO_TEST_CASE(a_throwing_hook_or_span_leaves_no_capture_open) {
  if (!testing::cuda_device_or_skip()) return;
  CudaOps ops(0);
  Buffer buffer{ops};
  GraphSegments segments(&ops);

  BOOST_TEST_REQUIRE(segments.start({1}));
  buffer.fill(1);
  BOOST_CHECK_THROW(segments.outside([] { throw std::runtime_error("a rank failed"); }), std::runtime_error);
  segments.abandon();               // nothing open: the span before the hook already ran
  BOOST_TEST(buffer.read() == 1);   // the stream is not capturing

  BOOST_TEST_REQUIRE(segments.start({1}));
  buffer.fill(2);  // a span that throws before its hook: abandoned, none of it runs
  segments.abandon();
  BOOST_TEST(buffer.read() == 1);
  BOOST_TEST(ops.graph_stats().captures == 1);

  BOOST_TEST(micro_batch(segments, buffer, 3, 4, 5) == 3);  // later micro-batches capture as before
  BOOST_TEST(buffer.read() == 5);
}

BOOST_AUTO_TEST_CASE(without_graphs_outside_only_runs_the_work) {
  CpuOps cpu;
  for (Ops* ops : {static_cast<Ops*>(nullptr), static_cast<Ops*>(&cpu)}) {
    GraphSegments segments(ops);
    BOOST_TEST(!segments.start({1}));
    int runs = 0;
    segments.outside([&] { ++runs; });
    segments.finish();
    BOOST_TEST(runs == 1);
  }
  BOOST_TEST(cpu.graph_stats().captures == 0);
}
