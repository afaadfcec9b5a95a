#include "encoders/wan_vae/wan_vae_encoder.hpp"

#include <cmath>

#include "core/error.hpp"
#include "encoders/wan_vae/causal_frames.hpp"

namespace emb::encoders {

namespace {

// One chunk's pass through the encoder's layers.
class ChunkPass {
 public:
  ChunkPass(const VaeDims& d, const VaeWeights& w, CausalFrames& frames, ScratchPool& scratch)
      : d_(d), w_(w), frames_(frames), scratch_(scratch), ops_(scratch.ops()) {}

  // x: the chunk's frames [n·H·W, in_channels] → z rows [latent frames·h·w, z] into `out`.
  void run(FrameChunk x, const View& out) {
    frames_.start_chunk();
    x = frames_.conv3(x, w_.conv_in_w, w_.conv_in_b);
    size_t residuals = 0, downs = 0;
    FrameChunk stage_input;
    for (const VaeStep& step : vae_layout(d_)) {
      switch (step.kind) {
        case VaeStep::residual: x = residual(w_.stages[residuals++], x); break;
        case VaeStep::down2d: x = down2d(w_.downs[downs++], x); break;
        case VaeStep::down3d: {
          const VaeDownWeights& down = w_.downs[downs++];
          x = frames_.time_down(down2d(down, x), down.time_w, down.time_b);
          break;
        }
        case VaeStep::shortcut_begin: stage_input = x; break;
        case VaeStep::shortcut_end: add_avg_down(step, stage_input, x); break;
      }
    }
    x = residual(w_.middle0, x);
    attention(x);
    x = residual(w_.middle2, x);
    FrameChunk h = make_like(x, x.x.cols);
    ops_.channel_rmsnorm_forward(x.x, w_.head_gamma, Activation::silu, h.x);
    h = frames_.conv3(h, w_.head_w, w_.head_b);
    ops_.packed_linear_forward(h.x, w_.out_w, w_.out_b, Activation::none, View{}, out);
  }

 private:
  FrameChunk make_like(const FrameChunk& x, int64_t channels) {
    return {scratch_.make(x.positions(), channels), x.frames, x.height, x.width};
  }

  // norm → SiLU → conv3 → norm → SiLU → conv3, plus x (or its 1×1×1 projection).
  FrameChunk residual(const VaeResidualWeights& r, const FrameChunk& x) {
    FrameChunk h = make_like(x, r.in);
    ops_.channel_rmsnorm_forward(x.x, r.gamma1, Activation::silu, h.x);
    h = frames_.conv3(h, r.conv1_w, r.conv1_b);
    ops_.channel_rmsnorm_forward(h.x, r.gamma2, Activation::silu, h.x);
    h = frames_.conv3(h, r.conv2_w, r.conv2_b);
    if (r.shortcut_w.absent()) {
      ops_.gated_residual_forward(h.x, View{}, x.x);
    } else {
      const View s = scratch_.make(x.positions(), r.out);
      ops_.packed_linear_forward(x.x, r.shortcut_w, r.shortcut_b, Activation::none, View{}, s);
      ops_.gated_residual_forward(h.x, View{}, s);
    }
    return h;
  }

  // ZeroPad2d(0, 1, 0, 1) + Conv2d 3×3 stride 2, per frame.
  FrameChunk down2d(const VaeDownWeights& down, const FrameChunk& x) {
    ConvConfig c;
    c.frames = x.frames, c.height = x.height, c.width = x.width;
    c.kh = c.kw = 3, c.sh = c.sw = 2, c.pad_bottom = c.pad_right = 1;
    FrameChunk y{scratch_.make(int64_t(x.frames) * c.out_height() * c.out_width(), down.spatial_b.cols), x.frames,
                 c.out_height(), c.out_width()};
    ops_.packed_conv3d_forward(x.x, down.spatial_w, down.spatial_b, y.x, c);
    return y;
  }

