// One packed micro-batch in the memory of the backend that runs the model (BACKENDS.md): the
// token index the kernels read (attention's seq/blk/grp, positions, the row maps of
// token_layout.hpp, the time row of every token), the batch's tensors and the flow draws. The
// host arrays are staged into the next input slot (kernels/input_slots.hpp: pinned memory on a
// GPU) and go to the backend in one copy per micro-batch, off the compute stream; the slots
// are kept and grow when a micro-batch needs more. The pointers below are valid until the
// next-but-one upload.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "kernels/input_slots.hpp"
#include "kernels/ops.hpp"
#include "batch/packed_batch.hpp"
#include "model/flow_matching.hpp"
#include "config/model_config.hpp"
#include "model/time_rows.hpp"
#include "model/token_layout.hpp"

namespace emb {

class DeviceBatch {
 public:
  DeviceBatch() = default;
  DeviceBatch(const DeviceBatch&) = delete;
  DeviceBatch& operator=(const DeviceBatch&) = delete;

  void upload(Ops& ops, const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, const FlowDraws& d,
              const TimeRows& time);
  // Device seconds the compute stream waited for these uploads since the last call (part of h2d).
  double take_copy_wait_seconds() { return slots_ ? slots_->take_copy_wait_seconds() : 0.0; }

  // Attention and RoPE (index arrays of the batch, [T] / [Tc] / [T, 3]).
  const int32_t *seq = nullptr, *blk = nullptr, *grp = nullptr, *cseq = nullptr, *pos = nullptr;
  // Dropout's row keys (kernels/op_types.hpp DropoutRows): each token's index within its sample
  // (query [T], context [Tc]) and each sample slot's id [B].
  const int32_t *token_in_sample = nullptr, *context_in_sample = nullptr;
  const int64_t* sample_id = nullptr;
  RowIndex time_row;  // [T]: the time row of each token (time_rows.hpp)
  View time_t;        // [Tu, 2]: the distinct timesteps (hi, lo: time_rows.hpp)
  View context;       // [Tc, Dctx]

  // gr00t: per sample, and the rows the action, state and future tokens read.
  View state, actions, action_mask, noise;  // [B, Sd] (wan: [Ts, Sd] per state token), [B·Hz, A] ×3
  View tau, tq;                             // [B, 1]: τ and floor(1000τ)
  EmbRows sample_emb, action_emb;           // embodiment of each sample / action token
  RowIndex action, state_tokens, future;    // token index of each action / state (both families) / future token
  RowIndex action_sample, action_target;    // per action token: its sample; its row of actions/noise
  RowIndex action_kind, future_kind;        // per action / future token: k-th of its kind (pos_emb, future_tokens row)
  RowIndex state_sample;                    // per state token: its sample
  RowIndex action_time;                     // per action token: its time row

  // wan: video and action rows of the head and the encoders.
  View video_x0, video_noise, act_x0, act_noise;  // [Tv, P], [Tv, P], [Ta, A], [Ta, A]
  // DreamZero's inputs where the model has them (else absent): the I2V conditioning [Tv, Pc], the
  // CLIP rows [B·Nclip, Dclip] with each row's sample slot clip_seq [B·Nclip], the action mask [Ta, A].
  View video_cond, clip, act_mask;
  const int32_t* clip_seq = nullptr;
  View sigma;                                     // [T, 1]
  // [Tn, 1], [Ta, 1]: each head / action row's loss weight w over its sample's element count of that
  // kind; an action row's also times its sample's has_real_action
  View video_weight, act_weight;
  RowIndex video;                                 // clean and noisy video tokens
  const int32_t* rope_modes = nullptr;            // [T]: RopeMode d3 for video tokens, d1 for actions and states
  RowIndex head_rows;                             // noisy video tokens (the head's rows)
  RowIndex head_time;                             // per head row: its time row
  RowIndex noisy_video_row;                       // per noisy token: its row of video_x0
  RowIndex out_to_in;                             // head.proj's output element e reads input element out_to_in[e]
  int64_t n_noisy = 0;

 private:
  struct Piece {
    const void* src;
    size_t bytes, offset;
  };
  size_t stage(const void* src, size_t bytes);
  // Each field is staged and pointed into the backend buffer once its size is known (place_).
  void stage_index(RowIndex& field, const std::vector<int32_t>& v);
  void stage_pointer(const int32_t*& field, const std::vector<int32_t>& v);
  void stage_matrix(View& field, const std::vector<float>& v, int64_t cols);
  void stage_embodiments(EmbRows& field, EmbGrouping& groups, const std::vector<int32_t>& ids, int n_embodiments);
  void stage_gr00t(const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, const FlowDraws& d);
  void stage_wan(const ModelConfig& cfg, const PackedBatch& b, const TokenLayout& L, const FlowDraws& d,
                 const TimeRows& time);

  Ops* ops_ = nullptr;
  std::unique_ptr<InputSlots> slots_;
  size_t used_ = 0;
  std::vector<Piece> pieces_;
  std::vector<std::function<void(uint8_t*)>> place_;  // given the staged buffer's backend address
  // Host arrays derived here (they must outlive the upload).
  std::vector<int32_t> action_emb_ids_, action_time_, head_time_, out_to_in_, rope_modes_, clip_seq_;
  std::vector<float> tq_, video_weight_, act_weight_;
  EmbGrouping sample_groups_, action_groups_;
};

}  // namespace emb
