// The data settings of a run: the deck's [data] keys, plus the loader's share of
// train.global_batch and run.seed (what it batches and shuffles by).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace emb {

// How the ranks of a parallel file move the bytes of a read (deck key data.mpio_transfer).
//   independent  each rank reads its own selection with its own MPI-IO calls. The loader's
//                reads are large contiguous row ranges, so there is nothing to aggregate,
//                and no rank waits for another inside a read: the default (page-cache reads
//                at 2 ranks: 9.3 GB/s against 5.4 GB/s collective, tests/data/run_data_bench.sh).
//   collective   every read is a collective MPI-IO call, which MPI-IO may aggregate through
//                a few reader ranks (collective buffering, per its hints): for parallel file
//                systems where few large requests beat many.
enum class MpioTransfer { independent, collective };

// The token ids of a task's prompt for `views` camera views (model.backbone = online: the
// backbone's tokenizer and chat template, tokenizers::gr00t_prompt).
using VlPrompt = std::function<std::vector<int32_t>(const std::string& task_text, int views)>;

// What a run checks of the data files' bulk rows (state, action, features, latents) before
// step 1 (deck key data.verify; data/data_verify.hpp). The small arrays are always checked.
//   full  every value, the rows split over the ranks; a clean file records the verify.
//   auto  full, unless the file records a verify of its current content (then nothing).
//   off   none: a bad row stops the run when a step samples it.
enum class DataVerify { off, automatic, full };

struct DataConfig {
  std::vector<std::string> paths;  // data.paths: files or globs
  bool packing = true;
  int64_t tokens_per_mb = 4096;
  int64_t pad_context = 0;        // packing off: context tokens per padded sample; 0 = the data's longest
  int64_t lookahead = 64;         // FFD window, samples
  int prefetch = 2;               // steps kept ready (0: load on demand); a deck's auto: 2 on cuda, 0 on cpu
  MpioTransfer mpio_transfer = MpioTransfer::independent;
  DataVerify verify = DataVerify::automatic;
  int64_t shuffle_buffer = 65536; // samples per shuffle buffer (rounded to whole chunks)
  int64_t chunk_rows = 256;       // rows per contiguous chunk (not a deck key yet)
  std::string view;               // wan latent view; "" = the file's first
  // gr00t action-chunk steps past the episode's end (the last action repeated): trained on
  // (upstream) or masked out of the loss (data.action_past_end, data/sample.hpp).
  bool mask_past_end = false;
  // wan, DreamZero layout: a step whose clip, actions or states pass its episode's end is a sample
  // with the last frame and step repeated (data.dreamzero_episode_end = repeat); false: it is no
  // sample, as upstream's DROID loader never trains on such a window (DATA.md "DreamZero alignment").
  bool dreamzero_repeat_end = false;
  // data.normalize = upstream: states and actions reach the model as upstream's data path gives
  // them, normalised with the data's statistics (data/state_action_normalization.hpp); none: raw.
  bool normalize = true;
  // wan, DreamZero layout: the action sub-keys trained relative to their block's anchor state
  // (data.relative_action_keys; data/relative_actions.hpp); empty: absolute actions.
  std::vector<std::string> relative_action_keys;
  // gr00t: the state given to the model as each sub-key's [sin, cos] in place of its min/max
  // normalisation (data.state_encoding = sin_cos; data/state_sin_cos.hpp); false: min_max.
  bool state_sin_cos = false;
  // gr00t: the GR00T-N1.5 data config whose per-key state/action transforms and key order the
  // model is given (data.upstream_config; data/upstream_data_config.hpp); "": none.
  std::string upstream_config;
  // gr00t: the checkpoint whose backbone must have made the vl features (data.vl_backbone; ""
  // = not checked) and its eagle_weights_digest, which the app fills in (app/feature_encoders.hpp).
  std::string vl_backbone, vl_backbone_digest;
  // wan, DreamZero layout: the folder of the encoders that must have made the latents, text and
  // CLIP features (data.dreamzero_encoders; "" = not checked) and their digest (the app's).
  std::string dreamzero_encoders, dreamzero_encoders_digest;
  bool vl_augment = false;  // data.vl_augment: epoch e reads the stored variant e mod K
  // model.backbone = online: the prompts of the tasks (the trainer sets it from the backbone's
  // tokenizer); the loader then reads frames and prompts instead of /features/vl.
  VlPrompt online_prompt = nullptr;
  // wan, model.encoders = online: how a sample's frames reach the encoders, as embpack features
  // --dreamzero's --tiling, --tile, --frame-stride and --robot (data.view_tiling, data.view_tile,
  // data.frame_stride, data.prompt_robot).
  std::string view_tiling = "2x2", view_tile = "176x320", prompt_robot = "oxe_droid";
  int64_t frame_stride = 1;
  int64_t global_batch = 8;        // train.global_batch
  uint64_t seed = 1234;            // run.seed
};

}  // namespace emb
