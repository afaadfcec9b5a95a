// Benchmark (never a timed test): DreamZero's frozen encoders at the released dimensions on the
// CPU backend, float32, random weights (bench_support: a bf16 safetensors checkpoint with the
// upstream names, written once under --checkpoint and reused):
//   vae   Wan2.1 VAE encode of one clip of --frames frames at --height × --width (upstream's
//         chunks: frame 0, then 4 at a time): frames per second
//   umt5  umT5-XXL over --texts texts of --tokens ids each, through --layers real-size blocks
//         (d 4096, 64 heads, FFN 10240; the 24-block encoder does not fit in memory here in fp32)
//         and the final norm, with a --vocab-row embedding (only gathered): tokens per second
//   clip  CLIP ViT-H/14 features of --images frames of --height × --width (bicubic to 224 on the
//         host, then --layers real-size blocks of the 31 the features use): images per second
// Prints one JSON object (tests/encoders/bench_dreamzero_torch.py adds PyTorch's time).
//   bench_dreamzero_encoders --encoder vae|umt5|clip [--frames 5] [--height 176] [--width 320]
//       [--texts 4] [--tokens 64] [--vocab 4096] [--layers L] [--images 2] [--repeats 3] [--checkpoint DIR]
#include <cmath>
#include <cstdio>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <string>

#include "bench_support.hpp"
#include "core/error.hpp"
#include "encoders/clip/clip_encoder.hpp"
#include "encoders/umt5/umt5_encoder.hpp"
#include "encoders/wan_vae/wan_vae_encoder.hpp"
#include "kernels/cpu/cpu_ops.hpp"

using namespace emb;
using namespace emb::encoders;

namespace {

struct Options {
  std::string encoder;
  int frames = 5, height = 176, width = 320, texts = 4, tokens = 64, vocab = 4096, layers = -1, images = 2,
      repeats = 3;
  std::string checkpoint = "/tmp/embtrain_bench_dreamzero";
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    int* number = k == "--frames"    ? &o.frames
                  : k == "--height"  ? &o.height
                  : k == "--width"   ? &o.width
                  : k == "--texts"   ? &o.texts
                  : k == "--tokens"  ? &o.tokens
                  : k == "--vocab"   ? &o.vocab
                  : k == "--layers"  ? &o.layers
                  : k == "--images"  ? &o.images
                  : k == "--repeats" ? &o.repeats
                                     : nullptr;
    if (number) *number = std::stoi(v);
    else if (k == "--encoder") o.encoder = v;
    else if (k == "--checkpoint") o.checkpoint = v;
    else throw Error("bench_dreamzero_encoders: unknown option " + k);
  }
  if (o.repeats < 1) throw Error("bench_dreamzero_encoders: --repeats must be at least 1");
  return o;
}