  // Wan2.2's Down_ResidualBlock shortcut: x += AvgDown3D(stage input) (a zero frame in front of
  // a chunk of odd length, time and space offsets into channels, means of groups).
  void add_avg_down(const VaeStep& step, const FrameChunk& s, const FrameChunk& x) {
    if (step.ft == 1 && step.fs == 1 && step.in == step.out) {
      ops_.gated_residual_forward(x.x, View{}, s.x);
      return;
    }
    UnshuffleConfig u;
    u.frames = s.frames, u.height = s.height, u.width = s.width, u.ft = step.ft, u.fs = step.fs;
    u.pad_front = (step.ft - s.frames % step.ft) % step.ft;
    u.group = step.in * step.ft * step.fs * step.fs / step.out;
    EMB_ASSERT(u.out_frames() == x.frames && s.height / step.fs == x.height && s.width / step.fs == x.width);
    const View avg = scratch_.make(x.positions(), step.out);
    ops_.pixel_unshuffle_forward(s.x, avg, u);
    ops_.gated_residual_forward(x.x, View{}, avg);
  }

  // The middle attention, per frame: x += proj(attention(to_qkv(norm(x)))), one head of C.
  void attention(const FrameChunk& x) {
    const int64_t C = x.x.cols, N = x.positions(), plane = int64_t(x.height) * x.width;
    const View y = scratch_.make(N, C), qkv = scratch_.make(N, 3 * C), a = scratch_.make(N, C), o = scratch_.make(N, C);
    ops_.channel_rmsnorm_forward(x.x, w_.attn_gamma, Activation::none, y);
    ops_.packed_linear_forward(y, w_.qkv_w, w_.qkv_b, Activation::none, View{}, qkv);
    std::vector<int64_t> offsets(size_t(x.frames) + 1);
    for (int f = 0; f <= x.frames; ++f) offsets[size_t(f)] = f * plane;
    const EncoderAttnConfig cfg{1, 1, int(C), float(1.0 / std::sqrt(double(C))), false};
    ops_.encoder_attention_forward(qkv.cols_range(0, C), qkv.cols_range(C, C), qkv.cols_range(2 * C, C), View{},
                                   AttnBias{}, a, View{}, cfg, AttnSegments{offsets.data(), nullptr, x.frames});
    ops_.packed_linear_forward(a, w_.proj_w, w_.proj_b, Activation::none, View{}, o);
    ops_.gated_residual_forward(x.x, View{}, o);
  }

