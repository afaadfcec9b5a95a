// The device check of the Boost tests that run CudaOps: the emulation always has a device; an
// nvcc build on a machine without a GPU reports the case as skipped and the case returns.
#pragma once
#include <boost/test/unit_test.hpp>
#include <cuda_runtime_api.h>

namespace emb::testing {

// True when a CUDA device can run the case; false, with a "skipped" message, otherwise.
inline bool cuda_device_or_skip() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) return true;
  BOOST_TEST_MESSAGE("skipped: no CUDA device");
  return false;
}

}  // namespace emb::testing
