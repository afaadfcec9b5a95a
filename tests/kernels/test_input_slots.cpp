// The model's input slots (kernels/input_slots.hpp) on both backends: micro-batches of growing
// size uploaded in turn, each read by an op on the compute stream while the next is staged,
// arrive intact; on CUDA the copies run on a stream other than the compute stream. Under the
// CUDA emulation every case runs under each stream order (emu/runtime.hpp): with `oldest_first`
// the compute stream runs ahead of the copies, with `newest_first` the copies run ahead of the
// compute, so a missing event wait either way reads stale input or overwrites input not read
// yet, and the data differs (cuda_test_emulation shows that the orders expose such a wait).
#define BOOST_TEST_MODULE input_slots
#include <boost/test/unit_test.hpp>
#include <cuda_runtime_api.h>

#include <cstring>
#include <memory>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cuda/cuda_input_slots.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/input_slots.hpp"
#include "tests/kernels/cuda_device.hpp"
#ifdef EMBTRAIN_CUDA_EMULATED
#include "kernels/cuda/emu/runtime.hpp"
#endif

using namespace emb;

namespace {

constexpr int kBatches = 7, kCols = 32;

float value(int batch, int64_t i) { return float(batch * 100000 + i); }

// Uploads kBatches micro-batches of 3 + 2·b rows through fresh slots, each copied by an op into
// its rows of a result buffer right after its upload; returns the result.
std::vector<float> upload_batches(Ops& ops, bool check_streams) {
  std::unique_ptr<InputSlots> slots = ops.make_input_slots();
  if (check_streams) {
    auto* cuda_slots = dynamic_cast<CudaInputSlots*>(slots.get());
    BOOST_TEST_REQUIRE(cuda_slots != nullptr);
    BOOST_TEST(static_cast<void*>(cuda_slots->copy_stream()) != ops.stream());
  }
  int64_t total_rows = 0;
  for (int b = 0; b < kBatches; ++b) total_rows += 3 + 2 * b;
  float* result = static_cast<float*>(ops.allocate(size_t(total_rows * kCols) * sizeof(float)));
  int64_t row = 0;
  for (int b = 0; b < kBatches; ++b) {
    const int64_t rows = 3 + 2 * b, n = rows * kCols;
    const InputSlots::Slot slot = slots->stage(size_t(n) * sizeof(float));
    auto* host = static_cast<float*>(slot.host);
    for (int64_t i = 0; i < n; ++i) host[i] = value(b, i);
    slots->upload(size_t(n) * sizeof(float));
    ops.copy(view(static_cast<const float*>(slot.backend), rows, kCols), view(result + row * kCols, rows, kCols));
    row += rows;
  }
  std::vector<float> out(size_t(total_rows * kCols));
  ops.download(out.data(), result, out.size() * sizeof(float));
  BOOST_TEST(slots->take_copy_wait_seconds() >= 0.0);
  ops.deallocate(result);
  return out;
}

std::vector<float> expected() {
  std::vector<float> v;
  for (int b = 0; b < kBatches; ++b)
    for (int64_t i = 0; i < (3 + 2 * b) * kCols; ++i) v.push_back(value(b, i));
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE(cpu_slots_deliver_every_batch) {
  CpuOps cpu;
  const std::vector<float> got = upload_batches(cpu, false), want = expected();
  BOOST_TEST(got == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(cuda_slots_copy_off_the_compute_stream_in_order) {
  if (!testing::cuda_device_or_skip()) return;
  CudaOps cuda;
  const std::vector<float> want = expected();
#ifdef EMBTRAIN_CUDA_EMULATED
  for (emu::StreamOrder order : {emu::StreamOrder::issue, emu::StreamOrder::oldest_first, emu::StreamOrder::newest_first}) {
    emu::set_stream_order(order);
    BOOST_TEST_CONTEXT("stream order " << int(order)) {
      const std::vector<float> got = upload_batches(cuda, true);
      BOOST_TEST(got == want, boost::test_tools::per_element());
    }
  }
  emu::set_stream_order(emu::StreamOrder::issue);
#else
  BOOST_TEST(upload_batches(cuda, true) == want, boost::test_tools::per_element());
#endif
}
