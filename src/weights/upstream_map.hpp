// The correspondence between our parameter names (MODEL.md) and the released checkpoints'
// state-dict names (UPSTREAM.md "State-dict map"), one table per family, with how each
// tensor's elements are laid out on either side and which of upstream's fine-tuning flags
// freezes it. Tables are patterns over layer indices ("blocks.{l}.ffn.fc1.weight" <->
// "model.transformer_blocks.{l}.ff.net.0.proj.weight"), so one table serves every size of
// a family; shapes come from our side (the parameter registry) and the layout.
//
// Layouts: our tensor = upstream tensor permuted and reshaped (upstream_order below):
//   same     identical shape and element order (per-embodiment W [E, in, out], norms, tables)
//   linear   nn.Linear weight: upstream [out, in], ours [in, out] (a transpose)
//   squeeze  upstream [1, ...]: Wan's modulation tables [1, 6, D] are ours [6, D]
//   patch    Conv3d weight: upstream [D, C, pt, ph, pw], ours [pt·ph·pw·C, D]
//            (upstream.permute(2, 3, 4, 1, 0): patch features ordered t, h, w, c, c fastest)
//   row      upstream [n] (a bias or norm), ours [1, n] (train.tune_visual's vectors)
//   image_patch  SigLIP's RGB Conv2d weight: upstream [D, 3, k, k], ours [3·k·k, D]
//            (upstream.permute(1, 2, 3, 0): the convolution as a linear over (c, y, x) rows)
// A family's checkpoint holds more than we train: tensors outside its trained prefix (the
// Eagle backbone of GR00T; DreamZero's text/image encoders and VAE) pass through export
// unchanged, except GR00T's SigLIP vision tower and mlp1 when a run trains them
// (train.tune_visual, TuneGroup::visual): their rules name them as they are, outside the prefix.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "weights/weight_dtype.hpp"

namespace emb {

enum class UpstreamFamily { gr00t_n15, dreamzero };

const char* upstream_family_name(UpstreamFamily f);  // "GR00T-N1.5", "DreamZero"

enum class UpstreamLayout { same, linear, squeeze, patch, row, image_patch };

// Upstream's fine-tuning flags a tensor answers to (Isaac-GR00T FlowmatchingActionHead /
// DreamZero WANPolicyHead set_trainable_parameters): tune_projector freezes GR00T's state and
// action encoders, action decoder and position table when off; tune_diffusion_model the DiT
// (`action_head.model.*`, DreamZero's whole CausalWanModel). `always` is trained either way.
// `visual`: GR00T's Eagle vision tower and mlp1 (upstream's tune_visual), parameters only of a
// run with train.tune_visual = on.
enum class TuneGroup { always, projector, diffusion_model, visual };

struct UpstreamTensor {
  std::string name;             // full upstream name ("action_head.model.proj_out_1.weight")
  UpstreamLayout layout = UpstreamLayout::same;
  std::vector<int64_t> shape;   // upstream shape
  TuneGroup group = TuneGroup::always;
};

// Where our element i lies upstream: for each of our tensor's row-major elements, the
// row-major index of the upstream element. Computed per range by the readers; these
// describe the permutation: ours = upstream.permute(perm).reshape(our shape).
std::vector<int> upstream_permutation(const UpstreamTensor& t);

class UpstreamNameMap {
 public:
  // patch: Conv3d kernel (pt, ph, pw) of the DreamZero patch embedding (config patch_size);
  // image_patch: the side of GR00T's SigLIP patch convolution (vision_config.patch_size).
  explicit UpstreamNameMap(UpstreamFamily family, std::array<int, 3> patch = {1, 2, 2}, int image_patch = 14);

  UpstreamFamily family() const { return family_; }
  // Every tensor we train lies under this prefix ("action_head." for GR00T,
  // "action_head.model." for DreamZero); the rest of a checkpoint passes through.
  const std::string& trained_prefix() const { return prefix_; }
  bool is_trained(const std::string& upstream_name) const;

  // The upstream tensor of our tensor `ours` of shape `our_shape`. Throws emb::Error in one
  // line when no rule names it or the shape cannot have the rule's layout.
  UpstreamTensor upstream_of(const std::string& ours, const std::vector<int64_t>& our_shape) const;

  // The dtype a tensor is stored in when no source checkpoint says (GR00T's action head and
  // DreamZero's DiT are float32 modules, model_dtype "float32").
  WeightDType default_dtype() const { return WeightDType::F32; }

  struct Rule {
    std::string ours, upstream;  // "{l}" stands for a layer index on both sides
    UpstreamLayout layout;
    TuneGroup group;
    bool under_prefix = true;    // upstream names the trained prefix + `upstream`; else `upstream` whole
  };
  const std::vector<Rule>& rules() const { return rules_; }

 private:
  UpstreamFamily family_;
  std::array<int, 3> patch_;
  int image_patch_;
  std::string prefix_;
  std::vector<Rule> rules_;
};

}  // namespace emb
