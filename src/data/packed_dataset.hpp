// The packed files of one training run (deck data.paths: files or globs, expanded in sorted
// order) opened through HDF5's MPI-IO driver on the data-parallel communicator. On open
// every file is checked against the format (verify_structure) and against the model:
// family, context feature dim == d_ctx, state/action widths <= Sd/A (narrower ones are
// zero-padded and masked), latent shape == (Hl, Wl, C) of the selected view, text tokens
// <= max_text_tokens. The small per-episode index arrays stay in memory; the step rows are
// read later by the shuffle buffer.
#pragma once
#include <mpi.h>

#include <string>
#include <utility>
#include <vector>

#include "data/h5_file.hpp"
#include "config/data_config.hpp"
#include "config/token_config.hpp"

namespace emb {

struct PackedFileIndex {
  H5File file;
  int64_t steps = 0, state_dim = 0, action_dim = 0;
  std::vector<int64_t> episode_offsets;
  std::vector<int32_t> episode_task, episode_embodiment;
  std::vector<int32_t> embodiment_state_dim;   // valid state columns per embodiment (empty: all)
  std::vector<int32_t> embodiment_action_dim;  // valid action columns per embodiment (empty: all)
  // The [start, end) columns of the action sub-keys (wan: and of the state sub-keys) the modality
  // attribute marks absolute = false, which are 0 past an episode's end (sample.hpp: gr00t's
  // action chunk, the DreamZero layout's blocks).
  std::vector<std::pair<int64_t, int64_t>> relative_action_columns, relative_state_columns;
  std::vector<int64_t> vl_offsets;             // gr00t: [steps+1] rows of /features/vl (online: of the prompts)
  // Online encoders (gr00t model.backbone, wan model.encoders = online): the /video views (file
  // order, one resolution) whose frames the step's encoders read, and every task's prompt ids
  // (gr00t: vl_offsets counts them per step; wan: txt_offsets per task).
  std::vector<std::string> video_views;
  int64_t frame_height = 0, frame_width = 0;
  std::vector<std::vector<int32_t>> task_prompts;
  int64_t vl_variants = 0;                     // gr00t, data.vl_augment: /features/vl_aug<k> read by epoch
  std::string latent_dataset;                  // wan: /latents/<view>
  std::vector<int64_t> latent_offsets;         // wan: [E+1]
  int64_t steps_per_latent = 1;
  // wan, DreamZero layout (packed_format.hpp): F latent frames per step (its clip), the steps
  // between a clip's frames, the I2V channels after the latents' and the CLIP rows per step
  // (model.encoders = online: what the step's encoders make, none read from the file).
  int64_t clip_frames = 0, frame_stride = 1, latent_file_channels = 0, clip_tokens = 0, clip_dim = 0;
  std::vector<int64_t> txt_offsets;            // wan: [ntask+1]
  std::vector<float> txt;                      // wan: every task's text features [rows, d_ctx]

