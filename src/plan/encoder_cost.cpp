#include "plan/encoder_cost.hpp"

#include <algorithm>


namespace emb {
namespace {

double numel_of(const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes) {
  double n = 0;
  for (const auto& [name, shape] : shapes) {
    double e = 1;
    for (int64_t s : shape) e *= double(s);
    n += e;
  }
  return n;
}

// The one-pass form's FLOPs level by level (wan_vae_reference.encoder_ops counts the same).
struct VaeCounter {
  double t, h, w;
  VaeFlops f;
  void conv3(double ci, double co) { f.total += 2 * 27 * ci * co * t * h * w; }
  void residual(double ci, double co) {
    conv3(ci, co);
    conv3(co, co);
    if (ci != co) f.total += 2 * ci * co * t * h * w;  // the 1×1×1 shortcut
  }
  void down(double c, bool temporal) {
    h = double(int64_t(h) / 2), w = double(int64_t(w) / 2);
    f.total += 2 * 9 * c * c * t * h * w;  // zero-pad (0, 1, 0, 1), conv2d 3×3 stride 2
    if (!temporal) return;
    const double t_out = 1 + double((int64_t(t) - 1) / 2);
    f.total += 2 * 3 * c * c * (t_out - 1) * h * w;  // (3, 1, 1) stride 2; frame 0 passed through
    t = t_out;
  }
  void attention(double c) {  // per frame, one head over h·w positions: q/k/v and proj, scores and values
    const double n = h * w, scores = t * 4 * n * n * c;
    f.total += t * 8 * c * c * n + scores;
    f.attention += scores;
  }
};

double umt5_flops_of_rows(const encoders::Umt5Dims& d, double rows, double& attention) {
  attention = d.layers * 4.0 * d.dim_attn * rows * rows;
  return d.layers * rows * (8.0 * d.dim * d.dim_attn + 6.0 * d.dim * d.dim_ffn) + attention;
}

double clip_flops_of_image(const encoders::ClipDims& d, double& attention) {
  const double n = d.tokens(), D = d.dim;
  attention = d.used_layers() * 4 * n * n * D;
  return 2 * (n - 1) * D * 3 * d.patch * d.patch + d.used_layers() * 2 * n * (4 * D * D + 2 * D * d.mlp) + attention;
}

}  // namespace

VaeFlops vae_encoder_flops(const encoders::VaeDims& d, int T, int H, int W) {
  const bool unshuffle = d.kind == encoders::VaeKind::wan22;  // the 2×2 patchify in front
  VaeCounter c{double(T), double(unshuffle ? H / 2 : H), double(unshuffle ? W / 2 : W), {}};
  c.conv3(d.in_channels(), d.dim);
  for (const encoders::VaeStep& s : encoders::vae_layout(d)) {
    if (s.kind == encoders::VaeStep::residual) c.residual(s.in, s.out);
    if (s.kind == encoders::VaeStep::down2d || s.kind == encoders::VaeStep::down3d)
      c.down(s.out, s.kind == encoders::VaeStep::down3d);
  }
  const double top = d.top_dim();
  c.residual(top, top);
  c.attention(top);
  c.residual(top, top);
  c.conv3(top, 2.0 * d.z);
  c.f.total += 2 * (2.0 * d.z) * (2.0 * d.z) * c.t * c.h * c.w;  // conv1 1×1×1
  return c.f;
}

EncoderSample dreamzero_encoder_sample(const ModelConfig& m, int video_height, int video_width,
                                       int64_t instruction_tokens) {
  EncoderSample s;
  s.vae = m.latent_channels == encoders::VaeDims::wan22().z ? encoders::VaeDims::wan22() : encoders::VaeDims::wan21();
  s.i2v_condition = m.latent_channels > m.out_channels;
  s.frames = 1 + s.vae.temporal_factor() * (m.latent_frames - 1);
  s.height = video_height > 0 ? video_height : m.latent_height * s.vae.spatial_factor();
  s.width = video_width > 0 ? video_width : m.latent_width * s.vae.spatial_factor();
  s.text_rows = instruction_tokens + 1;
  return s;
}

EncoderCost dreamzero_encoder_cost(const Hardware& hw, const EncoderSample& s, const encoders::Umt5Dims& t5,
                                   const encoders::ClipDims& clip) {
  EncoderCost c;
  const VaeFlops vae = vae_encoder_flops(s.vae, s.frames, s.height, s.width);
  const int vae_passes = s.i2v_condition ? 2 : 1;
  c.vae_flops = vae_passes * vae.total;
  c.vae_attention_flops = vae_passes * vae.attention;
  c.umt5_flops = umt5_flops_of_rows(t5, double(s.text_rows), c.umt5_attention_flops);
  double padded_attention = 0;
  c.umt5_padded_flops = umt5_flops_of_rows(t5, t5.text_len, padded_attention);
  if (s.clip_image) c.clip_flops = clip_flops_of_image(clip, c.clip_attention_flops);
  const auto seconds = [&](double flops, double attention) {
    return (flops - attention) / hw.gemm_bf16 + attention / hw.attention_bf16;
  };
  c.forward_s = seconds(c.flops(), c.attention_flops());
  const double upstream_attention = 2 * vae.attention + padded_attention + c.clip_attention_flops;
  c.upstream_flops = 2 * vae.total + c.umt5_padded_flops + c.clip_flops;
  c.upstream_forward_s = seconds(c.upstream_flops, upstream_attention);
  c.weight_bytes = 2 * (numel_of(encoders::vae_tensor_shapes(s.vae)) + numel_of(encoders::umt5_tensor_shapes(t5)) +
                        (s.clip_image ? numel_of(encoders::clip_tensor_shapes(clip)) : 0));
  const bool unshuffle = s.vae.kind == encoders::VaeKind::wan22;
  const double pixels = double(unshuffle ? s.height / 2 : s.height) * (unshuffle ? s.width / 2 : s.width);
  const double vae_level0 = 3.0 * s.vae.dim * std::min(s.frames, 6) * pixels;
  const double rows = double(s.text_rows);
  const double t5_layer = rows * (4.0 * t5.dim_attn + 2.0 * t5.dim_ffn + 2.0 * t5.dim) + t5.heads * rows * rows;
  const double n = clip.tokens();
  const double clip_layer = s.clip_image ? n * (4.0 * clip.dim + clip.mlp) + clip.heads * n * n : 0;
  c.forward_bytes = 2 * std::max({vae_level0, t5_layer, clip_layer});
  return c;
}

}  // namespace emb
