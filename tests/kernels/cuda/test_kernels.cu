// Every CUDA kernel against a naive double-precision reference written here, on random inputs,
// ragged packed batches and every attention mask, for fp32 and bf16 storage; the FP8 kernels
// against the reference of kernels/fp8_*.cpp (no BLAS, no OpenMP: linked into this test, which
// still builds with nvcc alone). Inputs are first rounded to the storage type so both sides see
// the same values; errors are normwise (test_support.hpp).
// The tile-skipping logic and the E4M3 codec are checked on the host first, so that part runs
// without a GPU; the device checks print "skipped: no CUDA device" and pass when there is none.
// Built against the emulation (EMBTRAIN_CUDA=EMULATE) every test runs on the host, each under
// two schedules whose results must be bit-identical. `cuda_test_kernels NAME` runs only the
// tests whose name contains NAME (e.g. "attention").
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>

#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/adamw.hpp"
#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/attention_wgmma.hpp"
#include "kernels/cuda/channel_rmsnorm.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/conv3d.hpp"
#include "kernels/cuda/dropout.hpp"
#include "kernels/cuda/embedding.hpp"
#include "kernels/cuda/encoder_attention.hpp"
#include "kernels/cuda/fp8_gemm.hpp"
#include "kernels/cuda/fp8_quantize.hpp"
#include "kernels/cuda/gated_activation.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/linear.hpp"
#include "kernels/cuda/loss.hpp"
#include "kernels/cuda/mma.cuh"
#include "kernels/cuda/mma_tiles.cuh"
#include "kernels/cuda/norm_modulate.hpp"
#include "kernels/cuda/pixel_unshuffle.hpp"
#include "kernels/cuda/residual.hpp"
#include "kernels/cuda/rope.hpp"
#include "kernels/cuda/rope_half.hpp"
#include "kernels/cuda/tma.cuh"
#include "kernels/cuda/wgmma.cuh"
#include "kernels/dropout_keep.hpp"
#include "kernels/fp8_e4m3.hpp"
#include "kernels/fp8_gemm.hpp"
#include "kernels/fp8_quantize.hpp"
#include "kernels/ops.hpp"
#include "tests/error_of.hpp"
#include "tests/kernels/cuda/attention_implementations.hpp"
#include "tests/kernels/cuda/packed_index.hpp"
#include "tests/kernels/cuda/test_support.hpp"
#include "tests/kernels/unshuffle_reference.hpp"

using namespace emb::cuda;
using namespace emb::cuda::testing;
using Ref = std::vector<double>;
using emb::ConvConfig;
using emb::UnshuffleConfig;
using emb::TeacherForcing;
using emb::AttnBiasKind;

