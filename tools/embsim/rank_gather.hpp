// Gathers every rank's byte blob on rank 0, in rank order (other ranks get nothing back).
// The collect and eval commands serialise their per-episode records with rl/byte_message.hpp's
// ByteWriter and read them back with its ByteReader.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <vector>

#include "rl/byte_message.hpp"

namespace emb {

std::vector<std::vector<uint8_t>> gather_bytes(MPI_Comm comm, const std::vector<uint8_t>& mine);

}  // namespace emb
