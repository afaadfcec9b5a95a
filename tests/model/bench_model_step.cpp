// Training-step benchmark: forward + backward + AdamW, median over steps, with the achieved
// GFLOP/s (FLOPs from the plan's model of the batch) over OpenBLAS sgemm GFLOP/s measured in
// the same process between the steps (the median of those runs is the ceiling: the machine is
// shared, so its speed drifts, and interleaving makes both figures see the same load). Cases:
//   gr00t, wan    the small preset (D 256, L 4, 2-4k packed tokens); each family's first step is
//                 dumped (OUT_DIR/model_step_<family>.h5) for bench_torch_step.py to time in PyTorch;
//   gemm_heavy    gr00t trunk at D 1024, F 4096, L 2, ~2k tokens of 49-token samples with short
//                 context, so GEMMs dominate: the "step GFLOP/s vs sgemm" figure.
// Writes the timings to OUT_DIR/model_step_embtrain.json.
//   bench_model_step [OUT_DIR] [STEPS]
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "kernels/cpu/adamw.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "model/dump.hpp"
#include "model/model.hpp"
#include "plan/model_cost.hpp"
#include "model/presets.hpp"
#include "model/synthetic_batch.hpp"

namespace {
emb::CpuOps cpu_ops;  // the backend the models compute on
}  // namespace

using namespace emb;
using Clock = std::chrono::steady_clock;

