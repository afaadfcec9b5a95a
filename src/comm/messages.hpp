// Point-to-point byte messages (RL's channels and weight pushes, src/rl): receives that never
// wait for a peer. Sends are PendingSends (pending_sends.hpp). Not collective.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace emb {

// The largest tag `comm` allows; -1 when MPI does not say.
int tag_upper_bound(MPI_Comm comm);

// Receives one message of (source, tag) into `msg` (resized to it) if one has arrived; false
// otherwise. A matched probe and receive, so two threads polling the same source and tag
// cannot take each other's message.
bool receive_if_arrived(MPI_Comm comm, int source, int tag, std::vector<uint8_t>& msg);
// The same for a message of exactly `bytes` bytes into `data`.
bool receive_if_arrived(MPI_Comm comm, int source, int tag, void* data, size_t bytes);

// A blocking send of a few bytes (MPI sends them eagerly: it returns at once).
void send_small(MPI_Comm comm, int dest, int tag, const void* data, size_t bytes);

}  // namespace emb
