#include "backbone_features.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>

#include "core/error.hpp"
#include "data/h5_file.hpp"
#include "core/half.hpp"
#include "data/packed_format.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "encoders/tokenizers/eagle_prompt.hpp"
#include "generated/git_commit.hpp"
#include "kernels/make_ops.hpp"
#include "features_driver.hpp"
#include "progress.hpp"

namespace emb {

namespace {

using encoders::EagleBackbone;
using encoders::EagleSample;

DType storage_of(const FeaturesOptions& o) {
  if (o.precision == "fp32") return DType::f32;
  if (o.precision == "bf16") {
    if (o.device == "cpu") throw Error("features: --precision bf16 needs --device cuda (the CPU computes in fp32)", kExitInput);
    return DType::bf16;
  }
  if (o.precision != "auto") throw Error(str("features: --precision ", o.precision, ": expected auto, fp32 or bf16"), kExitInput);
  return o.device == "cuda" ? DType::bf16 : DType::f32;
}

// Where /features/vl came from: the backbone and its digest, the recipe,
// the preprocessing, the views and dims, the augmentation.
void record_provenance(const FeaturesOptions& o, const FeaturesReport& report, const std::string& views,
                       VarlenFeatures& vl) {
  vl.attributes = {{"backbone", "gr00t-n1.5 eagle2.5"},
                   {packed::kBackboneDigest, report.digest},
                   {"checkpoint", o.backbone},
                   {"recipe", str("embtrain ", EMBTRAIN_GIT_COMMIT)},
                   {"preprocessing",
                    "gr00t-n1.5 eval: centre crop 0.95, antialiased bilinear to the image size (float32), uint8, "
                    "(x - 127.5) / 127.5; prompt: the Eagle 2.5 chat template, views in order, the task text raw"},
                   {"views", views},
                   {"dims", report.dims},
                   {packed::kAugmentVariants, std::to_string(o.augment)}};
  if (o.augment > 0) vl.attributes["augment_seed"] = std::to_string(o.seed);
}

// The features of this rank's share (throws emb::Error on bad input; no collective inside).
PackedData compute_share(const FeaturesOptions& o, const World& world, FeaturesReport& report) {
  const auto start = std::chrono::steady_clock::now();
  const std::string eagle_folder = o.eagle_folder.empty() ? o.backbone + "/eagle2_hg_model" : o.eagle_folder;
  EpisodeShare share = read_episode_share(o.input, world);
  PackedData& p = share.data;
  if (p.family != "gr00t")
    throw Error(str(o.input, ": family ", p.family, ": the Eagle backbone computes gr00t vl features"), kExitInput);
  const std::vector<size_t> views = view_order(p, o.views, o.input);
  EMB_CHECK(o.batch > 0, "features: --batch must be positive");

  const tokenizers::Qwen2Tokenizer tokenizer(eagle_folder);
  std::unique_ptr<Ops> ops = make_ops(BackendConfig{o.device == "cuda" ? Device::cuda : Device::cpu}, world.local_rank);
  EagleBackbone backbone(*ops, o.backbone, eagle_folder, storage_of(o));
  const encoders::EagleDims& d = backbone.dims();
  report.digest = encoders::eagle_weights_digest(WeightSource(o.backbone));
  report.dims = encoders::describe(d);
  report.load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  std::map<int32_t, std::vector<int32_t>> prompts;  // by task
  auto prompt = [&](int32_t task) -> const std::vector<int32_t>& {
    auto it = prompts.find(task);
    if (it == prompts.end())
      it = prompts.emplace(task, tokenizers::gr00t_prompt(tokenizer, int(views.size()), p.task_text[size_t(task)],
                                                          d.tokens_per_image())
                                     .ids)
               .first;
    return it->second;
  };
  EMB_CHECK(o.augment >= 0, "features: --augment must be >= 0");
  // Variant -1: the eval features (/features/vl); 0 .. K-1 the augmented ones.
  std::vector<VarlenFeatures> variants(size_t(o.augment + 1));
  for (VarlenFeatures& v : variants) v.dim = d.llm_hidden;
  const int64_t first_step = share.first_step;
  const int64_t H = p.videos[views[0]].height, W = p.videos[views[0]].width;
  const int64_t frame_bytes = H * W * 3, patch_values = d.tokens_per_image() * d.patch_features();
  const int64_t V = int64_t(views.size());
  Progress progress(str("features (rank ", world.rank, " of ", world.size, ")"), p.steps(), o.progress, world.rank == 0);
  std::vector<uint8_t> frames(size_t(V * frame_bytes));
  for (int64_t s0 = 0, e = 0; s0 < p.steps(); s0 += o.batch) {
    const int64_t n = std::min<int64_t>(o.batch, p.steps() - s0);
    std::vector<EagleSample> batch;
    for (int64_t s = s0; s < s0 + n; ++s) {
      while (p.episode_offsets[size_t(e) + 1] <= s) ++e;
      batch.push_back({prompt(p.episode_task[size_t(e)]), int(V)});
    }
    for (int variant = -1; variant < o.augment; ++variant) {
      std::vector<float> rows(size_t(n * V * patch_values));
      for (int64_t s = s0; s < s0 + n; ++s) {
        for (int64_t v = 0; v < V; ++v)
          std::copy_n(p.videos[views[size_t(v)]].frames.data() + s * frame_bytes, frame_bytes,
                      frames.data() + v * frame_bytes);
        const encoders::FrameAugmentation drawn =
            encoders::draw_augmentation(H, W, o.seed, uint64_t(first_step + s), uint64_t(std::max(variant, 0)));
        const std::vector<uint8_t> u8 =
            encoders::gr00t_frames(frames.data(), V, H, W, d.image_size, variant < 0 ? nullptr : &drawn,
                                   str(o.input, ":", packed::kVideo, " step ", first_step + s));
        encoders::eagle_patch_rows(u8.data(), V, d.image_size, d.patch, rows.data() + (s - s0) * V * patch_values);
      }
      const std::vector<float> out = backbone.features(batch, rows.data());
      VarlenFeatures& vl = variants[size_t(variant + 1)];
      for (const EagleSample& sample : batch) vl.offsets.push_back(vl.offsets.back() + int64_t(sample.ids.size()));
      for (float x : out) vl.values.push_back(float_to_half(x));
    }
    progress.advance(n);
  }
  VarlenFeatures& vl = variants[0];
  record_provenance(o, report, joined_names(p, views), vl);
  p.features.clear();
  for (int k = 0; k < o.augment; ++k) p.features[str("vl_aug", k)] = std::move(variants[size_t(k + 1)]);
  p.features["vl"] = std::move(vl);
  return std::move(p);
}

}  // namespace

PackedData compute_backbone_features(const FeaturesOptions& o, const World& world, FeaturesReport& report) {
  const auto start = std::chrono::steady_clock::now();
  PackedData share = compute_share_agreed(world, [&] { return compute_share(o, world, report); });
  const std::vector<int64_t> sums = sum_over_ranks({share.steps(), share.features["vl"].offsets.back()}, world);
  report.steps = sums[0], report.tokens = sums[1];
  report.ranks = world.size;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return share;
}

}  // namespace emb
