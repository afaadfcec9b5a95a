// NCCL backend (built with CUDA only). Skipped where no GPU is visible (CI); run with one
// rank per GPU.
#define BOOST_TEST_MODULE comm_nccl
#include <boost/test/unit_test.hpp>

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "collective_checks.hpp"
#include "comm/comm_factory.hpp"
#include "comm/comm_nccl.hpp"
#include "world_fixture.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

struct GpuVisible {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result visible(visible_gpu_count() > 0);
    visible.message() << "no GPU visible";
    return visible;
  }
};

void cuda_ok(cudaError_t rc) { BOOST_TEST_REQUIRE(rc == cudaSuccess, cudaGetErrorString(rc)); }

// Device copies of host vectors; the Comm's compute stream is the legacy default stream,
// which the blocking copies back are ordered on.
struct DeviceMemory {
  std::vector<void*> allocations;
  ~DeviceMemory() {
    for (void* p : allocations) cudaFree(p);
  }
  template <class T> T* place(std::vector<T>& v) {
    void* p = nullptr;
    cuda_ok(cudaMalloc(&p, v.size() * sizeof(T) + 1));
    allocations.push_back(p);
    cuda_ok(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(p);
  }
  template <class T> void fetch(std::vector<T>& v, const T* p) {
    cuda_ok(cudaMemcpy(v.data(), p, v.size() * sizeof(T), cudaMemcpyDeviceToHost));
  }
};

const int64_t kSizes[] = {0, 1, 7, 1000003};

}  // namespace

BOOST_AUTO_TEST_CASE(every_collective_on_nccl, *boost::unit_test::precondition(GpuVisible())) {
  auto comm = make_comm(test_world(), "nccl", "thread", {});
  BOOST_TEST(std::string(comm->name()) == "nccl");
  check_every_collective<DeviceMemory>(*comm, kSizes);
}

BOOST_AUTO_TEST_CASE(nccl_handles_report_times, *boost::unit_test::precondition(GpuVisible())) {
  auto comm = make_comm(test_world(), "auto", "thread", {});
  BOOST_TEST(std::string(comm->name()) == "nccl");
  DeviceMemory mem;
  std::vector<float> x(1 << 24, 1.0f);
  float* data = mem.place(x);
  CommHandle h = comm->all_reduce(data, int64_t(x.size()), DType::f32, ReduceOp::sum);
  BOOST_TEST(h.wait() == 0.0);  // stream-ordered: the host is not blocked
  mem.fetch(x, data);
  BOOST_TEST(h.test());
  BOOST_TEST(h.seconds() > 0.0);
  BOOST_TEST(h.exposed_seconds() >= 0.0);
  BOOST_TEST(x[0] == float(comm->size()));
}
