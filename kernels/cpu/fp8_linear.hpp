// The linear layer y = x W + b (W [in, out], MODEL.md) on the FP8 path, as DeepSeek-V3 and
// Transformer Engine's block-scaling recipe train it:
//   forward   y  = Q₁ₓ₁₂₈(x) · Q₁₂₈ₓ₁₂₈(W) + b
//   dgrad     dx += Q₁ₓ₁₂₈(dy) · Q₁₂₈ₓ₁₂₈(W)ᵀ      (dy in 1×128 tiles along out)
//   wgrad     dW += xᵀ · dy, db += Σ_rows dy       (unquantised: fp32 here, bf16 on the GPU)
// Q are the block quantisations of fp8_quantize.hpp, each product the GEMM of fp8_gemm.hpp.
// The weight gradient stays out of FP8 on purpose: it is reduced over every token of the step
// and accumulated into the fp32 master weights, so its error is not averaged away the way an
// activation's is; and an FP8 wgrad needs x and dy quantised a second time along the token
// dim (128×1 tiles, transposed copies), whose length in packed batches is ragged. DeepSeek-V3
// quantises it too; that would be an option to measure against this one.
// Backward outputs accumulate (kernels/cpu/README.md); null gradients are not computed.
#pragma once
#include <cstdint>
#include <vector>

namespace emb::cpu {

// A weight W [in, out] quantised once per step in 128×128 blocks: as stored (the dgrad operand)
// and transposed, [out, in] (the forward operand), the second from the first exactly
// (fp8_transpose_blocks).
struct Fp8Weight {
  int64_t in = 0, out = 0;
  std::vector<uint8_t> codes, codes_t;
  std::vector<float> scales, scales_t;
};
Fp8Weight quantize_fp8_weight(const float* W, int64_t in, int64_t out);

// y[N, out] = x[N, in] · W + b (b may be null). Scratch: x's codes and scales, per call.
void fp8_linear_forward(const float* x, const Fp8Weight& W, const float* b, float* y, int64_t N);
// dx += dy · Wᵀ in FP8; dW += xᵀ · dy and db += Σ_rows dy in fp32 (any of dx, dW, db may be
// null). Scratch: dy's codes and scales, per call.
void fp8_linear_backward(const float* x, const Fp8Weight& W, const float* dy, float* dx, float* dW, float* db,
                         int64_t N);

}  // namespace emb::cpu
