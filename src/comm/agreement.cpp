#include "comm/agreement.hpp"

namespace emb {
namespace {

void broadcast_from(MPI_Comm comm, int root, std::string& text) {
  int n = int(text.size());
  MPI_Bcast(&n, 1, MPI_INT, root, comm);
  text.resize(size_t(n));
  MPI_Bcast(text.data(), n, MPI_CHAR, root, comm);
}

}  // namespace

void throw_if_any_rank_failed(MPI_Comm comm, const std::string& local_error, int exit_code) {
  if (comm == MPI_COMM_NULL) {
    if (!local_error.empty()) throw AgreedError(local_error, exit_code);
    return;
  }
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  int mine = local_error.empty() ? size : rank, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == size) return;
  std::string message = local_error;
  broadcast_from(comm, first, message);
  MPI_Bcast(&exit_code, 1, MPI_INT, first, comm);
  throw AgreedError(message, exit_code);
}

void broadcast_string(MPI_Comm comm, std::string& text) { broadcast_from(comm, 0, text); }

}  // namespace emb
