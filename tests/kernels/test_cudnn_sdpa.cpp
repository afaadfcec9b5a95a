// The cuDNN SDPA graphs the CUDA attention benchmark measures our kernels against
// (tests/kernels/cuda/cudnn_sdpa.hpp), checked without a GPU: cuDNN finalises every tensor and
// operation descriptor as it is added (dimensions of matmul operands, broadcasts, reshapes,
// attribute types), so a graph that builds here differs from one that runs only in the engine's
// choice.
// What binds the caller's buffers (the variant pack's uids) is checked against the graph too.
// Only the plans and the run need a GPU (bench_kernels compares cuDNN's outputs with ours there).
#define BOOST_TEST_MODULE cudnn_sdpa
#include <boost/test/unit_test.hpp>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "tests/kernels/cuda/cudnn_sdpa.hpp"

using namespace emb::cuda;

namespace {

std::vector<int64_t> forward_uids(bool causal) {
  std::vector<int64_t> uids = {kSdpaQ, kSdpaK, kSdpaV, kSdpaO, kSdpaStats, kSdpaScale};
  if (causal) uids.push_back(kSdpaLowest);
  return uids;
}

std::vector<int64_t> backward_uids(bool causal, bool deterministic) {
  std::vector<int64_t> uids = {kSdpaQ, kSdpaK, kSdpaV, kSdpaO, kSdpaStats, kSdpaDO, kSdpaDQ, kSdpaDK, kSdpaDV};
  if (!deterministic) uids.push_back(kSdpaDQAccum);
  uids.push_back(kSdpaScale);
  uids.push_back(kSdpaOne);
  if (causal) uids.push_back(kSdpaLowest);
  return uids;
}

}  // namespace

// Every head dim the benchmark runs, both masks, both dQ modes: the graphs build, with the
// operations cudnn_frontend's SDPA nodes lower to (forward 10, backward 18 or 19 with the dQ
// accumulator's copy; the causal mask adds 4 to each) and the bound tensors the run passes.
BOOST_AUTO_TEST_CASE(graphs_build_for_every_benchmark_shape) {
  for (int64_t D : {48, 64, 128})
    for (bool causal : {false, true})
      for (bool deterministic : {false, true}) {
        const SdpaShape shape{4, 4096, 3072 / D, D, causal, deterministic};
        BOOST_TEST_CONTEXT("hd " << D << (causal ? " causal" : " full") << (deterministic ? " deterministic" : "")) {
          CudnnGraph forward, backward;
          sdpa_graph::build_forward(forward, shape);
          sdpa_graph::build_backward(backward, shape);
          BOOST_TEST(forward.operation_count() == size_t(causal ? 14 : 10));
          BOOST_TEST(backward.operation_count() == size_t((causal ? 22 : 18) + (deterministic ? 0 : 1)));
          BOOST_TEST(forward.bound_uids() == forward_uids(causal), boost::test_tools::per_element());
          BOOST_TEST(backward.bound_uids() == backward_uids(causal, deterministic), boost::test_tools::per_element());
        }
      }
}

// The finalisation this test relies on is real: a matmul whose operands disagree in their inner
// dimension, or a reshape that changes the element count, is refused as it is added.
BOOST_AUTO_TEST_CASE(mismatched_operations_are_refused) {
  CudnnGraph g;
  const auto& a = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {1, 2, 64, 32}, {4096, 2048, 32, 1});
  const auto& b = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {1, 2, 48, 64}, {6144, 3072, 64, 1});
  const auto& c = g.virtual_tensor(CUDNN_DATA_FLOAT, {1, 2, 64, 64}, {8192, 4096, 64, 1});
  BOOST_CHECK_THROW(g.matmul(a, b, c), emb::Error);
  const auto& wider = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {1, 2, 64, 48}, {6144, 3072, 48, 1});
  BOOST_CHECK_THROW(g.reshape(a, wider), emb::Error);
  BOOST_TEST(g.operation_count() == 0u);
  const auto& b_ok = g.virtual_tensor(CUDNN_DATA_BFLOAT16, {1, 2, 32, 64}, {4096, 2048, 64, 1});
  g.matmul(a, b_ok, c);
  BOOST_TEST(g.operation_count() == 1u);
}