namespace {

int g_failures = 0;

void expect_close(const std::string& what, double err, double tol) {
  const bool ok = err <= tol && std::isfinite(err);
  if (!ok) ++g_failures;
  std::printf("%s %-58s err %.3e (tol %.1e)\n", ok ? "ok  " : "FAIL", what.c_str(), err, tol);
}

template <class T>
const char* dtype() {
  return std::is_same_v<T, float> ? "fp32" : "bf16";
}
// fp32 tolerance, or the bf16 one (outputs rounded to 8 bits of mantissa).
template <class T>
double tol(double fp32, double bf16) {
  return std::is_same_v<T, float> ? fp32 : bf16;
}

Ref to_ref(const std::vector<float>& v) { return Ref(v.begin(), v.end()); }

void sync() { check_cuda(cudaDeviceSynchronize(), "sync"); }

// ---- host-only: the tile summaries never skip a tile pair with an allowed pair -------------

int64_t tiles(int64_t T) { return (T + kAttnTile - 1) / kAttnTile; }

// teacher_forcing runs on DreamZero's sequences (random_dreamzero_index), windows cutting blocks.
PackedIndex index_for(AttnMask mask, int samples, int pad_tail, std::mt19937& rng) {
  if (mask == AttnMask::teacher_forcing) return random_dreamzero_index(samples, 4, 2, 1, 24, 20, pad_tail, rng);
  return random_packed_index(samples, 3, 12, 20, pad_tail, rng);
}

void test_tile_skipping() {
  std::mt19937 rng(7);
  const AttnMask masks[] = {AttnMask::full, AttnMask::block_causal, AttnMask::prefix, AttnMask::cross,
                            AttnMask::teacher_forcing};
  for (AttnMask kind : masks) {
    const PackedIndex p = index_for(kind, 6, 40, rng);
    const MaskRule mask(kind, p.tf);
    const bool cross = kind == AttnMask::cross;
    const int64_t Tq = int64_t(p.seq.size()), Tk = cross ? int64_t(p.cseq.size()) : Tq;
    auto q_at = [&](int64_t i) { return token_at(p.seq.data(), p.blk.data(), p.grp.data(), i, Tq); };
    auto k_at = [&](int64_t j) {
      return cross ? token_at(p.cseq.data(), nullptr, nullptr, j, Tk) : token_at(p.seq.data(), p.blk.data(), p.grp.data(), j, Tk);
    };
    int64_t missed = 0, skipped = 0, within_sample = 0;
    for (int64_t qt = 0; qt < tiles(Tq); ++qt)
      for (int64_t kt = 0; kt < tiles(Tk); ++kt) {
        TileSummary qs = empty_tile(), ks = empty_tile();
        bool any = false;
        for (int r = 0; r < kAttnTile; ++r) {
          add_token(qs, q_at(qt * kAttnTile + r));
          add_token(ks, k_at(kt * kAttnTile + r));
        }
        for (int a = 0; a < kAttnTile; ++a)
          for (int b = 0; b < kAttnTile; ++b) any |= tokens_attend(mask, q_at(qt * kAttnTile + a), k_at(kt * kAttnTile + b));
        const bool may = tiles_may_attend(mask, qs, ks);
        missed += any && !may;
        skipped += !may;
        within_sample += !may && qs.seq_min == qs.seq_max && qs.seq_min == ks.seq_min && ks.seq_min == ks.seq_max;
      }
    const std::string name = std::string("tile summaries, mask ") + std::to_string(int(kind));
    expect_close(name + ": tiles with allowed pairs skipped", double(missed), 0.0);
    // A packed batch of 6 samples has tile pairs across samples: some must be skipped.
    expect_close(name + ": skips some tiles (1 = none skipped)", skipped > 0 ? 0.0 : 1.0, 0.0);
    // The teacher-forcing summaries also skip tile pairs inside one sample (clean past, windows).
    if (kind == AttnMask::teacher_forcing)
      expect_close(name + ": skips tiles within a sample (1 = none)", within_sample > 0 ? 0.0 : 1.0, 0.0);
  }
}

// ---- linear ---------------------------------------------------------------------------------

// y = x W + b over rows, W [in, out]
Ref linear_ref(const std::vector<float>& x, const std::vector<float>& W, const std::vector<float>& b, int64_t N,
               int in, int out, int64_t w_off = 0, int64_t b_off = 0) {
  Ref y(size_t(N) * out);
  for (int64_t i = 0; i < N; ++i)
    for (int o = 0; o < out; ++o) {
      double s = b[b_off + o];
      for (int c = 0; c < in; ++c) s += double(x[i * in + c]) * W[w_off + int64_t(c) * out + o];
      y[i * out + o] = s;
    }
  return y;
}

template <class T>
void test_linear(const Blas& blas) {
  std::mt19937 rng(1);
  const int64_t N = 37;
  const int in = 48, out = 80;
  const auto x = stored<T>(random_normal(N * in, rng)), W = stored<T>(random_normal(in * out, rng, 0.2f)),
             b = stored<T>(random_normal(out, rng)), dy = stored<T>(random_normal(N * out, rng));
  const auto dx0 = stored<T>(random_normal(N * in, rng)), dW0 = stored<T>(random_normal(in * out, rng)),
             db0 = stored<T>(random_normal(out, rng));
  DeviceArray<T> x_d(x), W_d(W), b_d(b), y_d(N * out), dy_d(dy), dx_d(dx0), dW_d(dW0), db_d(db0);
  linear_forward(blas, x_d.get(), W_d.get(), b_d.get(), y_d.get(), N, in, out, nullptr);
  linear_backward(blas, x_d.get(), W_d.get(), dy_d.get(), dx_d.get(), dW_d.get(), db_d.get(), N, in, out, nullptr);
  sync();
  Ref dx = to_ref(dx0), dW = to_ref(dW0), db = to_ref(db0);
  for (int64_t i = 0; i < N; ++i)
    for (int o = 0; o < out; ++o) {
      const double g = dy[i * out + o];
      db[o] += g;
      for (int c = 0; c < in; ++c) {
        dx[i * in + c] += g * W[c * out + o];
        dW[c * out + o] += g * x[i * in + c];
      }
    }
  const std::string tag = std::string("linear ") + dtype<T>();
  expect_close(tag + " forward y", relative_error(y_d.download(), linear_ref(x, W, b, N, in, out)), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward dx", relative_error(dx_d.download(), dx), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward dW", relative_error(dW_d.download(), dW), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward db", relative_error(db_d.download(), db), tol<T>(1e-5, 1e-2));
}

double gelu_tanh_ref(double v) {
  return 0.5 * v * (1 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
}

// pre = x W + b, y = gelu(pre) through the GELU_AUX(_BIAS) epilogue (out a multiple of 8) or the
// separate pass (out = 37), with and without a bias. Each shape runs twice on other buffers: the
// second call reuses the cached plan, which must take that call's pointers, and adds no plan.
template <class T>
void test_linear_gelu(const Blas& blas, int out, bool with_bias) {
  std::mt19937 rng(11);
  const int64_t N = 29;
  const int in = 40;
  const std::string tag = std::string("linear_gelu out ") + std::to_string(out) + (with_bias ? " bias " : " ") +
                          dtype<T>();
  size_t plans = 0;
  for (int call = 0; call < 2; ++call) {
    const auto x = stored<T>(random_normal(N * in, rng)), W = stored<T>(random_normal(in * out, rng, 0.3f));
    const auto b = with_bias ? stored<T>(random_normal(out, rng)) : std::vector<float>(out, 0.0f);
    DeviceArray<T> x_d(x), W_d(W), b_d(b), pre_d(N * out), y_d(N * out);
    linear_gelu_forward(blas, x_d.get(), W_d.get(), with_bias ? b_d.get() : nullptr, pre_d.get(), y_d.get(), N, in,
                        out, nullptr);
    sync();
    const Ref pre = linear_ref(x, W, b, N, in, out);
    Ref y(pre.size());
    for (size_t e = 0; e < pre.size(); ++e) y[e] = gelu_tanh_ref(pre[e]);
    const std::string c = tag + " call " + std::to_string(call);
    expect_close(c + " pre", relative_error(pre_d.download(), pre), tol<T>(1e-4, 1e-2));
    expect_close(c + " y", relative_error(y_d.download(), y), tol<T>(1e-4, 1e-2));
    if (call == 0) plans = blas.cached_plans();
  }
  expect_close(tag + " plans added by the second call", double(blas.cached_plans() - plans), 0.0);
#ifdef EMB_CUDA_EMULATE
  // The stand-in offers GELU_AUX(_BIAS) and BGRADA: no plan may have fallen back.
  expect_close(tag + " epilogue fallbacks", double(blas.fallback_plans()), 0.0);
#else
  // cuBLASLt may refuse an epilogue on some GPU or version: correct either way, slower if so.
  std::printf("info %s: %zu epilogue plan(s) refused by cuBLASLt (separate pass)\n", tag.c_str(),
              blas.fallback_plans());
#endif
}

#ifdef EMB_CUDA_EMULATE
// An epilogue cuBLASLt refuses (the stand-in refuses DGELU_BGRAD; a GPU may refuse GELU_AUX or
// BGRADA for a shape or version) makes Blas::gemm return false without running or throwing,
// which sends linear.cu to its separate pass; the refusal is cached and counted once.
void test_refused_epilogue() {
  const Blas blas;
  DeviceArray<float> a(std::vector<float>(64, 1.0f)), d(std::vector<float>(64, 2.0f)), bias(8), aux(64);
  GemmShape shape;
  shape.m = shape.n = shape.k = shape.lda = shape.ldb = shape.ldd = shape.aux_ld = 8;
  shape.epilogue = CUBLASLT_EPILOGUE_DGELU_BGRAD;
  GemmOperands ops;
  ops.A = ops.B = a.get();
  ops.D = d.get();
  ops.bias = bias.get();
  ops.aux = aux.get();
  const int ran = blas.gemm(shape, ops, nullptr) + blas.gemm(shape, ops, nullptr);
  expect_close("refused epilogue: GEMMs run", ran, 0.0);
  expect_close("refused epilogue: plans refused, minus 1", std::abs(double(blas.fallback_plans()) - 1.0), 0.0);
  expect_close("refused epilogue: D untouched", relative_error(d.download(), Ref(64, 2.0)), 0.0);
}
#endif

template <class T>
void test_linear_emb(const Blas& blas) {
  std::mt19937 rng(2);
  const int64_t N = 29;
  const int in = 24, out = 40, E = 3;
  std::vector<int32_t> emb(N);
  std::uniform_int_distribution<int> pick(0, 1);  // embodiment 2 stays empty on purpose
  for (auto& e : emb) e = pick(rng);
  const emb::EmbGrouping rows = emb::group_rows_by_embodiment(emb.data(), N, E);
  const auto x = stored<T>(random_normal(N * in, rng)), W = stored<T>(random_normal(E * in * out, rng, 0.2f)),
             b = stored<T>(random_normal(E * out, rng)), dy = stored<T>(random_normal(N * out, rng));
  const auto dx0 = stored<T>(random_normal(N * in, rng)), dW0 = stored<T>(random_normal(E * in * out, rng)),
             db0 = stored<T>(random_normal(E * out, rng));
  DeviceArray<T> x_d(x), W_d(W), b_d(b), y_d(N * out), dy_d(dy), dx_d(dx0), dW_d(dW0), db_d(db0);
  DeviceArray<int32_t> perm_d(static_cast<size_t>(N));
  check_cuda(cudaMemcpy(perm_d.get(), rows.perm.data(), N * 4, cudaMemcpyHostToDevice), "perm");
  DeviceArray<char> scratch(linear_emb_scratch_bytes(N, in, out, sizeof(T)));
  linear_emb_forward(blas, x_d.get(), W_d.get(), b_d.get(), perm_d.get(), rows.offsets.data(), y_d.get(), N, in, out, E,
                     scratch.get(), nullptr);
  linear_emb_backward(blas, x_d.get(), W_d.get(), perm_d.get(), rows.offsets.data(), dy_d.get(), dx_d.get(), dW_d.get(),
                      db_d.get(), N, in, out, E, scratch.get(), nullptr);
  sync();
  Ref y(size_t(N) * out), dx = to_ref(dx0), dW = to_ref(dW0), db = to_ref(db0);
  for (int64_t i = 0; i < N; ++i) {
    const int64_t e = emb[i];
    const std::vector<float> xi(x.begin() + i * in, x.begin() + (i + 1) * in);
    const Ref yi = linear_ref(xi, W, b, 1, in, out, e * in * out, e * out);
    for (int o = 0; o < out; ++o) {
      y[i * out + o] = yi[o];
      const double g = dy[i * out + o];
      db[e * out + o] += g;
      for (int c = 0; c < in; ++c) {
        dx[i * in + c] += g * W[e * in * out + c * out + o];
        dW[e * in * out + c * out + o] += g * x[i * in + c];
      }
    }
  }
  const std::string tag = std::string("linear_emb ") + dtype<T>();
  expect_close(tag + " forward y", relative_error(y_d.download(), y), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward dx", relative_error(dx_d.download(), dx), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward dW", relative_error(dW_d.download(), dW), tol<T>(1e-4, 1e-2));
  expect_close(tag + " backward db", relative_error(db_d.download(), db), tol<T>(1e-5, 1e-2));
}

// ---- attention ------------------------------------------------------------------------------

struct AttnRef {
  Ref out, lse, dq, dk, dv;
};

// Dense double softmax attention per (row, head) with the scalar mask, and its gradients.
AttnRef attention_ref(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                      const std::vector<float>& dout, int64_t Tq, int64_t Tk, int H, int hd, const MaskRule& mask,
                      const std::vector<TokenIndex>& qi, const std::vector<TokenIndex>& kj) {
  AttnRef r{Ref(size_t(Tq) * H * hd), Ref(size_t(Tq) * H), Ref(size_t(Tq) * H * hd), Ref(size_t(Tk) * H * hd),
            Ref(size_t(Tk) * H * hd)};
  const int64_t ld = int64_t(H) * hd;
  const double scale = 1.0 / std::sqrt(double(hd));
  std::vector<double> s(static_cast<size_t>(Tk)), dp(static_cast<size_t>(Tk));
  for (int h = 0; h < H; ++h)
    for (int64_t i = 0; i < Tq; ++i) {
      double mx = -INFINITY;
      for (int64_t j = 0; j < Tk; ++j) {
        s[j] = -INFINITY;
        if (!tokens_attend(mask, qi[i], kj[j])) continue;
        double d = 0.0;
        for (int c = 0; c < hd; ++c) d += double(q[i * ld + h * hd + c]) * k[j * ld + h * hd + c];
        s[j] = d * scale;
        mx = std::max(mx, s[j]);
      }
      if (mx == -INFINITY) {
        r.lse[i * H + h] = -INFINITY;
        continue;
      }
      double sum = 0.0;
      for (int64_t j = 0; j < Tk; ++j) sum += std::exp(s[j] - mx);
      const double lse = mx + std::log(sum);
      r.lse[i * H + h] = lse;
      double D = 0.0;
      for (int64_t j = 0; j < Tk; ++j) {
        const double p = std::exp(s[j] - lse);
        double d = 0.0;
        for (int c = 0; c < hd; ++c) {
          r.out[i * ld + h * hd + c] += p * v[j * ld + h * hd + c];
          d += double(dout[i * ld + h * hd + c]) * v[j * ld + h * hd + c];
        }
        dp[j] = d;
        D += p * d;
      }
      for (int64_t j = 0; j < Tk; ++j) {
        const double p = std::exp(s[j] - lse);
        if (p == 0.0) continue;
        const double ds = p * (dp[j] - D) * scale;
        for (int c = 0; c < hd; ++c) {
          r.dq[i * ld + h * hd + c] += ds * k[j * ld + h * hd + c];
          r.dk[j * ld + h * hd + c] += ds * q[i * ld + h * hd + c];
          r.dv[j * ld + h * hd + c] += p * dout[i * ld + h * hd + c];
        }
      }
    }
  return r;
}

// A packed index in device memory.
struct DevicePackedIndex {
  DeviceArray<int32_t> seq, blk, grp, cseq;
  TeacherForcing tf;
  explicit DevicePackedIndex(const PackedIndex& p)
      : seq(p.seq.size()), blk(p.blk.size()), grp(p.grp.size()), cseq(p.cseq.size()), tf(p.tf) {
    check_cuda(cudaMemcpy(seq.get(), p.seq.data(), p.seq.size() * 4, cudaMemcpyHostToDevice), "seq");
    check_cuda(cudaMemcpy(blk.get(), p.blk.data(), p.blk.size() * 4, cudaMemcpyHostToDevice), "blk");
    check_cuda(cudaMemcpy(grp.get(), p.grp.data(), p.grp.size() * 4, cudaMemcpyHostToDevice), "grp");
    check_cuda(cudaMemcpy(cseq.get(), p.cseq.data(), p.cseq.size() * 4, cudaMemcpyHostToDevice), "cseq");
  }
  AttnIndex index(AttnMask mask) const {
    const bool cross = mask == AttnMask::cross;
    AttnIndex idx;
    idx.mask = mask;
    idx.q_seq = seq.get();
    idx.q_blk = blk.get();
    idx.q_grp = grp.get();
    idx.k_seq = cross ? cseq.get() : seq.get();
    idx.k_blk = cross ? nullptr : blk.get();
    idx.k_grp = cross ? nullptr : grp.get();
    idx.tf = tf;
    return idx;
  }
};

template <class T, class Impl>
void test_attention(AttnMask mask, int hd, int pad_tail) {
  std::mt19937 rng(100 + hd + int(mask));
  const PackedIndex p = mask == AttnMask::teacher_forcing ? random_dreamzero_index(3, 3, 2, 1, 4, 17, pad_tail, rng)
                                                          : random_packed_index(3, 3, 9, 17, pad_tail, rng);
  const bool cross = mask == AttnMask::cross;
  const int H = 2;
  const int64_t Tq = int64_t(p.seq.size()), Tk = cross ? int64_t(p.cseq.size()) : Tq;
  std::vector<TokenIndex> qi, kj;
  for (int64_t i = 0; i < Tq; ++i) qi.push_back({p.seq[i], p.blk[i], p.grp[i]});
  for (int64_t j = 0; j < Tk; ++j) kj.push_back(cross ? TokenIndex{p.cseq[j], 0, 0} : qi[j]);
  const auto q = stored<T>(random_normal(Tq * H * hd, rng)), k = stored<T>(random_normal(Tk * H * hd, rng)),
             v = stored<T>(random_normal(Tk * H * hd, rng)), dout = stored<T>(random_normal(Tq * H * hd, rng));
  const auto dq0 = stored<T>(random_normal(Tq * H * hd, rng)), dk0 = stored<T>(random_normal(Tk * H * hd, rng)),
             dv0 = stored<T>(random_normal(Tk * H * hd, rng));
  DeviceArray<T> q_d(q), k_d(k), v_d(v), out_d(Tq * H * hd), dout_d(dout), dq_d(dq0), dk_d(dk0), dv_d(dv0);
  DeviceArray<float> lse_d(Tq * H);
  const DevicePackedIndex dev(p);
  const AttnIndex idx = dev.index(mask);
  DeviceArray<char> ws(Impl::workspace_bytes(Tq, Tk, H, hd));
  Impl::forward(q_d.get(), k_d.get(), v_d.get(), out_d.get(), lse_d.get(), Tq, Tk, H, hd, idx, ws.get(), nullptr);
  Impl::backward(q_d.get(), k_d.get(), v_d.get(), out_d.get(), lse_d.get(), dout_d.get(), dq_d.get(), dk_d.get(),
                 dv_d.get(), Tq, Tk, H, hd, idx, ws.get(), nullptr);
  sync();
  AttnRef r = attention_ref(q, k, v, dout, Tq, Tk, H, hd, MaskRule(mask, p.tf), qi, kj);
  for (size_t e = 0; e < r.dq.size(); ++e) r.dq[e] += dq0[e];
  for (size_t e = 0; e < r.dk.size(); ++e) r.dk[e] += dk0[e];
  for (size_t e = 0; e < r.dv.size(); ++e) r.dv[e] += dv0[e];
  // lse is compared on rows that have keys (padding rows are −inf on both sides).
  std::vector<float> lse = lse_d.download();
  double lse_err = 0.0;
  for (size_t e = 0; e < lse.size(); ++e) {
    if (std::isinf(r.lse[e]) && std::isinf(lse[e]) && lse[e] < 0) continue;
    lse_err = std::max(lse_err, std::fabs(lse[e] - r.lse[e]) / std::max(1.0, std::fabs(r.lse[e])));
  }
  const std::string tag = std::string(Impl::name) + " " + dtype<T>() + " mask " + std::to_string(int(mask)) + " hd " +
                          std::to_string(hd) + (pad_tail ? " padded" : "");
  expect_close(tag + " out", relative_error(out_d.download(), r.out), tol<T>(1e-4, 1e-2));
  expect_close(tag + " lse", lse_err, tol<T>(1e-5, 1e-5));
  expect_close(tag + " dq", relative_error(dq_d.download(), r.dq), tol<T>(1e-4, 2e-2));
  expect_close(tag + " dk", relative_error(dk_d.download(), r.dk), tol<T>(1e-4, 2e-2));
  expect_close(tag + " dv", relative_error(dv_d.download(), r.dv), tol<T>(1e-4, 2e-2));
}

// Tiles with no allowed pair are never loaded: samples of the given lengths (multiples of 64:
// tile-aligned; grp 0 then grp 1, two blocks each; as many context tokens each), the q, k, v,
// dout (and context) rows of the last sample NaN. A poisoned tile that were loaded would spread
// NaN into the other samples through P·V, dS·K or Pᵀ·dO even where P = 0, so every other
// sample's out, lse, dq, dk, dv must still match the reference. With 192, 64, 64, 64 it also
// runs 4 to 5 streamed tiles per block (pipeline reuse), and in attention_wgmma's block of rows
// 128 .. 255 one warpgroup reads the 3 tiles of sample 0 while the other skips them (its releases
// must stay in phase); with 64, 256, 64, 64 the forward's first warpgroup reads a tile, then skips
// the 4 of sample 1 that the other reads (holding the first one's stage meanwhile deadlocks the
// 4-stage ring); with
// 320, 64 both warpgroups of the first block read 5 tiles, so that the forward's 4 stages are
// refilled while a warp may still hold one (a stage released before its P·V retired is refilled
// under it).
template <class T, class Impl>
void test_attention_skips_other_samples(AttnMask mask, const std::vector<int>& lengths) {
  const int samples = int(lengths.size()), H = 2, hd = 64, poisoned = samples - 1;
  PackedIndex p;
  for (int s = 0; s < samples; ++s)
    for (int tok = 0; tok < lengths[s]; ++tok) {
      const int half = lengths[s] / 2;
      p.seq.push_back(s);
      p.grp.push_back(tok / half);
      p.blk.push_back(tok % half / (half / 2));
      p.cseq.push_back(s);
    }
  const bool cross = mask == AttnMask::cross;
  const int64_t n = int64_t(p.seq.size()), ld = int64_t(H) * hd;
  std::vector<TokenIndex> qi, kj;
  for (int64_t i = 0; i < n; ++i) qi.push_back({p.seq[i], p.blk[i], p.grp[i]});
  for (int64_t j = 0; j < n; ++j) kj.push_back(cross ? TokenIndex{p.cseq[j], 0, 0} : qi[j]);
  std::mt19937 rng(7 + int(mask));
  auto poison = [&](std::vector<float> x, const std::vector<TokenIndex>& side) {
    for (int64_t i = 0; i < n; ++i)
      if (side[i].seq == poisoned) std::fill(x.begin() + i * ld, x.begin() + (i + 1) * ld, NAN);
    return x;
  };
  const auto q = stored<T>(random_normal(n * ld, rng)), k = stored<T>(random_normal(n * ld, rng)),
             v = stored<T>(random_normal(n * ld, rng)), dout = stored<T>(random_normal(n * ld, rng));
  DeviceArray<T> q_d(poison(q, qi)), k_d(poison(k, kj)), v_d(poison(v, kj)), out_d(n * ld), dout_d(poison(dout, qi)),
      dq_d(std::vector<float>(n * ld, 0.0f)),
      dk_d(std::vector<float>(n * ld, 0.0f)), dv_d(std::vector<float>(n * ld, 0.0f));
  DeviceArray<float> lse_d(n * H);
  const DevicePackedIndex dev(p);
  const AttnIndex idx = dev.index(mask);
  DeviceArray<char> ws(Impl::workspace_bytes(n, n, H, hd));
  Impl::forward(q_d.get(), k_d.get(), v_d.get(), out_d.get(), lse_d.get(), n, n, H, hd, idx, ws.get(), nullptr);
  Impl::backward(q_d.get(), k_d.get(), v_d.get(), out_d.get(), lse_d.get(), dout_d.get(), dq_d.get(), dk_d.get(),
                 dv_d.get(), n, n, H, hd, idx, ws.get(), nullptr);
  sync();
  // unpoisoned: the same clean rows
  const AttnRef r = attention_ref(q, k, v, dout, n, n, H, hd, MaskRule(mask, p.tf), qi, kj);
  // The rows of the clean samples (width values per token) of a result and of its reference.
  auto clean = [&](const std::vector<float>& got, const Ref& ref, int64_t width) {
    std::vector<float> g;
    Ref e;
    for (int64_t i = 0; i < n; ++i)
      if (p.seq[i] != poisoned) {
        g.insert(g.end(), got.begin() + i * width, got.begin() + (i + 1) * width);
        e.insert(e.end(), ref.begin() + i * width, ref.begin() + (i + 1) * width);
      }
    return relative_error(g, e);
  };
  std::string tag = std::string(Impl::name) + " " + dtype<T>() + " mask " + std::to_string(int(mask)) + " samples";
  for (int length : lengths) tag += " " + std::to_string(length);
  tag += ", poisoned last";
  expect_close(tag + " out", clean(out_d.download(), r.out, ld), tol<T>(1e-4, 1e-2));
  expect_close(tag + " lse", clean(lse_d.download(), r.lse, H), tol<T>(1e-5, 1e-5));
  expect_close(tag + " dq", clean(dq_d.download(), r.dq, ld), tol<T>(1e-4, 2e-2));
  expect_close(tag + " dk", clean(dk_d.download(), r.dk, ld), tol<T>(1e-4, 2e-2));
  expect_close(tag + " dv", clean(dv_d.download(), r.dv, ld), tol<T>(1e-4, 2e-2));
}

// The forward's error for a real query without an allowed key ("" when it did not throw).
template <class Impl, class T>
std::string keyless_error(const T* q, const T* kv, T* out, float* lse, int64_t Tq, int64_t Tk, const AttnIndex& idx) {
  DeviceArray<char> ws(Impl::workspace_bytes(Tq, Tk, 1, 64));
  return emb::test::error_of([&] { Impl::forward(q, kv, kv, out, lse, Tq, Tk, 1, 64, idx, ws.get(), nullptr); });
}

// The CPU's edge-case behaviour (tests/kernels/test_attention.cpp): an empty context (Tk = 0,
// no zero-sized grid) or a real row without an allowed key is the CPU's error; padding-only
// queries without keys give 0 and lse −inf and no gradient; a NaN query makes its row's
// output, lse and dq NaN and leaves other samples finite.
template <class T, class Impl>
void test_attention_edge_cases() {
  std::mt19937 rng(31);
  PackedIndex p = random_packed_index(3, 2, 9, 17, 0, rng);
  const int64_t Tq = int64_t(p.seq.size()), Tc = int64_t(p.cseq.size()), hd = 64;
  DeviceArray<T> q(random_normal(Tq * hd, rng)), kv(random_normal(std::max(Tq, Tc) * hd, rng)), out(Tq * hd);
  DeviceArray<float> lse(Tq);
  const std::string tag = std::string(Impl::name) + " " + dtype<T>();
  {
    const DevicePackedIndex dev(p);
    AttnIndex idx = dev.index(AttnMask::cross);
    idx.k_seq = nullptr;
    const std::string e = keyless_error<Impl>(q.get(), kv.get(), out.get(), lse.get(), Tq, 0, idx);
    expect_close(tag + " Tk = 0 is the CPU's error (mismatch)",
                 e != "attention: query token 0 (seq 0) has no allowed key under mask cross", 0.0);
  }
  {
    PackedIndex lost = p;
    int64_t first = -1;
    for (int64_t i = 0; i < Tq && first < 0; ++i) first = p.seq[i] == 1 ? i : -1;
    for (int32_t& s : lost.cseq) s = s == 1 ? -1 : s;  // sample 1 loses its context
    const DevicePackedIndex dev(lost);
    const std::string e =
        keyless_error<Impl>(q.get(), kv.get(), out.get(), lse.get(), Tq, Tc, dev.index(AttnMask::cross));
    expect_close(tag + " keyless real row is the CPU's error (mismatch)",
                 e != "attention: query token " + std::to_string(first) + " (seq 1) has no allowed key under mask cross",
                 0.0);
  }
  {
    PackedIndex padding = p;
    for (int32_t& s : padding.seq) s = -1;
    const DevicePackedIndex dev(padding);
    AttnIndex idx = dev.index(AttnMask::cross);
    idx.k_seq = nullptr;
    DeviceArray<T> dq(std::vector<float>(Tq * hd, 1.0f));
    DeviceArray<char> ws(Impl::workspace_bytes(Tq, 0, 1, int(hd)));
    Impl::forward(q.get(), kv.get(), kv.get(), out.get(), lse.get(), Tq, 0, 1, int(hd), idx, ws.get(), nullptr);
    Impl::backward(q.get(), kv.get(), kv.get(), out.get(), lse.get(), q.get(), dq.get(), (T*)nullptr, (T*)nullptr, Tq,
                   0, 1, int(hd), idx, ws.get(), nullptr);
    sync();
    double bad = 0;
    for (float o : out.download()) bad += o != 0.0f;
    for (float l : lse.download()) bad += l != -INFINITY;
    for (float g : dq.download()) bad += g != 1.0f;
    expect_close(tag + " padding-only queries, Tk = 0: out 0, lse -inf, no gradient (mismatches)", bad, 0.0);
  }
  for (AttnMask mask : {AttnMask::full, AttnMask::block_causal}) {
    const int H = 2;
    const int64_t ld = H * hd, nan_row = 5;
    std::vector<float> qh = random_normal(Tq * ld, rng);
    qh[nan_row * ld] = NAN;
    DeviceArray<T> qn(qh), k(random_normal(Tq * ld, rng)), v(random_normal(Tq * ld, rng)), o(Tq * ld),
        dout(random_normal(Tq * ld, rng)), dq(std::vector<float>(Tq * ld, 0.0f)), dk(std::vector<float>(Tq * ld, 0.0f)),
        dv(std::vector<float>(Tq * ld, 0.0f));
    DeviceArray<float> l(Tq * H);
    const DevicePackedIndex dev(p);
    const AttnIndex idx = dev.index(mask);
    DeviceArray<char> ws(Impl::workspace_bytes(Tq, Tq, H, int(hd)));
    Impl::forward(qn.get(), k.get(), v.get(), o.get(), l.get(), Tq, Tq, H, int(hd), idx, ws.get(), nullptr);
    Impl::backward(qn.get(), k.get(), v.get(), o.get(), l.get(), dout.get(), dq.get(), dk.get(), dv.get(), Tq, Tq, H,
                   int(hd), idx, ws.get(), nullptr);
    sync();
    const std::vector<float> og = o.download(), lg = l.download(), dqg = dq.download();
    double bad = !std::isnan(lg[nan_row * H]) + !std::isnan(og[nan_row * ld]) + !std::isnan(dqg[nan_row * ld]) +
                 !std::isfinite(lg[nan_row * H + 1]);
    for (int64_t i = 0; i < Tq; ++i)
      if (p.seq[i] != p.seq[nan_row]) bad += !std::isfinite(og[i * ld]) + !std::isfinite(dqg[i * ld]);
    expect_close(tag + " NaN query row: NaN row, other samples finite, mask " + emb::attn_mask_name(mask) +
                     " (mismatches)", bad, 0.0);
  }
}

#ifdef EMB_CUDA_EMULATE
// A Hopper kernel that got fewer registers than its setmaxnreg split moves would hang on a GPU
// (setmaxnreg.inc waits for them): each launch refuses it with an error naming the kernel. The
// emulation reports EMB_EMU_KERNEL_REGISTERS as every kernel's register count.
void test_wgmma_register_shortfall() {
  std::mt19937 rng(3);
  const PackedIndex p = random_packed_index(2, 2, 9, 9, 0, rng);
  const int64_t T = int64_t(p.seq.size()), hd = 64;
  DeviceArray<__nv_bfloat16> x(random_normal(T * hd, rng)), out(T * hd), dq(T * hd), dk(T * hd), dv(T * hd);
  DeviceArray<float> lse(T);
  const DevicePackedIndex dev(p);
  const AttnIndex idx = dev.index(AttnMask::full);
  DeviceArray<char> ws(WgmmaAtomicAttention::workspace_bytes(T, T, 1, int(hd)));
  const auto forward = [&] {
    WgmmaAttention::forward(x.get(), x.get(), x.get(), out.get(), lse.get(), T, T, 1, int(hd), idx, ws.get(), nullptr);
  };
  const auto backward = [&](auto impl) {
    return [&] {
      decltype(impl)::backward(x.get(), x.get(), x.get(), out.get(), lse.get(), x.get(), dq.get(), dk.get(), dv.get(),
                               T, T, 1, int(hd), idx, ws.get(), nullptr);
    };
  };
  setenv("EMB_EMU_KERNEL_REGISTERS", "160", 1);
  const std::string errors[3] = {emb::test::error_of(forward), emb::test::error_of(backward(WgmmaAttention{})),
                                 emb::test::error_of(backward(WgmmaAtomicAttention{}))};
  unsetenv("EMB_EMU_KERNEL_REGISTERS");
  const std::string kernels[3] = {"attention_wgmma forward", "attention_wgmma dQ", "attention_wgmma dK/dV"},
                    splits[3] = {"56 producer, 224 consumer", "56 producer, 224 consumer", "40 producer, 232 consumer"};
  for (int k = 0; k < 3; ++k)
    expect_close(kernels[k] + " refuses 160 registers per thread (mismatch)",
                 errors[k] != kernels[k] + ": built with 160 registers per thread, so its 384 threads hold 61440, but "
                                           "its setmaxnreg split (" + splits[k] + ") moves 64512 (setmaxnreg.inc would "
                                           "wait forever); set EMBTRAIN_CUDA_WGMMA=0 to run the mma.sync attention",
                 0.0);
  setenv("EMB_EMU_KERNEL_REGISTERS", "168", 1);  // what ptxas gives them: exactly the splits' sum
  const std::string at_168 = emb::test::error_of(forward) + emb::test::error_of(backward(WgmmaAttention{})) +
                             emb::test::error_of(backward(WgmmaAtomicAttention{}));
  unsetenv("EMB_EMU_KERNEL_REGISTERS");
  expect_close("attention_wgmma kernels run with 168 registers per thread (error)", !at_168.empty(), 0.0);
}
#endif

// ---- column sums ------------------------------------------------------------------------------

// out[c] += Σ_i m[i·ld + c] of T data into G sums (fp32 beside bf16 too), against double.
template <class T, class G>
void test_column_sum(int64_t N, int C, int64_t ld) {
  std::mt19937 rng(11);
  const auto m = stored<T>(random_normal(N * ld, rng)), out0 = stored<G>(random_normal(C, rng));
  DeviceArray<T> m_d(m);
  DeviceArray<G> out_d(out0);
  DeviceArray<double> scratch(kColumnSumScratchBytes / sizeof(double));
  column_sum(N, C, out_d.get(), MatrixEntry<T>{m_d.get(), ld}, scratch.get(), nullptr);
  Ref out = to_ref(out0);
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) out[c] += m[i * ld + c];
  const ColumnSumSplit split = MatrixEntry<T>{m_d.get(), ld}.vectorizable(C) ? column_sum_split<kVectorWidth<T>>(N, C)
                                                                              : column_sum_split<1>(N, C);
  expect_close(std::string("column_sum ") + dtype<T>() + " into " + dtype<G>() + " N " + std::to_string(N) + " C " +
                   std::to_string(C) + " ld " + std::to_string(ld) + " (" + std::to_string(split.tiles) +
                   " tiles × " + std::to_string(split.chunks) + " chunks of " + std::to_string(split.chunk_rows) +
                   " rows)",
               relative_error(out_d.download(), out), tol<G>(1e-6, 1e-2));
}

// Shapes of the two-level split: one row (one chunk, no scratch); row counts that are not a
// multiple of the chunk; chunks capped by the tiles (C 2048 fp32: 16 tiles, at most 33 chunks);
// C not a multiple of the vector width and a row stride that is not (scalar); a row stride
// wider than C that is (vectors).
template <class T, class G>
void test_column_sums() {
  for (int64_t N : {1, 1000, 333}) test_column_sum<T, G>(N, 200, 200);
  test_column_sum<T, G>(333, 203, 203);
  test_column_sum<T, G>(1200, 2048, 2048);
  test_column_sum<T, G>(100, 200, 208);
  test_column_sum<T, G>(100, 200, 203);
}

// A sum long enough for several chunks needs the scratch: without it, one clear error, no launch.
void test_column_sum_needs_scratch() {
  const int64_t N = 1000;
  const int C = 200;
  DeviceArray<float> m_d(N * C), out_d(C);
  const std::string error = emb::test::error_of(
      [&] { column_sum(N, C, out_d.get(), MatrixEntry<float>{m_d.get(), C}, nullptr, nullptr); });
  const int chunks = column_sum_split<kVectorWidth<float>>(N, C).chunks;
  const std::string want = "column_sum: 1000 rows need " + std::to_string(chunks) +
                           " chunks and so the scratch (Blas::column_sum_scratch), but none was passed";
  expect_close("column_sum without scratch: '" + error + "'", chunks > 1 && error == want ? 0.0 : 1.0, 0.0);
}

// ---- norm + modulate, gated residual ---------------------------------------------------------

template <class T>
void test_norm_modulate(NormKind kind, bool affine, bool modulate, int C, int64_t N = 19) {
  std::mt19937 rng(3);
  const int ld_mod = 3 * C;  // scale/shift are chunks of a [N, 3C] tensor
  const bool layer = kind == NormKind::layer;
  const auto x = stored<T>(random_normal(N * C, rng, 2.0f)), w = stored<T>(random_normal(C, rng)),
             b = stored<T>(random_normal(C, rng)), mod = stored<T>(random_normal(N * ld_mod, rng, 0.5f)),
             dy = stored<T>(random_normal(N * C, rng));
  const auto dx0 = stored<T>(random_normal(N * C, rng)), dw0 = stored<T>(random_normal(C, rng)),
             db0 = stored<T>(random_normal(C, rng)), dmod0 = stored<T>(random_normal(N * ld_mod, rng));
  DeviceArray<T> x_d(x), w_d(w), b_d(b), mod_d(mod), y_d(N * C), dy_d(dy), dx_d(dx0), dw_d(dw0), db_d(db0),
      dmod_d(dmod0);
  DeviceArray<float> mean_d(N), rstd_d(N);
  DeviceArray<double> column_sum_scratch(kColumnSumScratchBytes / sizeof(double));
  T* wp = affine ? w_d.get() : nullptr;
  T* bp = affine && layer ? b_d.get() : nullptr;
  T* scale = modulate ? mod_d.get() + C : nullptr;  // chunk 1 = scale, chunk 2 = shift
  T* shift = modulate ? mod_d.get() + 2 * C : nullptr;
  T* dscale = modulate ? dmod_d.get() + C : nullptr;
  T* dshift = modulate ? dmod_d.get() + 2 * C : nullptr;
  // LayerNorm at GR00T-N1.5's eps, RMSNorm at its fixed one.
  const float eps = layer ? 1e-5f : 1e-6f;
  norm_modulate_forward(kind, x_d.get(), wp, bp, scale, shift, ld_mod, y_d.get(), mean_d.get(), rstd_d.get(), N, C,
                        eps, nullptr);
  norm_modulate_backward(kind, x_d.get(), wp, bp, scale, ld_mod, mean_d.get(), rstd_d.get(), dy_d.get(), dx_d.get(),
                         wp ? dw_d.get() : nullptr, bp ? db_d.get() : nullptr, dscale, dshift, N, C,
                         column_sum_scratch.get(), nullptr);
  sync();
  Ref y(size_t(N) * C), mean(N), rstd(N), dx = to_ref(dx0), dw = to_ref(dw0), db = to_ref(db0), dmod = to_ref(dmod0);
  for (int64_t i = 0; i < N; ++i) {
    const float* xi = x.data() + i * C;
    double mu = 0.0, ss = 0.0;
    if (layer)
      for (int c = 0; c < C; ++c) mu += xi[c] / double(C);
    for (int c = 0; c < C; ++c) ss += (xi[c] - mu) * (xi[c] - mu) / C;
    const double r = 1.0 / std::sqrt(ss + double(eps));
    mean[i] = mu;
    rstd[i] = r;
    std::vector<double> xhat(C), g(C);
    double g_mean = 0.0, gx_mean = 0.0;
    for (int c = 0; c < C; ++c) {
      xhat[c] = (xi[c] - mu) * r;
      const double n = xhat[c] * (wp ? w[c] : 1.0) + (bp ? b[c] : 0.0);
      const double sc = modulate ? mod[i * ld_mod + C + c] : 0.0, sh = modulate ? mod[i * ld_mod + 2 * C + c] : 0.0;
      y[i * C + c] = n * (1.0 + sc) + sh;
      const double dn = dy[i * C + c] * (1.0 + sc);
      if (modulate) {
        dmod[i * ld_mod + C + c] += dy[i * C + c] * n;
        dmod[i * ld_mod + 2 * C + c] += dy[i * C + c];
      }
      dw[c] += dn * xhat[c];
      db[c] += dn;
      g[c] = dn * (wp ? w[c] : 1.0);
      g_mean += g[c] / C;
      gx_mean += g[c] * xhat[c] / C;
    }
    for (int c = 0; c < C; ++c) dx[i * C + c] += r * (g[c] - (layer ? g_mean : 0.0) - xhat[c] * gx_mean);
  }
  const std::string tag = std::string(layer ? "layernorm" : "rmsnorm") + (affine ? "+affine" : "") +
                          (modulate ? "+modulate C " : " C ") + std::to_string(C) + " N " + std::to_string(N) + " " +
                          dtype<T>();
  expect_close(tag + " forward y", relative_error(y_d.download(), y), tol<T>(1e-5, 1e-2));
  if (layer) expect_close(tag + " mean", relative_error(mean_d.download(), mean), 1e-5);
  expect_close(tag + " rstd", relative_error(rstd_d.download(), rstd), 1e-5);
  expect_close(tag + " backward dx", relative_error(dx_d.download(), dx), tol<T>(1e-5, 1e-2));
  if (wp) expect_close(tag + " backward dweight", relative_error(dw_d.download(), dw), tol<T>(1e-5, 1e-2));
  if (bp) expect_close(tag + " backward dbias", relative_error(db_d.download(), db), tol<T>(1e-5, 1e-2));
  if (modulate) expect_close(tag + " backward dscale/dshift", relative_error(dmod_d.download(), dmod), tol<T>(1e-5, 1e-2));
}

// The residual a sublayer boundary applies before its norm: x += gate·r, x += r, or none.
enum class Residual { gated, plain, none };

// x += gate·r (or r, or nothing), x_in = x, normed = LN(x), y = normed·(1 + scale) + shift in
// one pass, against the unfused sequence in double (x rounded to T once after the residual, as
// it is stored).
template <class T>
void test_residual_norm_modulate(Residual residual, int C) {
  const bool gated = residual == Residual::gated;
  std::mt19937 rng(12);
  const int64_t N = 23;
  const int ld = 6 * C;  // gate, scale and shift are chunks 2, 0 and 1 of a [N, 6C] tensor
  const auto x = stored<T>(random_normal(N * C, rng, 2.0f)), r = stored<T>(random_normal(N * C, rng)),
             mod = stored<T>(random_normal(N * ld, rng, 0.5f));
  DeviceArray<T> x_d(x), r_d(r), mod_d(mod), x_in_d(N * C), normed_d(N * C), y_d(N * C);
  DeviceArray<float> mean_d(N), rstd_d(N);
  const T* gate = gated ? mod_d.get() + 2 * C : nullptr;
  residual_norm_modulate_forward(NormKind::layer, x_d.get(), gate, ld,
                                 residual == Residual::none ? nullptr : r_d.get(), x_in_d.get(),
                                 static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), mod_d.get(),
                                 mod_d.get() + C, ld, normed_d.get(), y_d.get(), mean_d.get(), rstd_d.get(), N, C,
                                 1e-5f, nullptr);
  sync();
  std::vector<float> xs(x.size());
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) {
      const float g = gated ? mod[i * ld + 2 * C + c] : 1.0f;
      xs[i * C + c] = residual == Residual::none ? x[i * C + c] : stored<T>(x[i * C + c] + g * r[i * C + c]);
    }
  Ref normed(xs.size()), y(xs.size()), rstd(N);
  for (int64_t i = 0; i < N; ++i) {
    double mu = 0.0, ss = 0.0;
    for (int c = 0; c < C; ++c) mu += xs[i * C + c] / double(C);
    for (int c = 0; c < C; ++c) ss += (xs[i * C + c] - mu) * (xs[i * C + c] - mu) / C;
    rstd[i] = 1.0 / std::sqrt(ss + double(1e-5f));
    for (int c = 0; c < C; ++c) {
      normed[i * C + c] = (xs[i * C + c] - mu) * rstd[i];
      y[i * C + c] = normed[i * C + c] * (1.0 + mod[i * ld + c]) + mod[i * ld + C + c];
    }
  }
  const char* residual_name[] = {" gated", " plain", " no residual"};
  const std::string tag = std::string("residual_norm_modulate") + residual_name[int(residual)] + " C " +
                          std::to_string(C) + " " + dtype<T>();
  // x is the same rounding of the same sum on both sides (exact under the emulation; a GPU may
  // contract x + g·r into an FMA and round once less).
  expect_close(tag + " x", relative_error(x_d.download(), to_ref(xs)), tol<T>(1e-6, 1e-2));
  expect_close(tag + " x_in", relative_error(x_in_d.download(), to_ref(xs)), tol<T>(1e-6, 1e-2));
  expect_close(tag + " normed", relative_error(normed_d.download(), normed), tol<T>(1e-5, 1e-2));
  expect_close(tag + " y", relative_error(y_d.download(), y), tol<T>(1e-5, 1e-2));
  expect_close(tag + " rstd", relative_error(rstd_d.download(), rstd), 1e-5);
}

