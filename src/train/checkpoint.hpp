// Checkpoints (DESIGN.md "Checkpoints"). Parameters and AdamW moments are stored unsharded
// by name, so a checkpoint restores on any rank count and shard mode; with them everything
// a run needs to continue exactly: step, sampler state, seed (the RNG is counter-based, so
// seed and step are its whole state) and the resolved deck.
//
// <dir>/step_<8 digits>.h5, format "embtrain-ckpt/1" (checkpoint_file.hpp):
//   /params/<name>, /exp_avg/<name>, /exp_avg_sq/<name>   fp32, 1-D of numel elements, with
//                                                         attribute shape (int64[]), MODEL.md names
//   root attributes: format, step, sampler_epoch, sampler_cursor, seed, preset, world_size,
//                    deck (variable-length string) and complete = 1, written last after the
//                    data were synced to storage.
// Each rank writes its share of every tensor as one collective hyperslab and reads back the
// elements its own layout owns, which is what makes N → M resharding automatic.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <string>

#include "data/sampler.hpp"
#include "model/param_registry.hpp"
#include "train/shard_layout.hpp"

namespace emb {

struct CheckpointMeta {
  int64_t step = 0;  // optimizer steps completed
  SamplerState sampler;
  uint64_t seed = 0;
  std::string preset;
  std::string deck_text;  // the resolved deck
  int world_size_at_save = 0;  // filled in by save_checkpoint (informative on load)
};

// Collective over comm; the buffers are this rank's owned buffers in `layout` order (built for
// this communicator). Writes <dir>/step_<step>.h5 through "<file>.tmp", renamed by rank 0
// once every rank closed it, then points <dir>/latest at it. keep > 0: afterwards deletes all
// but the newest `keep` checkpoints of dir. Rank 0's meta is the one stored. Returns the path.
std::string save_checkpoint(MPI_Comm comm, const std::string& dir, const ParamRegistry& reg, const ShardLayout& layout,
                            const float* owned_params, const float* exp_avg, const float* exp_avg_sq,
                            const CheckpointMeta& meta, int keep = 0);

// Collective over comm. Validates `path` on rank 0 (a complete embtrain checkpoint of
// `preset`, every tensor of reg present with reg's shape, nothing else) and fills this rank's
// owned buffers for `layout`, whatever rank count and shard mode saved it. Every rank throws
// the same one-line emb::Error on failure.
CheckpointMeta load_checkpoint(MPI_Comm comm, const std::string& path, const std::string& preset,
                               const ParamRegistry& reg, const ShardLayout& layout, float* owned_params,
                               float* exp_avg, float* exp_avg_sq);

}  // namespace emb
