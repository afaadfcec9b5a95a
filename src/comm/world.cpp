#include "comm/world.hpp"

#include <cstdio>
#include <cstdlib>

#include "comm/core_sharing.hpp"
#include "comm/mpi_error.hpp"
#include "core/error.hpp"
#include "core/log.hpp"

namespace emb {

World init_world(int* argc, char*** argv) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    mpi_check(MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
  }
  EMB_CHECK(provided >= MPI_THREAD_MULTIPLE,
            "MPI: the library provides thread level ", provided,
            " but embtrain needs MPI_THREAD_MULTIPLE (communication runs on progress threads); "
            "use an MPI built with thread support");

  World w;
  w.comm = MPI_COMM_WORLD;
  MPI_Comm_rank(w.comm, &w.rank);
  MPI_Comm_size(w.comm, &w.size);

  MPI_Comm local;
  mpi_check(MPI_Comm_split_type(w.comm, MPI_COMM_TYPE_SHARED, w.rank, MPI_INFO_NULL, &local),
            "MPI_Comm_split_type");
  MPI_Comm_rank(local, &w.local_rank);
  MPI_Comm_size(local, &w.local_size);
  w.node_cores = node_cores(local);

  // Each node's local rank 0 counts once; the exclusive scan over world ranks numbers nodes
  // by their lowest rank, and the leader tells its node.
  int leader = w.local_rank == 0 ? 1 : 0;
  int nodes_before = 0;
  mpi_check(MPI_Exscan(&leader, &nodes_before, 1, MPI_INT, MPI_SUM, w.comm), "MPI_Exscan");
  if (w.rank == 0) nodes_before = 0;  // MPI leaves rank 0's exscan result undefined
  w.node = nodes_before;
  mpi_check(MPI_Bcast(&w.node, 1, MPI_INT, 0, local), "MPI_Bcast");
  mpi_check(MPI_Allreduce(&leader, &w.n_nodes, 1, MPI_INT, MPI_SUM, w.comm), "MPI_Allreduce");
  MPI_Comm_free(&local);

  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  MPI_Get_processor_name(name, &length);
  w.hostname.assign(name, length);

  set_log_rank(w.rank, w.size);
  if (w.local_rank == 0) {
    const std::string sharing = core_sharing_warning(w.hostname, w.local_size, w.node_cores, mpi_yields_when_idle());
    if (!sharing.empty()) log_warn(sharing);
  }
  return w;
}

int device_for_local_rank(int local_rank, int n_devices) {
  EMB_CHECK(n_devices > 0, "no GPU visible to rank with local rank ", local_rank,
            " (check CUDA_VISIBLE_DEVICES and the job's GPU allocation)");
  return local_rank % n_devices;
}

void finalize_world() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

int run_in_world(const char* program, int* argc, char*** argv, const std::function<int(const World&)>& run) {
  World world;
  try {
    world = init_world(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program, e.what());
    return kExitFailure;
  }
  const int code = run(world);
  finalize_world();
  return code;
}

void abort_world(int exit_code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

}  // namespace emb