// The forward holds a row in registers, at most 8192 columns: a wider row is one clear error.
void test_norm_modulate_row_limit() {
  const int C = 8193;
  DeviceArray<float> x_d(C), y_d(C), mean_d(1), rstd_d(1);
  const float* none = nullptr;
  const std::string error = emb::test::error_of([&] {
    norm_modulate_forward(NormKind::layer, x_d.get(), none, none, none, none, 0, y_d.get(), mean_d.get(),
                          rstd_d.get(), 1, C, 1e-6f, nullptr);
  });
  const std::string want =
      "norm_modulate_forward: rows of 8193 columns exceed the 8192 a row block holds in registers";
  expect_close("norm_modulate row limit: '" + error + "'", error == want ? 0.0 : 1.0, 0.0);
}

// The fused forward has no backward kernel of its own: its backward is norm_modulate_backward
// (dx added to the gradient that reaches the stored x directly) fed to gated_residual_backward,
// as the model composes them. Checked against central differences of the fused forward itself
// (fp32; loss Σ wy·y + Σ wx·x over the updated x; every element of x, r and the [N, 6C]
// modulation, whose chunks 0, 1, 2 are scale, shift, gate and the rest unused).
void test_residual_norm_modulate_gradient(int C) {
  std::mt19937 rng(13);
  const int64_t N = 3;
  const int ld = 6 * C;
  std::vector<float> x = random_normal(N * C, rng), r = random_normal(N * C, rng),
                     mod = random_normal(N * ld, rng, 0.5f);
  const std::vector<float> wy = random_normal(N * C, rng), wx = random_normal(N * C, rng);
  DeviceArray<float> x_d(N * C), r_d(N * C), mod_d(N * ld), y_d(N * C), mean_d(N), rstd_d(N);
  const float* none = nullptr;
  float* no_output = nullptr;
  auto forward = [&] {  // x_d holds the updated x afterwards
    x_d.upload(x);
    r_d.upload(r);
    mod_d.upload(mod);
    residual_norm_modulate_forward(NormKind::layer, x_d.get(), mod_d.get() + 2 * C, ld, r_d.get(), no_output, none,
                                   none, mod_d.get(), mod_d.get() + C, ld, no_output, y_d.get(), mean_d.get(),
                                   rstd_d.get(), N, C, 1e-6f, nullptr);
  };
  auto loss = [&] {
    forward();
    const std::vector<float> y = y_d.download(), x_out = x_d.download();
    double l = 0.0;
    for (size_t e = 0; e < y.size(); ++e) l += double(wy[e]) * y[e] + double(wx[e]) * x_out[e];
    return l;
  };
  auto numeric = [&](std::vector<float>& v) {
    Ref g(v.size());
    for (size_t e = 0; e < v.size(); ++e) {
      const float keep = v[e], up = keep + 1e-2f, down = keep - 1e-2f;
      v[e] = up;
      const double l_up = loss();
      v[e] = down;
      const double l_down = loss();
      v[e] = keep;
      g[e] = (l_up - l_down) / (double(up) - double(down));
    }
    return g;
  };
  forward();
  DeviceArray<float> dy_d(wy), dx_d(wx), dr_d(std::vector<float>(N * C, 0.0f)),
      dmod_d(std::vector<float>(N * ld, 0.0f));
  norm_modulate_backward(NormKind::layer, x_d.get(), none, none, mod_d.get(), ld, mean_d.get(), rstd_d.get(),
                         dy_d.get(), dx_d.get(), no_output, no_output, dmod_d.get(), dmod_d.get() + C, N, C, nullptr,
                         nullptr);
  gated_residual_backward(mod_d.get() + 2 * C, ld, r_d.get(), dx_d.get(), dr_d.get(), dmod_d.get() + 2 * C, N, C,
                          nullptr);
  const std::vector<float> dx = dx_d.download(), dr = dr_d.download(), dmod = dmod_d.download();
  const std::string tag = "residual_norm_modulate gradient check C " + std::to_string(C) + " fp32";
  // Central differences with a step of 1e-2 on fp32 sums: up to about 1e-4 of truncation and
  // rounding noise (3e-5 measured under the emulation).
  expect_close(tag + " dx", relative_error(dx, numeric(x)), 1e-3);
  expect_close(tag + " dr", relative_error(dr, numeric(r)), 1e-3);
  expect_close(tag + " dscale, dshift, dgate", relative_error(dmod, numeric(mod)), 1e-3);
}

