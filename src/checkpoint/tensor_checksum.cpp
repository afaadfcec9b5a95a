#include "checkpoint/tensor_checksum.hpp"

#include <zlib.h>

#include "comm/host_collectives.hpp"
#include "core/error.hpp"

namespace emb {
namespace {

// `lo` then `hi` as one piece: the lower ranks' elements first.
ChecksumPiece join(const ChecksumPiece& lo, const ChecksumPiece& hi) {
  if (lo.count == 0) return hi;
  if (hi.count == 0) return lo;
  return {lo.count + hi.count, int64_t(crc32_combine(uLong(lo.crc), uLong(hi.crc), z_off_t(hi.count * 4)))};
}

}  // namespace

ChecksumPiece checksum_piece(const float* data, int64_t count) {
  if (count == 0) return {};
  const uLong crc = crc32_z(0, reinterpret_cast<const Bytef*>(data), z_size_t(count) * 4);
  return {count, int64_t(crc)};
}

std::vector<uint32_t> combine_checksums(MPI_Comm comm, const std::vector<ChecksumPiece>& pieces) {
  // Every rank's pieces (16 bytes a tensor), joined here in rank order.
  std::vector<int64_t> mine;
  for (const ChecksumPiece& p : pieces) mine.push_back(p.count), mine.push_back(p.crc);
  const std::vector<int64_t> all = all_gather(comm, mine);
  std::vector<uint32_t> crcs(pieces.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    ChecksumPiece whole;
    for (size_t at = 2 * i; at < all.size(); at += mine.size()) whole = join(whole, {all[at], all[at + 1]});
    crcs[i] = uint32_t(whole.crc);
  }
  return crcs;
}

std::string checksum_mismatch(uint32_t stored, uint32_t read) {
  return str("checksum mismatch (crc32 ", stored, " stored, ", read, " read): the file is corrupt");
}

}  // namespace emb
