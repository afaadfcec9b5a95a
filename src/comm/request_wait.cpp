#include "comm/request_wait.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include "comm/mpi_error.hpp"

namespace emb {

void wait_requests(MPI_Request* requests, int count, CommProgress progress, const char* what) {
  if (progress == CommProgress::none) {
    mpi_check(MPI_Waitall(count, requests, MPI_STATUSES_IGNORE), what);
    return;
  }
  // A few immediate polls keep small collectives fast; the pause then grows to 100 µs.
  int done = 0;
  for (int polls = 0;; ++polls) {
    mpi_check(MPI_Testall(count, requests, &done, MPI_STATUSES_IGNORE), what);
    if (done) return;
    if (polls >= 16) std::this_thread::sleep_for(std::chrono::microseconds(std::min(100, 1 << std::min(polls - 16, 7))));
  }
}

}  // namespace emb
