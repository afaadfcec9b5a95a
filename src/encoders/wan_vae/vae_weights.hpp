// The Wan VAE encoder's tensors (Wan2.1_VAE.pth / Wan2.2_VAE.pth, or their safetensors twins) in
// an Ops backend, in the layouts the ops take, packed once (the VAE is frozen): convolutions as
// packed_conv3d_forward weights (Ops::pack_conv3d of [kt·kh·kw·Ci, Co], upstream's
// [Co, Ci, kt, kh, kw] permuted), 1×1 convolutions as packed linear weights (Ops::pack_linear of
// [Ci, Co]), gammas as [1, C], the attention's to_qkv as one [C, 3C] GEMM. The final
// 1×1×1 conv keeps only its mu half, with the latent normalisation folded in:
//   z = (W·h + b − mean)·(1/std) = (W·(1/std))·h + (b − mean)·(1/std)
// (1/std in float32, as upstream's scale). The decoder and conv2 are never read. The shapes
// below are those of the weights before packing.
#pragma once
#include <vector>

#include "encoders/common/backend_tensors.hpp"
#include "encoders/wan_vae/vae_dims.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

struct VaeResidualWeights {
  int in = 0, out = 0;
  View gamma1, conv1_w, conv1_b;  // [1, in], [27·in, out], [1, out]
  View gamma2, conv2_w, conv2_b;  // [1, out], [27·out, out], [1, out]
  View shortcut_w, shortcut_b;    // [in, out], [1, out] when in ≠ out, else absent
};

struct VaeDownWeights {
  View spatial_w, spatial_b;  // [9·C, C], [1, C]: the stride-2 Conv2d
  View time_w, time_b;        // [3·C, C], [1, C]: the temporal stride-2 conv (down3d only)
};

struct VaeWeights {
  View conv_in_w, conv_in_b;               // [27·in_channels, dim], [1, dim]
  std::vector<VaeResidualWeights> stages;  // the residual steps of vae_layout, in order
  std::vector<VaeDownWeights> downs;       // its down2d / down3d steps, in order
  VaeResidualWeights middle0, middle2;
  View attn_gamma, qkv_w, qkv_b, proj_w, proj_b;  // [1, C], [C, 3C], [1, 3C], [C, C], [1, C]
  View head_gamma, head_w, head_b;                // [1, C], [27·C, 2z], [1, 2z]
  View out_w, out_b;                              // [2z, z], [1, z]: mu, normalised
};

// Reads every tensor into `store`; throws emb::Error (exit 2) in one line naming the file and
// the tensor missing or misshaped. Every shape is checked before any tensor is read.
VaeWeights load_vae_weights(const WeightSource& source, const VaeDims& d, BackendTensors& store);

}  // namespace emb::encoders
