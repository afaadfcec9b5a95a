// Every rank reads the deck itself, so every rank must reach the same verdict: the same
// values, or the same one-line error with the same exit code (then all exit, none hangs).
#define BOOST_TEST_MODULE config_ranks
#include <mpi.h>

#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <memory>

#include "config/cli.hpp"
#include "config/deck.hpp"
#include "deck_test_dir.hpp"

namespace {

struct MpiFixture {
  MpiFixture() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  ~MpiFixture() { MPI_Finalize(); }
};
BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

int rank() {
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

// FNV-1a, the same on every rank (std::hash promises nothing across processes).
uint64_t fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// True when `text` is the same on every rank.
bool same_on_every_rank(const std::string& text) {
  uint64_t mine = fingerprint(text), lowest = 0, highest = 0;
  MPI_Allreduce(&mine, &lowest, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine, &highest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  return lowest == highest;
}

// True on every rank when `mine` holds on every rank.
bool on_every_rank(bool mine) {
  int local = mine ? 1 : 0, all = 0;
  MPI_Allreduce(&local, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  return all == 1;
}

// Rank 0 writes the decks; every rank learns the paths.
class SharedDecks {
 public:
  SharedDecks() {
    if (rank() == 0) dir_ = std::make_unique<emb_test::DeckTestDir>();
  }
  ~SharedDecks() {
    MPI_Barrier(MPI_COMM_WORLD);  // nobody still reads when rank 0 removes the folder
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string path = dir_ ? dir_->write(name, text) : "";
    int size = static_cast<int>(path.size());
    MPI_Bcast(&size, 1, MPI_INT, 0, MPI_COMM_WORLD);
    path.resize(size);
    MPI_Bcast(path.data(), size, MPI_CHAR, 0, MPI_COMM_WORLD);
    return path;
  }

 private:
  std::unique_ptr<emb_test::DeckTestDir> dir_;
};

// The error and exit code of `f` as one string ("" when it succeeds).
template <class F>
std::string verdict(F f) {
  try {
    f();
  } catch (const emb::Error& e) {
    return std::to_string(e.exit_code()) + " " + e.what();
  }
  return "";
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_bad_include_fails_the_same_on_every_rank) {
  SharedDecks decks;
  std::string part = decks.write("sub/part.in", "[train]\nstpes = 5\n");
  std::string main = decks.write("main.in", "[model]\npreset = tiny_gr00t\ninclude = sub/part.in\n");
  std::string got = verdict([&] { emb::load_deck(main); });
  BOOST_TEST(on_every_rank(got == "2 " + part + ":2: unknown key train.stpes (did you mean train.steps?)"),
             got);
  BOOST_TEST(same_on_every_rank(got));
}

BOOST_AUTO_TEST_CASE(a_bad_override_fails_the_same_on_every_rank) {
  SharedDecks decks;
  std::string main = decks.write("main.in", "[model]\npreset = tiny_wan\n");
  std::string got = verdict([&] { emb::load_deck(main, {"data.tokens_per_mb=4"}); });
  BOOST_TEST(on_every_rank(got == "2 --set data.tokens_per_mb=4: data.tokens_per_mb: 4 is out of "
                                  "range [16, 1000000000] tokens"),
             got);
  BOOST_TEST(same_on_every_rank(got));
}

BOOST_AUTO_TEST_CASE(a_bad_command_line_fails_the_same_on_every_rank) {
  const char* argv[] = {"embtrain", "deck.in", "--bogus"};
  std::string got = verdict([&] { emb::parse_cli(3, argv); });
  BOOST_TEST(on_every_rank(got.rfind("2 embtrain: ", 0) == 0), got);
  BOOST_TEST(same_on_every_rank(got));
}

BOOST_AUTO_TEST_CASE(a_good_deck_resolves_the_same_on_every_rank) {
  SharedDecks decks;
  std::string main = decks.write("main.in", "[model]\npreset = tiny_wan\n[train]\nsteps = 3\n");
  emb::Deck deck = emb::load_deck(main, {"train.lr=0.01"});
  BOOST_TEST(on_every_rank(deck.get_int("train.steps") == 3 && deck.get_double("train.lr") == 0.01));
  BOOST_TEST(same_on_every_rank(deck.resolved_text()));
}