template <class T>
void test_gated_residual(bool gated, int C) {
  std::mt19937 rng(4);
  const int64_t N = 13;
  const int ld = 2 * C;
  const auto x = stored<T>(random_normal(N * C, rng)), gate = stored<T>(random_normal(N * ld, rng)),
             y = stored<T>(random_normal(N * C, rng)), dx = stored<T>(random_normal(N * C, rng)),
             dy0 = stored<T>(random_normal(N * C, rng)), dgate0 = stored<T>(random_normal(N * ld, rng));
  DeviceArray<T> x_d(x), gate_d(gate), y_d(y), dx_d(dx), dy_d(dy0), dgate_d(dgate0);
  const T* g = gated ? gate_d.get() + C : nullptr;  // the second chunk
  gated_residual_forward(x_d.get(), g, ld, y_d.get(), N, C, nullptr);
  gated_residual_backward(g, ld, y_d.get(), dx_d.get(), dy_d.get(), gated ? dgate_d.get() + C : nullptr, N, C, nullptr);
  sync();
  Ref xr = to_ref(x), dyr = to_ref(dy0), dgr = to_ref(dgate0);
  for (int64_t i = 0; i < N; ++i)
    for (int c = 0; c < C; ++c) {
      const double gv = gated ? gate[i * ld + C + c] : 1.0;
      xr[i * C + c] += gv * y[i * C + c];
      dyr[i * C + c] += dx[i * C + c] * gv;
      if (gated) dgr[i * ld + C + c] += dx[i * C + c] * y[i * C + c];
    }
  const std::string tag = std::string(gated ? "gated_residual C " : "residual C ") + std::to_string(C) + " " + dtype<T>();
  expect_close(tag + " forward x", relative_error(x_d.download(), xr), tol<T>(1e-6, 1e-2));
  expect_close(tag + " backward dy", relative_error(dy_d.download(), dyr), tol<T>(1e-6, 1e-2));
  if (gated) expect_close(tag + " backward dgate", relative_error(dgate_d.download(), dgr), tol<T>(1e-6, 1e-2));
}

// ---- rope, activations, sinusoidal embedding ----------------------------------------------

Ref rope_ref(const std::vector<float>& x, const std::vector<int32_t>& pos, int64_t T_, int H, int hd, RopeMode mode,
             double direction) {
  Ref y(x.begin(), x.end());
  const int pairs = hd / 2, c_hw = mode == RopeMode::d3 ? pairs / 3 : 0;
  const int counts[3] = {pairs - 2 * c_hw, c_hw, c_hw};
  for (int64_t t = 0; t < T_; ++t) {
    int k = 0;
    for (int a = 0; a < 3; ++a)
      for (int ka = 0; ka < counts[a]; ++ka, ++k) {
        const double phi = pos[t * 3 + a] * std::pow(10000.0, -double(ka) / counts[a]);
        const double cs = std::cos(phi), sn = direction * std::sin(phi);
        for (int h = 0; h < H; ++h) {
          const int64_t e = (t * H + h) * hd + 2 * k;
          y[e] = x[e] * cs - double(x[e + 1]) * sn;
          y[e + 1] = x[e] * sn + double(x[e + 1]) * cs;
        }
      }
  }
  return y;
}

template <class T>
void test_rope(RopeMode mode, int hd) {
  std::mt19937 rng(5);
  const int64_t T_ = 21;
  const int H = 3;
  std::vector<int32_t> pos(T_ * 3);
  std::uniform_int_distribution<int> f(0, 1000), hw(0, 40);
  for (int64_t t = 0; t < T_; ++t) pos[t * 3] = f(rng), pos[t * 3 + 1] = hw(rng), pos[t * 3 + 2] = hw(rng);
  const auto x = stored<T>(random_normal(T_ * H * hd, rng));
  DeviceArray<T> fwd_d(x), bwd_d(x);
  DeviceArray<int32_t> pos_d(pos.size());
  check_cuda(cudaMemcpy(pos_d.get(), pos.data(), pos.size() * 4, cudaMemcpyHostToDevice), "pos");
  rope_forward(fwd_d.get(), pos_d.get(), T_, H, hd, mode, nullptr, nullptr);
  rope_backward(bwd_d.get(), pos_d.get(), T_, H, hd, mode, nullptr, nullptr);
  sync();
  const std::string tag = std::string("rope ") + (mode == RopeMode::d3 ? "3d" : "1d") + " hd " + std::to_string(hd) +
                          " " + dtype<T>();
  // cos/sin are rounded to fp32 before use, as on the CPU: a few ulp of the output.
  expect_close(tag + " forward", relative_error(fwd_d.download(), rope_ref(x, pos, T_, H, hd, mode, 1.0)),
               tol<T>(1e-6, 1e-2));
  expect_close(tag + " backward", relative_error(bwd_d.download(), rope_ref(x, pos, T_, H, hd, mode, -1.0)),
               tol<T>(1e-6, 1e-2));
}

template <class T>
void test_activation(Activation act) {
  std::mt19937 rng(6);
  const int64_t n = 3001;
  const auto x = stored<T>(random_normal(n, rng, 3.0f)), dy = stored<T>(random_normal(n, rng)),
             dx0 = stored<T>(random_normal(n, rng));
  DeviceArray<T> x_d(x), y_d(n), dy_d(dy), dx_d(dx0);
  activation_forward(act, x_d.get(), y_d.get(), n, nullptr);
  activation_backward(act, x_d.get(), dy_d.get(), dx_d.get(), n, nullptr);
  sync();
  Ref y(n), dx = to_ref(dx0);
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t e = 0; e < n; ++e) {
    const double v = x[e];
    double f, d;
    if (act == Activation::gelu_tanh) {
      const double th = std::tanh(k * (v + 0.044715 * v * v * v));
      f = 0.5 * v * (1 + th);
      d = 0.5 * (1 + th) + 0.5 * v * (1 - th * th) * k * (1 + 3 * 0.044715 * v * v);
    } else if (act == Activation::silu) {
      const double s = 1.0 / (1.0 + std::exp(-v));
      f = v * s;
      d = s * (1 + v * (1 - s));
    } else if (act == Activation::gelu_erf) {
      const double phi = 0.5 * std::erfc(-v / std::sqrt(2.0));
      f = v * phi;
      d = phi + v * std::exp(-0.5 * v * v) / std::sqrt(2 * M_PI);
    } else {
      f = v > 0 ? v : 0;
      d = v > 0 ? 1 : 0;
    }
    y[e] = f;
    dx[e] += d * dy[e];
  }
  const char* names[] = {"none", "relu", "silu", "gelu_tanh", "gelu_erf"};  // emb::Activation's order
  const std::string tag = std::string(names[int(act)]) + " " + dtype<T>();
  expect_close(tag + " forward", relative_error(y_d.download(), y), tol<T>(1e-5, 1e-2));
  expect_close(tag + " backward", relative_error(dx_d.download(), dx), tol<T>(1e-5, 1e-2));
}

// ---- the frozen encoders' ops -----------------------------------------------------------

