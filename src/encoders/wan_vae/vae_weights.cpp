#include "encoders/wan_vae/vae_weights.hpp"

#include "core/error.hpp"
#include "encoders/common/checkpoint_reader.hpp"

namespace emb::encoders {

namespace {

TensorOwner vae_tensors(const VaeDims& d) {
  return {"VAE tensor", str(d.name(), "'s encoder"),
          str("the encoder's widths from encoder.conv1 (dim ", d.dim, ") and conv1 (z ", d.z, ")")};
}

// A convolution stored [Co, Ci, (kt,) kh, kw] as conv3d_forward's [taps·Ci, Co]: row
// tap·Ci + ci, tap = (dt·kh + dh)·kw + dw (a 1×1 conv: the linear W [Ci, Co]), in the backend's
// packed form (the VAE is frozen): Ops::pack_conv3d's, or pack_linear's for a 1×1 conv.
View conv_weight(const CheckpointReader& r, const std::string& name, const std::vector<int64_t>& shape) {
  const std::vector<float> w = r.read(name, shape);
  const int64_t co = shape[0], ci = shape[1];
  int64_t taps = 1;
  for (size_t i = 2; i < shape.size(); ++i) taps *= shape[i];
  std::vector<float> out(w.size());
  for (int64_t o = 0; o < co; ++o)
    for (int64_t c = 0; c < ci; ++c)
      for (int64_t t = 0; t < taps; ++t) out[size_t((t * ci + c) * co + o)] = w[size_t((o * ci + c) * taps + t)];
  if (taps == 1) return r.packed(out, ci, co);
  const int kt = shape.size() == 5 ? int(shape[2]) : 1;
  return r.packed_conv(out, kt, taps * ci, co);
}

// A gamma [C, 1, 1(, 1)] as [1, C].
View gamma(const CheckpointReader& r, const std::string& name, int64_t c, int trailing_ones) {
  std::vector<int64_t> shape = {c};
  for (int i = 0; i < trailing_ones; ++i) shape.push_back(1);
  return r.upload(r.read(name, shape), 1, c);
}

VaeResidualWeights residual(const CheckpointReader& r, const std::string& p, int in, int out) {
  VaeResidualWeights w;
  w.in = in, w.out = out;
  w.gamma1 = gamma(r, p + "residual.0.gamma", in, 3);
  w.conv1_w = conv_weight(r, p + "residual.2.weight", {out, in, 3, 3, 3});
  w.conv1_b = r.vector(p + "residual.2.bias", out);
  w.gamma2 = gamma(r, p + "residual.3.gamma", out, 3);
  w.conv2_w = conv_weight(r, p + "residual.6.weight", {out, out, 3, 3, 3});
  w.conv2_b = r.vector(p + "residual.6.bias", out);
  if (in != out) {
    w.shortcut_w = conv_weight(r, p + "shortcut.weight", {out, in, 1, 1, 1});
    w.shortcut_b = r.vector(p + "shortcut.bias", out);
  }
  return w;
}

}  // namespace

VaeWeights load_vae_weights(const WeightSource& source, const VaeDims& d, BackendTensors& store) {
  const CheckpointReader r(source, store, vae_tensors(d));
  for (const auto& [name, shape] : vae_tensor_shapes(d)) r.check(name, shape);
  VaeWeights w;
  w.conv_in_w = conv_weight(r, "encoder.conv1.weight", {d.dim, d.in_channels(), 3, 3, 3});
  w.conv_in_b = r.vector("encoder.conv1.bias", d.dim);
  for (const VaeStep& step : vae_layout(d)) {
    if (step.kind == VaeStep::residual) w.stages.push_back(residual(r, step.prefix, step.in, step.out));
    if (step.kind != VaeStep::down2d && step.kind != VaeStep::down3d) continue;
    VaeDownWeights down;
    down.spatial_w = conv_weight(r, step.prefix + "resample.1.weight", {step.out, step.out, 3, 3});
    down.spatial_b = r.vector(step.prefix + "resample.1.bias", step.out);
    if (step.kind == VaeStep::down3d) {
      down.time_w = conv_weight(r, step.prefix + "time_conv.weight", {step.out, step.out, 3, 1, 1});
      down.time_b = r.vector(step.prefix + "time_conv.bias", step.out);
    }
    w.downs.push_back(down);
  }
  const int c = d.top_dim();
  w.middle0 = residual(r, "encoder.middle.0.", c, c);
  w.attn_gamma = gamma(r, "encoder.middle.1.norm.gamma", c, 2);
  w.qkv_w = conv_weight(r, "encoder.middle.1.to_qkv.weight", {3 * c, c, 1, 1});
  w.qkv_b = r.vector("encoder.middle.1.to_qkv.bias", 3 * c);
  w.proj_w = conv_weight(r, "encoder.middle.1.proj.weight", {c, c, 1, 1});
  w.proj_b = r.vector("encoder.middle.1.proj.bias", c);
  w.middle2 = residual(r, "encoder.middle.2.", c, c);
  w.head_gamma = gamma(r, "encoder.head.0.gamma", c, 3);
  w.head_w = conv_weight(r, "encoder.head.2.weight", {2 * d.z, c, 3, 3, 3});
  w.head_b = r.vector("encoder.head.2.bias", 2 * d.z);
  // conv1's mu half with (· − mean)·(1/std) folded in.
  const int64_t z2 = 2 * d.z;
  const std::vector<float> out_w = r.read("conv1.weight", {z2, z2, 1, 1, 1});
  const std::vector<float> out_b = r.read("conv1.bias", {z2});
  std::vector<float> w_mu(size_t(z2 * d.z)), b_mu(size_t(d.z));
  for (int o = 0; o < d.z; ++o) {
    const float inv_std = 1.0f / d.latent_std()[size_t(o)];
    for (int64_t i = 0; i < z2; ++i) w_mu[size_t(i * d.z + o)] = out_w[size_t(o * z2 + i)] * inv_std;
    b_mu[size_t(o)] = (out_b[size_t(o)] - d.latent_mean()[size_t(o)]) * inv_std;
  }
  w.out_w = r.packed(w_mu, z2, d.z);
  w.out_b = r.upload(b_mu, 1, d.z);
  return w;
}

}  // namespace emb::encoders