namespace {

double seconds(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The process's CPU time: with one thread it is what a step costs whatever else the shared
// machine runs (time slices given to other processes do not count), so the "_cpu" figures are
// the load-independent ones; with more threads it also counts threads waiting at barriers.
double cpu_seconds() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

ModelConfig small_config(const char* preset) {
  ModelConfig c = preset_config(preset);
  c.d_model = 256, c.n_layers = 4, c.n_heads = 4, c.d_ff = 1024, c.d_ctx = 256;
  if (c.family == Family::gr00t) {
    c.n_heads_vl = 4, c.d_out = 256, c.d_hidden_enc = 256, c.horizon = 16, c.n_future = 32;
  } else {
    c.latent_height = 16, c.latent_width = 16, c.latent_frames = 4, c.actions_per_block = 4;
  }
  return c;
}

ModelConfig gemm_heavy_config() {
  ModelConfig c = small_config("tiny_gr00t");
  c.d_model = 1024, c.n_layers = 2, c.n_heads = 16, c.d_ff = 4096;
  return c;
}

// 1024³ sgemm through the linear kernel, one run per call: the ceiling the step's GFLOP/s is
// compared with.
struct Sgemm {
  static constexpr int n = 1024;
  std::vector<float> a = std::vector<float>(size_t(n) * n, 0.5f), w = std::vector<float>(size_t(n) * n, 0.25f),
                     y = std::vector<float>(size_t(n) * n);
  std::vector<double> gflops, gflops_cpu;  // per run, by wall and by CPU time
  Sgemm() { cpu::linear_forward(a.data(), w.data(), nullptr, y.data(), n, n, n); }  // touch pages, warm caches
  void run() {
    const auto t0 = Clock::now();
    const double c0 = cpu_seconds();
    cpu::linear_forward(a.data(), w.data(), nullptr, y.data(), n, n, n);
    const double c = cpu_seconds() - c0, t = seconds(t0);
    gflops.push_back(2.0 * n * n * n / t / 1e9);
    gflops_cpu.push_back(2.0 * n * n * n / c / 1e9);
  }
};

struct Case {
  const char* name;
  ModelConfig cfg;
  int n_samples;
  bool dump;  // write the first step for bench_torch_step.py
};

nlohmann::json bench_case(const Case& bc, int steps, const std::string& out_dir) {
  const ModelConfig& cfg = bc.cfg;
  std::unique_ptr<Model> model = make_model(cfg, &cpu_ops);
  const ParamRegistry& reg = model->params();
  const size_t N = size_t(reg.total());
  std::vector<float> params(N), grads(N), m(N, 0.0f), v(N, 0.0f);
  model->init_params(params.data(), 1);
  std::vector<int64_t> ids;
  for (int i = 0; i < bc.n_samples; ++i) ids.push_back(i);
  const PackedBatch batch = make_synthetic_batch(cfg, ids, true, 1);
  const std::vector<double> den = model->loss_counts(batch);
  cpu::AdamWConfig opt;
  opt.lr = 1e-4f, opt.weight_decay = 0.01f;

  Sgemm sgemm;
  std::vector<double> t_fb, t_opt, t_step, t_step_cpu;
  for (int step = 0; step < steps + 2; ++step) {  // two warm-up steps
    const auto t0 = Clock::now();
    const double c0 = cpu_seconds();
    std::fill(grads.begin(), grads.end(), 0.0f);
    const double loss = model->forward_backward(params.data(), grads.data(), batch, 0, 1, den);
    const double fb = seconds(t0);
    if (step == 0 && bc.dump) {
      const std::string path = out_dir + "/model_step_" + family_name(cfg.family) + ".h5";
      const DumpStep info{loss, den, 1, 0, 1, 1};
      begin_dump(path, *model, params.data(), grads.data(), info);
      append_dump(path, *model, info, 0, {dumped_micro_batch(*model, batch, 0)});
      finish_dump(path);
    }
    const auto t1 = Clock::now();
    for (const ParamInfo& p : reg.all())
      cpu::adamw_step(params.data() + p.offset, grads.data() + p.offset, m.data() + p.offset, v.data() + p.offset,
                      p.numel, opt, step + 1, 1.0f, p.decay ? 1.0f : 0.0f);
    const double op = seconds(t1), cpu = cpu_seconds() - c0;
    if (step >= 2) t_fb.push_back(fb), t_opt.push_back(op), t_step.push_back(fb + op), t_step_cpu.push_back(cpu);
    for (int r = 0; r < 5; ++r) sgemm.run();
  }
  const double sgemm_gflops = median(sgemm.gflops), sgemm_gflops_cpu = median(sgemm.gflops_cpu);
  const StepFlops f = batch_flops(cfg, batch);
  const double step_s = median(t_step), gflops = (f.fwd + f.bwd) / step_s / 1e9;
  const double gflops_cpu = (f.fwd + f.bwd) / median(t_step_cpu) / 1e9;
  nlohmann::json j;
  j["family"] = family_name(cfg.family);
  j["config"] = {{"d_model", cfg.d_model}, {"n_layers", cfg.n_layers}, {"n_heads", cfg.n_heads},
                 {"d_ff", cfg.d_ff},       {"d_ctx", cfg.d_ctx}};
  j["params"] = reg.total();
  j["tokens"] = batch.n_tokens;
  j["context_tokens"] = batch.n_context;
  j["samples"] = batch.n_samples;
  j["flops_per_step"] = f.fwd + f.bwd;
  j["gemm_flop_share"] = f.gemm_fwd / f.fwd;
  j["step_ms"] = 1e3 * step_s;
  j["fwd_bwd_ms"] = 1e3 * median(t_fb);
  j["adamw_ms"] = 1e3 * median(t_opt);
  j["gflops"] = gflops;
  j["sgemm_gflops"] = sgemm_gflops;
  j["sgemm_gflops_min_max"] = {*std::min_element(sgemm.gflops.begin(), sgemm.gflops.end()),
                               *std::max_element(sgemm.gflops.begin(), sgemm.gflops.end())};
  j["fraction_of_sgemm"] = gflops / sgemm_gflops;
  j["step_cpu_ms"] = 1e3 * median(t_step_cpu);
  j["gflops_cpu"] = gflops_cpu;
  j["sgemm_gflops_cpu"] = sgemm_gflops_cpu;
  j["fraction_of_sgemm_cpu"] = gflops_cpu / sgemm_gflops_cpu;
  std::printf("%-10s %-5s D %d L %d F %d: %lld tokens + %lld context, %d samples: step %.1f ms (fwd+bwd %.1f, "
              "adamw %.1f), %.1f GFLOP/s = %.0f%% of sgemm %.1f; by CPU time %.1f = %.0f%% of %.1f\n",
              bc.name, family_name(cfg.family), cfg.d_model, cfg.n_layers, cfg.d_ff,
              static_cast<long long>(batch.n_tokens), static_cast<long long>(batch.n_context), batch.n_samples,
              1e3 * step_s, 1e3 * median(t_fb), 1e3 * median(t_opt), gflops, 100 * gflops / sgemm_gflops,
              sgemm_gflops, gflops_cpu, 100 * gflops_cpu / sgemm_gflops_cpu, sgemm_gflops_cpu);
  return j;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string out_dir = argc >= 2 ? argv[1] : "outputs/bench";
    const int steps = argc >= 3 ? std::atoi(argv[2]) : 7;
    make_dirs(out_dir);
    nlohmann::json j;
    const char* coretype = std::getenv("OPENBLAS_CORETYPE");
    const char* blas_threads = std::getenv("OPENBLAS_NUM_THREADS");
    j["threads"] = omp_get_max_threads();
    j["openblas_coretype"] = coretype ? coretype : "auto";
    j["openblas_num_threads"] = blas_threads ? blas_threads : "unset";
    j["steps"] = steps;
    j["sgemm_ceiling"] = "1024^3 through cpu::linear_forward, 5 runs after every step (warm-up included), median";
    std::printf("threads %d, OPENBLAS_CORETYPE %s, %d steps\n", omp_get_max_threads(), coretype ? coretype : "auto",
                steps);
    for (const Case& c : {Case{"gr00t", small_config("tiny_gr00t"), 48, true},
                          Case{"wan", small_config("tiny_wan"), 6, true},
                          Case{"gemm_heavy", gemm_heavy_config(), 42, false}})
      j[c.name] = bench_case(c, steps, out_dir);
    write_file_atomic(out_dir + "/model_step_embtrain.json", j.dump(2) + "\n");
    return 0;
  } catch (const Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exit_code();
  }
}
