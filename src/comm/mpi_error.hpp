// MPI return codes turned into emb::Error, for communicators set to MPI_ERRORS_RETURN.
#pragma once

namespace emb {

// Throws emb::Error "MPI <call> failed: <MPI's error string>" unless rc is MPI_SUCCESS.
void mpi_check(int rc, const char* call);

}  // namespace emb
