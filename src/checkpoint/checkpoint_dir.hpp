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

std::string checkpoint_step_digits(int64_t step);  // "00000042": the 8 digits files of a step share
std::string checkpoint_file_name(int64_t step);    // "step_00000042.h5"

// "" when `path` is a complete checkpoint, otherwise why not (one line naming the file).
std::string checkpoint_problem(const std::string& path);

// The step_*.h5 files of dir (never "*.tmp"), complete or not, by ascending step.
std::vector<std::string> list_checkpoints(const std::string& dir);

// The run identity stored in checkpoint `path` ("" when it has none or cannot be read).
std::string checkpoint_run_id(const std::string& path);

// Deletes all but the newest `keep` checkpoints of run `run_id` in dir; other runs'
// checkpoints are never touched. Failures are warnings.
void prune_checkpoints(const std::string& dir, int keep, const std::string& run_id);

// Collective (rank 0 decides). The checkpoints a run should try to resume from, best first
// (load_first_valid falls back along the list); empty to start fresh:
//   "off" or ""  → none
//   "auto"       → the complete checkpoints of run `run_id` in dir, newest first (the one
//                  <dir>/latest names first when it is one of them); none when dir holds
//                  no complete checkpoint. emb::Error (exit 2) when dir holds complete
//                  checkpoints of other runs only: continuing one needs train.resume = PATH.
//   a path       → that path (load_checkpoint validates it; any run's); emb::Error when missing.
std::vector<std::string> resolve_resume(MPI_Comm comm, const std::string& setting, const std::string& dir,
                                        const std::string& run_id);

}  // namespace emb
