#include "kernels/cpu/fp8_linear.hpp"

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/fp8_gemm.hpp"
#include "kernels/fp8_quantize.hpp"

namespace emb::cpu {

namespace {

// rows × cols quantised in 1×128 tiles.
struct Fp8Tiles {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  Fp8Tiles(const float* x, int64_t rows, int64_t cols)
      : codes(rows * cols), scales(fp8_scale_count(rows, cols, kFp8Tile)) {
    fp8_quantize(x, rows, cols, kFp8Tile, codes.data(), scales.data());
  }
};

}  // namespace

Fp8Weight quantize_fp8_weight(const float* W, int64_t in, int64_t out) {
  Fp8Weight q;
  q.in = in, q.out = out;
  q.codes.resize(in * out);
  q.codes_t.resize(in * out);
  q.scales.resize(fp8_scale_count(in, out, kFp8Block));
  q.scales_t.resize(q.scales.size());
  fp8_quantize(W, in, out, kFp8Block, q.codes.data(), q.scales.data());
  fp8_transpose_blocks(q.codes.data(), q.scales.data(), in, out, q.codes_t.data(), q.scales_t.data());
  return q;
}

void fp8_linear_forward(const float* x, const Fp8Weight& W, const float* b, float* y, int64_t N) {
  const Fp8Tiles xq(x, N, W.in);
  fp8_gemm(xq.codes.data(), xq.scales.data(), W.codes_t.data(), W.scales_t.data(), y, N, W.out, W.in, 0.0f);
  add_bias(y, b, N, W.out);
}

void fp8_linear_backward(const float* x, const Fp8Weight& W, const float* dy, float* dx, float* dW, float* db,
                         int64_t N) {
  if (dx) {
    const Fp8Tiles dyq(dy, N, W.out);
    fp8_gemm(dyq.codes.data(), dyq.scales.data(), W.codes.data(), W.scales.data(), dx, N, W.in, W.out, 1.0f);
  }
  // Without dx the fp32 linear backward never reads W.
  linear_backward(x, nullptr, dy, nullptr, dW, db, N, int(W.in), int(W.out));
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

// The reference of the FP8 recipe (fp8_linear.hpp), W quantised per call.
void CpuOps::fp8_linear_forward(const View& x, const View& W, const View& b, Activation act, const View& pre,
                                const View& y) {
  fp32_contiguous(check_fp8_linear_forward(x, W, b, act, pre, y));
  const cpu::Fp8Weight w = cpu::quantize_fp8_weight(cf(W), W.rows, W.cols);
  cpu::fp8_linear_forward(cf(x), w, cf(b), gemm_output(act, pre, y), x.rows);
  activation_epilogue(act, pre, y);
}

void CpuOps::fp8_linear_backward(const View& x, const View& W, Activation act, const View& pre, const View& dy,
                                 const View& dx, const View& dW, const View& db) {
  fp32_contiguous(check_fp8_linear_backward(x, W, act, pre, dy, dx, dW, db));
  const cpu::Fp8Weight w = cpu::quantize_fp8_weight(cf(W), W.rows, W.cols);
  cpu::fp8_linear_backward(cf(x), w, activation_input_gradient(act, pre, dy), f(dx), f(dW), f(db), x.rows);
}

}  // namespace emb
