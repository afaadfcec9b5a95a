#include "core/error.hpp"
#include "device/device.hpp"

namespace emb {

std::unique_ptr<Device> make_cpu_device();
#ifdef EMBTRAIN_WITH_CUDA
std::unique_ptr<Device> make_cuda_device(int local_rank);
#else
int cuda_device_count() { return 0; }
#endif

std::unique_ptr<Device> make_device(const std::string& kind, int local_rank) {
  if (kind == "cpu") return make_cpu_device();
#ifdef EMBTRAIN_WITH_CUDA
  if (kind == "cuda") return make_cuda_device(local_rank);
#else
  (void)local_rank;
  EMB_CHECK(kind != "cuda", "run.device = cuda but this embtrain was built without CUDA (EMBTRAIN_CUDA=OFF or no nvcc)");
#endif
  throw Error(str("unknown device kind '", kind, "' (expected cpu or cuda)"));
}

}  // namespace emb
