#include "comm/messages.hpp"

namespace emb {

int tag_upper_bound(MPI_Comm comm) {
  int* upper = nullptr;
  int found = 0;
  MPI_Comm_get_attr(comm, MPI_TAG_UB, &upper, &found);
  return found ? *upper : -1;
}

bool receive_if_arrived(MPI_Comm comm, int source, int tag, std::vector<uint8_t>& msg) {
  int arrived = 0;
  MPI_Message handle;
  MPI_Status status;
  MPI_Improbe(source, tag, comm, &arrived, &handle, &status);
  if (!arrived) return false;
  int bytes = 0;
  MPI_Get_count(&status, MPI_BYTE, &bytes);
  msg.resize(size_t(bytes));
  MPI_Mrecv(msg.data(), bytes, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
  return true;
}

bool receive_if_arrived(MPI_Comm comm, int source, int tag, void* data, size_t bytes) {
  int arrived = 0;
  MPI_Message handle;
  MPI_Improbe(source, tag, comm, &arrived, &handle, MPI_STATUS_IGNORE);
  if (arrived) MPI_Mrecv(data, int(bytes), MPI_BYTE, &handle, MPI_STATUS_IGNORE);
  return arrived;
}

void send_small(MPI_Comm comm, int dest, int tag, const void* data, size_t bytes) {
  MPI_Send(data, int(bytes), MPI_BYTE, dest, tag, comm);
}

}  // namespace emb
