// CRC-32 (zlib's) of a whole fp32 tensor whose elements are spread over the ranks of a
// communicator, each rank holding one contiguous piece, pieces in rank order covering the
// tensor (a checkpoint's written partition, shard_range order). Each rank checksums its own
// piece; the pieces (16 bytes each) are gathered and joined in rank order with crc32_combine,
// so every rank learns the checksum of every whole tensor without moving any tensor data.
// Checkpoints store it per tensor (attribute crc32) and verify it on load.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace emb {

struct ChecksumPiece {
  int64_t count = 0;  // elements; 0 for an empty piece (the reduction's identity)
  int64_t crc = 0;    // CRC-32 of those elements' bytes
};

ChecksumPiece checksum_piece(const float* data, int64_t count);

// Collective over comm: pieces[i] is this rank's piece of tensor i; returns the CRC-32 of
// every whole tensor, the same on every rank.
std::vector<uint32_t> combine_checksums(MPI_Comm comm, const std::vector<ChecksumPiece>& pieces);

// "checksum mismatch (crc32 S stored, R read): the file is corrupt", the error's tail.
std::string checksum_mismatch(uint32_t stored, uint32_t read);

}  // namespace emb
