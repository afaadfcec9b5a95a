// Benchmarks of the CUDA kernels at the presets' sizes (GR00T-N1.5: D 1536, F 6144; DreamZero-5B:
// D 3072, 24 heads of 128, F 14336):
// achieved TFLOP/s (GEMM, attention) or GB/s (memory-bound kernels) and their fraction of the
// H100 SXM peaks (989 TFLOP/s dense bf16, 1979 dense FP8, 3.35 TB/s HBM3), and varlen attention
// forward + backward on a packed batch against the same samples padded to the longest one, for
// the SIMT kernels (hd 128) and the tensor-core ones (hd 48, 64, 128; H·hd = 3072; mma.sync, and
// wgmma on sm_90), forward, backward and both, and beside cuDNN's fused SDPA (forward, backward,
// both; its outputs checked against ours first).
// The Wan VAE's convolutions beside cuDNN's (bench_conv3d).
//   bench_kernels [out.json]   (default outputs/bench/cuda_kernels.json, rewritten after each
//                               section; skips without a GPU; EMBTRAIN_CUDA_WGMMA=0 leaves out
//                               the Hopper kernels, e.g. after they hung)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/adamw.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/conv3d.hpp"
#include "kernels/cuda/fp8_gemm.hpp"
#include "kernels/cuda/fp8_quantize.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/linear.hpp"
#include "kernels/cuda/norm_modulate.hpp"
#include "kernels/cuda/residual.hpp"
#include "kernels/cuda/rope.hpp"
#include "kernels/cuda/storage.cuh"
#include "tests/kernels/cuda/attention_implementations.hpp"
#ifdef EMB_WITH_CUDNN
#include "tests/kernels/cuda/cudnn_conv.hpp"
#include "tests/kernels/cuda/cudnn_sdpa.hpp"
#endif
#include "tests/kernels/cuda/test_support.hpp"

using namespace emb::cuda;
using namespace emb::cuda::testing;
using bf16 = __nv_bfloat16;

namespace {

constexpr double kPeakTflops = 989.0;      // H100 SXM dense bf16
constexpr double kPeakFp8Tflops = 1979.0;  // H100 SXM dense FP8 (3958 is the 2:4-sparse figure)
constexpr double kPeakGBs = 3350.0;        // H100 SXM HBM3

// Deterministic pseudo-random fill of float/bf16 buffers (others start zeroed) in [−1, 1) on the device (host generation is too slow at 10⁸).
template <class T>
__global__ void fill_kernel(T* x, int64_t n, uint32_t seed) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    uint32_t h = uint32_t(e) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[e] = from_f32<T>(float(h & 0xffffff) / float(1 << 23) - 1.0f);
  }
}

