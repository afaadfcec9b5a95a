#define BOOST_TEST_MODULE rl_weight_push
#include <boost/test/unit_test.hpp>

#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/error.hpp"
#include "mpi_fixture.hpp"
#include "rl/backoff.hpp"
#include "rl/weight_push.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

namespace {

constexpr double kTimeout = 60;

// Rank 0 trains; every other rank generates.
std::vector<int> generator_ranks() {
  std::vector<int> ranks;
  for (int r = 1; r < world_size(); ++r) ranks.push_back(r);
  return ranks;
}

uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Weights of `version`: distinct per version and per element, most not representable in bf16.
std::vector<float> weights_of(int64_t version, int64_t n) {
  std::vector<float> w(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) w[size_t(i)] = float(version) + 0.001f * float(i % 1000) - 0.37f * float(i % 7);
  return w;
}

// Rank 0 publishes `params` once as `version`; every generator waits for it. Returns what a
// generator received (empty on rank 0).
std::vector<float> push_once(const std::vector<float>& params, int64_t version, int tag) {
  const int64_t n = int64_t(params.size());
  std::vector<float> got;
  if (world_rank() == 0) {
    WeightPublisher publisher(MPI_COMM_WORLD, generator_ranks(), tag);
    publisher.publish(params.data(), n, version);
    publisher.flush(kTimeout);
    BOOST_TEST(publisher.pushes_started() == world_size() - 1);
    BOOST_TEST(publisher.pushes_merged() == 0);
  } else {
    WeightSubscriber subscriber(MPI_COMM_WORLD, 0, tag, n);
    int64_t received = -1;
    subscriber.wait_for(version, got, received, kTimeout);
    BOOST_TEST(received == version);
    BOOST_TEST(!subscriber.poll(got, received));  // nothing newer came
  }
  return got;
}

}  // namespace

BOOST_AUTO_TEST_CASE(generators_receive_the_weights_rounded_to_bf16) {
  const int tag = 100;
  // Ties round to even, other values to nearest; signs, zeros and infinities survive.
  const std::vector<float> params = {1.0f + 1.0f / 256,  // tie between 1 and 1 + 2^-7: even is 1
                                     1.0f + 3.0f / 256,  // tie: even is 1 + 4/256
                                     3.14159265f,
                                     -2.5f,
                                     0.0f,
                                     -0.0f,
                                     65504.0f,
                                     std::numeric_limits<float>::infinity(),
                                     1e-30f};
  const std::vector<float> expected = {1.0f, 1.015625f, 3.140625f, -2.5f, 0.0f, -0.0f, 65536.0f,
                                       std::numeric_limits<float>::infinity(), to_float(to_bf16(1e-30f))};
  const std::vector<float> got = push_once(params, 7, tag);
  if (world_rank() != 0) {
    BOOST_TEST_REQUIRE(got.size() == expected.size());
    for (size_t i = 0; i < got.size(); ++i) BOOST_TEST(bits_of(got[i]) == bits_of(expected[i]));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

// A resumed run's generators start from weights_as_pushed of the checkpoint's weights: they must
// be what a push of them delivers, bit for bit, or the resumed run samples other actions.
BOOST_AUTO_TEST_CASE(weights_as_pushed_are_the_weights_a_push_delivers) {
  const int tag = 105;
  const int64_t n = 3000;
  const std::vector<float> params = weights_of(3, n);
  const std::vector<float> got = push_once(params, 3, tag);
  if (world_rank() != 0) {
    const std::vector<float> expected = weights_as_pushed(params);
    BOOST_TEST_REQUIRE(got.size() == expected.size());
    size_t differing = 0, rounded = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      differing += bits_of(got[i]) != bits_of(expected[i]);
      rounded += bits_of(expected[i]) != bits_of(params[i]);
    }
    BOOST_TEST(differing == 0u);
    BOOST_TEST(rounded > size_t(n) / 2);  // most values are not bf16: the rounding is not a no-op
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

BOOST_AUTO_TEST_CASE(overlapping_pushes_merge_and_never_go_back_in_version) {
  const int tag = 200;
  const int64_t n = 200000, last = 50;  // 400 kB pushes: still in flight when the next is published
  if (world_rank() == 0) {
    WeightPublisher publisher(MPI_COMM_WORLD, generator_ranks(), tag);
    for (int64_t v = 1; v <= last; ++v) {
      const std::vector<float> w = weights_of(v, n);
      publisher.publish(w.data(), n, v);
    }
    publisher.flush(kTimeout);
    const int64_t generators = world_size() - 1;
    BOOST_TEST(publisher.pushes_started() + publisher.pushes_merged() == last * generators);
    BOOST_TEST(publisher.pushes_started() >= generators);  // the first and the last always go
    BOOST_TEST_MESSAGE("pushes started " << publisher.pushes_started() << ", merged " << publisher.pushes_merged());
    BOOST_CHECK_THROW(publisher.publish(weights_of(1, n).data(), n, last), Error);  // versions must increase
  } else {
    WeightSubscriber subscriber(MPI_COMM_WORLD, 0, tag, n);
    std::vector<float> got;
    std::vector<int64_t> seen;
    int64_t version = -1;
    const Deadline deadline(kTimeout);
    Backoff backoff;
    while (version < last && !deadline.passed())
      subscriber.poll(got, version) ? seen.push_back(version), backoff.reset() : backoff.wait();
    BOOST_TEST_REQUIRE(!seen.empty());
    BOOST_TEST(seen.back() == last);
    bool increasing = true;
    for (size_t i = 1; i < seen.size(); ++i) increasing = increasing && seen[i] > seen[i - 1];
    BOOST_TEST(increasing);
    const std::vector<float> w = weights_of(last, n);
    int bad = 0;
    for (int64_t i = 0; i < n; ++i) bad += got[size_t(i)] == to_float(to_bf16(w[size_t(i)])) ? 0 : 1;
    BOOST_TEST(bad == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

BOOST_AUTO_TEST_CASE(wait_for_blocks_until_the_version_and_names_it_on_timeout) {
  const int tag = 300;
  const int64_t n = 1000;
  if (world_rank() == 0) {
    WeightPublisher publisher(MPI_COMM_WORLD, generator_ranks(), tag);
    publisher.publish(weights_of(1, n).data(), n, 1);
    MPI_Barrier(MPI_COMM_WORLD);  // generators wait for version 2 meanwhile
    publisher.publish(weights_of(2, n).data(), n, 2);
    publisher.flush(kTimeout);
  } else {
    WeightSubscriber subscriber(MPI_COMM_WORLD, 0, tag, n);
    std::vector<float> got;
    int64_t version = -1;
    subscriber.wait_for(1, got, version, kTimeout);
    BOOST_TEST(version == 1);
    subscriber.wait_for(1, got, version, 0.0);  // already here: returns at once
    const auto t0 = std::chrono::steady_clock::now();
    std::string error;
    try {
      subscriber.wait_for(2, got, version, 0.2);
    } catch (const Error& e) {
      error = e.what();
    }
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    BOOST_TEST(error == "no weights of version 2 or newer from trainer rank 0 within 0.2 s (newest received: 1)");
    BOOST_TEST(waited >= 0.2);
    BOOST_TEST(waited < 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    subscriber.wait_for(2, got, version, kTimeout);
    BOOST_TEST(version == 2);
    BOOST_TEST(got[999] == to_float(to_bf16(weights_of(2, n)[999])));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
