// The node progress board the watchdog reads (app/progress_board.hpp): a rank waiting in a
// collective names the node peers that have not reached it, or that stopped beating, from
// their entries alone.
#define BOOST_TEST_MODULE train_progress_board
#include <boost/test/unit_test.hpp>

#include <unistd.h>

#include <chrono>
#include <regex>
#include <thread>

#include "comm/world_fixture.hpp"
#include "app/progress_board.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(WorldFixture);

// Rank 0 posts one more wait than the others: it names every other rank as not there yet,
// with its step and phase; a rank level with the rest names nobody.
BOOST_AUTO_TEST_CASE(a_rank_behind_is_named_with_its_phase) {
  const World& world = test_world();
  ProgressBoard board(world.comm);
  board.post_wait(7, "data_wait");
  board.post_wait(7, "step");
  if (world.rank == 0) board.post_wait(7, "step_end");
  board.heartbeat();  // alive, however long the start took
  MPI_Barrier(world.comm);
  const std::string text = board.missing_peers();
  if (world.rank == 0) {
    for (int r = 1; r < world.size; ++r) {
      const std::regex expected(
          "rank " + std::to_string(r) + " \\(has not reached this wait: in phase step of step 7 for [0-9.]+ s\\)");
      BOOST_TEST(std::regex_search(text, expected), text);
    }
  } else {
    BOOST_TEST(text == "no rank is behind or frozen (a collective or file system hangs)");
  }
  MPI_Barrier(world.comm);
}

// A rank whose heartbeat stops for longer than 2 s is named frozen by the others.
BOOST_AUTO_TEST_CASE(a_silent_rank_is_named_frozen) {
  const World& world = test_world();
  ProgressBoard board(world.comm);
  board.post_wait(3, "ckpt");
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < until) {
    if (world.rank != world.size - 1) board.heartbeat();  // the last rank keeps silent
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string text = board.missing_peers();
  if (world.rank != world.size - 1) {
    const std::regex expected("^rank " + std::to_string(world.size - 1) +
                              " \\(frozen: no heartbeat for [2-9]\\.[0-9] s; last in phase ckpt of step 3\\)$");
    BOOST_TEST(std::regex_search(text, expected), text);
  }
  MPI_Barrier(world.comm);
}

// A heartbeat older than the limit is reported by the lowest live rank of the node only (one
// line per node), naming rank and host; a rank that left the board is never reported.
BOOST_AUTO_TEST_CASE(a_stale_peer_is_reported_once_and_a_left_one_never) {
  const World& world = test_world();
  ProgressBoard board(world.comm);
  board.post_wait(5, "step");
  const int silent_rank = world.size - 1;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
  while (std::chrono::steady_clock::now() < until) {
    if (world.rank != silent_rank) board.heartbeat();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const std::string report = board.frozen_peer(1.0), within_limit = board.frozen_peer(60.0);
  BOOST_TEST(within_limit == "");
  if (world.rank == 0) {
    char host[64] = {};
    gethostname(host, sizeof host - 1);
    const std::regex expected("^rank " + std::to_string(silent_rank) + " on host " + host +
                              " is frozen: no heartbeat for [1-9]\\.[0-9] s \\(last in phase step of step 5\\)$");
    BOOST_TEST(std::regex_search(report, expected), report);
  } else if (world.rank != silent_rank) {
    BOOST_TEST(report == "", "only rank 0 reports: " << report);
  }
  MPI_Barrier(world.comm);
  if (world.rank == silent_rank) board.leave();
  MPI_Barrier(world.comm);
  if (world.rank != silent_rank) BOOST_TEST(board.frozen_peer(1.0) == "");
  MPI_Barrier(world.comm);
}
