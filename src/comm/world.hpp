// The MPI world every rank starts from (DESIGN.md "Shape"): who this rank is, which node it
// runs on and which device it drives. MPI runs with MPI_THREAD_MULTIPLE because every
// Comm runs its collectives on its own progress thread while other threads call MPI too.
#pragma once
#include <mpi.h>

#include <functional>
#include <string>

namespace emb {

struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;  // among the ranks that share this node's memory
  int local_size = 1;
  int node_cores = 0;  // the cores this node's ranks may run on (comm/core_sharing.hpp; 0: unknown)
  int node = 0;  // nodes are numbered in the order of their lowest world rank
  int n_nodes = 1;
  std::string hostname;
  MPI_Comm comm = MPI_COMM_WORLD;
};

// Initialises MPI (or adopts it when a test fixture already did) and describes this rank; each
// node's local rank 0 warns where the node's ranks share cores and MPI busy-polls. Throws
// emb::Error when the MPI library cannot provide MPI_THREAD_MULTIPLE.
World init_world(int* argc, char*** argv);

// The device a rank drives: ranks of a node take the node's devices round-robin.
int device_for_local_rank(int local_rank, int n_devices);

void finalize_world();

// A program's main around its world: init_world, run(world), finalize_world; returns run's exit
// code, or kExitFailure after "<program>: error: ..." when MPI cannot start.
int run_in_world(const char* program, int* argc, char*** argv, const std::function<int(const World&)>& run);

// Ends every rank of the job within seconds (MPI_Abort): a failing rank must never leave
// the others hanging in a collective.
[[noreturn]] void abort_world(int exit_code);

}  // namespace emb
