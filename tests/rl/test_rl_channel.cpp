#define BOOST_TEST_MODULE rl_channel
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <ctime>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mpi_fixture.hpp"
#include "rl/backoff.hpp"
#include "rl/channel.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

namespace {

constexpr double kTimeout = 60;  // generous: up to 4 ranks share 2 cores

// Sizes from 0 bytes to 1 MB: mostly small, every 50th message 1 MB.
size_t size_of_message(int i) {
  if (i % 50 == 7) return size_t(1) << 20;
  if (i % 10 == 3) return 0;
  return size_t(i) * 2654435761u % 20000;
}

uint8_t payload_byte(int message, size_t at) { return uint8_t(message * 31 + at * 7 + (at >> 8)); }

std::vector<uint8_t> make_message(int i) {
  std::vector<uint8_t> msg(size_of_message(i));
  for (size_t j = 0; j < msg.size(); ++j) msg[j] = payload_byte(i, j);
  return msg;
}

bool payload_ok(int i, const std::vector<uint8_t>& msg) {
  if (msg.size() != size_of_message(i)) return false;
  for (size_t j = 0; j < msg.size(); ++j)
    if (msg[j] != payload_byte(i, j)) return false;
  return true;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_thousand_messages_arrive_in_order_with_their_payloads) {
  const int last = world_size() - 1, tag = 100, n = 1000;
  if (world_rank() == 0) {
    ChannelSender out(MPI_COMM_WORLD, last, tag, 4);
    for (int i = 0; i < n; ++i) out.send(make_message(i), kTimeout);
    out.close(kTimeout);
    BOOST_TEST(out.in_flight() == 0);
    BOOST_TEST(out.sent() == n);
  } else if (world_rank() == last) {
    ChannelReceiver in(MPI_COMM_WORLD, 0, tag);
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += payload_ok(i, in.recv(kTimeout)) ? 0 : 1;
    BOOST_TEST(bad == 0);
    BOOST_TEST(in.received() == n);
    const Deadline deadline(kTimeout);
    while (!in.closed() && !deadline.passed()) Backoff().wait();
    BOOST_TEST(in.closed());
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

BOOST_AUTO_TEST_CASE(capacity_bounds_the_messages_in_flight) {
  const int tag = 200;
  if (world_rank() == 0) {
    ChannelSender out(MPI_COMM_WORLD, 1, tag, 3);
    for (int i = 0; i < 3; ++i) BOOST_TEST(out.try_send(make_message(i)));
    std::vector<uint8_t> fourth = make_message(3);
    BOOST_TEST(!out.try_send(std::move(fourth)));
    BOOST_TEST(payload_ok(3, fourth));  // a refused message stays with the caller
    BOOST_TEST(out.in_flight() == 3);
    MPI_Barrier(MPI_COMM_WORLD);  // the receiver consumes one message
    MPI_Barrier(MPI_COMM_WORLD);
    const Deadline deadline(kTimeout);
    bool sent = false;
    while (!(sent = out.try_send(std::move(fourth))) && !deadline.passed()) Backoff().wait();
    BOOST_TEST(sent);
    BOOST_TEST(fourth.empty());
    BOOST_TEST(out.in_flight() == 3);
    BOOST_TEST(!out.try_send(make_message(4)));  // one consumed, one credit, used
    MPI_Barrier(MPI_COMM_WORLD);                  // the receiver takes the rest
    out.close(kTimeout);
  } else if (world_rank() == 1) {
    ChannelReceiver in(MPI_COMM_WORLD, 0, tag);
    MPI_Barrier(MPI_COMM_WORLD);
    BOOST_TEST(payload_ok(0, in.recv(kTimeout)));
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);  // the sender used the one credit and was refused again
    for (int i = 1; i < 4; ++i) BOOST_TEST(payload_ok(i, in.recv(kTimeout)));
    const Deadline deadline(kTimeout);
    while (!in.closed() && !deadline.passed()) Backoff().wait();
    BOOST_TEST(in.closed());
    std::string error;
    try {
      in.recv(kTimeout);  // closed: nothing more can come, so it fails at once
    } catch (const Error& e) {
      error = e.what();
    }
    BOOST_TEST(error == "channel 200 from rank 0 is closed: all 4 messages were received");
  } else {
    for (int i = 0; i < 3; ++i) MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

BOOST_AUTO_TEST_CASE(one_rank_receives_from_every_other_in_per_source_order) {
  const int tag = 300, n = 300;
  if (world_rank() == 0) {
    std::vector<ChannelReceiver> in;
    for (int r = 1; r < world_size(); ++r) in.emplace_back(MPI_COMM_WORLD, r, tag);
    std::vector<int> next(in.size(), 0);  // the sequence number each source sends next
    int bad = 0, open = int(in.size());
    const Deadline deadline(kTimeout);
    Backoff backoff;
    std::vector<uint8_t> msg;
    while (open > 0 && !deadline.passed()) {
      bool any = false;
      for (size_t s = 0; s < in.size(); ++s) {
        if (in[s].try_recv(msg)) {
          any = true;
          const int source = int(s) + 1, seq = next[s]++;
          // [source][seq as 4 bytes][seq % 97 bytes of source]
          bad += msg.size() == 5u + size_t(seq % 97) && msg[0] == source && msg[1] == uint8_t(seq) &&
                         msg[2] == uint8_t(seq >> 8) ? 0 : 1;
        } else if (next[s] == n && in[s].closed()) {
          next[s] = n + 1;  // count each source's close once
          --open;
        }
      }
      any ? backoff.reset() : backoff.wait();
    }
    BOOST_TEST(open == 0);
    BOOST_TEST(bad == 0);
    for (int count : next) BOOST_TEST(count == n + 1);
  } else {
    ChannelSender out(MPI_COMM_WORLD, 0, tag, 8);
    for (int seq = 0; seq < n; ++seq) {
      std::vector<uint8_t> msg(5u + size_t(seq % 97), uint8_t(world_rank()));
      msg[1] = uint8_t(seq), msg[2] = uint8_t(seq >> 8), msg[3] = 0, msg[4] = 0;
      out.send(std::move(msg), kTimeout);
    }
    out.close(kTimeout);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

BOOST_AUTO_TEST_CASE(timeouts_name_the_rank_and_the_channel) {
  const int tag = 400;
  std::string error;
  const auto catch_error = [&](auto&& wait) {
    error.clear();
    const auto t0 = std::chrono::steady_clock::now();
    const std::clock_t cpu0 = std::clock();
    try {
      wait();
    } catch (const Error& e) {
      error = e.what();
    }
    const double waited = seconds_since(t0), cpu = double(std::clock() - cpu0) / CLOCKS_PER_SEC;
    BOOST_TEST_MESSAGE("waited " << waited << " s on " << cpu << " s of CPU");
    BOOST_TEST(cpu < 0.25 * waited);  // the wait sleeps between polls: no spinning on a shared core
    return waited;
  };
  if (world_rank() == 1) {
    ChannelReceiver in(MPI_COMM_WORLD, 0, tag);
    const double waited = catch_error([&] { in.recv(0.2); });  // rank 0 sends nothing yet
    BOOST_TEST(error == "no message from rank 0 on channel 400 for 0.2 s");
    BOOST_TEST(waited >= 0.2);
    BOOST_TEST(waited < 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);  // rank 0's second send timed out waiting for this rank
    BOOST_TEST(payload_ok(0, in.recv(kTimeout)));
    const Deadline deadline(kTimeout);
    while (!in.closed() && !deadline.passed()) Backoff().wait();
    BOOST_TEST(in.closed());
  } else if (world_rank() == 0) {
    ChannelSender out(MPI_COMM_WORLD, 1, tag, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    out.send(make_message(0), kTimeout);
    const double waited = catch_error([&] { out.send(make_message(1), 0.2); });
    BOOST_TEST(error == "no credit from rank 1 on channel 400 for 0.2 s");
    BOOST_TEST(waited >= 0.2);
    BOOST_TEST(waited < 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    out.close(kTimeout);
  } else {
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
