// Boost.Test global fixture for the rl suites: MPI for the whole run, and the world's rank
// and size. src/rl sits below src/comm, so its tests start MPI themselves.
#pragma once
#include <mpi.h>

#include <boost/test/unit_test.hpp>

namespace emb {

struct MpiFixture {
  MpiFixture() {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
  }
  ~MpiFixture() { MPI_Finalize(); }
};

inline int world_rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

inline int world_size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace emb
