#define BOOST_TEST_MODULE comm_world
#include <boost/test/unit_test.hpp>

#include <sched.h>

#include <vector>

#include "comm/comm_fabric.hpp"
#include "comm/core_sharing.hpp"
#include "comm/host_collectives.hpp"
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

BOOST_AUTO_TEST_CASE(node_cores_are_the_union_of_the_ranks_affinities) {
  const World& w = test_world();
  cpu_set_t mine;
  BOOST_TEST_REQUIRE(sched_getaffinity(0, sizeof(mine), &mine) == 0);
  const int own = CPU_COUNT(&mine);
  int most = 0, total = 0;
  MPI_Allreduce(&own, &most, 1, MPI_INT, MPI_MAX, w.comm);
  MPI_Allreduce(&own, &total, 1, MPI_INT, MPI_SUM, w.comm);
  // At least the widest rank's cores; at most every rank's cores, none counted twice.
  BOOST_TEST(w.node_cores >= most);
  BOOST_TEST(w.node_cores <= total);
}

BOOST_AUTO_TEST_CASE(open_mpi_yields_where_mpirun_counts_more_ranks_than_cores) {
  const World& w = test_world();
  const std::optional<bool> yields = mpi_yields_when_idle();
  BOOST_TEST_REQUIRE(yields.has_value());  // Open MPI here (scripts/install_deps.sh)
  // The tests start with --oversubscribe and mpirun's slots are the machine's cores: more ranks
  // than the cores they run on is an oversubscribed node to mpirun, which then yields.
  if (w.local_size > w.node_cores) BOOST_TEST(*yields);
  BOOST_TEST(core_sharing_warning(w.hostname, w.local_size, w.node_cores, yields).empty());
}

BOOST_AUTO_TEST_CASE(ranks_sharing_cores_without_yield_are_warned_of_with_the_fix) {
  const std::string warning = core_sharing_warning("node7", 2, 1, false);
  BOOST_TEST(warning.find("2 ranks on node7 are bound to 1 core") == 0u);
  BOOST_TEST(warning.find("--host node7:1") != std::string::npos);
  BOOST_TEST(warning.find("OMPI_MCA_mpi_yield_when_idle=1") != std::string::npos);
  BOOST_TEST(core_sharing_warning("node7", 4, 2, false).find("4 ranks on node7 are bound to 2 cores") == 0u);
  BOOST_TEST(core_sharing_warning("node7", 2, 1, true).empty());          // the library yields
  BOOST_TEST(core_sharing_warning("node7", 2, 1, std::nullopt).empty());  // another library: not known
  BOOST_TEST(core_sharing_warning("node7", 2, 2, false).empty());         // a core each
  BOOST_TEST(core_sharing_warning("node7", 2, 0, false).empty());         // a mask unreadable
}

// The run report's host names: each rank's text, of any length (rank 1's empty), at rank 0.
BOOST_AUTO_TEST_CASE(gather_to_root_gives_rank_0_every_ranks_text_in_rank_order) {
  const World& w = test_world();
  const auto text_of = [](int r) { return r == 1 ? std::string() : std::string(size_t(r + 1), char('a' + r)); };
  const std::vector<std::string> texts = gather_to_root(w.comm, text_of(w.rank));
  BOOST_TEST(texts.size() == size_t(w.rank == 0 ? w.size : 0));
  for (size_t r = 0; r < texts.size(); ++r) BOOST_TEST(texts[r] == text_of(int(r)));
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
