#define BOOST_TEST_MODULE comm_world
#include <boost/test/unit_test.hpp>

#include <vector>

#include "comm/comm_fabric.hpp"
#include "comm/shard_range.hpp"
#include "comm/world.hpp"
#include "core/error.hpp"
#include "world_fixture.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

BOOST_AUTO_TEST_CASE(world_fields_are_consistent) {
  const World& w = test_world();
  int size = 0, rank = -1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  BOOST_TEST(w.size == size);
  BOOST_TEST(w.rank == rank);
  BOOST_TEST(!w.hostname.empty());
  // One machine here: every rank shares the node, numbered 0.
  BOOST_TEST(w.n_nodes == 1);
  BOOST_TEST(w.node == 0);
  BOOST_TEST(w.local_size == w.size);

  // Local ranks of the node are 0..local_size-1, each exactly once.
  std::vector<int> locals(w.size);
  MPI_Allgather(&w.local_rank, 1, MPI_INT, locals.data(), 1, MPI_INT, w.comm);
  std::vector<int> seen(w.local_size, 0);
  for (int l : locals) {
    BOOST_TEST_REQUIRE((l >= 0 && l < w.local_size));
    ++seen[l];
  }
  for (int s : seen) BOOST_TEST(s == 1);
}

BOOST_AUTO_TEST_CASE(devices_round_robin_over_local_ranks) {
  BOOST_TEST(device_for_local_rank(0, 8) == 0);
  BOOST_TEST(device_for_local_rank(7, 8) == 7);
  BOOST_TEST(device_for_local_rank(9, 8) == 1);
  BOOST_CHECK_THROW(device_for_local_rank(0, 0), emb::Error);
}

BOOST_AUTO_TEST_CASE(shard_ranges_tile_the_buffer) {
  for (int64_t n : {0, 1, 7, 8, 1000003}) {
    for (int size = 1; size <= 9; ++size) {
      int64_t next = 0, smallest = n, largest = 0;
      for (int r = 0; r < size; ++r) {
        const ShardRange s = shard_range(n, r, size);
        BOOST_TEST(s.offset == next);  // contiguous, in rank order
        next += s.count;
        smallest = std::min(smallest, s.count);
        largest = std::max(largest, s.count);
        // The first n % size ranks hold the extra element.
        BOOST_TEST(s.count == n / size + (r < n % size ? 1 : 0));
      }
      BOOST_TEST(next == n);
      BOOST_TEST(largest - smallest <= 1);
    }
  }
}

BOOST_AUTO_TEST_CASE(fabric_prices_ring_algorithms) {
  Collective c;
  c.n = 1000;
  c.dtype = DType::bf16;  // 2000 bytes
  c.kind = CollectiveKind::all_reduce;
  BOOST_TEST(FabricModel::bytes_per_rank(c, 4) == 2 * 0.75 * 2000);
  c.kind = CollectiveKind::reduce_scatter;
  BOOST_TEST(FabricModel::bytes_per_rank(c, 4) == 0.75 * 2000);
  c.kind = CollectiveKind::all_gather;
  BOOST_TEST(FabricModel::bytes_per_rank(c, 4) == 0.75 * 2000);
  c.kind = CollectiveKind::broadcast;
  BOOST_TEST(FabricModel::bytes_per_rank(c, 4) == 2000);
  BOOST_TEST(FabricModel::bytes_per_rank(c, 1) == 0);

  const FabricModel m{10.0, 2.0};  // 10 us + bytes / 2 GB/s
  c.kind = CollectiveKind::all_reduce;
  BOOST_TEST(m.seconds(c, 2) == 10e-6 + 2000 / 2e9, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(!FabricModel{}.enabled());
}
