#define BOOST_TEST_MODULE comm_rank_gather
#include <boost/test/unit_test.hpp>

#include <climits>
#include <cstdint>
#include <numeric>
#include <vector>

#include "comm/gather_rounds.hpp"
#include "comm/rank_gather.hpp"
#include "world_fixture.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

// Every element of every rank lands exactly once, at its rank-order place, in some round.
void check_rounds_cover_everything(const std::vector<int64_t>& counts, int64_t round_limit) {
  GatherRounds plan(counts, round_limit);
  std::vector<int64_t> next_source(counts.size(), 0);  // rounds walk each rank's vector in order
  int64_t placed = 0, offset = 0;
  std::vector<int64_t> offsets;
  for (int64_t c : counts) offsets.push_back(offset), offset += c;
  for (int64_t r = 0; r < plan.rounds(); ++r) {
    GatherRound round = plan.round(r);
    int64_t staged = 0;
    for (size_t i = 0; i < counts.size(); ++i) {
      BOOST_TEST(round.displs[i] == staged);
      BOOST_TEST(round.source[i] == next_source[i]);
      BOOST_TEST(round.target[i] == offsets[i] + round.source[i]);
      staged += round.counts[i], next_source[i] += round.counts[i], placed += round.counts[i];
    }
    BOOST_TEST(staged <= round_limit);
    BOOST_TEST(staged > 0);
  }
  BOOST_TEST(next_source == counts, boost::test_tools::per_element());
  BOOST_TEST(plan.total() == offset);
  BOOST_TEST(placed == offset);
}

BOOST_AUTO_TEST_CASE(rounds_cut_at_the_limit_and_cover_every_element) {
  check_rounds_cover_everything({7, 0, 3}, 3);   // one element per rank and round: 7 rounds
  check_rounds_cover_everything({7, 0, 3}, 6);   // two per rank and round
  check_rounds_cover_everything({1, 1}, 1000);   // one round
  check_rounds_cover_everything({5}, 2);
  GatherRounds plan({7, 0, 3}, 6);
  BOOST_TEST(plan.rounds() == 4);
  GatherRound last = plan.round(3);  // rank 0's element 6 only
  BOOST_TEST(last.counts == std::vector<int>({1, 0, 0}), boost::test_tools::per_element());
  BOOST_TEST(last.target == std::vector<int64_t>({6, 7, 10}), boost::test_tools::per_element());
  BOOST_TEST(GatherRounds({0, 0}, 8).rounds() == 0);
}

// Counts beyond 2^31 (26 floats × 100M steps per rank) without allocating them: every MPI
// count and displacement of every round fits in int, and the 64-bit places are exact.
BOOST_AUTO_TEST_CASE(counts_beyond_int_are_exact_in_64_bits) {
  const int64_t per_rank = 26 * int64_t(100'000'000), limit = int64_t(1) << 28;
  std::vector<int64_t> counts = {per_rank, per_rank + 1, 3, per_rank};
  GatherRounds plan(counts, limit);
  BOOST_TEST(plan.total() == 3 * per_rank + 4);
  BOOST_TEST(plan.total() > int64_t(INT_MAX));
  const int64_t share = limit / 4;
  BOOST_TEST(plan.rounds() == (per_rank + 1 + share - 1) / share);
  GatherRound last = plan.round(plan.rounds() - 1);
  BOOST_TEST(last.source[1] + last.counts[1] == per_rank + 1);
  BOOST_TEST(last.target[3] + last.counts[3] == plan.total());
  BOOST_TEST(last.target[3] > int64_t(INT_MAX));
  for (int64_t r : {int64_t(0), plan.rounds() / 2, plan.rounds() - 1}) {
    GatherRound round = plan.round(r);
    BOOST_TEST(round.displs.back() + int64_t(round.counts.back()) <= limit);
    BOOST_TEST(round.target[1] == per_rank + round.source[1]);
  }
}

// Rank r holds r·5 + 2 values r·1000 + i; a limit of 4 elements per round makes many rounds
// (one per rank and round with 3 or 4 ranks): the result equals the one-round gather.
BOOST_AUTO_TEST_CASE(gathers_in_small_rounds_equal_the_whole_gather) {
  const World& w = test_world();
  std::vector<int64_t> mine(size_t(w.rank * 5 + 2));
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = w.rank * 1000 + int64_t(i);
  std::vector<int64_t> expected;
  for (int r = 0; r < w.size; ++r)
    for (int64_t i = 0; i < r * 5 + 2; ++i) expected.push_back(r * 1000 + i);
  for (int64_t limit : {int64_t(1), int64_t(4), int64_t(1) << 20}) {
    BOOST_TEST_CONTEXT("limit " << limit) {
      std::vector<int64_t> all = gather_to_all(mine, w.comm, limit);
      BOOST_TEST(all == expected, boost::test_tools::per_element());
      std::vector<int64_t> root = gather_to_root(mine, w.comm, limit);
      BOOST_TEST(root.size() == (w.rank == 0 ? expected.size() : 0u));
      if (w.rank == 0) BOOST_TEST(root == expected, boost::test_tools::per_element());
    }
  }
}