template <class T>
class Buffer {
 public:
  explicit Buffer(int64_t n, uint32_t seed = 1) {
    check_cuda(cudaMalloc(&p_, size_t(std::max<int64_t>(n, 1)) * sizeof(T)), "alloc");
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, bf16>) {
      EMB_LAUNCH(fill_kernel, grid_for(n, 256), 256, 0, nullptr)(p_, n, seed);
      check_launch("fill");
    } else {
      check_cuda(cudaMemset(p_, 0, size_t(std::max<int64_t>(n, 1)) * sizeof(T)), "memset");
    }
  }
  ~Buffer() { cudaFree(p_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  T* get() const { return p_; }

 private:
  T* p_ = nullptr;
};

std::unique_ptr<Buffer<int32_t>> upload_ints(const std::vector<int32_t>& v) {
  auto b = std::make_unique<Buffer<int32_t>>(int64_t(v.size()));
  check_cuda(cudaMemcpy(b->get(), v.data(), v.size() * 4, cudaMemcpyHostToDevice), "upload");
  return b;
}

// Median milliseconds of `iters` runs after 2 warm-ups.
double time_ms(const std::function<void()>& run, int iters = 10) {
  cudaEvent_t a, b;
  check_cuda(cudaEventCreate(&a), "event");
  check_cuda(cudaEventCreate(&b), "event");
  for (int w = 0; w < 2; ++w) run();
  std::vector<float> ms(iters);
  for (float& m : ms) {
    check_cuda(cudaEventRecord(a), "record");
    run();
    check_cuda(cudaEventRecord(b), "record");
    check_cuda(cudaEventSynchronize(b), "sync");
    check_cuda(cudaEventElapsedTime(&m, a, b), "elapsed");
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

struct Result {
  std::string name, shape;
  double ms, rate;  // TFLOP/s or GB/s
  bool flops;
  double peak;  // in the unit of rate
};
std::vector<Result> g_results;

// peak: kPeakTflops, or kPeakFp8Tflops for FP8 tensor-core work.
void record_flops(const std::string& name, const std::string& shape, double ms, double flop,
                  double peak = kPeakTflops) {
  const double tflops = flop / (ms * 1e-3) / 1e12;
  g_results.push_back({name, shape, ms, tflops, true, peak});
  std::printf("%-40s %-34s %9.3f ms %8.1f TFLOP/s (%.1f%% of peak)\n", name.c_str(), shape.c_str(), ms, tflops,
              100.0 * tflops / peak);
}

void record_bytes(const std::string& name, const std::string& shape, double ms, double bytes) {
  const double gbs = bytes / (ms * 1e-3) / 1e9;
  g_results.push_back({name, shape, ms, gbs, false, kPeakGBs});
  std::printf("%-40s %-34s %9.3f ms %8.1f GB/s (%.1f%% of peak)\n", name.c_str(), shape.c_str(), ms, gbs,
              100.0 * gbs / kPeakGBs);
}

std::string dims(std::initializer_list<int64_t> d) {
  std::string s;
  for (int64_t x : d) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

// Tokens and the (in, out) of the DreamZero-5B linears: attention projections, fc1, fc2 (the
// FP8 benchmark's shapes).
constexpr int64_t kLinearTokens = 8192;
struct LinearShape {
  int in, out;
};
constexpr LinearShape kLinearShapes[] = {{3072, 3072}, {3072, 14336}, {14336, 3072}};

// The linears of the presets (src/model/presets.cpp) at a micro-batch of 16384 tokens
// (tokens_per_mb of inputs/gr00t_n1.5_3b.in and dreamzero5b.in): a self-attention projection
// (D → D), the cross-attention k/v projection (d_ctx → D, over as many context rows), fc1 with
// its GELU epilogue (D → F) and fc2 (F → D). Forward, and backward (dx, dW, and db through
// BGRADA), in bf16; the plans are built in the warm-up, so the timings are of cached plans.
struct PresetLinear {
  const char* preset;
  const char* layer;
  int in, out;
  bool gelu;
};
constexpr int64_t kPresetTokens = 16384;
constexpr PresetLinear kPresetLinears[] = {
    {"gr00t_n1.5_3b", "attn proj", 1536, 1536, false},      {"gr00t_n1.5_3b", "cross k/v", 2048, 1536, false},
    {"gr00t_n1.5_3b", "fc1+gelu", 1536, 6144, true},        {"gr00t_n1.5_3b", "fc2", 6144, 1536, false},
    {"dreamzero5b", "attn proj", 3072, 3072, false},    {"dreamzero5b", "cross k/v", 4096, 3072, false},
    {"dreamzero5b", "fc1+gelu", 3072, 14336, true},     {"dreamzero5b", "fc2", 14336, 3072, false},
};

void bench_linear(const Blas& blas) {
  const int64_t N = kPresetTokens;
  for (const PresetLinear& l : kPresetLinears) {
    const int in = l.in, out = l.out;
    Buffer<bf16> x(N * in), W(int64_t(in) * out), b(out), pre(N * out), y(N * out), dy(N * out), dx(N * in),
        dW(int64_t(in) * out), db(out);
    const double flop = 2.0 * N * in * out;
    const std::string shape = dims({N, in, out});
    const std::string name = std::string(l.preset) + " " + l.layer;
    record_flops(name + " forward bf16", shape, time_ms([&] {
                   if (l.gelu)
                     linear_gelu_forward(blas, x.get(), W.get(), b.get(), pre.get(), y.get(), N, in, out, nullptr);
                   else
                     linear_forward(blas, x.get(), W.get(), b.get(), y.get(), N, in, out, nullptr);
                 }),
                 flop);
    record_flops(name + " backward bf16 (dx, dW, db)", shape, time_ms([&] {
                   linear_backward(blas, x.get(), W.get(), dy.get(), dx.get(), dW.get(), db.get(), N, in, out, nullptr);
                 }),
                 2 * flop);
  }
  std::printf("cuBLASLt plans cached: %zu, of which epilogues cuBLASLt refused (separate pass): %zu\n",
              blas.cached_plans(), blas.fallback_plans());
}

// The FP8 linear forward at the same shapes as bench_linear (W stored [out, in], quantised once
// per step, outside the timing): the activations' 1×128 quantisation, the block-scaled GEMM
// (bf16 output), and both, against the dense FP8 peak.
void bench_fp8(const Blas& blas) {
  const int64_t N = kLinearTokens;
  for (const LinearShape sh : kLinearShapes) {
    const int64_t in = sh.in, out = sh.out;
    Buffer<bf16> x(N * in), w(out * in), y(N * out);
    Buffer<__nv_fp8_e4m3> x_codes(N * in), w_codes(out * in);
    Buffer<float> x_scales(fp8_tile_scale_count(N, in)), w_scales(fp8_block_scale_count(out, in));
    fp8_quantize_blocks(w.get(), out, in, w_codes.get(), w_scales.get(), nullptr);
    auto quantize = [&] { fp8_quantize_tiles(x.get(), N, in, x_codes.get(), x_scales.get(), nullptr); };
    auto gemm = [&] {
      fp8_gemm(blas, x_codes.get(), x_scales.get(), w_codes.get(), w_scales.get(), y.get(), N, out, in, 0.0f, nullptr);
    };
    const double flop = 2.0 * N * in * out;
    record_bytes("fp8_quantize_tiles bf16 -> e4m3", dims({N, in}), time_ms(quantize),
                 double(N) * in * 3 + 4.0 * fp8_tile_scale_count(N, in));
    record_flops("fp8_gemm 1x128 x 128x128 blocks, bf16 out", dims({N, in, out}), time_ms(gemm), flop, kPeakFp8Tflops);
    record_flops("fp8 linear forward (quantize + gemm)", dims({N, in, out}), time_ms([&] {
                   quantize();
                   gemm();
                 }),
                 flop, kPeakFp8Tflops);
  }
}

// Token t of a sample of n tokens: the first half clean (grp 0), the second noisy (grp 1),
// each half in 4 blocks.
TokenIndex bench_token(int32_t sample, int t, int n) {
  const int half = n / 2, in_half = t < half ? t : t - half, size = std::max(1, t < half ? half : n - half);
  return {sample, std::min(3, in_half * 4 / size), t < half ? 0 : 1};
}

// Times an attention's forward, backward and both, counting the backward as FlashAttention does:
// five products (S recomputed, dP, dV, dQ, dK) against the forward's two, 2.5 times its FLOP.
void record_attention_passes(const std::string& name, const std::string& shape, double fwd_flop,
                             const std::function<void()>& fwd, const std::function<void()>& bwd) {
  record_flops(name + " fwd", shape, time_ms(fwd, 5), fwd_flop);
  record_flops(name + " bwd", shape, time_ms(bwd, 5), 2.5 * fwd_flop);
  record_flops(name + " fwd+bwd", shape, time_ms([&] { fwd(); bwd(); }, 5), 3.5 * fwd_flop);
}

// Packed: samples end to end. Padded: each sample padded to the longest, padding tokens
// belonging to their sample, i.e. the work a dense batched kernel does. H·hd = 3072.
template <class Impl>
void bench_attention(int hd) {
  const int H = 3072 / hd;
  const std::vector<int> lengths = {3100, 700, 1500, 2200, 900, 1800, 400, 2600};
  const int lmax = *std::max_element(lengths.begin(), lengths.end());
  for (AttnMask mask : {AttnMask::full, AttnMask::block_causal}) {
    for (bool padded : {false, true}) {
      std::vector<int32_t> seq, blk, grp;
      for (size_t s = 0; s < lengths.size(); ++s)
        for (int t = 0; t < (padded ? lmax : lengths[s]); ++t) {
          const TokenIndex tok = bench_token(int32_t(s), t, padded ? lmax : lengths[s]);
          seq.push_back(tok.seq);
          blk.push_back(tok.blk);
          grp.push_back(tok.grp);
        }
      const int64_t T_ = int64_t(seq.size());
      const auto seq_d = upload_ints(seq), blk_d = upload_ints(blk), grp_d = upload_ints(grp);
      AttnIndex idx;
      idx.mask = mask;
      idx.q_seq = idx.k_seq = seq_d->get();
      idx.q_blk = idx.k_blk = blk_d->get();
      idx.q_grp = idx.k_grp = grp_d->get();
      int64_t pairs = 0;  // allowed pairs of the packed batch: the useful work in both cases
      for (size_t s = 0; s < lengths.size(); ++s)
        for (int i = 0; i < lengths[s]; ++i)
          for (int j = 0; j < lengths[s]; ++j)
            pairs += tokens_attend(mask, bench_token(int32_t(s), i, lengths[s]), bench_token(int32_t(s), j, lengths[s]));
      const int64_t ld = int64_t(H) * hd;
      Buffer<bf16> q(T_ * ld, 1), k(T_ * ld, 2), v(T_ * ld, 3), out(T_ * ld), dout(T_ * ld, 4), dq(T_ * ld),
          dk(T_ * ld), dv(T_ * ld);
      Buffer<float> lse(T_ * H);
      Buffer<char> ws(int64_t(Impl::workspace_bytes(T_, T_, H, hd)));
      const double fwd_flop = 4.0 * double(pairs) * hd * H;
      const std::string name = std::string(Impl::name) + " bf16 " +
                               (mask == AttnMask::full ? "full" : "block_causal") + (padded ? " padded" : " packed");
      const std::string shape = "T" + std::to_string(T_) + " H" + std::to_string(H) + " hd" + std::to_string(hd);
      auto fwd = [&] {
        Impl::forward(q.get(), k.get(), v.get(), out.get(), lse.get(), T_, T_, H, hd, idx, ws.get(), nullptr);
      };
      auto bwd = [&] {
        Impl::backward(q.get(), k.get(), v.get(), out.get(), lse.get(), dout.get(), dq.get(), dk.get(), dv.get(), T_,
                       T_, H, hd, idx, ws.get(), nullptr);
      };
      // Rates count the packed batch's allowed pairs only: padding is wasted work.
      record_attention_passes(name, shape, fwd_flop, fwd, bwd);
    }
  }
}

#ifdef EMB_WITH_CUDNN
// max |a − b| and max |b| over n elements, into out[0..1] (zeroed by the caller): non-negative
// floats order as their bit patterns, so an integer atomicMax finds the largest.
__global__ void max_difference_kernel(const bf16* a, const bf16* b, int64_t n, unsigned* out) {
  float diff = 0.0f, ref = 0.0f;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x) {
    diff = fmaxf(diff, fabsf(to_f32(a[e]) - to_f32(b[e])));
    ref = fmaxf(ref, fabsf(to_f32(b[e])));
  }
  atomicMax(&out[0], __float_as_uint(diff));
  atomicMax(&out[1], __float_as_uint(ref));
}

// cuDNN's output against ours: max |cuDNN − ours| / max |ours|.
double relative_difference(const bf16* cudnn, const bf16* ours, int64_t n) {
  Buffer<unsigned> out(2);
  EMB_LAUNCH(max_difference_kernel, 264, 256, 0, nullptr)(cudnn, ours, n, out.get());
  check_launch("max_difference");
  unsigned host[2];
  check_cuda(cudaMemcpy(host, out.get(), sizeof(host), cudaMemcpyDeviceToHost), "download");
  float diff, ref;
  std::memcpy(&diff, &host[0], 4);
  std::memcpy(&ref, &host[1], 4);
  return ref > 0 ? double(diff) / ref : double(diff);
}
#endif

// Our tensor-core attention (mma.sync, and wgmma where selected on sm_90) next to cuDNN's fused
// SDPA, forward, backward and both, on the same GPU and the same work: B samples of S tokens
// (packed = padded), full mask, and causal (our block_causal with one block per token and one
// group is exactly causal). Rates count allowed pairs only. cuDNN's backward runs in its default
// mode (dQ accumulated in fp32, not deterministic: the one to time our atomic dQ against) and
// deterministic (ours without atomics). Both are checked first against the last of ours run (O,
// dQ, dK, dV), so a graph that computes something else is reported, not timed as if it were the
// reference. The issue's target: our fwd+bwd at least cuDNN's.
void bench_attention_vs_cudnn(int hd) {
  const int64_t B = 4, S = 4096, H = 3072 / hd, T_ = B * S, ld = H * hd;
  std::vector<int32_t> seq(static_cast<size_t>(T_)), blk(static_cast<size_t>(T_)), grp(static_cast<size_t>(T_), 0);
  for (int64_t t = 0; t < T_; ++t) seq[size_t(t)] = int32_t(t / S), blk[size_t(t)] = int32_t(t % S);
  const auto seq_d = upload_ints(seq), blk_d = upload_ints(blk), grp_d = upload_ints(grp);
  Buffer<bf16> q(T_ * ld, 1), k(T_ * ld, 2), v(T_ * ld, 3), out(T_ * ld), dout(T_ * ld, 4), dq(T_ * ld), dk(T_ * ld),
      dv(T_ * ld);
  Buffer<float> lse(T_ * H);
  // Enough for each of ours (the atomic dQ's sums the most).
  Buffer<char> ws(int64_t(WgmmaAtomicAttention::workspace_bytes(T_, T_, int(H), hd)));
  const std::string shape = "B" + std::to_string(B) + " S" + std::to_string(S) + " H" + std::to_string(H) + " hd" +
                            std::to_string(hd);
  for (bool causal : {false, true}) {
    const double pairs = causal ? double(B) * S * (S + 1) / 2 : double(B) * S * S;
    const double flop = 4.0 * pairs * hd * H;
    AttnIndex idx;
    idx.mask = causal ? AttnMask::block_causal : AttnMask::full;
    idx.q_seq = idx.k_seq = seq_d->get();
    idx.q_blk = idx.k_blk = blk_d->get();
    idx.q_grp = idx.k_grp = grp_d->get();
    const std::string mask = causal ? " causal" : " full";
    std::string last_ours;  // whose outputs out, dq, dk, dv hold
    auto ours = [&](auto impl) {
      using Impl = decltype(impl);
      const auto fwd = [&] {
        Impl::forward(q.get(), k.get(), v.get(), out.get(), lse.get(), T_, T_, int(H), hd, idx, ws.get(), nullptr);
      };
      const auto bwd = [&] {
        Impl::backward(q.get(), k.get(), v.get(), out.get(), lse.get(), dout.get(), dq.get(), dk.get(), dv.get(), T_,
                       T_, int(H), hd, idx, ws.get(), nullptr);
      };
      record_attention_passes(std::string(Impl::name) + " bf16" + mask, shape, flop, fwd, bwd);
      // The gradients accumulate over the timed runs: cuDNN's check needs those of one backward.
      for (bf16* g : {dq.get(), dk.get(), dv.get()})
        check_cuda(cudaMemset(g, 0, size_t(T_ * ld) * sizeof(bf16)), "zero the gradients");
      fwd();
      bwd();
      last_ours = Impl::name;
    };
    ours(MmaAttention{});
    if (attention_wgmma_selected(0)) {
      ours(WgmmaAttention{});
      ours(WgmmaAtomicAttention{});
    }
#ifdef EMB_WITH_CUDNN
    Buffer<bf16> out_c(T_ * ld), dq_c(T_ * ld), dk_c(T_ * ld), dv_c(T_ * ld);
    Buffer<float> stats_c(T_ * H);
    for (bool deterministic : {false, true}) {
      const std::string name = std::string("cudnn_sdpa") + (deterministic ? " deterministic" : "") + " bf16";
      try {
        CudnnSdpa sdpa(SdpaShape{B, S, H, hd, causal, deterministic});
        auto fwd = [&] { sdpa.forward(q.get(), k.get(), v.get(), out_c.get(), stats_c.get(), nullptr); };
        auto bwd = [&] {
          sdpa.backward(q.get(), k.get(), v.get(), out_c.get(), stats_c.get(), dout.get(), dq_c.get(), dk_c.get(),
                        dv_c.get(), nullptr);
        };
        fwd();
        bwd();
        check_cuda(cudaDeviceSynchronize(), "cuDNN SDPA");
        const double worst = std::max({relative_difference(out_c.get(), out.get(), T_ * ld),
                                       relative_difference(dq_c.get(), dq.get(), T_ * ld),
                                       relative_difference(dk_c.get(), dk.get(), T_ * ld),
                                       relative_difference(dv_c.get(), dv.get(), T_ * ld)});
        // bf16 outputs of sums over 4096 keys in different orders: a few bf16 ulps of the largest.
        const bool agrees = worst < 2e-2;
        std::printf("%s%s hd %d: max |cuDNN - %s| / max |%s| over O, dQ, dK, dV = %.2e: %s\n", name.c_str(),
                    mask.c_str(), hd, last_ours.c_str(), last_ours.c_str(), worst, agrees ? "agrees" : "DIFFERS");
        if (!agrees) continue;
        record_attention_passes(name + mask, shape, flop, fwd, bwd);
      } catch (const std::exception& e) {
        std::printf("%s%s hd %d: skipped: %s\n", name.c_str(), mask.c_str(), hd, e.what());
      }
    }
#else
    std::printf("cudnn_sdpa: skipped: built without cuDNN\n");
#endif
  }
}

// The Wan VAE's convolutions at DreamZero-14B's DROID clip (352 × 640, chunks of 4 frames as
// upstream: a k3 conv reads its 2 kept frames + 4, so 6 frames in, 4 out; 2 + 2 at half
// resolution, 2 + 1 at quarter), bf16: ours (conv3d.cu; tensor cores where Ci % 8 == 0) and
// cuDNN's fastest algorithm on the same work, after a check that both compute the same (cuDNN's
// KTRSC filter is ours [T·R·S·C, K] transposed). The issue's target: ours at cuDNN's speed.
void bench_conv3d() {
  struct Shape {
    const char* what;
    int frames, height, width, kt, k, stride, pad, Ci, Co;
  };
  const Shape shapes[] = {
      {"conv1 k3 3->96", 6, 352, 640, 3, 3, 1, 1, 3, 96},
      {"stage 0 k3 96->96", 6, 352, 640, 3, 3, 1, 1, 96, 96},
      {"stage 1 k3 192->192", 4, 176, 320, 3, 3, 1, 1, 192, 192},
      {"stage 2 k3 384->384", 3, 88, 160, 3, 3, 1, 1, 384, 384},
      {"down2d 96 s2", 4, 352, 640, 1, 3, 2, 0, 96, 96},
  };
  for (const Shape& s : shapes) {
    emb::ConvConfig c;
    c.frames = s.frames, c.height = s.height, c.width = s.width, c.kt = s.kt, c.kh = c.kw = s.k;
    c.sh = c.sw = s.stride, c.pad_top = c.pad_bottom = c.pad_left = c.pad_right = s.pad;
    const int64_t in_rows = c.in_rows(), out_rows = c.out_rows(), K = c.taps() * s.Ci;
    Buffer<bf16> x(in_rows * s.Ci, 1), w(K * s.Co, 2), y(out_rows * s.Co);
    const double flop = 2.0 * double(out_rows) * double(K) * s.Co;
    const std::string shape = dims({c.frames, c.height, c.width, s.Ci}) + " -> " + std::to_string(s.Co);
    const auto ours = [&] { conv3d_forward<bf16>(x.get(), s.Ci, w.get(), nullptr, y.get(), s.Co, c, nullptr); };
    record_flops(std::string("conv3d ") + s.what + " bf16", shape, time_ms(ours), flop);
#ifdef EMB_WITH_CUDNN
    try {
      CudnnConv cudnn(c, s.Ci, s.Co);
      // cuDNN's filter [Co][kt][kh][kw][Ci] from ours [(tap·Ci + ci)][co].
      std::vector<bf16> ours_w(size_t(K * s.Co)), theirs(ours_w.size());
      check_cuda(cudaMemcpy(ours_w.data(), w.get(), ours_w.size() * sizeof(bf16), cudaMemcpyDeviceToHost), "w");
      for (int64_t k = 0; k < K; ++k)
        for (int64_t o = 0; o < s.Co; ++o) theirs[size_t(o * K + k)] = ours_w[size_t(k * s.Co + o)];
      Buffer<bf16> w_c(K * s.Co), y_c(cudnn.out_rows() * s.Co);
      check_cuda(cudaMemcpy(w_c.get(), theirs.data(), theirs.size() * sizeof(bf16), cudaMemcpyHostToDevice), "w");
      const std::string algo = cudnn.choose(x.get(), w_c.get(), y_c.get());
      const auto run = [&] { cudnn.forward(x.get(), w_c.get(), y_c.get()); };
      run();
      ours();
      check_cuda(cudaDeviceSynchronize(), "cuDNN conv");
      const double diff = cudnn.out_rows() == out_rows ? relative_difference(y_c.get(), y.get(), out_rows * s.Co) : 1.0;
      std::printf("cudnn conv %s (%s): max |cuDNN - ours| / max |ours| = %.2e: %s\n", s.what, algo.c_str(), diff,
                  diff < 2e-2 ? "agrees" : "DIFFERS");
      if (diff < 2e-2) record_flops(std::string("cudnn conv ") + s.what + " bf16", shape, time_ms(run), flop);
    } catch (const std::exception& e) {
      std::printf("cudnn conv %s: skipped: %s\n", s.what, e.what());
    }
#else
    std::printf("cudnn conv: skipped: built without cuDNN\n");
#endif
  }
}

// The DiT block's memory-bound kernels at both presets' widths (bf16, 16384 tokens). Bytes are
// what each kernel must move (every operand read or written once); the unfused sequence is
// reported against the fused kernel's bytes, i.e. as the effective rate of the same work.
void bench_norms(int64_t N, int C) {
  Buffer<bf16> x(N * C), r(N * C), mod(N * 6 * C), x_in(N * C), normed(N * C), y(N * C), dy(N * C), dx(N * C),
      dmod(N * 6 * C);
  Buffer<float> mean(N), rstd(N);
  const bf16* none = nullptr;
  bf16 *scale = mod.get(), *shift = mod.get() + C, *gate = mod.get() + 2 * C;
  const std::string shape = dims({N, C});
  const double row = double(N) * C * sizeof(bf16);
  record_bytes("layernorm+modulate forward (y, normed)", shape, time_ms([&] {
                 residual_norm_modulate_forward(NormKind::layer, x.get(), none, 0, none, (bf16*)nullptr, none, none,
                                                scale, shift, 6 * C, normed.get(), y.get(), mean.get(), rstd.get(), N,
                                                C, 1e-6f, nullptr);
               }),
               5 * row);  // x, scale, shift read; normed, y written
  record_bytes("gated residual + layernorm+modulate fused", shape, time_ms([&] {
                 residual_norm_modulate_forward(NormKind::layer, x.get(), gate, 6 * C, r.get(), x_in.get(), none, none,
                                                scale, shift, 6 * C, normed.get(), y.get(), mean.get(), rstd.get(), N,
                                                C, 1e-6f, nullptr);
               }),
               9 * row);  // x, gate, r, scale, shift read; x, x_in, normed, y written
  record_bytes("gated residual + copy + layernorm+modulate unfused", shape, time_ms([&] {
                 gated_residual_forward(x.get(), gate, 6 * C, r.get(), N, C, nullptr);
                 check_cuda(cudaMemcpyAsync(x_in.get(), x.get(), size_t(row), cudaMemcpyDeviceToDevice), "copy");
                 residual_norm_modulate_forward(NormKind::layer, x.get(), none, 0, none, (bf16*)nullptr, none, none,
                                                scale, shift, 6 * C, normed.get(), y.get(), mean.get(), rstd.get(), N,
                                                C, 1e-6f, nullptr);
               }),
               9 * row);
  record_bytes("layernorm+modulate backward", shape, time_ms([&] {
                 norm_modulate_backward(NormKind::layer, x.get(), none, none, scale, 6 * C, mean.get(), rstd.get(),
                                        dy.get(), dx.get(), (bf16*)nullptr, (bf16*)nullptr, dmod.get(),
                                        dmod.get() + C, N, C, nullptr, nullptr);
               }),
               9 * row);  // x, scale, dy read; dx, dscale, dshift read and written
  record_bytes("gated residual forward", shape,
               time_ms([&] { gated_residual_forward(x.get(), gate, 6 * C, r.get(), N, C, nullptr); }),
               4 * row);  // x read and written, gate, y read
  record_bytes("gated residual backward", shape, time_ms([&] {
                 gated_residual_backward(gate, 6 * C, r.get(), dx.get(), dy.get(), dmod.get() + 2 * C, N, C, nullptr);
               }),
               7 * row);  // gate, y, dx read; dy, dgate read and written
  // The parameter gradients in fp32 beside bf16 data (model.precision = bf16).
  Buffer<float> dweight(C), dbias(C);
  Buffer<double> column_sum_scratch(int64_t(kColumnSumScratchBytes / sizeof(double)));
  const bf16* w = mod.get() + 3 * C;  // any C values
  record_bytes("column_sum bf16 into fp32", shape, time_ms([&] {
                 column_sum(N, C, dweight.get(), MatrixEntry<bf16>{dy.get(), C}, column_sum_scratch.get(), nullptr);
               }),
               row);  // dy read
  record_bytes("layernorm backward dx, dweight, dbias", shape, time_ms([&] {
                 norm_modulate_backward(NormKind::layer, x.get(), w, none, none, 0, mean.get(), rstd.get(), dy.get(),
                                        dx.get(), dweight.get(), dbias.get(), (bf16*)nullptr, (bf16*)nullptr, N, C,
                                        column_sum_scratch.get(), nullptr);
               }),
               4 * row);  // x, dy read; dx read and written (the column sums read x and dy again)
}

void bench_memory_bound() {
  for (int C : {1536, 3072}) bench_norms(kPresetTokens, C);
  const int64_t N = 8192;
  const int C = 3072;
  {
    Buffer<bf16> x(N * C);
    std::vector<int32_t> pos(size_t(N) * 3);
    for (int64_t t = 0; t < N; ++t) pos[t * 3] = int32_t(t / 256), pos[t * 3 + 1] = int32_t(t / 16 % 16), pos[t * 3 + 2] = int32_t(t % 16);
    const auto pos_d = upload_ints(pos);
    record_bytes("rope 3d forward bf16 (24 heads of 128)", dims({N, C}),
                 time_ms([&] { rope_forward(x.get(), pos_d->get(), N, 24, 128, RopeMode::d3, nullptr, nullptr); }),
                 2.0 * N * C * 2);
  }
  {
    const int64_t n = N * 14336;
    Buffer<bf16> x(n), y(n), dy(n), dx(n);
    record_bytes("gelu_tanh forward bf16", dims({N, 14336}),
                 time_ms([&] { activation_forward(Activation::gelu_tanh, x.get(), y.get(), n, nullptr); }), 2.0 * n * 2);
    record_bytes("gelu_tanh backward bf16", dims({N, 14336}), time_ms([&] {
                   activation_backward(Activation::gelu_tanh, x.get(), dy.get(), dx.get(), n, nullptr);
                 }),
                 4.0 * n * 2);
  }
  {
    const int64_t n = int64_t(1) << 27;  // 134M parameters in 4 shards
    Buffer<float> p(n), m(n), v(n);
    Buffer<bf16> g(n), copy(n);
    std::vector<AdamWTensor<bf16>> t;
    for (int s = 0; s < 4; ++s) {
      const int64_t o = s * (n / 4);
      t.push_back({p.get() + o, g.get() + o, m.get() + o, v.get() + o, copy.get() + o, n / 4, 1.0f});
    }
    check_cuda(cudaMemset(v.get(), 0, size_t(n) * 4), "memset");
    Buffer<double> ws(kSumSquaresWorkspace);
    const AdamWConfig cfg;
    record_bytes("adamw (sum squares + step, bf16 grads)", dims({n}), time_ms([&] {
                   global_sum_squares(t.data(), 4, ws.get(), nullptr);
                   adamw_step(t.data(), 4, cfg, 10, 1.0f, 1.0f, ws.get(), nullptr);
                 }),
                 // g read twice, p/m/v read and written, bf16 copy written
                 double(n) * (2 * 2 + 3 * 8 + 2));
  }
}

// Written under a temporary name and renamed, so a crash never leaves a partial file.
void write_json(const std::string& path) {
  if (std::filesystem::path(path).has_parent_path())
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), "properties");
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp);
    f << "{\n  \"device\": \"" << prop.name << "\",\n  \"peak_tflops_bf16\": " << kPeakTflops
      << ",\n  \"peak_tflops_fp8\": " << kPeakFp8Tflops << ",\n  \"peak_gbs\": " << kPeakGBs
      << ",\n  \"kernels\": [\n";
    for (size_t i = 0; i < g_results.size(); ++i) {
      const Result& r = g_results[i];
      f << "    {\"name\": \"" << r.name << "\", \"shape\": \"" << r.shape << "\", \"ms\": " << r.ms << ", \""
        << (r.flops ? "tflops" : "gbs") << "\": " << r.rate
        << ", \"fraction_of_peak\": " << r.rate / r.peak << "}"
        << (i + 1 < g_results.size() ? ",\n" : "\n");
    }
    f << "  ]\n}\n";
    EMB_CHECK(f.good(), path, ": could not write the benchmark results");
  }
  std::filesystem::rename(tmp, path);
  std::printf("wrote %s\n", path.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  if (!cuda_device_present()) {
    std::printf("skipped: no CUDA device\n");
    return 0;
  }
  try {
    const std::string path = argc > 1 ? argv[1] : "outputs/bench/cuda_kernels.json";
    Blas blas;
    // Each section's results are written as soon as it ends, so a section that hangs or fails on
    // a first GPU run (the run tool's time limit) leaves the earlier ones on disk.
    const std::vector<std::function<void()>> sections = {
        [&] { bench_linear(blas); },
        [&] { bench_fp8(blas); },
        [] { bench_attention<SimtAttention>(128); },
        [] {
          for (int hd : {48, 64, 128}) bench_attention<MmaAttention>(hd);
        },
        [] {
          if (attention_wgmma_selected(0))
            for (int hd : {48, 64, 128}) {
              bench_attention<WgmmaAttention>(hd);
              bench_attention<WgmmaAtomicAttention>(hd);
            }
        },
        [] {
          for (int hd : {48, 64, 128}) bench_attention_vs_cudnn(hd);
        },
        [] { bench_memory_bound(); },
        [] { bench_conv3d(); },
    };
    for (const auto& section : sections) {
      section();
      write_json(path);
    }
  } catch (const std::exception& e) {
    std::printf("bench_kernels: %s\n", e.what());
    return 1;
  }
  return 0;
}
