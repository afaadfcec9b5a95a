// CLIP ViT-H/14's visual tower as Wan's I2V uses it (clip_xlm_roberta_vit_h_14, clip.py 471-498;
// DreamZero's wan_video_image_encoder.py is the same): its dimensions, and the tensors it reads
// by the names of models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "weights/weight_source.hpp"

namespace emb::encoders {

struct ClipDims {
  int image_size = 224, patch = 14, dim = 1280, heads = 16, layers = 32, mlp = 5120;
  float eps = 1e-5f;  // every LayerNorm (torch's default)
  int grid() const { return image_size / patch; }
  int tokens() const { return grid() * grid() + 1; }  // the class token, then the patches
  int used_layers() const { return layers - 1; }       // use_31_block: blocks 0 .. layers − 2
  int head_dim() const { return dim / heads; }
};

// The visual tower's tensors the features read, with their stored shapes (the 32nd block,
// post_norm, head and the text tower stay unread).
std::vector<std::pair<std::string, std::vector<int64_t>>> clip_tensor_shapes(const ClipDims& d);

// The dimensions of a checkpoint: width and patch from visual.patch_embedding, the image size
// from visual.pos_embedding's tokens, the blocks counted, the MLP width from block 0; the heads
// are not in the state dict (clip_xlm_roberta_vit_h_14 fixes 16, head dim 80): 16 for the
// released width, else what a dims file beside the checkpoint says (tiny_dims.json, which
// tests/encoders_ref/make_tiny_encoders.py writes for its tiny modules: "vision_heads" under the
// file's stem). Throws emb::Error (exit 2) naming the file when it is not a CLIP state dict.
ClipDims read_clip_dims(const WeightSource& source);

}  // namespace emb::encoders
