// Which ranks simulate, generate and train (CLOSED_LOOP.md "Asynchrony"). World ranks are
// handed out in role order: trainers first, so world rank 0 is trainer 0, the rank that logs
// and writes checkpoints; then generators, then simulators. Simulator i is served by
// generator i % G, which spreads simulators evenly over generators.
#pragma once
#include <mpi.h>

#include <vector>

namespace emb {

struct RlGroups {
  enum class Role { trainer, generator, simulator };

  Role role = Role::trainer;
  int index = 0;  // this rank's place within its role
  int world_rank = 0;
  std::vector<int> trainers, generators, simulators;  // world ranks of each role
  // This rank's role's ranks (MPI_Comm_split of the world, ordered by index); the
  // trainers' data-parallel communicator. Freed by the destructor, so an RlGroups must be
  // destroyed before MPI_Finalize.
  MPI_Comm role_comm = MPI_COMM_NULL;

  RlGroups() = default;
  RlGroups(RlGroups&& other) noexcept;
  RlGroups& operator=(RlGroups&& other) noexcept;
  RlGroups(const RlGroups&) = delete;  // one owner of role_comm
  RlGroups& operator=(const RlGroups&) = delete;
  ~RlGroups();
};

const char* role_name(RlGroups::Role role);

// Collective over `world`. trainers = 0 means every rank the other roles leave. Throws the
// same one-line emb::Error on every rank when the counts do not fit the world.
RlGroups make_rl_groups(MPI_Comm world, int simulators, int generators, int trainers);

// The generator serving simulator `sim_index`, and the simulators generator `gen_index` serves.
int generator_of_simulator(int sim_index, int n_generators);
std::vector<int> simulators_of_generator(int gen_index, int n_sims, int n_generators);

}  // namespace emb
