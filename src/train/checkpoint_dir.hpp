// A checkpoint directory: step_<8 digits>.h5 files (and "*.tmp" ones being written or torn)
// plus `latest`, a one-line text file naming the newest checkpoint, replaced atomically
// after the checkpoint it names was renamed into place. Resuming never trusts a name alone:
// a checkpoint counts only when its `complete` marker is there.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace emb {

constexpr const char* kLatestName = "latest";

std::string checkpoint_file_name(int64_t step);  // "step_00000042.h5"

// "" when `path` is a complete checkpoint, otherwise why not (one line naming the file).
std::string checkpoint_problem(const std::string& path);

// The step_*.h5 files of dir (never "*.tmp"), complete or not, by ascending step.
std::vector<std::string> list_checkpoints(const std::string& dir);

// Deletes all but the newest `keep` checkpoints of dir; failures are warnings.
void prune_checkpoints(const std::string& dir, int keep);

// Collective (rank 0 decides). The checkpoint a run should resume from, "" to start fresh:
//   "off" or ""  → ""
//   "auto"       → the file named by <dir>/latest when complete; otherwise (with a warning)
//                  the newest complete step_*.h5 of dir; "" when there is none
//   a path       → that path (load_checkpoint validates it); emb::Error when it is missing.
std::string resolve_resume(MPI_Comm comm, const std::string& setting, const std::string& dir);

}  // namespace emb
