#include "encoders/wan_vae/vae_dims.hpp"

#include "core/error.hpp"

namespace emb::encoders {

namespace {

const std::vector<float> kWan21Mean = {-0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
                                       0.4134,  -0.0715, 0.5517,  -0.3632, -0.1922, -0.9497, 0.2503, -0.2921};
const std::vector<float> kWan21Std = {2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
                                      3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160};
const std::vector<float> kWan22Mean = {
    -0.2289, -0.0052, -0.1323, -0.2339, -0.2799, 0.0174,  0.1838,  0.1557,  -0.1382, 0.0542,  0.2813,  0.0891,
    0.1570,  -0.0098, 0.0375,  -0.1825, -0.2246, -0.1207, -0.0698, 0.5109,  0.2665,  -0.2108, -0.2158, 0.2502,
    -0.2055, -0.0322, 0.1109,  0.1567,  -0.0729, 0.0899,  -0.2799, -0.1230, -0.0313, -0.1649, 0.0117,  0.0723,
    -0.2839, -0.2083, -0.0520, 0.3748,  0.0152,  0.1957,  0.1433,  -0.2944, 0.3573,  -0.0548, -0.1681, -0.0667};
const std::vector<float> kWan22Std = {
    0.4765, 1.0364, 0.4514, 1.1677, 0.5313, 0.4990, 0.4818, 0.5013, 0.8158, 1.0344, 0.5894, 1.0901,
    0.6885, 0.6165, 0.8454, 0.4978, 0.5759, 0.3523, 0.7135, 0.6804, 0.5833, 1.4146, 0.8986, 0.5659,
    0.7069, 0.5338, 0.4889, 0.4917, 0.4069, 0.4999, 0.6866, 0.4093, 0.5709, 0.6065, 0.6415, 0.4944,
    0.5726, 1.2042, 0.5458, 1.6887, 0.3971, 1.0600, 0.3943, 0.5537, 0.5444, 0.4089, 0.7468, 0.7744};

using Shapes = std::vector<std::pair<std::string, std::vector<int64_t>>>;

void add_residual(Shapes& s, const std::string& p, int64_t in, int64_t out) {
  s.push_back({p + "residual.0.gamma", {in, 1, 1, 1}});
  s.push_back({p + "residual.2.weight", {out, in, 3, 3, 3}});
  s.push_back({p + "residual.2.bias", {out}});
  s.push_back({p + "residual.3.gamma", {out, 1, 1, 1}});
  s.push_back({p + "residual.6.weight", {out, out, 3, 3, 3}});
  s.push_back({p + "residual.6.bias", {out}});
  if (in != out) s.push_back({p + "shortcut.weight", {out, in, 1, 1, 1}}), s.push_back({p + "shortcut.bias", {out}});
}

}  // namespace

std::vector<int> VaeDims::stage_dims() const {
  std::vector<int> dims = {dim};
  for (int m : dim_mult) dims.push_back(dim * m);
  return dims;
}

int VaeDims::spatial_factor() const {
  int f = kind == VaeKind::wan22 ? 2 : 1;
  for (int i = 0; i + 1 < stages(); ++i) f *= 2;
  return f;
}

int VaeDims::temporal_factor() const {
  int f = 1;
  for (bool down : temporal_down) f *= down ? 2 : 1;
  return f;
}

const std::vector<float>& VaeDims::latent_mean() const { return kind == VaeKind::wan22 ? kWan22Mean : kWan21Mean; }
const std::vector<float>& VaeDims::latent_std() const { return kind == VaeKind::wan22 ? kWan22Std : kWan21Std; }

std::vector<VaeStep> vae_layout(const VaeDims& d) {
  const std::vector<int> dims = d.stage_dims();
  std::vector<VaeStep> steps;
  int k = 0;
  for (int i = 0; i < d.stages(); ++i) {
    const int in = dims[size_t(i)], out = dims[size_t(i) + 1];
    const bool last = i == d.stages() - 1;
    const bool time = i < int(d.temporal_down.size()) && d.temporal_down[size_t(i)];
    const VaeStep::Kind down = time ? VaeStep::down3d : VaeStep::down2d;
    if (d.kind == VaeKind::wan22) {
      const std::string stage = str("encoder.downsamples.", i, ".");
      steps.push_back({VaeStep::shortcut_begin, stage, in, out});
      for (int j = 0; j < d.res_blocks; ++j)
        steps.push_back({VaeStep::residual, str(stage, "downsamples.", j, "."), j == 0 ? in : out, out});
      if (!last) steps.push_back({down, str(stage, "downsamples.", d.res_blocks, "."), out, out});
      steps.push_back({VaeStep::shortcut_end, stage, in, out, time ? 2 : 1, last ? 1 : 2});
    } else {
      for (int j = 0; j < d.res_blocks; ++j)
        steps.push_back({VaeStep::residual, str("encoder.downsamples.", k++, "."), j == 0 ? in : out, out});
      if (!last) steps.push_back({down, str("encoder.downsamples.", k++, "."), out, out});
    }
  }
  return steps;
}

std::vector<std::pair<std::string, std::vector<int64_t>>> vae_tensor_shapes(const VaeDims& d) {
  Shapes s = {{"encoder.conv1.weight", {d.dim, d.in_channels(), 3, 3, 3}}, {"encoder.conv1.bias", {d.dim}}};
  for (const VaeStep& step : vae_layout(d)) {
    if (step.kind == VaeStep::residual) add_residual(s, step.prefix, step.in, step.out);
    if (step.kind == VaeStep::down2d || step.kind == VaeStep::down3d) {
      s.push_back({step.prefix + "resample.1.weight", {step.out, step.out, 3, 3}});
      s.push_back({step.prefix + "resample.1.bias", {step.out}});
    }
    if (step.kind == VaeStep::down3d) {
      s.push_back({step.prefix + "time_conv.weight", {step.out, step.out, 3, 1, 1}});
      s.push_back({step.prefix + "time_conv.bias", {step.out}});
    }
  }
  const int64_t c = d.top_dim();
  add_residual(s, "encoder.middle.0.", c, c);
  s.push_back({"encoder.middle.1.norm.gamma", {c, 1, 1}});
  s.push_back({"encoder.middle.1.to_qkv.weight", {3 * c, c, 1, 1}});
  s.push_back({"encoder.middle.1.to_qkv.bias", {3 * c}});
  s.push_back({"encoder.middle.1.proj.weight", {c, c, 1, 1}});
  s.push_back({"encoder.middle.1.proj.bias", {c}});
  add_residual(s, "encoder.middle.2.", c, c);
  s.push_back({"encoder.head.0.gamma", {c, 1, 1, 1}});
  s.push_back({"encoder.head.2.weight", {2 * d.z, c, 3, 3, 3}});
  s.push_back({"encoder.head.2.bias", {2 * d.z}});
  s.push_back({"conv1.weight", {2 * d.z, 2 * d.z, 1, 1, 1}});
  s.push_back({"conv1.bias", {2 * d.z}});
  return s;
}

VaeDims read_vae_dims(const WeightSource& source) {
  const TensorInfo* conv_in = source.find("encoder.conv1.weight");
  const TensorInfo* conv_out = source.find("conv1.weight");
  if (!conv_in || conv_in->shape.size() != 5 || !conv_out || conv_out->shape.size() != 5)
    throw Error(str(source.path(), ": not a Wan VAE checkpoint (expected encoder.conv1.weight [dim, 3 or 12, 3, 3, 3] ",
                    "and conv1.weight [2z, 2z, 1, 1, 1], as Wan2.1_VAE.pth and Wan2.2_VAE.pth hold)"),
                kExitInput);
  VaeDims d = conv_in->shape[1] == 12 ? VaeDims::wan22() : VaeDims::wan21();
  d.dim = int(conv_in->shape[0]);
  d.z = int(conv_out->shape[0] / 2);
  return d;
}

}  // namespace emb::encoders
