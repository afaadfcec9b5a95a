#define BOOST_TEST_MODULE comm_collectives
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/comm_factory.hpp"
#ifdef EMBTRAIN_WITH_NCCL
#include "comm/comm_nccl.hpp"
#endif
#include "collective_checks.hpp"
#include "core/error.hpp"
#include "world_fixture.hpp"

using namespace emb;
using Clock = std::chrono::steady_clock;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

struct Config {
  const char* label;
  CommConfig comm;
};
// The fabric wraps the threaded backend with a small model so it stays quick.
const Config kConfigs[] = {{"mpi/thread", {CommBackend::mpi, CommProgress::thread}},
                           {"mpi/none", {CommBackend::mpi, CommProgress::none}},
                           {"fabric/thread", {CommBackend::mpi, CommProgress::thread, 50.0, 100.0}}};
const int64_t kSizes[] = {0, 1, 7, 1000003};  // 1000003 is prime: uneven over 2, 3, 4 ranks

std::unique_ptr<Comm> make(const Config& c) { return make_comm(test_world(), c.comm); }

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

BOOST_AUTO_TEST_CASE(every_collective_on_every_host_backend) {
  for (const Config& cfg : kConfigs) {
    auto comm = make(cfg);
    BOOST_TEST_CONTEXT(cfg.label) { check_every_collective<HostMemory>(*comm, kSizes); }
  }
}

