#define BOOST_TEST_MODULE data_sampler
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <set>

#include "data/sampler.hpp"

using namespace emb;

namespace {

// Chunks of uneven size, as files with short tails give.
std::vector<int64_t> chunk_sizes() { return {16, 16, 5, 16, 16, 16, 3, 16, 7, 16, 16, 1}; }

// The global order as N simulated ranks see it over `steps` steps, merged by position.
std::vector<int64_t> run_ranks(Sampler& s, SamplerState st, int64_t gb, int ranks, int64_t steps, SamplerState* end = nullptr) {
  std::vector<int64_t> order;
  for (int64_t k = 0; k < steps; ++k) {
    std::vector<std::vector<Position>> per_rank;
    for (int r = 0; r < ranks; ++r) per_rank.push_back(s.step(st, gb, r, ranks));
    for (int64_t j = 0; j < gb; ++j) order.push_back(per_rank[size_t(j % ranks)][size_t(j / ranks)].sample);
    st = s.advance(st, gb);
  }
  if (end) *end = st;
  return order;
}

}  // namespace

BOOST_AUTO_TEST_CASE(order_depends_on_seed_and_epoch_only) {
  Sampler a(chunk_sizes(), 3, 7), b(chunk_sizes(), 3, 7), c(chunk_sizes(), 3, 8);
  std::vector<int64_t> a0, b0, c0, a1;
  for (int64_t p = 0; p < a.size(); ++p) {
    a0.push_back(a.at(0, p).sample), b0.push_back(b.at(0, p).sample);
    c0.push_back(c.at(0, p).sample), a1.push_back(a.at(1, p).sample);
  }
  BOOST_TEST(a0 == b0);
  BOOST_TEST(a0 != c0);
  BOOST_TEST(a0 != a1);
  std::vector<int64_t> sorted = a0;
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < a.size(); ++i) BOOST_TEST(sorted[i] == i);  // a permutation
}

BOOST_AUTO_TEST_CASE(buffers_hold_whole_chunks) {
  Sampler s(chunk_sizes(), 3, 1);
  for (int64_t p = 0; p < s.size(); ++p) {
    int64_t b = s.buffer_of(0, p), sample = s.at(0, p).sample;
    bool inside = false;
    for (int64_t c : s.buffer_chunks(0, b)) inside |= sample >= s.chunk_begin(c) && sample < s.chunk_begin(c) + s.chunk_size(c);
    BOOST_TEST(inside);
  }
}

BOOST_AUTO_TEST_CASE(ranks_are_disjoint_and_cover_an_epoch) {
  for (int n = 1; n <= 4; ++n) {
    Sampler s(chunk_sizes(), 2, 3);
    int64_t gb = 12, steps = s.size() / gb;
    std::set<int64_t> seen;
    SamplerState st;
    for (int64_t k = 0; k < steps; ++k) {
      for (int r = 0; r < n; ++r)
        for (const Position& p : s.step(st, gb, r, n)) {
          BOOST_TEST(((p.pos - st.cursor + s.size()) % s.size()) % n == r);
          BOOST_TEST(seen.insert(p.sample).second);  // never twice within the epoch
        }
      st = s.advance(st, gb);
    }
    BOOST_TEST(int64_t(seen.size()) == steps * gb);
    BOOST_TEST(int64_t(seen.size()) > s.size() - gb);
  }
}

BOOST_AUTO_TEST_CASE(order_identical_for_any_rank_count) {
  Sampler s(chunk_sizes(), 2, 5);
  std::vector<int64_t> one = run_ranks(s, {}, 12, 1, 20);
  for (int n = 2; n <= 4; ++n) BOOST_TEST(run_ranks(s, {}, 12, n, 20) == one);
}

BOOST_AUTO_TEST_CASE(restore_on_another_rank_count_continues_exactly) {
  Sampler s(chunk_sizes(), 2, 9);
  std::vector<int64_t> whole = run_ranks(s, {}, 12, 1, 30);  // crosses epoch boundaries
  for (auto [from, to] : {std::pair{2, 3}, std::pair{4, 1}, std::pair{3, 2}}) {
    SamplerState mid;
    std::vector<int64_t> first = run_ranks(s, {}, 12, from, 13, &mid);
    Sampler fresh(chunk_sizes(), 2, 9);  // a new process after restart
    std::vector<int64_t> rest = run_ranks(fresh, mid, 12, to, 17);
    first.insert(first.end(), rest.begin(), rest.end());
    BOOST_TEST(first == whole);
  }
}

BOOST_AUTO_TEST_CASE(permutation_is_a_bijection) {
  for (int64_t n : {1, 2, 17, 1000}) {
    std::vector<int64_t> p = philox_permutation(n, 42, 0, 0);
    std::sort(p.begin(), p.end());
    for (int64_t i = 0; i < n; ++i) BOOST_TEST(p[i] == i);
  }
}