  const VaeDims& d_;
  const VaeWeights& w_;
  CausalFrames& frames_;
  ScratchPool& scratch_;
  Ops& ops_;
};

}  // namespace

WanVaeEncoder::WanVaeEncoder(Ops& ops, const WeightSource& source, DType storage)
    : ops_(ops),
      dims_(read_vae_dims(source)),
      weights_store_(std::make_unique<BackendTensors>(ops, storage)),
      kept_(ops, storage),
      scratch_(ops, storage) {
  weights_ = load_vae_weights(source, dims_, *weights_store_);
}

void WanVaeEncoder::check_clip(int T, int H, int W, const std::string& what) const {
  const int t = dims_.temporal_factor(), f = dims_.spatial_factor();
  if (T < 1 || (T - 1) % t != 0)
    throw Error(str(what, ": ", T, " frames, but the ", dims_.name(), " encodes 1 + ", t,
                    "n frames (frame 0 alone, then chunks of ", t, "): take ", T < 1 ? 1 : 1 + (T - 1) / t * t,
                    " or ", 1 + ((std::max(T, 1) - 1) / t + 1) * t),
                kExitInput);
  if (H < f || W < f || H % f != 0 || W % f != 0)
    throw Error(str(what, ": frames of ", H, " x ", W, ", but the ", dims_.name(), " downsamples by ", f,
                    ": height and width must be positive multiples of ", f),
                kExitInput);
}

void WanVaeEncoder::encode(const View& video, int T, int H, int W, const View& latents, int chunk_frames) {
  check_clip(T, H, W, "VAE clip");
  const int t = dims_.temporal_factor(), f = dims_.spatial_factor();
  EMB_CHECK(chunk_frames >= 0 && chunk_frames % t == 0,
            str("VAE chunk_frames must be 0 (one pass) or a positive multiple of ", t, ", not ", chunk_frames));
  const int64_t plane = int64_t(H) * W, latent_plane = int64_t(H / f) * (W / f);
  EMB_CHECK(video.rows == T * plane && video.cols == 3, "VAE encode: video must be [T·H·W, 3] = [", T * plane,
            ", 3], not ", video.shape());
  EMB_CHECK(latents.rows == latent_frames(T) * latent_plane && latents.cols == dims_.z,
            "VAE encode: latents must be [", latent_frames(T) * latent_plane, ", ", dims_.z, "], not ", latents.shape());
  kept_.recycle();
  CausalFrames frames(kept_, scratch_);
  std::vector<std::pair<int, int>> chunks;  // [first frame, frames)
  if (chunk_frames == 0) {
    chunks.push_back({0, T});
  } else {
    chunks.push_back({0, 1});
    for (int f0 = 1; f0 < T; f0 += chunk_frames) chunks.push_back({f0, std::min(chunk_frames, T - f0)});
  }
  int64_t latent_frame = 0;
  for (const auto& [first, n] : chunks) {
    scratch_.recycle();
    FrameChunk x{video.rows_range(first * plane, n * plane), n, H, W};
    if (dims_.kind == VaeKind::wan22) {  // 2×2 patchify, channel c·4 + column·2 + row
      UnshuffleConfig u;
      u.frames = n, u.height = H, u.width = W, u.fs = 2, u.columns_first = true;
      FrameChunk p{scratch_.make(n * plane / 4, 12), n, H / 2, W / 2};
      ops_.pixel_unshuffle_forward(x.x, p.x, u);
      x = p;
    }
    const int64_t out_frames = first == 0 ? 1 + (n - 1) / t : n / t;
    ChunkPass(dims_, weights_, frames, scratch_)
        .run(x, latents.rows_range(latent_frame * latent_plane, out_frames * latent_plane));
    latent_frame += out_frames;
  }
  EMB_ASSERT(latent_frame == latent_frames(T));
}

std::vector<float> WanVaeEncoder::encode(const float* video, int T, int H, int W, int chunk_frames) {
  check_clip(T, H, W, "VAE clip");
  const int f = dims_.spatial_factor();
  BackendTensors io(ops_, storage());
  const View in = io.upload(video, int64_t(T) * H * W, 3);
  const View out = io.make(latent_frames(T) * int64_t(H / f) * (W / f), dims_.z);
  encode(in, T, H, W, out, chunk_frames);
  return download(ops_, out);
}

std::vector<float> WanVaeEncoder::i2v_condition(const float* first_frame, int T, int H, int W, int chunk_frames) {
  check_clip(T, H, W, "VAE clip");
  std::vector<float> clip(size_t(T) * H * W * 3, 0.0f);
  std::copy(first_frame, first_frame + size_t(H) * W * 3, clip.begin());
  const std::vector<float> z = encode(clip.data(), T, H, W, chunk_frames);
  const int64_t f = dims_.spatial_factor(), plane = int64_t(H / f) * (W / f), cells = latent_frames(T) * plane;
  const int64_t width = 4 + dims_.z;
  std::vector<float> y(size_t(cells * width), 0.0f);
  for (int64_t r = 0; r < cells; ++r) {
    const float mask = r < plane ? 1.0f : 0.0f;  // latent frame 0
    for (int c = 0; c < 4; ++c) y[size_t(r * width + c)] = mask;
    std::copy(z.begin() + r * dims_.z, z.begin() + (r + 1) * dims_.z, y.begin() + r * width + 4);
  }
  return y;
}

}  // namespace emb::encoders