// Encoder attention over ragged segments (37, 5, 70 tokens: tiles that end inside a segment),
// q, k, v as strided chunks of one fused QKV tensor, against a double softmax written here.
template <class T>
void test_encoder_attention(int Hq, int Hkv, int hd, bool causal, AttnBiasKind bias_kind) {
  std::mt19937 rng(31);
  const std::vector<int64_t> offsets = bias_kind == AttnBiasKind::dense ? std::vector<int64_t>{0, 24, 48}
                                                                         : std::vector<int64_t>{0, 37, 42, 112};
  const int64_t T_ = offsets.back(), wq = int64_t(Hq) * hd, wk = int64_t(Hkv) * hd, ld = wq + 2 * wk;
  const int n_buckets = 8;
  const std::vector<int32_t> buckets = {0, 1, 2, 3, 4, 4, 5, 6, 7, 7, 7};
  const int rel_zero = 5;
  const auto qkv = stored<T>(random_normal(T_ * ld, rng));
  const int64_t lq = offsets[1];
  const auto bias = stored<T>(random_normal(bias_kind == AttnBiasKind::dense ? Hq * lq * lq : Hq * n_buckets, rng));
  DeviceArray<T> qkv_d(qkv), out_d(T_ * wq), bias_d(bias);
  DeviceArray<float> lse_d(T_ * Hq);
  DeviceArray<int32_t> buckets_d(buckets.size());
  check_cuda(cudaMemcpy(buckets_d.get(), buckets.data(), buckets.size() * 4, cudaMemcpyHostToDevice), "buckets");
  const emb::AttnSegments seg{offsets.data(), nullptr, int(offsets.size()) - 1};
  const emb::AttnBias kind{bias_kind, buckets_d.get(), int(buckets.size()), rel_zero};
  const float scale = bias_kind == AttnBiasKind::relative_buckets ? 1.0f : 1.0f / std::sqrt(float(hd));
  const emb::EncoderAttnConfig cfg{Hq, Hkv, hd, scale, causal};
  DeviceArray<char> ws(encoder_attention_workspace_bytes(seg, hd));
  encoder_attention_forward(qkv_d.get(), ld, qkv_d.get() + wq, ld, qkv_d.get() + wq + wk, ld,
                            bias_kind == AttnBiasKind::none ? nullptr : bias_d.get(), n_buckets, kind, out_d.get(),
                            lse_d.get(), cfg, seg, ws.get(), nullptr);
  sync();
  Ref out(T_ * wq, 0.0), lse(T_ * Hq);
  for (size_t s = 0; s + 1 < offsets.size(); ++s) {
    const int64_t b = offsets[s], n = offsets[s + 1] - b;
    for (int h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < n; ++i) {
        const int kvh = h / (Hq / Hkv);
        std::vector<double> p;
        for (int64_t j = 0; j < (causal ? i + 1 : n); ++j) {
          double dot = 0;
          for (int d = 0; d < hd; ++d) dot += double(qkv[(b + i) * ld + h * hd + d]) * qkv[(b + j) * ld + wq + kvh * hd + d];
          dot *= scale;
          if (bias_kind == AttnBiasKind::dense) dot += bias[(h * lq + i) * lq + j];
          if (bias_kind == AttnBiasKind::relative_buckets)
            dot += bias[h * n_buckets + buckets[std::min<int64_t>(std::max<int64_t>(j - i + rel_zero, 0), 10)]];
          p.push_back(dot);
        }
        const double m = *std::max_element(p.begin(), p.end());
        double sum = 0;
        for (double& x : p) sum += (x = std::exp(x - m));
        for (size_t j = 0; j < p.size(); ++j)
          for (int d = 0; d < hd; ++d)
            out[(b + i) * wq + h * hd + d] += p[j] / sum * qkv[(b + int64_t(j)) * ld + wq + wk + kvh * hd + d];
        lse[(b + i) * Hq + h] = m + std::log(sum);
      }
  }
  const std::string tag = "encoder_attention hq " + std::to_string(Hq) + " hkv " + std::to_string(Hkv) + " hd " +
                          std::to_string(hd) + (causal ? " causal" : "") + " bias " + std::to_string(int(bias_kind)) +
                          " " + dtype<T>();
  expect_close(tag + " out", relative_error(out_d.download(), out), tol<T>(1e-5, 1e-2));
  expect_close(tag + " lse", relative_error(lse_d.download(), lse), tol<T>(1e-5, 1e-2));
}

// HF's rotate-half RoPE at θ = 1e6 and positions up to 40000, against the float32 angles.
template <class T>
void test_rope_half(int hd) {
  std::mt19937 rng(32);
  const int64_t T_ = 23;
  const int H = 3;
  std::vector<int32_t> pos(T_);
  std::uniform_int_distribution<int> p(0, 40000);
  for (int32_t& x : pos) x = p(rng);
  const auto x = stored<T>(random_normal(T_ * H * hd, rng));
  DeviceArray<T> fwd_d(x), bwd_d(x);
  DeviceArray<int32_t> pos_d(pos.size());
  DeviceArray<char> ws(rope_half_workspace_bytes(hd));
  check_cuda(cudaMemcpy(pos_d.get(), pos.data(), pos.size() * 4, cudaMemcpyHostToDevice), "pos");
  rope_half(fwd_d.get(), pos_d.get(), T_, H, hd, 1e6f, 1.0f, ws.get(), nullptr);
  rope_half(bwd_d.get(), pos_d.get(), T_, H, hd, 1e6f, -1.0f, ws.get(), nullptr);
  sync();
  for (double direction : {1.0, -1.0}) {
    Ref y(x.size());
    for (int64_t t = 0; t < T_; ++t)
      for (int h = 0; h < H; ++h)
        for (int i = 0; i < hd / 2; ++i) {
          const float inv = 1.0f / float(std::pow(1e6, double(float(2 * i) / float(hd))));
          const double a = double(float(pos[t]) * inv);
          const int64_t u = (t * H + h) * hd + i, v = u + hd / 2;
          y[u] = x[u] * std::cos(a) - direction * x[v] * std::sin(a);
          y[v] = x[v] * std::cos(a) + direction * x[u] * std::sin(a);
        }
    const std::string tag = "rope_half hd " + std::to_string(hd) + (direction > 0 ? " forward " : " backward ") + dtype<T>();
    expect_close(tag, relative_error((direction > 0 ? fwd_d : bwd_d).download(), y), tol<T>(1e-6, 1e-2));
  }
}

// SwiGLU / gated GELU on the two halves of a [N, 2C] tensor, forward and accumulating backward.
template <class T>
void test_gated_activation(Activation act) {
  std::mt19937 rng(33);
  const int64_t N = 19, C = 45;
  const auto gu = stored<T>(random_normal(N * 2 * C, rng, 2.0f)), dy = stored<T>(random_normal(N * C, rng));
  const auto dgu0 = stored<T>(random_normal(N * 2 * C, rng));
  DeviceArray<T> gu_d(gu), y_d(N * C), dy_d(dy), dgu_d(dgu0);
  gated_activation_forward(act, gu_d.get(), 2 * C, gu_d.get() + C, 2 * C, y_d.get(), C, N, C, nullptr);
  gated_activation_backward(act, gu_d.get(), 2 * C, gu_d.get() + C, 2 * C, dy_d.get(), C, dgu_d.get(), 2 * C,
                            dgu_d.get() + C, 2 * C, N, C, nullptr);
  sync();
  Ref y(N * C), dgu = to_ref(dgu0);
  const double k = std::sqrt(2.0 / M_PI);
  for (int64_t r = 0; r < N; ++r)
    for (int64_t c = 0; c < C; ++c) {
      const double g = gu[r * 2 * C + c], u = gu[r * 2 * C + C + c], d = dy[r * C + c];
      double f, fd;
      if (act == Activation::silu) {
        const double s = 1 / (1 + std::exp(-g));
        f = g * s, fd = s * (1 + g * (1 - s));
      } else {
        const double th = std::tanh(k * (g + 0.044715 * g * g * g));
        f = 0.5 * g * (1 + th), fd = 0.5 * (1 + th) + 0.5 * g * (1 - th * th) * k * (1 + 3 * 0.044715 * g * g);
      }
      y[r * C + c] = f * u;
      dgu[r * 2 * C + c] += d * u * fd;
      dgu[r * 2 * C + C + c] += d * f;
    }
  const std::string tag = std::string(act == Activation::silu ? "swiglu " : "gated gelu ") + dtype<T>();
  expect_close(tag + " forward", relative_error(y_d.download(), y), tol<T>(1e-5, 1e-2));
  expect_close(tag + " backward", relative_error(dgu_d.download(), dgu), tol<T>(1e-5, 1e-2));
}

// Every layout of kernels/op_types.hpp SinusConfig: Wan's, diffusers' Timesteps (cos first,
// divisor n/2 − 1) and the action encoders' (sin first).
template <class T>
void test_sinus() {
  const int64_t rows = 17;
  const int n = 256;
  std::vector<float> t(rows);
  for (int64_t i = 0; i < rows; ++i) t[i] = float(i * 61 % 1000) + 0.25f;
  DeviceArray<float> t_d(t);
  for (const auto& [cos_first, shift] : {std::pair{true, 0}, std::pair{true, 1}, std::pair{false, 0}}) {
    DeviceArray<T> out_d(rows * n);
    sinus_embedding(t_d.get(), 1, out_d.get(), rows, n, cos_first, shift, nullptr);
    sync();
    Ref ref(size_t(rows) * n);
    const int cos_at = cos_first ? 0 : n / 2, sin_at = cos_first ? n / 2 : 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int k = 0; k < n / 2; ++k) {
        const double a = double(t[i]) * std::exp(-std::log(10000.0) * k / (n / 2 - shift));
        ref[i * n + cos_at + k] = std::cos(a);
        ref[i * n + sin_at + k] = std::sin(a);
      }
    expect_close(std::string("sinus_embedding cos_first ") + std::to_string(cos_first) + " shift " +
                     std::to_string(shift) + " " + dtype<T>(),
                 relative_error(out_d.download(), ref), tol<T>(1e-6, 1e-2));
  }
}

// ---- dropout ----------------------------------------------------------------------------------

using emb::DropoutConfig;
using emb::DropoutRows;

// A host array copied to the device as is (the index arrays a kernel reads).
template <class I>
class DeviceCopy {
 public:
  explicit DeviceCopy(const std::vector<I>& host) {
    check_cuda(cudaMalloc(&ptr_, std::max<size_t>(host.size(), 1) * sizeof(I)), "alloc");
    check_cuda(cudaMemcpy(ptr_, host.data(), host.size() * sizeof(I), cudaMemcpyHostToDevice), "upload");
  }
  ~DeviceCopy() { cudaFree(ptr_); }
  DeviceCopy(const DeviceCopy&) = delete;
  DeviceCopy& operator=(const DeviceCopy&) = delete;
  const I* get() const { return ptr_; }

 private:
  I* ptr_ = nullptr;
};

// Rows of three samples in shuffled token order and a padding row; C 50 starts rows inside a
// Philox block of four, C 64 on one. The forward (out of place and in place) and the backward
// (accumulating) against the keep rule of kernels/dropout_keep.hpp evaluated on the host, and
// about 1 − p of the elements kept.
template <class T>
void test_dropout(int C) {
  std::mt19937 rng(14);
  const std::vector<int32_t> seq = {0, 0, 1, -1, 2, 1, 0, 2, 1}, token = {0, 2, 1, 0, 0, 0, 1, 1, 2};
  const std::vector<int64_t> sample_id = {7, 1000, 3};
  const int64_t N = int64_t(seq.size());
  const DropoutConfig cfg{0.2f, 1234, 5, 9};
  const DeviceCopy<int32_t> seq_d(seq), token_d(token);
  const DeviceCopy<int64_t> id_d(sample_id);
  const DropoutRows rows{seq_d.get(), token_d.get(), id_d.get()};
  const auto x = stored<T>(random_normal(N * C, rng)), dy = stored<T>(random_normal(N * C, rng)),
             dx0 = stored<T>(random_normal(N * C, rng));
  DeviceArray<T> x_d(x), y_d(N * C), in_place_d(x), dy_d(dy), dx_d(dx0);
  dropout_forward(x_d.get(), y_d.get(), N, C, cfg, rows, nullptr);
  dropout_forward(in_place_d.get(), in_place_d.get(), N, C, cfg, rows, nullptr);
  dropout_backward(dy_d.get(), dx_d.get(), N, C, cfg, rows, nullptr);
  sync();
  const uint32_t threshold = emb::dropout_threshold(cfg.p);
  Ref y(size_t(N) * C), dx = to_ref(dx0);
  int64_t kept = 0, real = 0;
  for (int64_t r = 0; r < N; ++r)
    for (int c = 0; c < C; ++c) {
      double m = 1.0;
      if (seq[r] >= 0) {
        const bool keep = emb::dropout_keep(cfg, threshold, sample_id[seq[r]], uint64_t(token[r]) * C + c);
        m = keep ? 1.0 / (1.0 - cfg.p) : 0.0;
        kept += keep, ++real;
      }
      y[r * C + c] = x[r * C + c] * m;
      dx[r * C + c] += dy[r * C + c] * m;
    }
  const std::string tag = "dropout C " + std::to_string(C) + " " + dtype<T>();
  expect_close(tag + " forward", relative_error(y_d.download(), y), tol<T>(1e-7, 1e-2));
  expect_close(tag + " forward in place", relative_error(in_place_d.download(), y), tol<T>(1e-7, 1e-2));
  expect_close(tag + " backward", relative_error(dx_d.download(), dx), tol<T>(1e-7, 1e-2));
  expect_close(tag + " kept fraction", std::fabs(double(kept) / real - 0.8), 0.05);
}

// ---- the Wan VAE's and CLIP's video ops --------------------------------------------------------

// conv3d_forward (conv3d.hpp) against its definition in double: the VAE's causal k3 (3 time taps,
// 2 frames of padding in front), its stride-2 Conv2d with (0, 1, 0, 1) padding and its temporal
// stride-2 conv, over batches of clips; bf16 with Ci, Co multiples of 8 runs on tensor cores
// (Ci 32: 27 K steps of 32 through the 3-stage pipeline; Co 136: a partial column block), Ci 3 on
// the SIMT kernel.
template <class T>
void test_conv3d(int batch, int frames, int height, int width, int kt, int ks, int st, int ss, int pad_front,
                 int pad_space, int pad_after, int64_t Ci, int64_t Co) {
  ConvConfig c;
  c.batch = batch, c.frames = frames, c.height = height, c.width = width, c.kt = kt, c.kh = c.kw = ks;
  c.st = st, c.sh = c.sw = ss, c.pad_front = pad_front, c.pad_top = c.pad_left = pad_space;
  c.pad_bottom = c.pad_right = pad_after;
  std::mt19937 rng(21);
  const auto x = stored<T>(random_normal(c.in_rows() * Ci, rng)), w = stored<T>(random_normal(c.taps() * Ci * Co, rng, 0.1f)),
             b = stored<T>(random_normal(Co, rng));
  DeviceArray<T> x_d(x), w_d(w), b_d(b), y_d(c.out_rows() * Co);
  conv3d_forward(x_d.get(), Ci, w_d.get(), b_d.get(), y_d.get(), Co, c, nullptr);
  sync();
  const int To = c.out_frames(), Ho = c.out_height(), Wo = c.out_width();
  Ref ref(size_t(c.out_rows() * Co));
  for (int n = 0; n < batch; ++n)
    for (int t = 0; t < To; ++t)
      for (int h = 0; h < Ho; ++h)
        for (int ww = 0; ww < Wo; ++ww)
          for (int64_t o = 0; o < Co; ++o) {
            double acc = b[o];
            for (int dt = 0; dt < kt; ++dt)
              for (int dh = 0; dh < ks; ++dh)
                for (int dw = 0; dw < ks; ++dw) {
                  const int ti = t * st + dt - pad_front, hi = h * ss + dh - pad_space, wi = ww * ss + dw - pad_space;
                  if (ti < 0 || ti >= frames || hi < 0 || hi >= height || wi < 0 || wi >= width) continue;
                  const int64_t row = ((int64_t(n) * frames + ti) * height + hi) * width + wi;
                  const int64_t tap = (int64_t(dt) * ks + dh) * ks + dw;
                  for (int64_t ci = 0; ci < Ci; ++ci) acc += double(x[row * Ci + ci]) * w[(tap * Ci + ci) * Co + o];
                }
            ref[size_t((((int64_t(n) * To + t) * Ho + h) * Wo + ww) * Co + o)] = acc;
          }
  const bool tensor_cores = std::is_same_v<T, __nv_bfloat16> && conv3d_tensor_cores(Ci, Co, x_d.get(), w_d.get(), y_d.get());
  expect_close(std::string("conv3d ") + dtype<T>() + (tensor_cores ? " tensor cores" : " simt") + " k" +
                   std::to_string(kt) + "x" + std::to_string(ks) + " Ci " + std::to_string(Ci),
               relative_error(y_d.download(), ref), tol<T>(1e-5, 1e-2));
}

