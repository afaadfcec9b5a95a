// data.verify (config/data_config.hpp): every value of the data files' bulk arrays checked
// before step 1, the rows split over the ranks, and a clean file's verify recorded in the
// file, so a dataset is verified once, not by every run.
//
// The record is the root attribute `verified`: "crc32 C of B bytes checked, mtime_ns T" (C the
// CRC-32 of the bulk arrays' bytes in bulk_arrays order, B their size). Writing it sets the
// file's modification time to T, and any later write moves it, so data.verify = auto trusts a
// record whose T is the file's modification time now; a copy that keeps the time (cp -p,
// rsync -a) keeps its record, another copy is verified once more.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

#include "config/data_config.hpp"

namespace emb {

// Collective over comm (MPI_COMM_NULL: this process alone, as embpack verify). The files
// `mode` asks to verify (full: all; auto: those without a current record; off: none) are
// checked, each rank its share of every bulk array's rows; a non-finite value throws on
// every rank alike (AgreedError, "FILE:DS: non-finite value at row R", the lowest failing
// rank's). Rank 0 then records the verify in each clean file; one it cannot write (read-only,
// another process holding it) only gets a warning and is verified again next time.
void verify_data_files(MPI_Comm comm, const std::vector<std::string>& files, DataVerify mode);

// Whether `path` records a verify of its current content (see above).
bool verify_recorded(const std::string& path);

}  // namespace emb