  int64_t episode_of(int64_t row) const;
  int64_t episode_samples(int64_t episode) const;  // of samples()
  int64_t latent_of(int64_t row) const;  // global latent frame of step `row` (wan)
  int64_t action_width(int64_t episode) const;
  // Embodiment `id`'s valid state and action columns (the file's widths where it records none).
  int64_t state_width_of(int32_t id) const;
  int64_t action_width_of(int32_t id) const;
  // Rows [first, second) of the feature array (feature_dataset) that the sample at step
  // `row` reads: its /features/vl rows (gr00t) or the latent frames of its window, clipped at
  // the episode start (wan). The array that dominates the bytes of a sample.
  std::pair<int64_t, int64_t> feature_rows(int64_t row, const TokenConfig& cfg) const;
  bool online_vl() const { return !video_views.empty(); }
  bool dreamzero_layout() const { return clip_frames > 0; }
  // DreamZero layout: the step of block b's anchor in the clip at `row`, where its actions and
  // states start (data/dreamzero_alignment.hpp: the frame before the block's first, as upstream's
  // DROID loader), and how far past a clip's first step its actions and states (online encoders:
  // also its raw frames) reach.
  int64_t block_step(int64_t row, int64_t b, const TokenConfig& cfg) const;
  int64_t clip_reach(const TokenConfig& cfg) const;
  // DreamZero layout: the steps from a clip's first to the last one its frames, actions or states read.
  int64_t clip_window(const TokenConfig& cfg) const;
  // The file's samples: every step, or (DreamZero layout, data.dreamzero_episode_end = skip) the
  // steps whose clip window fits in their episode, ascending.
  bool every_step_a_sample = true;
  std::vector<int64_t> sample_rows;
  int64_t samples() const { return every_step_a_sample ? steps : int64_t(sample_rows.size()); }
  int64_t sample_row(int64_t i) const { return every_step_a_sample ? i : sample_rows[size_t(i)]; }
  // The feature array of `epoch`: /features/vl, or its augmented variant epoch mod K
  // (data.vl_augment), or the wan latents; every variant has feature_rows' rows. Online vl: none.
  std::string feature_dataset(int64_t epoch) const;
};

// What a gr00t run asks of its files' vl features (data.vl_backbone, data.vl_augment).
struct VlFeatureChoice {
  std::string backbone_digest;  // /features/vl's backbone_digest must be this; "" = not checked
  bool augmented = false;       // read the stored augmented variants, one per epoch
  // model.backbone = online (gr00t) or model.encoders = online (wan): set; the files' frames and
  // prompts replace /features/vl (gr00t) or the DreamZero layout's latents, CLIP and text rows
  // (wan, clips of raw frames frame_stride steps apart: data/dreamzero_alignment.hpp).
  VlPrompt online_prompt = nullptr;
  // wan, DreamZero layout: the encoders_digest the files' features must carry (data.dreamzero_encoders;
  // "" = not checked).
  std::string dreamzero_digest;
  int64_t frame_stride = 1;  // wan, model.encoders = online
  // wan, DreamZero layout: every step is a sample, windows past the episode's end repeating its
  // last step (data.dreamzero_episode_end = repeat); false: only the steps whose window fits.
  bool dreamzero_repeat_end = false;
};

// Consecutive rows [begin, end) of one file holding `samples` samples: the unit of contiguous
// reads and of shuffling.
struct Chunk {
  int32_t file;
  int64_t begin, end, samples;
};

class PackedDataset {
 public:
  // vl (gr00t): which features every file must hold (packed_format.hpp).
  PackedDataset(MPI_Comm comm, MpioTransfer transfer, const std::vector<std::string>& paths, const TokenConfig& cfg,
                const std::string& view, const VlFeatureChoice& vl = {});

  int64_t files() const { return int64_t(files_.size()); }
  const PackedFileIndex& file(int64_t i) const { return files_[size_t(i)]; }
  int64_t samples() const { return sample_begin_.back(); }
  // (file, row) of global sample s (dataset order).
  std::pair<int32_t, int64_t> locate(int64_t sample) const;
  std::vector<Chunk> chunks(int64_t chunk_rows) const;

  int64_t query_tokens() const { return query_tokens_; }      // per sample, fixed by the model
  int64_t max_context_tokens() const { return max_context_; }  // over all samples
  double mean_context_tokens() const { return samples() ? context_sum_ / double(samples()) : 0.0; }
  double context_tokens_std() const;  // the samples' spread around the mean (packed ranks' steps differ by it)

 private:
  std::vector<PackedFileIndex> files_;
  std::vector<int64_t> sample_begin_{0};
  int64_t query_tokens_ = 0, max_context_ = 0;
  double context_sum_ = 0, context_square_sum_ = 0;  // context tokens (and their squares) over all samples

  void add_context(int64_t samples, int64_t tokens);  // `samples` samples of `tokens` context tokens each
};

// Files named by `patterns` (plain paths or globs), globs expanded in sorted order. A glob
// that matches nothing is an error.
std::vector<std::string> expand_paths(const std::vector<std::string>& patterns);

}  // namespace emb
