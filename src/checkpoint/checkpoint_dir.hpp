// A checkpoint directory: step_<8 digits>.h5 files (and "*.tmp" ones being written or torn)
// plus `latest`, a one-line text file naming the newest checkpoint, replaced atomically
// after the checkpoint it names was renamed into place. Resuming never trusts a name alone:
// a checkpoint counts only when its `complete` marker is there, and the newest such one
// wins over what `latest` names.
#pragma once
#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace emb {

constexpr const char* kLatestName = "latest";

std::string checkpoint_step_digits(int64_t step);  // "00000042": the 8 digits files of a step share
std::string checkpoint_file_name(int64_t step);    // "step_00000042.h5"

// "" when `path` is a complete checkpoint, otherwise why not (one line naming the file).
std::string checkpoint_problem(const std::string& path);

// Which tensors a reader of a checkpoint checks: a tool taking trained weights reads only the
// parameters (the AdamW moments are twice their bytes); resuming reads the moments too.
enum class CheckedTensors { parameters, parameters_and_moments };

// "" when every `checked` tensor of checkpoint `path` matches its stored crc32, otherwise which
// one does not (one line naming the file and tensor); reads those tensors whole.
std::string checkpoint_corruption(const std::string& path, CheckedTensors checked);

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
//   "auto"       → the complete checkpoints of run `run_id` in dir, newest first by step
//                  (`latest` is only a hint: a run stopped between publishing step_N and
//                  updating `latest` resumes from step_N; an info line says so); each
//                  incomplete file is skipped with one warning line naming it; none when dir
//                  holds no step_*.h5. emb::Error (exit 2) when dir holds step_*.h5 files but
//                  none is complete, or complete checkpoints of other runs only (continuing
//                  one needs train.resume = PATH). load_first_valid then verifies the
//                  checksums, falling back to the next older one with one warning line.
//   a path       → that path (load_checkpoint validates it; any run's); emb::Error when missing.
std::vector<std::string> resolve_resume(MPI_Comm comm, const std::string& setting, const std::string& dir,
                                        const std::string& run_id);

// What a tool reading trained weights takes from `path` (embtrain export, embsim eval and
// rl.init: CheckedTensors::parameters; an RL run resumed from a named checkpoint: its moments
// too), best first: a file → itself; a checkpoint folder, or a run's output folder (its
// `ckpt_dir` file names its checkpoint folder) → the checkpoints resume = auto would try, by
// the same rule: complete ones newest first by step whatever `latest` names (it is only a
// hint), each one skipped with one warning line naming the file and why, then of those the
// first `wanted` whose `checked` tensors all match their crc32 (a corrupt one: one warning line
// naming it, and the next older one). emb::Error (exit 2) in one line when none is left.
std::vector<std::string> verified_checkpoints(const std::string& path, CheckedTensors checked,
                                              size_t wanted = std::numeric_limits<size_t>::max());

}  // namespace emb
