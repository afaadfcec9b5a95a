// Device layer: the CPU device's memory and copies, byte accounting, and a clear error
// where CUDA is asked for but cannot be had.
#define BOOST_TEST_MODULE device
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "device/device.hpp"

using namespace emb;

BOOST_AUTO_TEST_CASE(cpu_device_allocates_copies_and_counts) {
  auto dev = make_device("cpu", 0);
  BOOST_TEST(dev->is_host());
  BOOST_TEST(dev->name() == "cpu");
  void* a = dev->alloc(1000);
  void* b = dev->alloc(24);
  BOOST_TEST(reinterpret_cast<uintptr_t>(a) % 64 == 0u);
  BOOST_TEST(dev->bytes_in_use() == 1024u);
  std::vector<float> in(250), out(250);
  for (size_t i = 0; i < in.size(); ++i) in[i] = float(i) * 0.5f;
  dev->copy_to_device(a, in.data(), 1000);
  dev->copy_to_host(out.data(), a, 1000);
  dev->synchronize();
  BOOST_TEST(out == in, boost::test_tools::per_element());
  dev->free(a);
  BOOST_TEST(dev->bytes_in_use() == 24u);
  BOOST_TEST(dev->peak_bytes() == 1024u);
  dev->free(b);
  dev->free(nullptr);
  BOOST_TEST(dev->bytes_in_use() == 0u);
  int on_stack = 0;
  BOOST_CHECK_THROW(dev->free(&on_stack), Error);  // not from this device: a bug, reported
}

BOOST_AUTO_TEST_CASE(cuda_without_a_gpu_is_a_clear_error) {
  BOOST_CHECK_THROW(make_device("tpu", 0), Error);
  if (cuda_device_count() > 0) return;  // a GPU is there: nothing to refuse
  try {
    make_device("cuda", 0);
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("run.device = cuda") != std::string::npos);
  }
}
