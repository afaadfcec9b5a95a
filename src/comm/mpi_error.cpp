#include "comm/mpi_error.hpp"

#include <mpi.h>

#include "core/error.hpp"

namespace emb {

void mpi_check(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw Error(str("MPI ", call, " failed: ", std::string(text, length)));
}

}  // namespace emb
