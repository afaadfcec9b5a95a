#include "rl/rl_groups.hpp"

#include <utility>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"

namespace emb {
namespace {

// The counts come from the deck, so a mismatch is the user's to fix.
void check_counts(int world_size, int simulators, int generators, int trainers) {
  const auto fail = [](const std::string& message) { throw Error("[rl] " + message, kExitInput); };
  if (simulators < 1) fail(str("simulators = ", simulators, ": need at least one simulator rank"));
  if (generators < 1) fail(str("generators = ", generators, ": need at least one generator rank"));
  if (trainers < 0) fail(str("trainers = ", trainers, ": need at least one trainer rank, or 0 for the ranks left"));
  if (trainers == 0 && simulators + generators >= world_size)
    fail(str("simulators = ", simulators, ", generators = ", generators, " leave no rank for a trainer; mpirun started ",
             world_size));
  if (trainers > 0 && simulators + generators + trainers != world_size)
    fail(str("simulators = ", simulators, ", generators = ", generators, ", trainers = ", trainers, " need ",
             simulators + generators + trainers, " ranks; mpirun started ", world_size));
}

std::vector<int> ranks_from(int first, int count) {
  std::vector<int> ranks(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) ranks[size_t(i)] = first + i;
  return ranks;
}

}  // namespace

RlGroups::RlGroups(RlGroups&& other) noexcept
    : role(other.role),
      index(other.index),
      world_rank(other.world_rank),
      trainers(std::move(other.trainers)),
      generators(std::move(other.generators)),
      simulators(std::move(other.simulators)),
      role_comm(std::exchange(other.role_comm, MPI_COMM_NULL)) {}

RlGroups& RlGroups::operator=(RlGroups&& other) noexcept {
  if (this == &other) return *this;
  free_communicator(role_comm);
  role = other.role;
  index = other.index;
  world_rank = other.world_rank;
  trainers = std::move(other.trainers);
  generators = std::move(other.generators);
  simulators = std::move(other.simulators);
  role_comm = std::exchange(other.role_comm, MPI_COMM_NULL);
  return *this;
}

RlGroups::~RlGroups() {
  free_communicator(role_comm);
}

const char* role_name(RlGroups::Role role) {
  switch (role) {
    case RlGroups::Role::trainer: return "trainer";
    case RlGroups::Role::generator: return "generator";
    case RlGroups::Role::simulator: return "simulator";
  }
  return "unknown";
}

RlGroups make_rl_groups(MPI_Comm world, int simulators, int generators, int trainers) {
  const int rank = rank_in(world), size = ranks_in(world);
  check_counts(size, simulators, generators, trainers);
  if (trainers == 0) trainers = size - simulators - generators;

  RlGroups groups;
  groups.world_rank = rank;
  groups.trainers = ranks_from(0, trainers);
  groups.generators = ranks_from(trainers, generators);
  groups.simulators = ranks_from(trainers + generators, simulators);
  if (rank < trainers) {
    groups.role = RlGroups::Role::trainer;
    groups.index = rank;
  } else if (rank < trainers + generators) {
    groups.role = RlGroups::Role::generator;
    groups.index = rank - trainers;
  } else {
    groups.role = RlGroups::Role::simulator;
    groups.index = rank - trainers - generators;
  }
  groups.role_comm = split(world, int(groups.role), groups.index);
  return groups;
}

int generator_of_simulator(int sim_index, int n_generators) {
  EMB_ASSERT(sim_index >= 0 && n_generators >= 1);
  return sim_index % n_generators;
}

std::vector<int> simulators_of_generator(int gen_index, int n_sims, int n_generators) {
  EMB_ASSERT(gen_index >= 0 && gen_index < n_generators && n_sims >= 0);
  std::vector<int> sims;
  for (int s = gen_index; s < n_sims; s += n_generators) sims.push_back(s);
  return sims;
}

}  // namespace emb
