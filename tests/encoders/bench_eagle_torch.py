#!/usr/bin/python3
"""Backbone benchmark, embtrain vs PyTorch 1.13 doing the same computation in one process.

Runs bench_eagle_backbone (embtrain's CPU backend, float32, GR00T-N1.5's Eagle backbone at the
released dimensions with random weights), then times tests/encoders_ref/eagle_reference.py's
vl_features in float32 on the same shapes: the same prompt ids (the C++ side's), the same
number of 224 x 224 images, random weights of the same shapes (values do not change the time).
Both sides use the same threads (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, recorded) and OpenBLAS
core type (OPENBLAS_CORETYPE from the environment, recorded); torch's are set to match. Only the
backbone forward is timed on both sides (median of the repeats, after a warm-up). Writes
outputs/bench/eagle_backbone.json with the ratio; the target is embtrain >= 2x PyTorch.

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 tests/encoders/bench_eagle_torch.py \\
        --bench build/tests/encoders/bench_eagle_backbone [--samples 2] [--views 1] [--vision-layers 27] [--llm-layers 12]
"""
import argparse
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "encoders_ref"))
import bench_vs_torch as bench  # noqa: E402
import eagle_reference as eagle  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="the bench_eagle_backbone executable")
    ap.add_argument("--samples", type=int, default=2)
    ap.add_argument("--views", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--vision-layers", type=int, default=27)
    ap.add_argument("--llm-layers", type=int, default=12)
    ap.add_argument("--out", default="outputs/bench/eagle_backbone.json")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    shape_args = ["--samples", str(args.samples), "--views", str(args.views), "--repeats", str(args.repeats),
                  "--vision-layers", str(args.vision_layers), "--llm-layers", str(args.llm_layers)]
    ours = bench.run_ours([args.bench] + shape_args)
    bench.use_environment_threads()
    d = eagle.EagleDims(vision_layers=args.vision_layers, select_layer=args.llm_layers)
    params = bench.random_params(eagle.param_shapes(d, with_head=False))
    ids = torch.tensor([ours["ids"]] * args.samples, dtype=torch.int64)
    frames = torch.randint(0, 256, (args.samples * args.views, 256, 256, 3), dtype=torch.uint8)
    pixels = eagle.preprocess(frames)
    torch_s, runs = bench.time_passes(
        args.repeats, lambda: eagle.vl_features(params, d, ids, pixels, dtype=torch.float32))
    result = {
        "what": "GR00T-N1.5 Eagle 2.5 backbone forward (vl features), CPU float32, random weights at the "
                "released dimensions; embtrain's CPU backend vs PyTorch 1.13 eager (eagle_reference.py)",
        **bench.conditions(load_before),
        "samples": args.samples, "views": args.views, "prompt_tokens": ours["prompt_tokens"],
        "vision_layers": args.vision_layers, "llm_layers": args.llm_layers,
        "gflop_per_sample": ours["gflop_per_sample"],
        "embtrain": {k: ours[k] for k in ("forward_s", "runs_s", "samples_per_s", "gflops", "weights_load_s",
                                          "preprocess_s_per_sample")},
        "pytorch": {"forward_s": torch_s, "runs_s": runs, "samples_per_s": args.samples / torch_s,
                    "gflops": ours["gflop_per_sample"] * args.samples / torch_s},
        "speedup": torch_s / ours["forward_s"],
        "target_speedup": bench.TARGET_SPEEDUP,
    }
    bench.write_result(args.out, result)
    print(json.dumps({k: result[k] for k in ("speedup", "target_speedup", "embtrain", "pytorch")}, indent=1))


if __name__ == "__main__":
    main()
