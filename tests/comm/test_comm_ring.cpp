// The ring reduce-scatter (comm/ring_collectives.hpp) against a reference every rank computes
// from every rank's contribution, summed in the ring's documented order: bit for bit, so the
// order is pinned (deterministic run to run). Values are not small integers, so a different
// order would change the last bits. Uneven shard sizes: n not divisible by the ranks, n < ranks.
#define BOOST_TEST_MODULE comm_ring
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "collective_checks.hpp"
#include "comm/comm_factory.hpp"
#include "comm/mpi_error.hpp"
#include "comm/ring_collectives.hpp"
#include "world_fixture.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

namespace {

const int64_t kSizes[] = {0, 1, 2, 3, 5, 1000, 100003};  // below, at and above 2-4 ranks; 100003 is prime

// Rank r's element i: spread over magnitudes so that sums round differently in another order.
template <class T>
T ring_contribution(int64_t i, int rank) {
  return from_float<T>(std::sin(0.37 * double(i) + 1.3 * double(rank)) * std::pow(10.0, double((i + rank) % 5)));
}

// Element i of the reduce-scatter as the ring sums it, in Sum (f64 for f64, fp32 otherwise):
// ((x[c+1] + x[c+2]) + ...) + x[c] for i in rank c's shard; avg divides in Sum.
template <class T>
double ring_reference(int64_t i, int64_t n, int size, ReduceOp op) {
  using Sum = std::conditional_t<std::is_same_v<T, double>, double, float>;
  int owner = 0;
  while (i >= shard_range(n, owner, size).offset + shard_range(n, owner, size).count) ++owner;
  const auto x = [&](int rank) { return Sum(as_float(ring_contribution<T>(i, rank % size))); };
  Sum sum = x(owner + 1);
  for (int k = 2; k <= size; ++k) sum = sum + x(owner + k);
  return op == ReduceOp::avg ? sum / Sum(size) : sum;
}

template <class T>
void check_ring_reduce_scatter(Comm& comm, int64_t n, ReduceOp op) {
  const ShardRange mine = shard_range(n, comm.rank(), comm.size());
  std::vector<T> full(static_cast<size_t>(n)), shard(static_cast<size_t>(mine.count), from_float<T>(-1));
  for (int64_t i = 0; i < n; ++i) full[size_t(i)] = ring_contribution<T>(i, comm.rank());
  comm.reduce_scatter(full.data(), shard.data(), n, dtype_of<T>(), op).wait();
  BOOST_TEST(mismatches(shard, mine.offset, [&](int64_t i) { return ring_reference<T>(i, n, comm.size(), op); }) == 0);
}

}  // namespace

// Through MpiComm (both progress modes): fp32, bf16 (summed in fp32, rounded once) and f64, sum and avg.
BOOST_AUTO_TEST_CASE(mpi_reduce_scatter_sums_in_ring_order) {
  for (CommProgress progress : {CommProgress::thread, CommProgress::none}) {
    auto comm = make_comm(test_world(), {CommBackend::mpi, progress});
    for (int64_t n : kSizes)
      for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg})
        BOOST_TEST_CONTEXT("progress=" << int(progress) << " n=" << n << " avg=" << (op == ReduceOp::avg)) {
          check_ring_reduce_scatter<float>(*comm, n, op);
          check_ring_reduce_scatter<bf16>(*comm, n, op);
          check_ring_reduce_scatter<double>(*comm, n, op);
        }
  }
}

// The ring all-gather on its own communicator: every rank's piece lands in every rank's buffer.
BOOST_AUTO_TEST_CASE(ring_all_gather_fills_every_piece) {
  MPI_Comm comm;
  mpi_check(MPI_Comm_dup(test_world().comm, &comm), "MPI_Comm_dup");
  {
    RingCollectives ring(comm, CommProgress::thread);
    const int rank = test_world().rank, size = test_world().size;
    for (int64_t n : kSizes) {
      const ShardRange mine = shard_range(n, rank, size);
      std::vector<float> full(static_cast<size_t>(n), -1.0f);
      for (int64_t i = 0; i < mine.count; ++i) full[size_t(mine.offset + i)] = gathered(mine.offset + i);
      ring.all_gather(full.data(), n, MPI_FLOAT, int(sizeof(float)));
      BOOST_TEST(mismatches(full, 0, gathered) == 0, "n=" << n);
    }
  }
  MPI_Comm_free(&comm);
}
