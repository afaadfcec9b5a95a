"""What the encoder benchmarks' PyTorch sides share (bench_eagle_torch.py, bench_dreamzero_torch.py):
run embtrain's C++ benchmark and read its JSON, set torch's threads to the environment's
(OMP_NUM_THREADS), random weights of the C++ side's shapes, the median of timed passes after a
warm-up, and the result file with the speedup and the run's conditions (threads, OpenBLAS core
type, load average)."""
import json
import os
import statistics
import subprocess
import time

import torch

TARGET_SPEEDUP = 2.0


def run_ours(command):
    """The C++ benchmark's one JSON object (its stdout)."""
    return json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def use_environment_threads():
    threads = int(os.environ.get("OMP_NUM_THREADS", "1"))
    torch.set_num_threads(threads)
    return threads


def random_params(shapes, seed=1):
    """{name: tensor}: uniform with standard deviation 0.02, per-channel norm scales ("norm" or
    "gamma" in the name) 1, as bench_support.cpp writes the C++ side's checkpoint."""
    gen = torch.Generator().manual_seed(seed)
    params = {}
    for name, shape in shapes.items():
        numel = 1
        for n in shape:
            numel *= n
        per_channel = len(shape) > 0 and numel == shape[0]
        if per_channel and ("norm" in name or "gamma" in name):
            params[name] = torch.ones(shape)
        else:
            params[name] = (torch.rand(shape, generator=gen) - 0.5) * 0.0693
    return params


def time_passes(repeats, one_pass):
    """(median seconds, every pass's seconds) of `repeats` passes after one warm-up, no autograd."""
    with torch.no_grad():
        one_pass()
        runs = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            one_pass()
            runs.append(time.perf_counter() - t0)
    return statistics.median(runs), runs


def conditions(load_before):
    return {"threads": torch.get_num_threads(),
            "load_average_before_after": [load_before, os.getloadavg()[0]],
            "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE", "(auto)")}


def write_result(path, result):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
