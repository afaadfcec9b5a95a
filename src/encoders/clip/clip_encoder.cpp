#include "encoders/clip/clip_encoder.hpp"

#include "core/error.hpp"
#include "encoders/common/checkpoint_reader.hpp"
#include "encoders/common/linear_transpose.hpp"
#include "encoders/frames/resize.hpp"

namespace emb::encoders {

namespace {

TensorOwner clip_tensors(const ClipDims& d) {
  return {"CLIP tensor", "CLIP's visual tower",
          str("width ", d.dim, ", patch ", d.patch, " and image ", d.image_size, " from the patch and position ",
              "embeddings, ", d.layers, " blocks, MLP ", d.mlp)};
}

}  // namespace

ClipVisionEncoder::ClipVisionEncoder(Ops& ops, const WeightSource& source, DType storage)
    : ops_(ops),
      dims_(read_clip_dims(source)),
      weights_store_(std::make_unique<BackendTensors>(ops, storage)),
      scratch_(ops, storage) {
  const ClipDims& d = dims_;
  const CheckpointReader r(source, *weights_store_, clip_tensors(d));
  for (const auto& [name, shape] : clip_tensor_shapes(d)) r.check(name, shape);
  const int64_t D = d.dim, P = d.patch, F = 3 * P * P;
  // The patch conv [D, 3, P, P] as [3·P·P, D], each input channel's rows times 0.5/std_c, and
  // the bias Σ W·(0.5 − mean_c)/std_c the patch tokens get.
  const std::vector<float> conv = r.read("visual.patch_embedding.weight", {D, 3, P, P});
  std::vector<float> w(size_t(F * D));
  transpose_linear_into(conv.data(), D, F, w.data(), D, 0);
  std::vector<double> bias(size_t(D), 0.0);
  for (int64_t f = 0; f < F; ++f) {  // row f of W: a pixel of input channel c
    const int c = int(f / (P * P));
    float* row = &w[size_t(f * D)];
    for (int64_t o = 0; o < D; ++o) {
      bias[size_t(o)] += double(row[o]) * ((0.5 - double(kClipMean[c])) / double(kClipStd[c]));
      row[o] *= 0.5f / kClipStd[c];
    }
  }
  patch_w_ = r.packed(w, F, D);
  std::vector<float> prefix = r.read("visual.pos_embedding", {1, d.tokens(), D});
  const std::vector<float> cls = r.read("visual.cls_embedding", {1, 1, D});
  for (int64_t c = 0; c < D; ++c) prefix[size_t(c)] += cls[size_t(c)];
  for (int64_t t = 1; t < d.tokens(); ++t)
    for (int64_t c = 0; c < D; ++c) prefix[size_t(t * D + c)] += float(bias[size_t(c)]);
  prefix_ = r.upload(prefix, d.tokens(), D);
  pre_norm_w_ = r.vector("visual.pre_norm.weight", D), pre_norm_b_ = r.vector("visual.pre_norm.bias", D);
  for (int l = 0; l < d.used_layers(); ++l) {
    const std::string b = str("visual.transformer.", l, ".");
    PreNormBlockWeights k;
    k.ln1_w = r.vector(b + "norm1.weight", D), k.ln1_b = r.vector(b + "norm1.bias", D);
    k.qkv_w = r.linear(b + "attn.to_qkv.weight", D, 3 * D), k.qkv_b = r.vector(b + "attn.to_qkv.bias", 3 * D);
    k.out_w = r.linear(b + "attn.proj.weight", D, D), k.out_b = r.vector(b + "attn.proj.bias", D);
    k.ln2_w = r.vector(b + "norm2.weight", D), k.ln2_b = r.vector(b + "norm2.bias", D);
    k.fc1_w = r.linear(b + "mlp.0.weight", D, d.mlp), k.fc1_b = r.vector(b + "mlp.0.bias", d.mlp);
    k.fc2_w = r.linear(b + "mlp.2.weight", d.mlp, D), k.fc2_b = r.vector(b + "mlp.2.bias", D);
    blocks_.push_back(k);
  }
}

void ClipVisionEncoder::features(const View& pixels, int N, const View& out) {
  const ClipDims& d = dims_;
  const int64_t S = d.image_size, T = d.tokens(), D = d.dim, cells = int64_t(d.grid()) * d.grid();
  EMB_CHECK(N >= 0 && pixels.rows == N * S * S && pixels.cols == 3, "CLIP features: pixels must be [N·S·S, 3] = [",
            N * S * S, ", 3], not ", pixels.shape());
  EMB_CHECK(out.rows == N * T && out.cols == D, "CLIP features: out must be [", N * T, ", ", D, "], not ",
            out.shape());
  if (N == 0) return;
  scratch_.recycle();
  const View patches = scratch_.make(N * cells, 3 * d.patch * d.patch);
  const View tokens = scratch_.make(N * cells, D), x = scratch_.make(N * T, D);
  UnshuffleConfig u;
  u.batch = N, u.height = u.width = int(S), u.fs = d.patch;
  ops_.pixel_unshuffle_forward(pixels, patches, u);
  ops_.packed_linear_forward(patches, patch_w_, View{}, Activation::none, View{}, tokens);
  // Row n·T + 1 + p of x is patch p of image n; row n·T is its class token; then the prefix table.
  std::vector<int32_t> patch_rows(size_t(N * cells)), positions(size_t(N * T));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t p = 0; p < cells; ++p) patch_rows[size_t(n * cells + p)] = int32_t(n * T + 1 + p);
    for (int64_t t = 0; t < T; ++t) positions[size_t(n * T + t)] = int32_t(t);
  }
  const BackendIndex to_rows(ops_, patch_rows), position_rows(ops_, positions);
  ops_.zero(x);
  ops_.copy_rows(tokens, RowIndex{}, x, to_rows.rows());
  ops_.add_rows(prefix_, position_rows.rows(), x, RowIndex{});
  const PreNormBlockBuffers b{scratch_.make(N * T, D),  scratch_.make(N * T, 3 * D),
                              scratch_.make(N * T, D),  scratch_.make(N * T, D),
                              scratch_.make(N * T, d.mlp), scratch_.make(N * T, d.mlp),
                              scratch_.make(N * T, 1, DType::f32), scratch_.make(N * T, 1, DType::f32)};
  ops_.layernorm_forward(x, pre_norm_w_, pre_norm_b_, out, b.mean, b.rstd, d.eps);
  std::vector<int64_t> offsets(size_t(N) + 1);
  for (int64_t n = 0; n <= N; ++n) offsets[size_t(n)] = n * T;
  const PreNormBlockShape shape{d.heads, d.head_dim(), Activation::gelu_erf, d.eps};
  for (const PreNormBlockWeights& k : blocks_)
    pre_norm_block_forward(ops_, k, shape, AttnSegments{offsets.data(), nullptr, N}, out, b);
}

std::vector<float> ClipVisionEncoder::resize_to_input(const float* frames, int N, int H, int W) const {
  EMB_CHECK(N >= 0 && H > 0 && W > 0, "CLIP features: frames must be N × H × W × 3 with positive sizes, not ", N,
            " × ", H, " × ", W);
  const int64_t S = dims_.image_size;
  const frames::ResizeTable rows = frames::bicubic_table(H, S), cols = frames::bicubic_table(W, S);
  std::vector<float> pixels(size_t(N * S * S * 3));
  for (int64_t n = 0; n < N; ++n)
    frames::resize_hwc(frames + n * H * W * 3, 3, rows, cols, pixels.data() + n * S * S * 3);
  return pixels;
}

std::vector<float> ClipVisionEncoder::features(const float* frames, int N, int H, int W) {
  const std::vector<float> pixels = resize_to_input(frames, N, H, W);
  BackendTensors io(ops_, weights_store_->dtype());
  const View in = io.upload(pixels.data(), int64_t(N) * dims_.image_size * dims_.image_size, 3);
  const View out = io.make(int64_t(N) * dims_.tokens(), dims_.dim);
  features(in, N, out);
  return N ? download(ops_, out) : std::vector<float>{};
}

}  // namespace emb::encoders