BOOST_AUTO_TEST_CASE(barrier_holds_ranks_until_all_arrive) {
  for (const Config& cfg : kConfigs) {
    auto comm = make(cfg);
    MPI_Barrier(test_world().comm);
    if (comm->rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const Clock::time_point t0 = Clock::now();
    comm->barrier().wait();
    if (comm->rank() != 0) BOOST_TEST(since(t0) > 0.08, cfg.label);
  }
}

// Different collectives pending together complete in issue order with correct results.
BOOST_AUTO_TEST_CASE(several_collectives_in_flight_complete_in_order) {
  const int64_t n = 100003;
  for (const Config& cfg : kConfigs) {
    BOOST_TEST_CONTEXT(cfg.label) {
      auto comm = make(cfg);
      const int rank = comm->rank(), size = comm->size();
      const ShardRange mine = shard_range(n, rank, size);
      const int k_reduces = 4;
      std::vector<std::vector<float>> reduced_bufs(k_reduces, std::vector<float>(n));
      for (int k = 0; k < k_reduces; ++k)
        for (int64_t i = 0; i < n; ++i) reduced_bufs[k][i] = contribution(i, rank) + float(k);
      std::vector<float> full(n), shard(mine.count), gathered_buf(n, -1.0f), bcast(n, -1.0f);
      for (int64_t i = 0; i < n; ++i) full[i] = contribution(i, rank);
      for (int64_t i = 0; i < mine.count; ++i) gathered_buf[mine.offset + i] = gathered(mine.offset + i);
      if (rank == 0)
        for (int64_t i = 0; i < n; ++i) bcast[i] = float(i % 7);

      std::vector<CommHandle> handles;
      for (int k = 0; k < k_reduces; ++k)
        handles.push_back(comm->all_reduce(reduced_bufs[k].data(), n, DType::f32, ReduceOp::sum));
      handles.push_back(comm->reduce_scatter(full.data(), shard.data(), n, DType::f32, ReduceOp::avg));
      handles.push_back(comm->all_gather(gathered_buf.data() + mine.offset, gathered_buf.data(), n, DType::f32));
      handles.push_back(comm->broadcast(bcast.data(), n, DType::f32, 0));

      handles.back().wait();
      for (CommHandle& h : handles) BOOST_TEST(h.test());  // everything issued earlier is done
      for (auto it = handles.rbegin(); it != handles.rend(); ++it) it->wait();

      for (int k = 0; k < k_reduces; ++k)
        BOOST_TEST(mismatches(reduced_bufs[k], 0, [&](int64_t i) {
                     return reduced<float>(i, size, ReduceOp::sum) + float(k * size);
                   }) == 0);
      BOOST_TEST(mismatches(shard, mine.offset, [&](int64_t i) { return reduced<float>(i, size, ReduceOp::avg); }) == 0);
      BOOST_TEST(mismatches(gathered_buf, 0, gathered) == 0);
      BOOST_TEST(mismatches(bcast, 0, [](int64_t i) { return float(i % 7); }) == 0);
    }
  }
}

// Op records are recycled: many rounds through one Comm keep giving correct results.
BOOST_AUTO_TEST_CASE(repeated_collectives_reuse_records) {
  auto comm = make(kConfigs[0]);
  std::vector<bf16> x(1001);
  for (int round = 0; round < 50; ++round) {
    for (size_t i = 0; i < x.size(); ++i) x[i] = to_bf16(contribution(int64_t(i), comm->rank()));
    CommHandle a = comm->all_reduce(x.data(), int64_t(x.size()), DType::bf16, ReduceOp::sum);
    CommHandle b = comm->barrier();
    b.wait();
    a.wait();
    BOOST_TEST_REQUIRE(mismatches(x, 0, [&](int64_t i) { return reduced<float>(i, comm->size(), ReduceOp::sum); }) == 0);
  }
}

BOOST_AUTO_TEST_CASE(fabric_delays_and_serialises_collectives) {
  const double alpha = 0.04;
  auto comm = make_comm(test_world(), {CommBackend::mpi, CommProgress::thread, alpha * 1e6, 0.0});
  BOOST_TEST(std::string(comm->name()) == "fabric");
  std::vector<float> a(1000, 1.0f), b(1000, 2.0f);
  MPI_Barrier(test_world().comm);
  const Clock::time_point t0 = Clock::now();
  CommHandle ha = comm->all_reduce(a.data(), 1000, DType::f32, ReduceOp::sum);
  CommHandle hb = comm->all_reduce(b.data(), 1000, DType::f32, ReduceOp::sum);
  BOOST_TEST(!ha.test());  // the fabric holds it for at least alpha
  ha.wait();
  BOOST_TEST(since(t0) >= alpha);
  hb.wait();
  BOOST_TEST(since(t0) >= 2 * alpha);  // queued behind the first on the fabric
  BOOST_TEST(hb.seconds() >= 2 * alpha * 0.99);
  BOOST_TEST(hb.exposed_seconds() > 0.0);
  BOOST_TEST(a[999] == float(comm->size()));
  BOOST_TEST(b[0] == float(2 * comm->size()));
}

namespace {
std::string factory_error(CommBackend backend, BufferMemory memory) {
  try {
    make_comm(test_world(), {backend}, {memory});
  } catch (const emb::Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

// The backend follows the memory the step's buffers live in, not the GPUs a node happens to
// have: host buffers get MPI even where a GPU is visible.
BOOST_AUTO_TEST_CASE(factory_follows_the_buffer_memory) {
  const World& w = test_world();
  BOOST_TEST(std::string(make_comm(w, {CommBackend::automatic})->name()) == "mpi");
  BOOST_TEST(factory_error(CommBackend::nccl, BufferMemory::host) ==
             "comm.backend = nccl needs the step's buffers in GPU memory, but they are in host memory "
             "(run.device = cpu, or the CUDA emulation); use comm.backend = mpi or auto");
  BOOST_TEST(factory_error(CommBackend::mpi, BufferMemory::device) ==
             "comm.backend = mpi needs the step's buffers in host memory, but they are in GPU memory "
             "(run.device = cuda); use comm.backend = nccl or auto");
#ifndef EMBTRAIN_WITH_NCCL
  BOOST_TEST(factory_error(CommBackend::automatic, BufferMemory::device).find("device buffers need NCCL") != std::string::npos);
#endif
}

// Host consumers (the only kind on host memory): both waits return only once the result is in
// the buffer. Rank 0 joins late, so the other ranks' collectives are still pending when they wait.
BOOST_AUTO_TEST_CASE(host_backend_waits_block_until_the_result_is_readable) {
  for (const Config& cfg : kConfigs) {
    auto comm = make(cfg);
    for (bool device_consumer : {false, true}) {
      std::vector<float> x(1001);
      for (size_t i = 0; i < x.size(); ++i) x[i] = contribution(int64_t(i), comm->rank());
      MPI_Barrier(test_world().comm);
      if (comm->rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      CommHandle h = comm->all_reduce(x.data(), int64_t(x.size()), DType::f32, ReduceOp::sum);
      const double blocked = device_consumer ? h.wait_on_compute_stream() : h.wait();
      BOOST_TEST_CONTEXT(cfg.label << " device_consumer=" << device_consumer) {
        BOOST_TEST(h.test());
        BOOST_TEST(mismatches(x, 0, [&](int64_t i) { return reduced<float>(i, comm->size(), ReduceOp::sum); }) == 0);
        BOOST_TEST(h.exposed_seconds() == blocked);  // host backends: the exposed time is the host's wait
      }
    }
  }
}
