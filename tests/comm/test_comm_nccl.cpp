// NCCL backend (built with CUDA only). Skipped unless every rank has its own GPU (CI has none);
// registered at 1, 2 and 4 ranks, so on a multi-GPU node the uneven shards (n = 7, 1000003)
// take the grouped per-rank ncclReduce/ncclBroadcast path and f64 (the Σg² of clipping)
// crosses ncclFloat64. Without GPUs these paths are not run: under the CUDA emulation the
// buffers are host memory and Comm is the MPI backend, whose same checks run at 1–4 ranks in
// test_comm_collectives.
#define BOOST_TEST_MODULE comm_nccl
#include <boost/test/unit_test.hpp>

#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "collective_checks.hpp"
#include "comm/comm_factory.hpp"
#include "comm/comm_nccl.hpp"
#include "kernels/make_ops.hpp"
#include "world_fixture.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

struct GpuPerRank {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result enough(visible_gpu_count() >= test_world().size);
    enough.message() << visible_gpu_count() << " GPU(s) visible for " << test_world().size << " rank(s)";
    return enough;
  }
};

void cuda_ok(cudaError_t rc) { BOOST_TEST_REQUIRE(rc == cudaSuccess, cudaGetErrorString(rc)); }

// This rank's GPU, made current (as the run's Ops do before its Comm is made from them).
int rank_gpu() {
  const int gpu = device_for_local_rank(test_world().local_rank, visible_gpu_count());
  cuda_ok(cudaSetDevice(gpu));
  return gpu;
}

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

BOOST_AUTO_TEST_CASE(every_collective_on_nccl, *boost::unit_test::precondition(GpuPerRank())) {
  auto comm = make_comm(test_world(), {CommBackend::nccl}, {BufferMemory::device, rank_gpu()});
  BOOST_TEST(std::string(comm->name()) == "nccl");
  check_every_collective<DeviceMemory>(*comm, kSizes);
}

// A compute stream of the test's own (non-blocking, as the Ops stream is) and pinned host
// memory, so that every copy below is asynchronous and only the waits order it.
struct Streams {
  cudaStream_t compute = nullptr, reader = nullptr;
  float* pinned = nullptr;
  explicit Streams(size_t n) {
    cuda_ok(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    cuda_ok(cudaStreamCreateWithFlags(&reader, cudaStreamNonBlocking));
    cuda_ok(cudaMallocHost(&pinned, n * sizeof(float)));
  }
  ~Streams() {
    cudaFreeHost(pinned);
    cudaStreamDestroy(compute);
    cudaStreamDestroy(reader);
  }
};

// The collective is ordered after the compute stream: the buffer is filled with ones by an
// asynchronous copy on the compute stream issued just before the all-reduce, with no host
// synchronisation in between.
struct OnesAllReduce {
  static constexpr size_t n = 1 << 24;
  int gpu = rank_gpu();
  Streams s{n};
  std::unique_ptr<Comm> comm = make_comm(test_world(), {}, {BufferMemory::device, gpu, s.compute});
  DeviceMemory mem;
  float* data = nullptr;
  CommHandle h;
  OnesAllReduce() {
    std::vector<float> zeros(n, 0.0f);
    data = mem.place(zeros);
    std::fill(s.pinned, s.pinned + n, 1.0f);
    cuda_ok(cudaMemcpyAsync(data, s.pinned, n * sizeof(float), cudaMemcpyHostToDevice, s.compute));
    h = comm->all_reduce(data, int64_t(n), DType::f32, ReduceOp::sum);
  }
  // Elements of the pinned buffer holding the all-reduced value (every rank's ones summed).
  int64_t summed_in_pinned() const { return std::count(s.pinned, s.pinned + n, float(comm->size())); }
};

// Host consumer: after wait() a copy on an unrelated stream reads the final result.
BOOST_AUTO_TEST_CASE(nccl_wait_serves_a_host_consumer, *boost::unit_test::precondition(GpuPerRank())) {
  OnesAllReduce r;
  BOOST_TEST(std::string(r.comm->name()) == "nccl");
  BOOST_TEST(r.h.wait() >= 0.0);
  BOOST_TEST(r.h.test());  // wait() returned: the collective is done
  cuda_ok(cudaMemcpyAsync(r.s.pinned, r.data, r.n * sizeof(float), cudaMemcpyDeviceToHost, r.s.reader));
  cuda_ok(cudaStreamSynchronize(r.s.reader));
  BOOST_TEST(r.summed_in_pinned() == int64_t(r.n));
  BOOST_TEST(r.h.seconds() > 0.0);
  BOOST_TEST(r.h.exposed_seconds() >= 0.0);
}

// Device consumer: wait_on_compute_stream() does not block the host, and work issued after it
// on the compute stream (here a copy to the host) sees the result.
BOOST_AUTO_TEST_CASE(nccl_wait_on_compute_stream_serves_a_device_consumer,
                     *boost::unit_test::precondition(GpuPerRank())) {
  OnesAllReduce r;
  BOOST_TEST(r.h.wait_on_compute_stream() == 0.0);  // stream-ordered: the host is not blocked
  cuda_ok(cudaMemcpyAsync(r.s.pinned, r.data, r.n * sizeof(float), cudaMemcpyDeviceToHost, r.s.compute));
  cuda_ok(cudaStreamSynchronize(r.s.compute));
  BOOST_TEST(r.h.test());
  BOOST_TEST(r.summed_in_pinned() == int64_t(r.n));
  BOOST_TEST(r.h.exposed_seconds() >= 0.0);
}
