// Kernel benchmark: sgemm and linear GFLOP/s, and varlen attention fwd+bwd on a packed batch
// under the full and block_causal masks, to show that tile skipping makes the time follow the
// allowed-pair count. Writes outputs/bench/kernels.json (temp file, then rename).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>
#include <vector>

#include "kernels/attention_tiles.hpp"
#include "kernels/cpu/attention.hpp"
#include "kernels/cpu/linear.hpp"

using namespace emb;
using json = nlohmann::json;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// Median wall time of `reps` runs after one warm-up run.
double median_seconds(const std::function<void()>& f, int reps = 3) {
  f();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::string env_or(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v ? v : fallback;
}

json bench_sgemm(int n) {
  const auto a = random_floats(size_t(n) * n, 1), b = random_floats(size_t(n) * n, 2);
  std::vector<float> c(size_t(n) * n);
  const double s = median_seconds([&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
  });
  return {{"n", n}, {"seconds", s}, {"gflops", 2.0 * n * n * n / s * 1e-9}};
}

json bench_linear(int64_t N, int in, int out) {
  const auto x = random_floats(N * in, 3), W = random_floats(size_t(in) * out, 4), b = random_floats(out, 5);
  const auto dy = random_floats(N * out, 6);
  std::vector<float> y(N * out), dx(N * in), dW(size_t(in) * out), db(out);
  const double fwd = median_seconds([&] { cpu::linear_forward(x.data(), W.data(), b.data(), y.data(), N, in, out); });
  const double bwd = median_seconds([&] {
    cpu::linear_backward(x.data(), W.data(), dy.data(), dx.data(), dW.data(), db.data(), N, in, out);
  });
  const double flop = 2.0 * N * in * out;
  return {{"rows", N},         {"in", in},           {"out", out},
          {"fwd_seconds", fwd}, {"bwd_seconds", bwd}, {"fwd_gflops", flop / fwd * 1e-9},
          {"bwd_gflops", 2 * flop / bwd * 1e-9}};
}

// B samples of L tokens, each L/2 clean then L/2 noisy tokens split into n_blocks blocks.
struct Packed {
  std::vector<int32_t> seq, blk, grp;
};

Packed packed_batch(int B, int L, int n_blocks) {
  Packed p;
  for (int s = 0; s < B; ++s)
    for (int t = 0; t < L; ++t) {
      p.seq.push_back(s);
      p.grp.push_back(t >= L / 2);
      p.blk.push_back((t % (L / 2)) * n_blocks / (L / 2));
    }
  return p;
}

json bench_attention(const Packed& p, cpu::AttnMask mask, int H, int hd) {
  const int64_t T = static_cast<int64_t>(p.seq.size()), ld = int64_t{H} * hd;
  cpu::AttnIndex idx;
  idx.mask = mask;
  idx.q_seq = idx.k_seq = p.seq.data();
  idx.q_blk = idx.k_blk = p.blk.data();
  idx.q_grp = idx.k_grp = p.grp.data();
  const auto q = random_floats(T * ld, 7), k = random_floats(T * ld, 8), v = random_floats(T * ld, 9);
  const auto dout = random_floats(T * ld, 10);
  std::vector<float> out(T * ld), lse(T * H), dq(T * ld), dk(T * ld), dv(T * ld);
  const double fwd = median_seconds(
      [&] { cpu::attention_forward(q.data(), k.data(), v.data(), out.data(), lse.data(), T, T, H, hd, idx); });
  const double bwd = median_seconds([&] {
    cpu::attention_backward(q.data(), k.data(), v.data(), out.data(), lse.data(), dout.data(), dq.data(), dk.data(),
                            dv.data(), T, T, H, hd, idx);
  });
  const int64_t pairs = cpu::attn_allowed_pairs(idx, T, T);
  const auto tiles = cpu::attention_tile_stats(idx, T, T);
  const double flop_fwd = 4.0 * hd * double(pairs) * H, flop_bwd = 2.5 * flop_fwd;
  return {{"mask", attn_mask_name(mask)},
          {"allowed_pairs_per_head", pairs},
          {"allowed_fraction", double(pairs) / (double(T) * T)},
          {"tiles_total", tiles.total},
          {"tiles_visited", tiles.visited},
          {"tiles_dense", tiles.dense},
          {"fwd_seconds", fwd},
          {"bwd_seconds", bwd},
          {"fwd_gflops", flop_fwd / fwd * 1e-9},
          {"bwd_gflops", flop_bwd / bwd * 1e-9},
          {"fwd_bwd_seconds", fwd + bwd}};
}

}  // namespace

int main() {
  json r;
  r["env"] = {{"OPENBLAS_CORETYPE", env_or("OPENBLAS_CORETYPE", "unset (auto-detected)")},
              {"OPENBLAS_NUM_THREADS", env_or("OPENBLAS_NUM_THREADS", "unset")},
              {"omp_max_threads", omp_get_max_threads()}};
  for (int n : {1024, 2048}) r["sgemm"].push_back(bench_sgemm(n));
  for (int D : {256, 512, 1024}) r["linear"].push_back(bench_linear(4096, D, D));
  r["linear"].push_back(bench_linear(2048, 1024, 4096));

  const int B = 4, L = 1024, H = 4, hd = 64, n_blocks = 4;
  const Packed p = packed_batch(B, L, n_blocks);
  r["attention"]["batch"] = {{"samples", B}, {"tokens_per_sample", L}, {"heads", H}, {"head_dim", hd},
                             {"blocks", n_blocks}, {"tile_q", kAttnTileQ}, {"tile_k", kAttnTileK}};
  const json full = bench_attention(p, cpu::AttnMask::full, H, hd);
  const json causal = bench_attention(p, cpu::AttnMask::block_causal, H, hd);
  r["attention"]["runs"] = {full, causal};
  r["attention"]["block_causal_over_full"] = {
      {"time_ratio", causal["fwd_bwd_seconds"].get<double>() / full["fwd_bwd_seconds"].get<double>()},
      {"allowed_pair_ratio",
       causal["allowed_pairs_per_head"].get<double>() / full["allowed_pairs_per_head"].get<double>()}};

  std::filesystem::create_directories("outputs/bench");
  const std::string path = "outputs/bench/kernels.json", tmp = path + ".tmp";
  std::ofstream(tmp) << r.dump(2) << "\n";
  std::filesystem::rename(tmp, path);
  std::printf("%s\n", r.dump(2).c_str());
  return 0;
}
