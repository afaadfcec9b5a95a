#define BOOST_TEST_MODULE rl_groups
#include <boost/test/unit_test.hpp>

#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "mpi_fixture.hpp"
#include "rl/rl_groups.hpp"

using namespace emb;

BOOST_TEST_GLOBAL_FIXTURE(MpiFixture);

namespace {

struct Failure {
  std::string message;
  int exit_code = 0;
};

Failure failure_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return {e.what(), e.exit_code()};
  }
  return {};
}

int size_of(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  return size;
}

int rank_in(MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  return rank;
}

// The role and index this world rank must get, from the rank lists.
void check_placement(const RlGroups& g) {
  const int rank = world_rank();
  const std::vector<int>* mine = g.role == RlGroups::Role::trainer     ? &g.trainers
                                 : g.role == RlGroups::Role::generator ? &g.generators
                                                                       : &g.simulators;
  BOOST_TEST_REQUIRE(g.index < int(mine->size()));
  BOOST_TEST((*mine)[size_t(g.index)] == rank);
  BOOST_TEST(size_of(g.role_comm) == int(mine->size()));
  BOOST_TEST(rank_in(g.role_comm) == g.index);
}

}  // namespace

BOOST_AUTO_TEST_CASE(one_of_each_on_three_ranks) {
  if (world_size() != 3) return;
  const RlGroups g = make_rl_groups(MPI_COMM_WORLD, 1, 1, 0);
  BOOST_TEST(g.trainers == std::vector<int>{0});
  BOOST_TEST(g.generators == std::vector<int>{1});
  BOOST_TEST(g.simulators == std::vector<int>{2});
  const RlGroups::Role expected[] = {RlGroups::Role::trainer, RlGroups::Role::generator, RlGroups::Role::simulator};
  BOOST_TEST((g.role == expected[world_rank()]));
  BOOST_TEST(g.index == 0);
  check_placement(g);
}

BOOST_AUTO_TEST_CASE(trainers_first_then_generators_then_simulators_on_four_ranks) {
  if (world_size() != 4) return;
  {
    const RlGroups g = make_rl_groups(MPI_COMM_WORLD, 2, 1, 0);  // trainers: the one rank left
    BOOST_TEST(g.trainers == std::vector<int>{0});
    BOOST_TEST(g.generators == std::vector<int>{1});
    BOOST_TEST(g.simulators == (std::vector<int>{2, 3}));
    if (world_rank() == 3) BOOST_TEST((g.role == RlGroups::Role::simulator && g.index == 1));
    check_placement(g);
  }
  {
    const RlGroups g = make_rl_groups(MPI_COMM_WORLD, 1, 1, 2);
    BOOST_TEST(g.trainers == (std::vector<int>{0, 1}));
    BOOST_TEST(g.generators == std::vector<int>{2});
    BOOST_TEST(g.simulators == std::vector<int>{3});
    if (world_rank() == 1) BOOST_TEST((g.role == RlGroups::Role::trainer && g.index == 1));
    check_placement(g);
    // The trainers' communicator reduces over the trainers alone.
    if (g.role == RlGroups::Role::trainer) {
      int sum = 0, one = world_rank() + 1;
      MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, g.role_comm);
      BOOST_TEST(sum == 3);
    }
  }
  {
    RlGroups moved = make_rl_groups(MPI_COMM_WORLD, 1, 2, 1);
    RlGroups g = std::move(moved);  // the communicator changes owner, freed once
    BOOST_TEST((moved.role_comm == MPI_COMM_NULL));
    BOOST_TEST(g.generators == (std::vector<int>{1, 2}));
    check_placement(g);
  }
}

BOOST_AUTO_TEST_CASE(counts_that_do_not_fit_the_world_are_one_line_on_every_rank) {
  const int n = world_size();
  const Failure too_many = failure_of([&] { make_rl_groups(MPI_COMM_WORLD, 2, 1, n - 2); });
  BOOST_TEST(too_many.message == "[rl] simulators = 2, generators = 1, trainers = " + std::to_string(n - 2) +
                                     " need " + std::to_string(n + 1) + " ranks; mpirun started " + std::to_string(n));
  BOOST_TEST(too_many.exit_code == kExitInput);
  BOOST_TEST(failure_of([&] { make_rl_groups(MPI_COMM_WORLD, 0, 1, 0); }).message ==
             "[rl] simulators = 0: need at least one simulator rank");
  BOOST_TEST(failure_of([&] { make_rl_groups(MPI_COMM_WORLD, 1, 0, 0); }).message ==
             "[rl] generators = 0: need at least one generator rank");
  BOOST_TEST(failure_of([&] { make_rl_groups(MPI_COMM_WORLD, 1, 1, -1); }).message ==
             "[rl] trainers = -1: need at least one trainer rank, or 0 for the ranks left");
  BOOST_TEST(failure_of([&] { make_rl_groups(MPI_COMM_WORLD, n - 1, 1, 0); }).message ==
             "[rl] simulators = " + std::to_string(n - 1) + ", generators = 1 leave no rank for a trainer; mpirun started " +
                 std::to_string(n));
  if (n == 4)
    BOOST_TEST(failure_of([&] { make_rl_groups(MPI_COMM_WORLD, 2, 1, 2); }).message ==
               "[rl] simulators = 2, generators = 1, trainers = 2 need 5 ranks; mpirun started 4");
  MPI_Barrier(MPI_COMM_WORLD);  // no rank went on to the split alone
}

BOOST_AUTO_TEST_CASE(simulators_spread_round_robin_over_generators) {
  BOOST_TEST(generator_of_simulator(0, 3) == 0);
  BOOST_TEST(generator_of_simulator(4, 3) == 1);
  BOOST_TEST(generator_of_simulator(5, 1) == 0);
  BOOST_TEST(simulators_of_generator(0, 7, 3) == (std::vector<int>{0, 3, 6}));
  BOOST_TEST(simulators_of_generator(1, 7, 3) == (std::vector<int>{1, 4}));
  BOOST_TEST(simulators_of_generator(2, 7, 3) == (std::vector<int>{2, 5}));
  BOOST_TEST(simulators_of_generator(3, 2, 4).empty());  // more generators than simulators
  // The two are inverses: every simulator is served by exactly one generator.
  for (int sims = 1; sims <= 9; ++sims)
    for (int gens = 1; gens <= 4; ++gens) {
      std::vector<int> served(size_t(sims), 0);
      for (int g = 0; g < gens; ++g)
        for (int s : simulators_of_generator(g, sims, gens)) {
          BOOST_TEST(generator_of_simulator(s, gens) == g);
          ++served[size_t(s)];
        }
      for (int count : served) BOOST_TEST(count == 1);
    }
  BOOST_TEST(std::string(role_name(RlGroups::Role::trainer)) == "trainer");
  BOOST_TEST(std::string(role_name(RlGroups::Role::generator)) == "generator");
  BOOST_TEST(std::string(role_name(RlGroups::Role::simulator)) == "simulator");
}
