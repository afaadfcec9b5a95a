"""Training-step benchmark, embtrain vs PyTorch eager doing the same math.

Runs bench_model_step (which times embtrain, including the GEMM-heavy case whose GFLOP/s is
compared with sgemm measured in the same process, and dumps each small-preset family's batch
and parameters), then times the same small-preset step in PyTorch 1.13 eager, float32: the
model of parity_torch.py (dense masked attention, as eager PyTorch does packed sequences),
backward, and torch.optim.AdamW (foreach) with the same decay groups. Both sides use the same
thread count (OMP_NUM_THREADS, default 1) and OpenBLAS core type (OPENBLAS_CORETYPE from the
environment, recorded). Writes outputs/bench/model_step.json.

    OMP_NUM_THREADS=1 /usr/bin/python3 tests/model/bench_torch_step.py --bench build/tests/model/bench_model_step
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import parity_torch as ref  # noqa: E402


def sgemm_gflops(a, b):
    """One 1024^3 torch.mm (OpenBLAS here too): the machine's speed while PyTorch is timed."""
    t0 = time.perf_counter()
    torch.mm(a, b)
    return 2 * a.shape[0] * a.shape[1] * b.shape[1] / (time.perf_counter() - t0) / 1e9


def time_torch(path, steps):
    a, tensors, _, bt, keep = ref.read_dump(path, torch.float32)
    loss_fn, prepared = ref.family_loss(a, bt, keep, torch.float32)
    params = ref.Params(tensors)
    decay = [t for n, t in tensors.items() if n.endswith(".weight") and t.dim() >= 2]
    no_decay = [t for n, t in tensors.items() if not (n.endswith(".weight") and t.dim() >= 2)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
                            lr=1e-4, betas=(0.9, 0.95), eps=1e-8, foreach=True)
    sa, sb = torch.full((1024, 1024), 0.5), torch.full((1024, 1024), 0.25)
    sgemm_gflops(sa, sb)
    t_fb, t_opt, t_cpu, sgemm_runs = [], [], [], []
    for step in range(steps + 2):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(params, a, prepared)
        loss.backward()
        t1 = time.perf_counter()
        opt.step()
        t2, c2 = time.perf_counter(), time.process_time()
        if step >= 2:
            t_fb.append(t1 - t0)
            t_opt.append(t2 - t1)
            t_cpu.append(c2 - c0)
        sgemm_runs += [sgemm_gflops(sa, sb) for _ in range(5)]
    step_s = statistics.median([f + o for f, o in zip(t_fb, t_opt)])
    return {"step_ms": 1e3 * step_s, "fwd_bwd_ms": 1e3 * statistics.median(t_fb),
            "adamw_ms": 1e3 * statistics.median(t_opt), "step_cpu_ms": 1e3 * statistics.median(t_cpu),
            "sgemm_gflops": statistics.median(sgemm_runs)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="the bench_model_step executable")
    ap.add_argument("--out-dir", default="outputs/bench")
    ap.add_argument("--steps", type=int, default=7)
    args = ap.parse_args()
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    subprocess.run([args.bench, args.out_dir, str(args.steps)], check=True, env=env)
    with open(os.path.join(args.out_dir, "model_step_embtrain.json")) as f:
        result = json.load(f)
    torch.set_num_threads(threads)
    result["torch_version"] = torch.__version__
    result["command"] = " ".join([f"OMP_NUM_THREADS={threads}", sys.executable] + sys.argv)
    for family in ("gr00t", "wan"):
        t = time_torch(os.path.join(args.out_dir, f"model_step_{family}.h5"), args.steps)
        r = result[family]
        r["torch"] = dict(t, gflops=r["flops_per_step"] / (t["step_ms"] / 1e3) / 1e9)
        r["speedup_vs_torch"] = t["step_ms"] / r["step_ms"]
        # The two sides run one after the other on a shared machine: scale PyTorch's time to the
        # sgemm speed embtrain saw, so a load change between them does not count as speed.
        r["speedup_vs_torch_load_adjusted"] = r["speedup_vs_torch"] * t["sgemm_gflops"] / r["sgemm_gflops"]
        r["speedup_vs_torch_cpu"] = t["step_cpu_ms"] / r["step_cpu_ms"]
        print(f"{family:6s} torch step {t['step_ms']:.1f} ms (fwd+bwd {t['fwd_bwd_ms']:.1f}, adamw "
              f"{t['adamw_ms']:.1f}, sgemm {t['sgemm_gflops']:.1f} GFLOP/s vs {r['sgemm_gflops']:.1f} for embtrain) "
              f"-> embtrain is {r['speedup_vs_torch']:.2f}x faster ({r['speedup_vs_torch_load_adjusted']:.2f}x "
              f"load-adjusted, {r['speedup_vs_torch_cpu']:.2f}x by CPU time)")
    heavy = result["gemm_heavy"]
    print(f"gemm_heavy step {heavy['gflops']:.1f} GFLOP/s = {100 * heavy['fraction_of_sgemm']:.0f}% of sgemm "
          f"({100 * heavy['fraction_of_sgemm_cpu']:.0f}% by CPU time; OPENBLAS_CORETYPE "
          f"{result['openblas_coretype']}, {threads} thread(s))")
    path = os.path.join(args.out_dir, "model_step.json")
    with open(path + ".tmp", "w") as f:
        json.dump(result, f, indent=2)
    os.replace(path + ".tmp", path)
    print("wrote", path)


if __name__ == "__main__":
    main()