std::vector<float> uniform(size_t n, float lo, float hi, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

void require_finite(float x) {
  if (!std::isfinite(x)) throw Error("bench_dreamzero_encoders: non-finite output");
}

// What one encoder's run reports besides the timing: the work units of a pass (frames, tokens,
// images), their name and the dimensions the PyTorch side rebuilds.
struct Measured {
  double units = 0;
  std::string unit;
  nlohmann::json dims;
  double load_s = 0;
  bench::Timing timing;
};

Measured bench_vae(CpuOps& cpu, const Options& o, const std::string& file) {
  Measured m{double(o.frames), "frames", {{"frames", o.frames}, {"height", o.height}, {"width", o.width}}, 0, {}};
  const auto t = std::chrono::steady_clock::now();
  WanVaeEncoder vae(cpu, WeightSource(file), DType::f32);
  m.load_s = bench::seconds_since(t);
  vae.check_clip(o.frames, o.height, o.width, "the benchmark clip");
  const std::vector<float> video = uniform(size_t(o.frames) * o.height * o.width * 3, -1, 1, 3);
  m.timing = bench::time_passes(o.repeats, [&] { require_finite(vae.encode(video.data(), o.frames, o.height, o.width)[0]); });
  return m;
}

Measured bench_umt5(CpuOps& cpu, const Options& o, const std::string& file) {
  Measured m{
      double(o.texts) * o.tokens, "tokens", {{"texts", o.texts}, {"tokens", o.tokens}, {"vocab", o.vocab}}, 0, {}};
  const auto t = std::chrono::steady_clock::now();
  Umt5Encoder t5(cpu, WeightSource(file), DType::f32);
  m.load_s = bench::seconds_since(t);
  std::mt19937 gen(5);
  std::vector<std::vector<int32_t>> texts(size_t(o.texts), std::vector<int32_t>(size_t(o.tokens)));
  for (auto& text : texts)
    for (int32_t& id : text) id = int32_t(gen() % uint32_t(o.vocab));
  m.timing = bench::time_passes(o.repeats, [&] { require_finite(t5.encode(texts)[0]); });
  m.dims["layers"] = t5.dims().layers;
  m.dims["ids"] = texts;
  return m;
}

Measured bench_clip(CpuOps& cpu, const Options& o, const std::string& file) {
  Measured m{double(o.images), "images", {{"images", o.images}, {"height", o.height}, {"width", o.width}}, 0, {}};
  const auto t = std::chrono::steady_clock::now();
  ClipVisionEncoder clip(cpu, WeightSource(file), DType::f32);
  m.load_s = bench::seconds_since(t);
  const std::vector<float> frames = uniform(size_t(o.images) * o.height * o.width * 3, -1, 1, 7);
  m.timing = bench::time_passes(o.repeats,
                                [&] { require_finite(clip.features(frames.data(), o.images, o.height, o.width)[0]); });
  m.dims["layers"] = clip.dims().used_layers();
  return m;
}

// The checkpoint of each encoder at the released dimensions, `layers` blocks where given.
std::string write_checkpoint(const Options& o, double& write_s) {
  bench::TensorShapes shapes;
  std::string name;
  if (o.encoder == "vae") {
    shapes = vae_tensor_shapes(VaeDims::wan21());
    name = "Wan2.1_VAE_encoder";
  } else if (o.encoder == "umt5") {
    Umt5Dims d;
    d.vocab = o.vocab, d.layers = o.layers < 0 ? 2 : o.layers;
    shapes = umt5_tensor_shapes(d);
    name = str("umt5_xxl_l", d.layers, "_v", d.vocab);
  } else if (o.encoder == "clip") {
    // The tower runs blocks 0 .. L−2 of L: a checkpoint of `layers` + 1 blocks, the last one
    // (never run) present by the norm the block count is read from.
    ClipDims d;
    d.layers = (o.layers < 0 ? 4 : o.layers) + 1;
    shapes = clip_tensor_shapes(d);
    shapes.push_back({str("visual.transformer.", d.layers - 1, ".norm1.weight"), {d.dim}});
    name = str("clip_vit_h14_l", d.layers - 1);
  } else {
    throw Error("bench_dreamzero_encoders: --encoder must be vae, umt5 or clip, not '" + o.encoder + "'");
  }
  const std::string file = str(o.checkpoint, "/", name, ".safetensors");
  write_s = bench::write_random_checkpoint(file, shapes);
  return file;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    double write_s = 0;
    const std::string file = write_checkpoint(o, write_s);
    CpuOps cpu;
    const Measured m = o.encoder == "vae"    ? bench_vae(cpu, o, file)
                       : o.encoder == "umt5" ? bench_umt5(cpu, o, file)
                                             : bench_clip(cpu, o, file);
    const nlohmann::json j = {{"encoder", o.encoder},
                              {"dims", m.dims},
                              {"checkpoint", file},
                              {"checkpoint_write_s", write_s},
                              {"weights_load_s", m.load_s},
                              {"unit", m.unit},
                              {"units_per_pass", m.units},
                              {"forward_s", m.timing.median_s},
                              {"runs_s", m.timing.runs_s},
                              {"units_per_s", m.units / m.timing.median_s}};
    std::printf("%s\n", j.dump().c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_dreamzero_encoders: %s\n", e.what());
    return 1;
  }
  return 0;
}
