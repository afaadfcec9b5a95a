// The packed micro-batch (MODEL.md "Packed batch", DATA.md "Packing"): what the data layer
// hands the model. Samples are laid end to end with no padding (packing = on) or padded to a
// fixed length (packing = off, tokens with seq < 0). Everything is host memory in fp32/int32
// (but backend_context).
//
// The data layer fills the raw sample content (features, states, clean actions/latents) and
// the token index arrays; the model's flow-matching step draws τ/σ and the noise from the
// counter RNG keyed by (seed, step, sample_id), so the result never depends on packing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb {

enum TokenKind : int32_t { kClean = 0, kNoisyVideo = 1, kAction = 2, kState = 3, kFuture = 4, kPad = 5 };

struct PackedBatch {
  std::string family;  // "gr00t" | "wan"
  int32_t n_samples = 0;
  int64_t n_tokens = 0;   // T query tokens (including padding)
  int64_t n_context = 0;  // Tc context tokens (including padding)
  int64_t n_real_tokens = 0;   // query + context tokens that are not padding
  std::vector<int64_t> sample_id;  // [B] global sample index in the epoch order (RNG key)

  // Per query token, in sequence order.
  std::vector<int32_t> seq, blk, grp, kind;  // [T]; seq = sample slot 0..B-1, or < 0 for padding
  std::vector<int32_t> pos;                  // [T, 3] (f, h, w)
  // Per context token.
  std::vector<int32_t> cseq;   // [Tc]; < 0 for padding
  std::vector<float> context;  // [Tc, Dctx]: vl features (gr00t) or txt features (wan)
  // gr00t, model.backbone = online: per context token its prompt id (padding: -1), and per
  // sample its views' frames [B, V, H, W, 3] (one V, H, W over the batch); the step's backbone
  // turns them into `context` (train/online_backbone.hpp), which the loader leaves empty.
  std::vector<int32_t> prompt;
  std::vector<uint8_t> frames;
  int32_t views = 0, frame_height = 0, frame_width = 0;
  // The one exception to host memory: the step's backbone leaves `context` [Tc, Dctx] fp32 in the
  // backend's memory here, where the model reads it (no host round trip); null otherwise. Valid
  // until the backbone's next step.
  const float* backend_context = nullptr;

  // gr00t, per sample (state/actions zero-padded to the model's Sd/A, mask 0 on padding).
  std::vector<float> state;        // [B, Sd]; wan: per state token in token order [Ts, Sd]
  std::vector<float> actions;      // [B, Hz, A]
  std::vector<float> action_mask;  // [B, Hz, A]
  std::vector<int32_t> emb_id;     // [B]

  // wan, per token in token order: patchified clean latents of every video token (a noisy
  // token carries the same x0 as its clean twin) and clean actions of every action token.
  std::vector<float> video_x0;  // [Tv, P], Tv = number of kClean + kNoisyVideo tokens
  std::vector<float> act_x0;    // [Ta, A]
  // wan, DreamZero layout (UPSTREAM.md "DreamZero"); empty where the model has no such input.
  // video_cond: per video token, the patchified I2V conditioning channels (4-channel first-frame
  // mask + the latents of the first frame followed by zeros), concatenated to the token's
  // (noised) latents before the patch embedding and never noised themselves.
  std::vector<float> video_cond;       // [Tv, Pc]
  std::vector<float> clip;             // [B, Nclip, Dclip]: CLIP features of each sample's first frame
  std::vector<float> act_mask;         // [Ta, A]: 0 on padded action dims (the action loss skips them)
  std::vector<float> has_real_action;  // [B]: 0 where the sample's actions are not real (no action loss)
};

}  // namespace emb
