// One training sample (DATA.md "Samples"): a window of one episode at step t.
//  gr00t: state at t (zero-padded to Sd), the action chunk a[t : t+Hz] (past the episode's
//         end, as upstream GR00T-N1.5's data path pads whatever the data config, an absolute
//         action sub-key repeats its last row and a relative one (the modality attribute's
//         absolute = false) is 0, both trained on: Isaac-GR00T 4af2b622 gr00t/data/dataset.py
//         :611-657,788, the raw values, before the normalisation; with mask_past_end those steps
//         get action_mask 0; columns the embodiment does not use are 0 with mask 0), and the vl
//         features of step t as context.
//  wan:   the F latent frames ending at t's frame (frames before the episode start repeat its
//         first frame), nb·Ha actions (block b's Ha actions start at the step of its first
//         frame; past the episode's end the last action repeats), the task's text features. In
//         the DreamZero layout a sub-key marked absolute = false, of the actions or of the
//         blocks' states, is 0 past the episode's end instead, as DreamZero's loader pads it
//         (dreamzero0/dreamzero ab790c1 groot/vla/data/dataset/lerobot.py: padding_strategy
//         "zero" where the key is not absolute).
#pragma once
#include <cstdint>
#include <vector>

#include "data/packed_dataset.hpp"
#include "data/shuffle_buffer.hpp"

namespace emb {

struct Sample {
  int64_t id = 0;  // epoch·samples_per_epoch + position in the epoch order (model RNG key)
  int32_t file = 0;
  int64_t row = 0;
  int32_t emb_id = 0;
  int64_t query_tokens = 0, context_tokens = 0;
  std::vector<float> context;  // [context_tokens, d_ctx] (online vl: empty, the step computes it)
  // gr00t, model.backbone = online: the prompt [context_tokens] and the frames [V, H, W, 3] of
  // the step's views, from which the step's backbone computes the context.
  std::vector<int32_t> prompt;
  std::vector<uint8_t> frames;
  int32_t views = 0, frame_height = 0, frame_width = 0;
  std::vector<float> state, actions, action_mask;  // gr00t: [Sd], [Hz, A], [Hz, A]
  std::vector<float> latents, block_actions;       // wan: [F, Hl, Wl, C], [nb·Ha, A]
  // wan, DreamZero layout: latents carry the file's channels (latents | I2V), state is
  // [nb·Ns, Sd], act_mask [nb·Ha, A], clip [Nclip, Dclip].
  bool dreamzero = false;
  int32_t latent_channels = 0;
  std::vector<float> act_mask, clip;
  float has_real_action = 0;
  int64_t tokens() const { return query_tokens + context_tokens; }
};

// Fills `s` (its vectors keep their capacity, so a reused Sample allocates nothing).
// mask_past_end: DataConfig's (data.action_past_end = mask).
void assemble_sample(const PackedDataset& data, const ShuffleBuffer& buffer, const TokenConfig& cfg,
                     bool mask_past_end, int64_t sample_index, int64_t id, Sample& s);

// "" when every value of the assembled sample is finite; otherwise "FILE:DATASET: non-finite
// value ... row R" for the first that is not (bad data must not reach the model, where it
// would surface as an unrelated attention or loss error).
// `cfg` is the one the sample was assembled with (which file row each action row came from).
std::string first_non_finite(const PackedDataset& data, const TokenConfig& cfg, const Sample& s);

}  // namespace emb
