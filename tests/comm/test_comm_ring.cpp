// The ring reduce-scatter (comm/ring_reduce_scatter.hpp) against a reference every rank computes
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
#include "comm/ring_reduce_scatter.hpp"
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

// Reduces rank r's ring_contribution with `reduce(full, shard, n)` and compares this rank's shard.
template <class T, class Reduce>
void check_ring_order(int rank, int size, int64_t n, ReduceOp op, Reduce reduce) {
  const ShardRange mine = shard_range(n, rank, size);
  std::vector<T> full(static_cast<size_t>(n)), shard(static_cast<size_t>(mine.count), from_float<T>(-1));
  for (int64_t i = 0; i < n; ++i) full[size_t(i)] = ring_contribution<T>(i, rank);
  reduce(full.data(), shard.data(), n);
  BOOST_TEST(mismatches(shard, mine.offset, [&](int64_t i) { return ring_reference<T>(i, n, size, op); }) == 0);
}

template <class T>
void check_mpi_comm(Comm& comm, int64_t n, ReduceOp op) {
  check_ring_order<T>(comm.rank(), comm.size(), n, op, [&](const T* full, T* shard, int64_t count) {
    comm.reduce_scatter(full, shard, count, dtype_of<T>(), op).wait();
  });
}

template <class T>
void check_ring(RingReduceScatter& ring, int64_t n) {
  check_ring_order<T>(test_world().rank, test_world().size, n, ReduceOp::sum, [&](const T* full, T* shard, int64_t count) {
    ring.reduce_scatter_sum(full, shard, count, std::is_same_v<T, double>);
  });
}

}  // namespace

// The ring itself at every size, uneven shards and empty ones included.
BOOST_AUTO_TEST_CASE(ring_reduce_scatter_sums_in_ring_order) {
  MPI_Comm comm;
  mpi_check(MPI_Comm_dup(test_world().comm, &comm), "MPI_Comm_dup");
  {
    RingReduceScatter ring(comm, CommProgress::thread);
    for (int64_t n : kSizes) {
      BOOST_TEST_CONTEXT("n=" << n) {
        check_ring<float>(ring, n);
        check_ring<double>(ring, n);
      }
    }
  }
  MPI_Comm_free(&comm);
}

// Through MpiComm (both progress modes) at a size that takes the ring at every rank count:
// fp32, bf16 (summed in fp32, rounded once) and f64, sum and avg. Smaller buffers at 3+ ranks
// go to libnbc (kRingMinFullBytes); test_comm_collectives checks those in any order.
BOOST_AUTO_TEST_CASE(mpi_reduce_scatter_sums_in_ring_order) {
  const int64_t n = 262147;  // 1 MiB of fp32, prime: uneven over 3 and 4 ranks
  BOOST_TEST_REQUIRE(ring_reduce_scatter_pays(n * 4, test_world().size));
  for (CommProgress progress : {CommProgress::thread, CommProgress::none}) {
    auto comm = make_comm(test_world(), {CommBackend::mpi, progress});
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::avg}) {
      BOOST_TEST_CONTEXT("progress=" << int(progress) << " avg=" << (op == ReduceOp::avg)) {
        check_mpi_comm<float>(*comm, n, op);
        check_mpi_comm<bf16>(*comm, n, op);
        check_mpi_comm<double>(*comm, n, op);
      }
    }
  }
}
