#include "data/data_verify.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <zlib.h>

#include <cstdio>
#include <ctime>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "core/log.hpp"
#include "data/h5_file.hpp"
#include "data/packed_verify.hpp"

namespace emb {
namespace {

constexpr const char* kVerifiedAttr = "verified";

int64_t modification_ns(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return -1;
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// This rank's share of every bulk array: rows [rows·part/parts, rows·(part+1)/parts). Returns
// per array the bytes checked and their CRC-32, for join_in_rank_order.
std::vector<int64_t> check_share(const H5File& f, int part, int parts) {
  std::vector<int64_t> pieces;
  for (const BulkArray& a : bulk_arrays(f)) {
    const int64_t begin = a.rows * part / parts, end = a.rows * (part + 1) / parts;
    const int64_t bytes = (end - begin) * a.row_elems * int64_t(elem_size(a.elem));
    pieces.push_back(bytes);
    pieces.push_back(bytes > 0 ? int64_t(check_bulk_rows(f, a, begin, end, uint32_t(crc32_z(0, nullptr, 0)))) : 0);
  }
  return pieces;
}

// The CRC-32 of every array's bytes one after the other, from every rank's pieces (bytes,
// crc per array) in rank order; `bytes` gets their total.
uint32_t join_in_rank_order(const std::vector<int64_t>& all, size_t per_rank, int64_t& bytes) {
  uLong crc = crc32_z(0, nullptr, 0);
  bytes = 0;
  for (size_t a = 0; a < per_rank; a += 2)
    for (size_t at = a; at < all.size(); at += per_rank) {
      if (all[at] == 0) continue;
      crc = crc32_combine(crc, uLong(all[at + 1]), z_off_t(all[at]));
      bytes += all[at];
    }
  return uint32_t(crc);
}

// Writes the record into `path` and sets its modification time to the one recorded.
void record_verify(const std::string& path, uint32_t crc, int64_t bytes) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const int64_t ns = int64_t(now.tv_sec) * 1000000000 + now.tv_nsec;
  char hex[16];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  try {
    H5File f = H5File::append(path);
    f.set_attr("/", kVerifiedAttr, str("crc32 ", hex, " of ", bytes, " bytes checked, mtime_ns ", ns));
  } catch (const Error& e) {
    log_warn(e.what(), ": the verify is not recorded (the file is verified again next time)");
    return;
  }
  const timespec times[2] = {{0, UTIME_OMIT}, now};
  if (::utimensat(AT_FDCWD, path.c_str(), times, 0) != 0)
    log_warn(clipped_path(path), ": cannot set the modification time the verify records");
}

}  // namespace

bool verify_recorded(const std::string& path) {
  const H5File f = H5File::open(path);
  if (!f.has_attr("/", kVerifiedAttr)) return false;
  const std::string text = f.attr_string("/", kVerifiedAttr);
  const size_t at = text.rfind("mtime_ns ");
  return at != std::string::npos && text.substr(at + 9) == std::to_string(modification_ns(path));
}

void verify_data_files(MPI_Comm comm, const std::vector<std::string>& files, DataVerify mode) {
  if (mode == DataVerify::off) return;
  const bool serial = comm == MPI_COMM_NULL;
  const int rank = serial ? 0 : rank_in(comm), ranks = serial ? 1 : ranks_in(comm);
  for (const std::string& path : files) {
    int64_t recorded = 0;
    const auto read_record = [&] {
      if (mode == DataVerify::automatic && rank == 0) recorded = verify_recorded(path) ? 1 : 0;
    };
    if (serial) {
      read_record();
    } else {
      run_agreed(comm, read_record);
      recorded = max_over_ranks(comm, recorded);
    }
    if (recorded != 0) continue;
    if (!serial && rank == 0) log_info(clipped_path(path), ": verifying every value (data.verify) over ", ranks, " ranks");
    std::vector<int64_t> pieces;
    std::string error;
    try {
      pieces = check_share(H5File::open(path), rank, ranks);
    } catch (const Error& e) {
      if (serial) throw;
      error = e.what();
    }
    if (!serial) throw_if_any_rank_failed(comm, error);
    const size_t per_rank = pieces.size();
    const std::vector<int64_t> all = serial ? pieces : all_gather(comm, pieces);
    int64_t bytes = 0;
    const uint32_t crc = join_in_rank_order(all, per_rank, bytes);
    if (rank == 0) record_verify(path, crc, bytes);
  }
  if (!serial) barrier(comm);  // the records are written before any rank opens the files again
}

}  // namespace emb