// The channel RMS norm (+ SiLU), in place, one zero row; C 640 (the VAE38's widest) and 96.
template <class T>
void test_channel_rmsnorm(int64_t C, bool silu) {
  std::mt19937 rng(22);
  const int64_t N = 45;
  auto xv = random_normal(N * C, rng, 2.0f);
  for (int64_t c = 0; c < C; ++c) xv[3 * C + c] = 0.0f;
  const auto x = stored<T>(xv), g = stored<T>(random_normal(C, rng, 0.3f));
  DeviceArray<T> x_d(x), g_d(g);
  channel_rmsnorm_forward(x_d.get(), g_d.get(), silu, x_d.get(), N, C, nullptr);
  sync();
  Ref ref(size_t(N * C));
  for (int64_t i = 0; i < N; ++i) {
    double ss = 0;
    for (int64_t c = 0; c < C; ++c) ss += double(x[i * C + c]) * x[i * C + c];
    for (int64_t c = 0; c < C; ++c) {
      const double v = x[i * C + c] / std::max(std::sqrt(ss), 1e-12) * std::sqrt(double(C)) * g[c];
      ref[size_t(i * C + c)] = silu ? v / (1 + std::exp(-v)) : v;
    }
  }
  expect_close(std::string("channel_rmsnorm ") + dtype<T>() + " C " + std::to_string(C) + (silu ? " silu" : ""),
               relative_error(x_d.download(), ref), tol<T>(1e-6, 1e-2));
}

// Wan2.2's AvgDown3D shortcut (a zero frame in front, time and space offsets, means of 4) and its
// columns-first 2×2 patchify, against the order written out.
template <class T>
void test_pixel_unshuffle(const UnshuffleConfig& u, int64_t C) {
  std::mt19937 rng(23);
  const int64_t rows = int64_t(u.batch) * u.frames * u.height * u.width;
  const auto x = stored<T>(random_normal(rows * C, rng));
  const int To = u.out_frames(), Ho = u.height / u.fs, Wo = u.width / u.fs;
  const int64_t F = int64_t(u.ft) * u.fs * u.fs, cols = C * F / u.group;
  DeviceArray<T> x_d(x), y_d(int64_t(u.batch) * To * Ho * Wo * cols);
  pixel_unshuffle_forward(x_d.get(), C, y_d.get(), u, nullptr);
  sync();
  const Ref ref = emb::test::unshuffle_reference(x, C, u);
  expect_close(std::string("pixel_unshuffle ") + dtype<T>() + " ft " + std::to_string(u.ft) + " group " +
                   std::to_string(u.group),
               relative_error(y_d.download(), ref), tol<T>(1e-6, 1e-2));
}

// ---- loss, AdamW ------------------------------------------------------------------------------

template <class T>
void test_mse_loss(bool masked) {
  std::mt19937 rng(8);
  const int64_t n = 5003;
  const auto pred = stored<T>(random_normal(n, rng)), target = stored<T>(random_normal(n, rng)),
             dpred0 = stored<T>(random_normal(n, rng, 0.001f));
  std::vector<float> mask(n);
  for (int64_t e = 0; e < n; ++e) mask[e] = masked ? float(rng() % 3 != 0) : 1.0f;
  DeviceArray<T> pred_d(pred), target_d(target), mask_d(mask), dpred_d(dpred0);
  DeviceArray<float> loss_d(1), denom_d(1);
  const float weight = 0.7f;
  const T* m = masked ? mask_d.get() : nullptr;
  mse_loss_forward(pred_d.get(), target_d.get(), m, loss_d.get(), denom_d.get(), n, nullptr);
  mse_loss_backward(pred_d.get(), target_d.get(), m, denom_d.get(), weight, dpred_d.get(), n, nullptr);
  sync();
  double err = 0.0, wsum = 0.0;
  for (int64_t e = 0; e < n; ++e) {
    err += mask[e] * (double(pred[e]) - target[e]) * (double(pred[e]) - target[e]);
    wsum += mask[e];
  }
  Ref dpred = to_ref(dpred0);
  for (int64_t e = 0; e < n; ++e) dpred[e] += weight * 2.0 * mask[e] * (double(pred[e]) - target[e]) / wsum;
  const std::string tag = std::string("mse_loss") + (masked ? " masked " : " ") + dtype<T>();
  expect_close(tag + " loss", relative_error(loss_d.download(), Ref{err / wsum}), 1e-6);
  expect_close(tag + " backward", relative_error(dpred_d.download(), dpred), tol<T>(1e-5, 1e-2));
}

template <class G>
void test_adamw() {
  std::mt19937 rng(9);
  // Tensors 3 and 4 start inside their buffers: 3 at the same offset for every operand (a scalar
  // head, then 16-byte vectors), 4 with the gradient at another offset (all scalar).
  const std::vector<int64_t> sizes = {1000, 70001, 33, 1027, 515};
  const std::vector<int64_t> offsets = {0, 0, 0, 3, 1}, grad_offsets = {0, 0, 0, 3, 2};
  const AdamWConfig cfg{0.1f, 0.9f, 0.95f, 1e-8f, 0.01f};
  const int64_t step = 3;
  const float grad_scale = 0.5f, max_norm = 1.0f;
  struct Host {
    std::vector<float> p, g, m, v;
  };
  std::vector<Host> host;
  std::vector<std::unique_ptr<DeviceArray<float>>> p_d, m_d, v_d;
  std::vector<std::unique_ptr<DeviceArray<G>>> g_d;
  std::vector<std::unique_ptr<DeviceArray<__nv_bfloat16>>> copy_d;
  std::vector<AdamWTensor<G>> tensors;
  for (size_t t = 0; t < sizes.size(); ++t) {
    const int64_t n = sizes[t];
    Host h{random_normal(n, rng), stored<G>(random_normal(n, rng)), random_normal(n, rng, 0.1f), random_normal(n, rng)};
    for (float& x : h.v) x = x * x;
    const int64_t off = offsets[t], goff = grad_offsets[t];
    auto padded = [](const std::vector<float>& v, int64_t pad) {
      std::vector<float> out(size_t(pad), 0.0f);
      out.insert(out.end(), v.begin(), v.end());
      return out;
    };
    p_d.push_back(std::make_unique<DeviceArray<float>>(padded(h.p, off)));
    m_d.push_back(std::make_unique<DeviceArray<float>>(padded(h.m, off)));
    v_d.push_back(std::make_unique<DeviceArray<float>>(padded(h.v, off)));
    g_d.push_back(std::make_unique<DeviceArray<G>>(padded(h.g, goff)));
    copy_d.push_back(std::make_unique<DeviceArray<__nv_bfloat16>>(static_cast<size_t>(n + off)));
    tensors.push_back({p_d[t]->get() + off, g_d[t]->get() + goff, m_d[t]->get() + off, v_d[t]->get() + off,
                       copy_d[t]->get() + off, n, t == 1 ? 0.0f : 1.0f});
    host.push_back(std::move(h));
  }
  DeviceArray<double> ws(static_cast<size_t>(kSumSquaresWorkspace));
  global_sum_squares(tensors.data(), int(tensors.size()), ws.get(), nullptr);
  adamw_step(tensors.data(), int(tensors.size()), cfg, step, grad_scale, max_norm, ws.get(), nullptr);
  sync();
  double sumsq = 0.0;
  for (const Host& h : host)
    for (float g : h.g) sumsq += double(g) * g;
  double got_sumsq = 0.0;
  check_cuda(cudaMemcpy(&got_sumsq, ws.get(), sizeof(double), cudaMemcpyDeviceToHost), "sumsq");
  const std::string tag = std::string("adamw grads ") + dtype<G>();
  expect_close(tag + " global sum of squares", std::fabs(got_sumsq - sumsq) / sumsq, 1e-12);
  const double clip = std::min(1.0, max_norm / (std::sqrt(sumsq) * grad_scale + 1e-6));
  expect_close(tag + " clipping is active (1 = not)", clip < 1.0 ? 0.0 : 1.0, 0.0);
  const double bc1 = 1.0 - std::pow(0.9, double(step)), bc2 = 1.0 - std::pow(0.95, double(step));
  for (size_t t = 0; t < host.size(); ++t) {
    const Host& h = host[t];
    const size_t n = h.p.size();
    Ref dp(n), m(n), v(n);
    const double decay = cfg.weight_decay * tensors[t].decay_mult;
    for (size_t e = 0; e < n; ++e) {
      const double g = h.g[e] * grad_scale * clip;
      m[e] = 0.9 * h.m[e] + 0.1 * g;
      v[e] = 0.95 * h.v[e] + 0.05 * g * g;
      dp[e] = -cfg.lr * ((m[e] / bc1) / (std::sqrt(v[e] / bc2) + 1e-8) + decay * h.p[e]);
    }
    const auto tail = [&](const std::vector<float>& v) { return std::vector<float>(v.begin() + offsets[t], v.end()); };
    std::vector<float> p = tail(p_d[t]->download()), delta(n);
    for (size_t e = 0; e < n; ++e) delta[e] = p[e] - h.p[e];
    const std::string tt = tag + " tensor " + std::to_string(t);
    expect_close(tt + " m", relative_error(tail(m_d[t]->download()), m), 1e-5);
    expect_close(tt + " v", relative_error(tail(v_d[t]->download()), v), 1e-5);
    expect_close(tt + " param update", relative_error(delta, dp), 1e-5);
    expect_close(tt + " bf16 copy", relative_error(tail(copy_d[t]->download()), to_ref(stored<__nv_bfloat16>(p))),
                 0.0);
  }
}

// ---- host-only: the CPU E4M3 codec against cuda_fp8.h's satfinite conversion ---------------

// cuda_fp8.h's conversions are host functions too: the CPU reference must encode every float as
// they do (the GPU kernels use the same call), and decode every code to the same value.
void test_e4m3_codec() {
  int64_t encode_mismatches = 0, decode_mismatches = 0;
  auto check = [&](float x) {
    encode_mismatches += emb::encode_e4m3(x) != __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  };
  for (uint64_t bits = 0; bits < (uint64_t(1) << 32); bits += 251) {  // 17M floats, NaNs of both signs included
    float x;
    const auto b = uint32_t(bits);
    std::memcpy(&x, &b, 4);
    check(x);
  }
  for (float x : {std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()}) check(x);
  for (int sign : {0, 0x80})
    for (int code = 0; code < 0x7e; ++code) {  // every rounding tie and its neighbours
      const float lo = emb::decode_e4m3(uint8_t(sign | code)),
                  hi = emb::decode_e4m3(uint8_t(sign | (code + 1)));
      const float tie = (lo + hi) / 2;
      for (float x : {tie, std::nextafter(tie, lo), std::nextafter(tie, hi)}) check(x);
    }
  for (int code = 0; code < 256; ++code) {
    __nv_fp8_e4m3 q;
    q.__x = __nv_fp8_storage_t(code);
    const float want = emb::decode_e4m3(uint8_t(code)), got = float(q);
    decode_mismatches += std::isnan(want) ? !std::isnan(got) : got != want;
  }
  expect_close("e4m3 encode: CPU codec vs cuda_fp8.h (mismatches)", double(encode_mismatches), 0.0);
  expect_close("e4m3 decode: CPU codec vs cuda_fp8.h (mismatches)", double(decode_mismatches), 0.0);
}

// ---- FP8 -------------------------------------------------------------------------------------

// The CPU reference's quantisation of x [rows, cols] in blocks of `block`.
struct Fp8Reference {
  std::vector<uint8_t> codes;
  std::vector<float> scales;
  Fp8Reference(const std::vector<float>& x, int64_t rows, int64_t cols, emb::Fp8BlockShape block)
      : codes(x.size()), scales(emb::fp8_scale_count(rows, cols, block)) {
    emb::fp8_quantize(x.data(), rows, cols, block, codes.data(), scales.data());
  }
  std::vector<float> values() const {
    std::vector<float> v(codes.size());
    for (size_t i = 0; i < v.size(); ++i) v[i] = emb::decode_e4m3(codes[i]);
    return v;
  }
};

// CPU tile scales [rows, tiles] in the GPU layout [tiles, rows].
std::vector<float> tile_scales_gpu_layout(const std::vector<float>& s, int64_t rows, int64_t cols) {
  const int64_t tiles = fp8_blocks(cols);
  std::vector<float> g(s.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t kb = 0; kb < tiles; ++kb) g[kb * rows + r] = s[r * tiles + kb];
  return g;
}

// CPU block scales [grid_rows, grid_cols] in the GPU layout [grid_rows, stride], padding 0.
std::vector<float> block_scales_gpu_layout(const std::vector<float>& s, int64_t rows, int64_t cols) {
  const int64_t grid_cols = fp8_blocks(cols), stride = fp8_block_scale_stride(cols);
  std::vector<float> g(size_t(fp8_block_scale_count(rows, cols)), 0.0f);
  for (int64_t i = 0; i < fp8_blocks(rows); ++i)
    for (int64_t j = 0; j < grid_cols; ++j) g[i * stride + j] = s[i * grid_cols + j];
  return g;
}

int64_t mismatches(const std::vector<float>& got, const std::vector<float>& want) {
  int64_t n = 0;
  for (size_t i = 0; i < want.size(); ++i) n += got[i] != want[i];
  return n;
}

