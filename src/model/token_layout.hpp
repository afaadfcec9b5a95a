// Index maps of one packed micro-batch that both families need: where each token sits within
// its sample (the noise key, so noise never depends on packing), and which rows of the
// per-kind arrays (video_x0, act_x0, per-sample actions) a token reads. Checked against the
// model's shapes: a batch that does not fit the model is a data bug reported here.
#pragma once
#include <cstdint>
#include <vector>

#include "batch/packed_batch.hpp"
#include "config/model_config.hpp"

namespace emb {

struct TokenLayout {
  std::vector<int32_t> index_in_sample;  // [T]; -1 for padding
  std::vector<int32_t> context_index;    // [Tc]: a context token's index among its sample's; -1 for padding
  std::vector<int32_t> kind_index;       // [T]: k for the k-th token of its kind in its sample
  std::vector<int32_t> video_row;        // [T]: row of video_x0 (clean and noisy video), else -1
  std::vector<int32_t> action_row;       // [T]: row of act_x0 (wan action tokens), else -1
  // Token indices by kind, in token order.
  std::vector<int32_t> clean, noisy, action, state, future;
  std::vector<int32_t> video;  // clean and noisy video tokens in token order (= video_x0 row order)
  int64_t n_video = 0;  // rows of video_x0
  // Per token of a kind list above, the rows it reads elsewhere.
  std::vector<int32_t> action_sample;    // per action token: its sample
  std::vector<int32_t> action_kind;      // per action token: its index among its sample's actions (h)
  std::vector<int32_t> action_target;    // gr00t, per action token: its row s·Hz + h of actions [B·Hz, A]
  std::vector<int32_t> future_kind;      // per future token: its row of future_tokens
  std::vector<int32_t> state_sample;     // per state token: its sample
  std::vector<int32_t> noisy_video_row;  // per noisy video token: its row of video_x0
};

void build_token_layout(const ModelConfig& cfg, const PackedBatch& batch, TokenLayout& layout);

}  // namespace emb
