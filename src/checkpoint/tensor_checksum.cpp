#include "checkpoint/tensor_checksum.hpp"

#include <zlib.h>

namespace emb {
namespace {

// inout = in ∘ inout, `in` holding the lower ranks' pieces (MPI reduces non-commutative
// operations in rank order).
void join_pieces(void* in, void* inout, int* len, MPI_Datatype*) {
  const auto* lo = static_cast<const ChecksumPiece*>(in);
  auto* hi = static_cast<ChecksumPiece*>(inout);
  for (int i = 0; i < *len; ++i) {
    if (lo[i].count == 0) continue;
    if (hi[i].count > 0)
      hi[i].crc = int64_t(crc32_combine(uLong(lo[i].crc), uLong(hi[i].crc), z_off_t(hi[i].count * 4)));
    else
      hi[i].crc = lo[i].crc;
    hi[i].count += lo[i].count;
  }
}

}  // namespace

ChecksumPiece checksum_piece(const float* data, int64_t count) {
  if (count == 0) return {};
  const uLong crc = crc32_z(0, reinterpret_cast<const Bytef*>(data), z_size_t(count) * 4);
  return {count, int64_t(crc)};
}

std::vector<uint32_t> combine_checksums(MPI_Comm comm, const std::vector<ChecksumPiece>& pieces) {
  MPI_Datatype type;
  MPI_Type_contiguous(2, MPI_INT64_T, &type);
  MPI_Type_commit(&type);
  MPI_Op op;
  MPI_Op_create(join_pieces, /*commute=*/0, &op);
  std::vector<ChecksumPiece> whole(pieces.size());
  MPI_Allreduce(pieces.data(), whole.data(), int(pieces.size()), type, op, comm);
  MPI_Op_free(&op);
  MPI_Type_free(&type);
  std::vector<uint32_t> crcs(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) crcs[i] = uint32_t(whole[i].crc);
  return crcs;
}

}  // namespace emb