std::vector<float> transposed(const std::vector<float>& x, int64_t rows, int64_t cols) {
  std::vector<float> t(x.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = x[r * cols + c];
  return t;
}

// Codes and scales equal the CPU reference's bit for bit, for tiles and blocks, as does the
// dequantised tensor (one fp32 product, rounded once to T) and the transposed blocks. Values
// over 8 binades; shapes with partial tiles and blocks.
template <class T>
void test_fp8_quantize(int64_t rows, int64_t cols) {
  std::mt19937 rng(11);
  auto x = random_normal(rows * cols, rng);
  std::uniform_real_distribution<float> binade(-4.0f, 4.0f);
  for (float& v : x) v *= std::exp2(binade(rng));
  x = stored<T>(x);
  const Fp8Reference tiles(x, rows, cols, emb::kFp8Tile), blocks(x, rows, cols, emb::kFp8Block),
      blocks_t(transposed(x, rows, cols), cols, rows, emb::kFp8Block);
  DeviceArray<T> x_d(x), back_d(x.size());
  DeviceArray<__nv_fp8_e4m3> tile_codes(x.size()), block_codes(x.size()), block_codes_t(x.size());
  DeviceArray<float> tile_scales(size_t(fp8_tile_scale_count(rows, cols))),
      block_scales(size_t(fp8_block_scale_count(rows, cols))),
      block_scales_t(size_t(fp8_block_scale_count(cols, rows)));
  const std::string tag =
      "fp8 quantize " + std::string(dtype<T>()) + " " + std::to_string(rows) + "x" + std::to_string(cols);

  fp8_quantize_tiles(x_d.get(), rows, cols, tile_codes.get(), tile_scales.get(), nullptr);
  fp8_dequantize_tiles(tile_codes.get(), tile_scales.get(), rows, cols, back_d.get(), nullptr);
  sync();
  std::vector<float> want(x.size());
  emb::fp8_dequantize(tiles.codes.data(), tiles.scales.data(), rows, cols, emb::kFp8Tile, want.data());
  expect_close(tag + " 1x128 codes (mismatches)", double(mismatches(tile_codes.download(), tiles.values())), 0.0);
  expect_close(tag + " 1x128 scales (mismatches)",
               double(mismatches(tile_scales.download(), tile_scales_gpu_layout(tiles.scales, rows, cols))), 0.0);
  expect_close(tag + " 1x128 dequantized (mismatches)", double(mismatches(back_d.download(), stored<T>(want))), 0.0);

  fp8_quantize_blocks(x_d.get(), rows, cols, block_codes.get(), block_scales.get(), nullptr);
  fp8_dequantize_blocks(block_codes.get(), block_scales.get(), rows, cols, back_d.get(), nullptr);
  fp8_transpose_blocks(block_codes.get(), block_scales.get(), rows, cols, block_codes_t.get(), block_scales_t.get(),
                       nullptr);
  sync();
  emb::fp8_dequantize(blocks.codes.data(), blocks.scales.data(), rows, cols, emb::kFp8Block, want.data());
  expect_close(tag + " 128x128 codes (mismatches)", double(mismatches(block_codes.download(), blocks.values())), 0.0);
  expect_close(tag + " 128x128 scales (mismatches)",
               double(mismatches(block_scales.download(), block_scales_gpu_layout(blocks.scales, rows, cols))), 0.0);
  expect_close(tag + " 128x128 dequantized (mismatches)", double(mismatches(back_d.download(), stored<T>(want))), 0.0);
  expect_close(tag + " 128x128 transposed codes (mismatches)",
               double(mismatches(block_codes_t.download(), blocks_t.values())), 0.0);
  expect_close(tag + " 128x128 transposed scales (mismatches)",
               double(mismatches(block_scales_t.download(), block_scales_gpu_layout(blocks_t.scales, cols, rows))),
               0.0);
}

// y[T, O] = X·Wᵀ + beta·y on the GPU (quantised there) against the CPU reference GEMM on the
// CPU's codes, and against fp32 (the error the CPU test bounds); then the input gradient of a
// linear layer, dX += dY·W, with W's transposed blocks.
// Tolerances are estimates: cuBLASLt promotes to fp32 once per 128-long k-block as the reference
// does, but the tensor cores sum the products inside a block in an order (and, on Hopper, a
// precision) of their own.
template <class Out>
void test_fp8_gemm(const Blas& blas, int64_t T, int64_t O, int64_t K) {
  std::mt19937 rng(12);
  const auto x = random_normal(T * K, rng), w = random_normal(O * K, rng), dy = random_normal(T * O, rng);
  const auto y0 = stored<Out>(random_normal(T * O, rng)), dx0 = stored<Out>(random_normal(T * K, rng));
  const Fp8Reference xq(x, T, K, emb::kFp8Tile), wq(w, O, K, emb::kFp8Block),
      dyq(dy, T, O, emb::kFp8Tile), wq_t(transposed(w, O, K), K, O, emb::kFp8Block);
  std::vector<float> y_want = y0, dx_want = dx0, y_fresh(T * O);
  emb::fp8_gemm(xq.codes.data(), xq.scales.data(), wq.codes.data(), wq.scales.data(), y_want.data(), T, O, K,
                     1.0f);
  emb::fp8_gemm(xq.codes.data(), xq.scales.data(), wq.codes.data(), wq.scales.data(), y_fresh.data(), T, O, K,
                     0.0f);
  emb::fp8_gemm(dyq.codes.data(), dyq.scales.data(), wq_t.codes.data(), wq_t.scales.data(), dx_want.data(), T, K,
                     O, 1.0f);

  DeviceArray<float> x_d(x), w_d(w), dy_d(dy), x_scales(size_t(fp8_tile_scale_count(T, K))),
      w_scales(size_t(fp8_block_scale_count(O, K))), w_scales_t(size_t(fp8_block_scale_count(K, O))),
      dy_scales(size_t(fp8_tile_scale_count(T, O)));
  DeviceArray<__nv_fp8_e4m3> x_codes(x.size()), w_codes(w.size()), w_codes_t(w.size()), dy_codes(dy.size());
  DeviceArray<Out> y_d(y0), y_fresh_d(size_t(T * O)), dx_d(dx0);
  fp8_quantize_tiles(x_d.get(), T, K, x_codes.get(), x_scales.get(), nullptr);
  fp8_quantize_blocks(w_d.get(), O, K, w_codes.get(), w_scales.get(), nullptr);
  fp8_transpose_blocks(w_codes.get(), w_scales.get(), O, K, w_codes_t.get(), w_scales_t.get(), nullptr);
  fp8_quantize_tiles(dy_d.get(), T, O, dy_codes.get(), dy_scales.get(), nullptr);
  fp8_gemm(blas, x_codes.get(), x_scales.get(), w_codes.get(), w_scales.get(), y_d.get(), T, O, K, 1.0f, nullptr);
  fp8_gemm(blas, x_codes.get(), x_scales.get(), w_codes.get(), w_scales.get(), y_fresh_d.get(), T, O, K, 0.0f, nullptr);
  fp8_gemm(blas, dy_codes.get(), dy_scales.get(), w_codes_t.get(), w_scales_t.get(), dx_d.get(), T, K, O, 1.0f,
           nullptr);
  sync();

  const std::string tag = "fp8_gemm " + std::string(dtype<Out>()) + " out " + std::to_string(T) + "x" +
                          std::to_string(O) + "x" + std::to_string(K);
  const auto y_fresh_got = y_fresh_d.download();
  expect_close(tag + " y = XWt vs CPU reference", relative_error(y_fresh_got, to_ref(y_fresh)), tol<Out>(1e-3, 1e-2));
  expect_close(tag + " y += XWt vs CPU reference", relative_error(y_d.download(), to_ref(y_want)),
               tol<Out>(1e-3, 1e-2));
  expect_close(tag + " dX += dY W vs CPU reference", relative_error(dx_d.download(), to_ref(dx_want)),
               tol<Out>(1e-3, 1e-2));
  // Relative Frobenius error against the unquantised product (3.7e-2 on the CPU at these sizes).
  double err = 0.0, norm = 0.0;
  for (int64_t t = 0; t < T; ++t)
    for (int64_t o = 0; o < O; ++o) {
      double exact = 0.0;
      for (int64_t k = 0; k < K; ++k) exact += double(x[t * K + k]) * w[o * K + k];
      err += (y_fresh_got[t * O + o] - exact) * (y_fresh_got[t * O + o] - exact);
      norm += exact * exact;
    }
  expect_close(tag + " y vs the fp32 product (relative Frobenius)", std::sqrt(err / norm), 4.5e-2);
}

// Shapes cuBLASLt's FP8 kernels cannot take are refused before any launch.
void test_fp8_gemm_rejects_shapes(const Blas& blas) {
  DeviceArray<__nv_fp8_e4m3> codes(size_t(256 * 1024));
  DeviceArray<float> scales(4096), y(size_t(256 * 1024));
  struct Shape {
    int64_t T, O, K;
  };
  int refused = 0;
  for (const Shape s : {Shape{64, 128, 1000}, Shape{64, 1000, 128}, Shape{62, 128, 128}})
    refused += !emb::test::error_of([&] {
                 fp8_gemm(blas, codes.get(), scales.get(), codes.get(), scales.get(), y.get(), s.T, s.O, s.K, 0.0f,
                          nullptr);
               }).empty();
  expect_close("fp8_gemm refuses K, O not multiples of 16 and T not of 4 (missed)", 3.0 - refused, 0.0);
}

// ---- tensor-core and async-copy wrappers (mma.cuh) -------------------------------------------

// One warp: D = A·B + C through mma_m16n8k16_bf16 with each lane's fragments gathered from
// global memory per the PTX ISA layout (mma.cuh) into out_manual; then A and B staged in
// shared memory by cp_async_16 and loaded by ldmatrix_x4 / ldmatrix_x2_trans into
// out_ldmatrix. A [16][16] row-major, B [16][8] (k-major), C, D [16][8] row-major.
__global__ void mma_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, const float* C, float* out_manual,
                           float* out_ldmatrix, float* out_x4_trans) {
  __shared__ __align__(16) __nv_bfloat16 As[16][16];
  __shared__ __align__(16) __nv_bfloat16 Bs[16][8];
  const int lane = threadIdx.x, g = lane / 4, t = lane % 4;
  auto pack = [](const __nv_bfloat16* p) {  // p[0] in the low half, p[1] in the high half
    const __nv_bfloat16_raw lo = p[0], hi = p[1];
    return uint32_t(lo.x) | uint32_t(hi.x) << 16;
  };
  auto pack_column = [](const __nv_bfloat16* p) {  // p[0] and p[8]: two rows of B
    const __nv_bfloat16_raw lo = p[0], hi = p[8];
    return uint32_t(lo.x) | uint32_t(hi.x) << 16;
  };
  const uint32_t a[4] = {pack(A + g * 16 + 2 * t), pack(A + (g + 8) * 16 + 2 * t), pack(A + g * 16 + 2 * t + 8),
                         pack(A + (g + 8) * 16 + 2 * t + 8)};
  const uint32_t b[2] = {pack_column(B + 2 * t * 8 + g), pack_column(B + (2 * t + 8) * 8 + g)};
  const float c[4] = {C[g * 8 + 2 * t], C[g * 8 + 2 * t + 1], C[(g + 8) * 8 + 2 * t], C[(g + 8) * 8 + 2 * t + 1]};
  auto store = [&](float* out, const float(&d)[4]) {
    out[g * 8 + 2 * t] = d[0];
    out[g * 8 + 2 * t + 1] = d[1];
    out[(g + 8) * 8 + 2 * t] = d[2];
    out[(g + 8) * 8 + 2 * t + 1] = d[3];
  };
  float d[4];
  mma_m16n8k16_bf16(d, a, b, c);
  store(out_manual, d);
  cp_async_16(&As[lane / 2][(lane % 2) * 8], A + lane * 8);  // 32 chunks of 16 bytes
  if (lane < 16) cp_async_16(&Bs[lane][0], B + lane * 8);    // 16 chunks
  cp_async_commit();
  cp_async_wait<0>();
  __syncthreads();
  uint32_t a_ld[4], b_ld[2];
  ldmatrix_x4(a_ld, &As[lane % 16][(lane / 16) * 8]);
  ldmatrix_x2_trans(b_ld, &Bs[lane % 16][0]);
  mma_m16n8k16_bf16(d, a_ld, b_ld, c);
  store(out_ldmatrix, d);
  // ldmatrix_x4_trans: lanes 16..31 address B's rows again, so matrices 2, 3 repeat 0, 1 and
  // both register pairs are B's fragment.
  uint32_t b4[4];
  ldmatrix_x4_trans(b4, &Bs[lane % 16][0]);
  for (int half = 0; half < 2; ++half) {
    const uint32_t b_pair[2] = {b4[2 * half], b4[2 * half + 1]};
    mma_m16n8k16_bf16(d, a_ld, b_pair, c);
    store(out_x4_trans + half * 16 * 8, d);
  }
}

void test_mma() {
  std::mt19937 rng(13);
  const auto A = stored<__nv_bfloat16>(random_normal(16 * 16, rng)),
             B = stored<__nv_bfloat16>(random_normal(16 * 8, rng)), C = random_normal(16 * 8, rng);
  DeviceArray<__nv_bfloat16> A_d(A), B_d(B);
  DeviceArray<float> C_d(C), manual_d(16 * 8), ldmatrix_d(16 * 8), x4_trans_d(2 * 16 * 8);
  EMB_LAUNCH(mma_kernel, 1, 32, 0, nullptr)(A_d.get(), B_d.get(), C_d.get(), manual_d.get(), ldmatrix_d.get(),
                                            x4_trans_d.get());
  check_launch("mma_kernel");
  sync();
  Ref D(16 * 8);
  for (int r = 0; r < 16; ++r)
    for (int n = 0; n < 8; ++n) {
      double s = C[r * 8 + n];
      for (int k = 0; k < 16; ++k) s += double(A[r * 16 + k]) * B[k * 8 + n];
      D[r * 8 + n] = s;
    }
  expect_close("mma_m16n8k16_bf16, fragments per the ISA layout", relative_error(manual_d.download(), D), 1e-6);
  expect_close("mma_m16n8k16_bf16 after cp_async_16 and ldmatrix_x4/_x2_trans",
               relative_error(ldmatrix_d.download(), D), 1e-6);
  const std::vector<float> x4 = x4_trans_d.download();
  for (int half = 0; half < 2; ++half)
    expect_close("mma_m16n8k16_bf16 with ldmatrix_x4_trans registers " + std::to_string(2 * half) + ", " +
                     std::to_string(2 * half + 1),
                 relative_error(std::vector<float>(x4.begin() + half * 128, x4.begin() + (half + 1) * 128), D), 1e-6);
}

// ---- Hopper wrappers (wgmma.cuh, tma.cuh) ---------------------------------------------------

struct alignas(128) Aligned128 {
  char bytes[128];
};

