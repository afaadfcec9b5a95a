// Checkpoints (DESIGN.md "Checkpoints"). Parameters and AdamW moments are stored unsharded
// by name, so a checkpoint restores on any rank count and shard mode; with them everything
// a run needs to continue exactly: step, sampler state, seed (the RNG is counter-based, so
// seed and step are its whole state) and the resolved deck.
//
// <dir>/step_<8 digits>.h5, format "embtrain-ckpt/1" (checkpoint_file.hpp):
//   /params/<name>, /exp_avg/<name>, /exp_avg_sq/<name>   fp32, 1-D of numel elements, with
//                                                         attribute shape (int64[]), MODEL.md names
//                                                         and crc32 (uint32, of the whole tensor);
//                                                         a frozen tensor (train/freezing.hpp) has
//                                                         no moments: /params only
//   root attributes: format, step, sampler_epoch, sampler_cursor, seed, preset, world_size,
//                    run_id (run_identity.hpp), deck (variable-length string), for gr00t
//                    vl_features, vl_backbone_dir, vl_backbone_digest (vl_features_record.hpp),
//                    normalization (JSON of the statistics the run normalised its states and
//                    actions with, data/normalization_statistics.hpp; absent: raw values or a
//                    checkpoint from before data.normalize) and complete = 1, written last
//                    after the data were synced to storage.
// Loading verifies every tensor's crc32 (tensor_checksum.hpp): a flipped byte is an error.
// Publishing: the file is fsync'ed, renamed into place and its directory fsync'ed.
// Each rank writes its share of every tensor as one collective hyperslab and reads back the
// elements its own layout owns, which is what makes N → M resharding automatic.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "comm/agreement.hpp"
#include "data/sampler.hpp"
#include "model/param_registry.hpp"
#include "checkpoint/checkpoint_file.hpp"
#include "checkpoint/optimizer_state.hpp"
#include "checkpoint/vl_features_record.hpp"
#include "parallel/shard_layout.hpp"

namespace emb {

struct CheckpointMeta {
  int64_t step = 0;  // optimizer steps completed
  SamplerState sampler;
  uint64_t seed = 0;
  std::string preset;
  std::string deck_text;  // the resolved deck
  int world_size_at_save = 0;  // filled in by save_checkpoint (informative on load)
  std::string run_id;          // run_identity.hpp; "" in a checkpoint written without one
  VlFeaturesRecord vl_features;  // gr00t: the encoder its vl features came from (vl_features_record.hpp)
  std::string normalization;   // statistics_json text; "" = none recorded
};

// The metadata stored in an open checkpoint file.
CheckpointMeta read_checkpoint_meta(const CheckpointFile& f);

// One checkpoint read on one rank, tensor by tensor and without a shard layout: what tools
// outside a training run need (embtrain export).
class CheckpointReader {
 public:
  // Throws emb::Error unless `path` is a complete checkpoint.
  explicit CheckpointReader(const std::string& path);
  const std::string& path() const { return file_.path(); }
  const CheckpointMeta& meta() const { return meta_; }
  // The parameter `name` whole (numel of shape floats) after checking its shape; its crc32 is
  // verified (a flipped byte is an error naming the tensor).
  void read_param(const std::string& name, const std::vector<int64_t>& shape, float* out) const;

 private:
  CheckpointFile file_;
  CheckpointMeta meta_;
};

// Thrown alike on every rank when a checkpoint was not written and nothing of it is left
// (no file, no open HDF5 state): the directory lacks the space it needs, or holds a
// checkpoint of another run under the same step's name. Training may go on
// (train.ckpt_on_error = continue); the previous checkpoint stays the newest.
class CheckpointNotWritten : public AgreedError {
 public:
  using AgreedError::AgreedError;
};

// The bytes a checkpoint of reg takes: its data (no moments for layout's frozen tensors) plus a
// bound on HDF5's metadata.
int64_t checkpoint_bytes(const ParamRegistry& reg, const ShardLayout& layout, size_t deck_size);

// Collective over comm; the buffers are this rank's owned buffers in `layout` order (built for
// this communicator). Writes <dir>/step_<step>.h5 through "<file>.tmp", renamed by rank 0
// once every rank closed it, then points <dir>/latest at it. keep > 0: afterwards deletes all
// but the newest `keep` checkpoints of meta.run_id in dir (other runs' files are left alone).
// Rank 0's meta is the one stored. Returns the path.
// Space: rank 0 first compares the free space of dir with checkpoint_bytes; too little
// throws CheckpointNotWritten "checkpoint step N: no space left on DIR, needed X MB, Y MB
// free" before any file exists. A write that fails later (the space went to someone else)
// never closes the file collectively (HDF5 would wait in mismatched barriers): the file is
// abandoned, rank 0 removes it, and every rank throws the same error naming the free space;
// the run must then end (fail_run). fail_write (debug.ckpt_fail_step) makes the last rank's
// write fail halfway through the tensors, as such a write does.
std::string save_checkpoint(MPI_Comm comm, const std::string& dir, const ParamRegistry& reg, const ShardLayout& layout,
                            const float* owned_params, OptimizerState optimizer, const CheckpointMeta& meta,
                            int keep = 0, bool fail_write = false);

// Collective over comm. Validates `path` on rank 0 (a complete embtrain checkpoint of
// `preset`, every tensor of reg present with reg's shape, nothing else) and fills this rank's
// owned buffers for `layout`, whatever rank count and shard mode saved it. Every rank throws
// the same one-line emb::Error on failure, a corrupt tensor (checksum) included.
CheckpointMeta load_checkpoint(MPI_Comm comm, const std::string& path, const std::string& preset,
                               const ParamRegistry& reg, const ShardLayout& layout, float* owned_params,
                               OptimizerState optimizer);

// Collective. Loads the first of `candidates` (resolve_resume's order) that loads; with
// more than one, a failure (a corrupt tensor, a torn file) is a warning and the next, older
// checkpoint is tried. Throws the last failure when none loads. *loaded = the path used.
CheckpointMeta load_first_valid(MPI_Comm comm, const std::vector<std::string>& candidates, const std::string& preset,
                                const ParamRegistry& reg, const ShardLayout& layout, float* owned_params,
                                OptimizerState optimizer, std::string* loaded);

}  // namespace emb
