// Benchmark (never a timed test): GR00T-N1.5's Eagle backbone at the released dimensions on the
// CPU backend, the samples per second of `vl` features for S samples of V views (random
// 256 × 256 frames through GR00T's pipeline, the real Eagle 2.5 prompt of an instruction).
// The weights are random (N(0, 0.02), norms 1) in a bf16 safetensors checkpoint written once to
// --checkpoint (2.7 GB at the released size; reused when its shapes match). --vision-layers and
// --llm-layers shorten the towers for quick looks; the per-layer cost is the released one.
// Prints one JSON object (tests/encoders/bench_eagle_torch.py reads it and adds PyTorch's time).
//   bench_eagle_backbone [--samples S] [--views V] [--repeats R] [--vision-layers L] [--llm-layers L]
//                        [--checkpoint DIR] [--tokenizer DIR]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "bench_support.hpp"
#include "core/error.hpp"
#include "encoders/eagle/eagle_backbone.hpp"
#include "encoders/eagle/frame_transform.hpp"
#include "encoders/tokenizers/eagle_prompt.hpp"
#include "kernels/cpu/cpu_ops.hpp"

using namespace emb;
using namespace emb::encoders;

namespace {

struct Options {
  int samples = 2, views = 1, repeats = 3, vision_layers = 27, llm_layers = 12;
  std::string checkpoint = "/tmp/embtrain_bench_eagle", tokenizer = std::string(PROJECT_SOURCE_DIR) +
                                                                    "/../shared/fixtures/eagle2_5_tokenizer";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--samples") o.samples = std::stoi(v);
    else if (k == "--views") o.views = std::stoi(v);
    else if (k == "--repeats") o.repeats = std::stoi(v);
    else if (k == "--vision-layers") o.vision_layers = std::stoi(v);
    else if (k == "--llm-layers") o.llm_layers = std::stoi(v);
    else if (k == "--checkpoint") o.checkpoint = v;
    else if (k == "--tokenizer") o.tokenizer = v;
    else throw Error("bench_eagle_backbone: unknown option " + k);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    EagleDims d;  // the released dimensions (Isaac-GR00T's eagle2_hg_model/config.json, select_layer 12)
    d.vision_layers = o.vision_layers, d.select_layer = o.llm_layers;
    const std::string file = str(o.checkpoint, "/eagle_v", d.vision_layers, "_l", d.select_layer, ".safetensors");
    const double write_s = bench::write_random_checkpoint(file, eagle_tensor_shapes(d));
    CpuOps cpu;
    auto t = std::chrono::steady_clock::now();
    EagleBackbone backbone(cpu, d, WeightSource(file), DType::f32);
    const double load_s = bench::seconds_since(t);
    const tokenizers::Qwen2Tokenizer tokenizer(o.tokenizer);
    const std::string instruction = "pick the pear from the counter and place it in the plate";
    const tokenizers::EaglePrompt prompt = tokenizers::gr00t_prompt(tokenizer, o.views, instruction);
    std::mt19937 gen(3);
    std::vector<uint8_t> frames(size_t(o.views) * 256 * 256 * 3);
    for (uint8_t& b : frames) b = uint8_t(gen());
    t = std::chrono::steady_clock::now();
    std::vector<float> rows;
    for (int s = 0; s < o.samples; ++s) {
      const std::vector<uint8_t> u8 = gr00t_frames(frames.data(), o.views, 256, 256, d.image_size, nullptr, "bench");
      std::vector<float> r(size_t(o.views) * d.tokens_per_image() * d.patch_features());
      eagle_patch_rows(u8.data(), o.views, d.image_size, d.patch, r.data());
      rows.insert(rows.end(), r.begin(), r.end());
    }
    const double preprocess_s = bench::seconds_since(t) / o.samples;
    const std::vector<EagleSample> batch(size_t(o.samples), EagleSample{prompt.ids, o.views});
    const bench::Timing timing = bench::time_passes(o.repeats, [&] {
      const std::vector<float> vl = backbone.features(batch, rows.data());
      if (!std::isfinite(vl[0])) throw Error("bench_eagle_backbone: non-finite features");
    });
    const double forward_s = timing.median_s;
    // FLOPs as spec_eagle.md §9 counts them (2 × MACs; attention as executed: causal half).
    const double n_tok = double(prompt.ids.size()), T = d.tokens_per_image(), Dv = d.vision_hidden;
    const double E = d.llm_hidden, Iv = d.vision_intermediate, Il = d.llm_intermediate;
    const double q = double(d.llm_heads) * d.head_dim, kv = double(d.llm_kv_heads) * d.head_dim;
    const double image = 2 * T * Dv * d.patch_features() +
                         d.vision_layers * (2 * T * (4 * Dv * Dv + 2 * Dv * Iv) + 4 * T * T * Dv) + 2 * T * Dv * E;
    const double llm = d.select_layer * (n_tok * (2 * E * (q + 2 * kv) + 2 * q * E + 6 * E * Il) +
                                         2 * q * n_tok * (n_tok + 1));
    const double flop_per_sample = o.views * image + llm;
    nlohmann::json j = {{"samples", o.samples},
                        {"views", o.views},
                        {"prompt_tokens", prompt.ids.size()},
                        {"vision_layers", d.vision_layers},
                        {"llm_layers", d.select_layer},
                        {"checkpoint", file},
                        {"checkpoint_write_s", write_s},
                        {"weights_load_s", load_s},
                        {"preprocess_s_per_sample", preprocess_s},
                        {"forward_s", forward_s},
                        {"runs_s", timing.runs_s},
                        {"samples_per_s", o.samples / forward_s},
                        {"gflop_per_sample", flop_per_sample / 1e9},
                        {"gflops", flop_per_sample * o.samples / forward_s / 1e9},
                        {"ids", prompt.ids}};
    std::printf("%s\n", j.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_eagle_backbone: %s\n", e.what());
    return 1;
  }
  return 0;
}
