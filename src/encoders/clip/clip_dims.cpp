#include "encoders/clip/clip_dims.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/error.hpp"

namespace emb::encoders {

std::vector<std::pair<std::string, std::vector<int64_t>>> clip_tensor_shapes(const ClipDims& d) {
  const int64_t D = d.dim;
  std::vector<std::pair<std::string, std::vector<int64_t>>> s = {
      {"visual.patch_embedding.weight", {D, 3, d.patch, d.patch}},
      {"visual.cls_embedding", {1, 1, D}},
      {"visual.pos_embedding", {1, d.tokens(), D}},
      {"visual.pre_norm.weight", {D}},
      {"visual.pre_norm.bias", {D}}};
  for (int l = 0; l < d.used_layers(); ++l) {
    const std::string b = str("visual.transformer.", l, ".");
    for (const char* n : {"norm1", "norm2"}) s.push_back({b + n + ".weight", {D}}), s.push_back({b + n + ".bias", {D}});
    s.push_back({b + "attn.to_qkv.weight", {3 * D, D}}), s.push_back({b + "attn.to_qkv.bias", {3 * D}});
    s.push_back({b + "attn.proj.weight", {D, D}}), s.push_back({b + "attn.proj.bias", {D}});
    s.push_back({b + "mlp.0.weight", {d.mlp, D}}), s.push_back({b + "mlp.0.bias", {d.mlp}});
    s.push_back({b + "mlp.2.weight", {D, d.mlp}}), s.push_back({b + "mlp.2.bias", {D}});
  }
  return s;
}

namespace {

// "vision_heads" of the dims file beside the checkpoint, or 0 when there is none.
int heads_from_dims_file(const std::string& checkpoint) {
  const std::filesystem::path file(checkpoint);
  const std::filesystem::path dims = file.parent_path() / "tiny_dims.json";
  std::ifstream in(dims);
  if (!in) return 0;
  nlohmann::json j;
  try {
    in >> j;
  } catch (const std::exception& e) {
    throw Error(str(dims.string(), ": not JSON (", e.what(), ")"), kExitInput);
  }
  const std::string stem = file.stem().string();
  if (!j.contains(stem) || !j[stem].contains("vision_heads")) return 0;
  return j[stem]["vision_heads"].get<int>();
}

}  // namespace

ClipDims read_clip_dims(const WeightSource& source) {
  const TensorInfo* patch = source.find("visual.patch_embedding.weight");
  const TensorInfo* pos = source.find("visual.pos_embedding");
  const TensorInfo* mlp = source.find("visual.transformer.0.mlp.0.weight");
  if (!patch || patch->shape.size() != 4 || !pos || pos->shape.size() != 3 || !mlp || mlp->shape.size() != 2)
    throw Error(str(source.path(), ": not a CLIP checkpoint (expected visual.patch_embedding.weight [dim, 3, p, p], ",
                    "visual.pos_embedding [1, tokens, dim] and visual.transformer.0.mlp.0.weight, as ",
                    "models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth holds)"),
                kExitInput);
  ClipDims d;
  d.dim = int(patch->shape[0]), d.patch = int(patch->shape[2]), d.mlp = int(mlp->shape[0]);
  const int grid = int(std::lround(std::sqrt(double(pos->shape[1] - 1))));
  d.image_size = grid * d.patch;
  d.layers = 0;
  while (source.find(str("visual.transformer.", d.layers, ".norm1.weight"))) ++d.layers;
  const int heads = heads_from_dims_file(source.path());
  d.heads = heads > 0 ? heads : d.dim == 1280 ? 16 : 0;
  if (d.heads <= 0 || d.dim % d.heads != 0 || d.layers < 2)
    throw Error(str(source.path(), ": a CLIP of width ", d.dim, " and ", d.layers,
                    " blocks is not the released ViT-H/14 (width 1280, 16 heads, 32 blocks) and no tiny_dims.json "
                    "beside it gives its vision_heads"),
                kExitInput);
  return d;
}

}  // namespace emb::encoders