// One warpgroup. TMA brings A [64][16] (a tensor of 60 rows: rows 60..63 must come as zeros),
// Bᵀ [N][16] and B [16][N] into shared memory in the no-swizzle core-matrix layouts (A and Bᵀ
// K-major: one box of 8 columns per chunk, chunks 64·16 and N·16 bytes apart; B N-major: boxes of
// 8 columns × 16 rows, 256 bytes apart). Then, in one group, d1 = C + A·B through wgmma_ss
// (K-major B) + A·B through wgmma_rs (A from registers, N-major B), d2 = A·B through wgmma_rs
// with scale_d false over NaN, and d3 = A·B through wgmma_ss with N-major B (the atomic dQ's
// form) with scale_d false over NaN; wgmma_rs is built for N 48, 64, 128 only, so below 48
// d1 = C + A·B and d2 stays NaN. out1, out2, out3: [64][N] row-major.
template <int N>
constexpr bool kWgmmaRs = N >= 48;
template <int N>
__global__ void wgmma_kernel(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap bt_map,
                             const __grid_constant__ CUtensorMap b_map, const __nv_bfloat16* A, const float* C,
                             float* out1, float* out2, float* out3) {
#ifdef EMB_HOPPER_DEVICE_CODE
  constexpr int kA = 0, kBt = 64 * 16 * 2, kB = kBt + N * 16 * 2, kBar = kB + N * 16 * 2;
  EMB_DYNAMIC_SHARED(Aligned128, shared);
  char* base = reinterpret_cast<char*>(shared);
  uint64_t* bar = reinterpret_cast<uint64_t*>(base + kBar);
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(bar, kBar);
    for (int c = 0; c < 2; ++c) {
      bulk_load_2d(base + kA + c * 64 * 16, &a_map, 8 * c, 0, bar);
      bulk_load_2d(base + kBt + c * N * 16, &bt_map, 8 * c, 0, bar);
    }
    for (int c = 0; c < N / 8; ++c) bulk_load_2d(base + kB + c * 256, &b_map, 8 * c, 0, bar);
  }
  mbarrier_wait(bar, 0);
  const int w = threadIdx.x / 32, g = threadIdx.x % 32 / 4, t = threadIdx.x % 4;
  auto pack = [&](int row, int col) {
    const __nv_bfloat16_raw lo = A[(16 * w + row) * 16 + col], hi = A[(16 * w + row) * 16 + col + 1];
    return uint32_t(lo.x) | uint32_t(hi.x) << 16;
  };
  const uint32_t a[4] = {pack(g, 2 * t), pack(g + 8, 2 * t), pack(g, 2 * t + 8), pack(g + 8, 2 * t + 8)};
  float d1[N / 8][4], d2[N / 8][4], d3[N / 8][4];
  for_each_element<N>(threadIdx.x % 32, [&](int n, int e, int col) {
    d1[n][e] = C[(16 * w + g + 8 * (e / 2)) * N + col];
    d2[n][e] = d3[n][e] = NAN;
  });
  const uint64_t a_desc = wgmma_descriptor(base + kA, 64 * 16, 128), b_desc = wgmma_descriptor(base + kB, 128, 256);
  wgmma_fence();
  wgmma_ss<N, 0>(d1, a_desc, wgmma_descriptor(base + kBt, N * 16, 128), true);
  if constexpr (kWgmmaRs<N>) {
    wgmma_rs<N, 1>(d1, a, b_desc, true);
    wgmma_rs<N, 1>(d2, a, b_desc, false);
  }
  wgmma_ss<N, 1>(d3, a_desc, b_desc, false);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(d1);
  wgmma_fence_operand(d2);
  wgmma_fence_operand(d3);
  for_each_element<N>(threadIdx.x % 32, [&](int n, int e, int col) {
    const int row = 16 * w + g + 8 * (e / 2);
    out1[row * N + col] = d1[n][e];
    out2[row * N + col] = d2[n][e];
    out3[row * N + col] = d3[n][e];
  });
#endif
}

template <int N>
void test_wgmma() {
  constexpr int kRowsInTensor = 60;
  std::mt19937 rng(17);
  auto A = stored<__nv_bfloat16>(random_normal(64 * 16, rng));
  std::fill(A.begin() + kRowsInTensor * 16, A.end(), 0.0f);  // what TMA's zero fill gives
  auto A_tma = A;                                               // rows beyond the tensor poisoned
  std::fill(A_tma.begin() + kRowsInTensor * 16, A_tma.end(), NAN);
  const auto B = stored<__nv_bfloat16>(random_normal(16 * N, rng));
  std::vector<float> Bt(N * 16);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < N; ++n) Bt[n * 16 + k] = B[k * N + n];
  const auto C = random_normal(64 * N, rng);
  DeviceArray<__nv_bfloat16> A_d(A), A_tma_d(A_tma), B_d(B), Bt_d(Bt);
  DeviceArray<float> C_d(C), out1_d(64 * N), out2_d(64 * N), out3_d(64 * N);
  auto map = [](const DeviceArray<__nv_bfloat16>& x, uint64_t cols, uint64_t rows, uint32_t box_rows) {
    CUtensorMap m;
    const uint64_t dims[2] = {cols, rows}, strides[1] = {cols * 2};
    const uint32_t box[2] = {8, box_rows};
    make_tensor_map(&m, x.get(), 2, dims, strides, box, 2);
    return m;
  };
  constexpr int bytes = 64 * 16 * 2 + 2 * N * 16 * 2 + 8;
  check_cuda(cudaFuncSetAttribute(reinterpret_cast<const void*>(wgmma_kernel<N>),
                                  cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "wgmma_kernel");
  EMB_LAUNCH(wgmma_kernel<N>, 1, 128, bytes, nullptr)(map(A_tma_d, 16, kRowsInTensor, 64), map(Bt_d, 16, N, N),
                                                      map(B_d, N, 16, 16), A_d.get(), C_d.get(), out1_d.get(),
                                                      out2_d.get(), out3_d.get());
  check_launch("wgmma_kernel");
  sync();
  Ref D1(64 * N), D2(64 * N);
  for (int r = 0; r < 64; ++r)
    for (int n = 0; n < N; ++n) {
      double s = 0.0;
      for (int k = 0; k < 16; ++k) s += double(A[r * 16 + k]) * B[k * N + n];
      D1[r * N + n] = C[r * N + n] + (kWgmmaRs<N> ? 2.0 : 1.0) * s;
      D2[r * N + n] = s;
    }
  const std::string n = " N " + std::to_string(N);
  const std::string chained = kWgmmaRs<N> ? "wgmma_ss + wgmma_rs chained" : "wgmma_ss";
  expect_close(chained + ", after TMA loads (zero fill)" + n, relative_error(out1_d.download(), D1), 1e-6);
  if (kWgmmaRs<N>) expect_close("wgmma_rs with scale_d false" + n, relative_error(out2_d.download(), D2), 1e-6);
  expect_close("wgmma_ss with N-major B, scale_d false" + n, relative_error(out3_d.download(), D2), 1e-6);
}

std::string g_filter;  // runs only the device tests whose name contains it (argv[1])

// One device test, under every schedule the build offers (test_support.hpp): under the
// emulation its results must be bit-identical under two schedules, unless the kernel is not
// deterministic (fp32 atomics, whose order the schedule decides): then it passes its tolerances
// under each.
bool selected(const std::string& name) { return name.find(g_filter) != std::string::npos; }

template <class Body>
void run(const std::string& name, Body body, bool deterministic = true) {
  if (!selected(name)) return;
  const int64_t differing = run_under_schedules(body);
  if (kSchedules > 1 && deterministic)
    expect_close(name + ": copies differing between schedules", double(differing), 0.0);
}

// Every mask × head dim on ragged packed batches, padded tails, the edge cases.
template <class T, class Impl>
void test_attention_suite() {
  const std::string t = std::string(Impl::name) + " " + dtype<T>();
  const auto run_impl = [](const std::string& name, auto body) { run(name, body, Impl::deterministic); };
  const AttnMask masks[] = {AttnMask::full, AttnMask::block_causal, AttnMask::prefix, AttnMask::cross,
                            AttnMask::teacher_forcing};
  for (AttnMask mask : masks)
    for (int hd : Impl::head_dims)
      run_impl(t + " mask " + std::to_string(int(mask)) + " hd " + std::to_string(hd),
               [&] { test_attention<T, Impl>(mask, hd, 0); });
  run_impl(t + " mask 0 hd 64 padded", [&] { test_attention<T, Impl>(AttnMask::full, 64, 37); });
  run_impl(t + " mask 1 hd 64 padded", [&] { test_attention<T, Impl>(AttnMask::block_causal, 64, 5); });
  run_impl(t + " mask 4 hd 64 padded", [&] { test_attention<T, Impl>(AttnMask::teacher_forcing, 64, 9); });
  run_impl(t + " edge cases", [&] { test_attention_edge_cases<T, Impl>(); });
  run_impl(t + " skips other samples", [&] {
    for (const std::vector<int>& lengths :
         {std::vector<int>{192, 64, 64, 64}, std::vector<int>{64, 256, 64, 64}, std::vector<int>{320, 64}})
      for (AttnMask mask : masks) test_attention_skips_other_samples<T, Impl>(mask, lengths);
  });
}

template <class T>
void test_gemms_and_attention(const Blas& blas) {
  const std::string t = dtype<T>();
  run("linear " + t, [&] { test_linear<T>(blas); });
  run("linear_emb " + t, [&] { test_linear_emb<T>(blas); });
  run("linear_gelu " + t, [&] {
    for (int out : {80, 37})
      for (bool bias : {true, false}) test_linear_gelu<T>(blas, out, bias);
  });
  test_attention_suite<T, SimtAttention>();
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    test_attention_suite<T, MmaAttention>();
    if (attention_wgmma_available(0)) {
      test_attention_suite<T, WgmmaAttention>();
      test_attention_suite<T, WgmmaAtomicAttention>();
    }
  }
}

template <class T>
void test_norms_and_residuals() {
  const std::string t = dtype<T>();
  // C = 200 and 2056: 16-byte vectors (every row aligned); C = 203 and 517: the scalar path. 2056
  // and 517 exceed one vector or element per thread of a 256-thread row block, so the forward's
  // threads hold 2 or 4 of them (the presets' 3072 in bf16 does too).
  run("norm_modulate " + t, [&] {
    for (int C : {200, 2056, 203, 517}) {
      test_norm_modulate<T>(NormKind::layer, false, true, C);
      test_norm_modulate<T>(NormKind::layer, true, false, C);
      test_norm_modulate<T>(NormKind::layer, true, true, C);
      test_norm_modulate<T>(NormKind::rms, true, false, C);
      test_norm_modulate<T>(NormKind::rms, false, true, C);
    }
    // dweight and dbias over one row and over 333 (11 chunks of 31 rows, the last one shorter).
    for (int C : {200, 203})
      for (int64_t N : {1, 333}) {
        test_norm_modulate<T>(NormKind::layer, true, true, C, N);
        test_norm_modulate<T>(NormKind::rms, true, false, C, N);
      }
  });
  run("column_sum " + t, [&] { test_column_sums<T, T>(); });
  if constexpr (std::is_same_v<T, __nv_bfloat16>)
    run("column_sum bf16 into fp32", [&] { test_column_sums<T, float>(); });
  // 8192 and 8189: the widest rows the forward holds, in vectors (fp32 8 per thread, bf16 4) and
  // scalar (32 per thread).
  run("residual_norm_modulate " + t, [&] {
    for (int C : {256, 2056, 203, 517, 8192, 8189})
      for (Residual residual : {Residual::gated, Residual::plain, Residual::none})
        test_residual_norm_modulate<T>(residual, C);
  });
  if constexpr (std::is_same_v<T, float>) {
    run("column_sum without scratch", [&] { test_column_sum_needs_scratch(); });
    run("norm_modulate row limit", [&] { test_norm_modulate_row_limit(); });
    run("residual_norm_modulate gradient check " + t, [&] {
      for (int C : {8, 7}) test_residual_norm_modulate_gradient(C);  // vectors, scalar
    });
  }
  run("gated_residual " + t, [&] {  // C = 96: 16-byte vectors; C = 99: scalar
    for (int C : {96, 99}) {
      test_gated_residual<T>(true, C);
      test_gated_residual<T>(false, C);
    }
  });
}

template <class T>
void test_pointwise_loss_optimizer_fp8(const Blas& blas) {
  const std::string t = dtype<T>();
  run("rope " + t, [&] {
    for (int hd : {48, 64, 128}) {
      test_rope<T>(RopeMode::d1, hd);
      test_rope<T>(RopeMode::d3, hd);
    }
  });
  run("activation " + t, [&] {
    for (Activation act : {Activation::gelu_tanh, Activation::silu, Activation::relu, Activation::gelu_erf})
      test_activation<T>(act);
  });
  run("conv3d " + t, [&] {
    test_conv3d<T>(2, 5, 6, 7, 3, 3, 1, 1, 2, 1, 1, 16, 24);    // causal k3, batch 2
    test_conv3d<T>(1, 2, 10, 12, 3, 3, 1, 1, 2, 1, 1, 32, 136);  // 27 K steps, a partial column block
    test_conv3d<T>(1, 2, 9, 10, 3, 3, 1, 1, 2, 1, 1, 3, 16);     // from 3 channels: SIMT
    test_conv3d<T>(2, 2, 8, 10, 1, 3, 1, 2, 0, 0, 1, 16, 16);    // Conv2d stride 2, (0, 1, 0, 1)
    test_conv3d<T>(1, 9, 4, 4, 3, 1, 2, 1, 0, 0, 0, 24, 24);     // temporal (3, 1, 1) stride 2
  });
  run("channel_rmsnorm " + t, [&] {
    for (int64_t C : {96, 640})
      for (bool silu : {false, true}) test_channel_rmsnorm<T>(C, silu);
  });
  run("pixel_unshuffle " + t, [&] {
    test_pixel_unshuffle<T>(UnshuffleConfig{1, 5, 8, 6, 2, 2, 1, false, 4}, 16);  // AvgDown3D 16 -> 32
    test_pixel_unshuffle<T>(UnshuffleConfig{2, 3, 4, 6, 1, 2, 0, true, 1}, 3);    // patchify
  });
  run("sinus_embedding " + t, [&] { test_sinus<T>(); });
  run("dropout " + t, [&] {
    test_dropout<T>(50);
    test_dropout<T>(64);
  });
  run("encoder_attention " + t, [&] {
    for (int hd : kEncoderAttentionHeadDims) test_encoder_attention<T>(2, 2, hd, false, AttnBiasKind::none);
    test_encoder_attention<T>(4, 2, 128, true, AttnBiasKind::none);  // Qwen3: causal GQA
    test_encoder_attention<T>(2, 1, 16, true, AttnBiasKind::none);
    test_encoder_attention<T>(2, 2, 64, false, AttnBiasKind::relative_buckets);  // umT5
    test_encoder_attention<T>(2, 2, 80, false, AttnBiasKind::dense);
  });
  run("rope_half " + t, [&] {
    for (int hd : {16, 128}) test_rope_half<T>(hd);
  });
  run("gated_activation " + t, [&] {
    test_gated_activation<T>(Activation::silu);
    test_gated_activation<T>(Activation::gelu_tanh);
  });
  run("mse_loss " + t, [&] {
    test_mse_loss<T>(true);
    test_mse_loss<T>(false);
  });
  run("adamw " + t, [&] { test_adamw<T>(); });
  run("fp8_quantize " + t, [&] {
    test_fp8_quantize<T>(200, 1000);
    test_fp8_quantize<T>(256, 1024);
  });
  run("fp8_gemm " + t, [&] {
    test_fp8_gemm<T>(blas, 256, 1024, 1024);
    test_fp8_gemm<T>(blas, 200, 1008, 1040);
  });
}

template <class T>
void test_all_storage(const Blas& blas) {
  test_gemms_and_attention<T>(blas);
  test_norms_and_residuals<T>();
  test_pointwise_loss_optimizer_fp8<T>(blas);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) g_filter = argv[1];
  try {
    if (selected("tile summaries")) test_tile_skipping();
    if (selected("e4m3 codec")) test_e4m3_codec();
    if (!cuda_device_present()) {
      std::printf("skipped: no CUDA device (host-side checks %s)\n", g_failures ? "FAILED" : "passed");
      return g_failures ? 1 : 0;
    }
    Blas blas;
    test_all_storage<float>(blas);
    test_all_storage<__nv_bfloat16>(blas);
    run("fp8_gemm refuses shapes", [&] { test_fp8_gemm_rejects_shapes(blas); });
#ifdef EMB_CUDA_EMULATE
    run("linear refused epilogue", [&] { test_refused_epilogue(); });
#endif
    run("mma", [&] { test_mma(); });
    if (attention_wgmma_available(0))
      run("wgmma", [&] {
        test_wgmma<24>();
        test_wgmma<32>();
        test_wgmma<48>();
        test_wgmma<64>();
        test_wgmma<128>();
      });
#ifdef EMB_CUDA_EMULATE
    run("attention_wgmma register split", [&] { test_wgmma_register_shortfall(); });
#endif
  } catch (const std::exception& e) {
    std::printf("FAIL exception: %s\n", e.what());
    return 1;
  }
  std::printf("%d failure(s)\n", g_failures);
  return g_failures ? 1 : 0;
}
