#!/usr/bin/python3
"""DreamZero's frozen encoders, embtrain vs PyTorch 1.13 doing the same computation in one process.

For each encoder, in rounds: bench_dreamzero_encoders (embtrain's CPU backend, float32, random
weights at the released dimensions), then tests/encoders_ref's reference of the same encoder in
float32 on the same shapes with random weights of the same shapes (values do not change the
time), back to back so both see the same load on this shared machine:
  vae   Wan2.1 VAE encode, one clip of --frames frames at --height x --width (DROID's 2x2 tile of
        RLinf's recipe: 176 x 320), upstream's chunks (frame 0, then 4): frames/s
  umt5  umT5-XXL, --texts texts of --tokens random ids, --t5-layers real-size blocks (d 4096, 64
        heads of 64, FFN 10240) + the final norm, a --vocab-row embedding table (only gathered;
        the 256384-row table and the 24 blocks do not fit in memory here in fp32 on both
        sides): tokens/s
  clip  CLIP ViT-H/14 features, --images frames of --height x --width, bicubic to 224 and
        --clip-layers real-size blocks (of the 31 the features use): images/s
Both sides use the same threads (OMP_NUM_THREADS / OPENBLAS_NUM_THREADS, recorded); each side
times the median of --repeats passes after a warm-up; the speedup is the median over the
rounds of PyTorch's median / embtrain's. Writes outputs/bench/dreamzero_encoders.json; the
target is embtrain >= 2x PyTorch.

    OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 /usr/bin/python3 tests/encoders/bench_dreamzero_torch.py \\
        --bench build/tests/encoders/bench_dreamzero_encoders [--encoders vae,umt5,clip] [--rounds 2]
"""
import argparse
import json
import os
import statistics
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "encoders_ref"))
import bench_vs_torch as bench  # noqa: E402
import clip_reference as clip  # noqa: E402
import umt5_reference as t5  # noqa: E402
import wan_vae_reference as wan  # noqa: E402


def vae_case(args):
    """(C++ options, the torch pass, GFLOP of a pass, what)."""
    d = wan.VaeDims.wan21()
    shapes = {k: v for k, v in wan.param_shapes(d).items() if k.startswith(("encoder.", "conv1."))}
    params = bench.random_params(shapes)
    video = torch.rand(1, 3, args.frames, args.height, args.width) * 2 - 1
    flop = sum(op[2] for op in wan.encoder_ops(d, args.frames, args.height, args.width))
    return (["--frames", str(args.frames), "--height", str(args.height), "--width", str(args.width)],
            lambda ours: lambda: wan.encode(params, d, video, chunked=True, dtype=torch.float32), flop / 1e9,
            f"Wan2.1 VAE encode, {args.frames} frames at {args.height}x{args.width}, upstream's chunks, the released "
            f"dimensions")


def umt5_case(args):
    d = t5.T5Dims(vocab=args.vocab, layers=args.t5_layers)
    params = bench.random_params(t5.param_shapes(d))
    mask = torch.ones(args.texts, args.tokens, dtype=torch.int64)

    def torch_pass(ours):
        ids = torch.tensor(ours["dims"]["ids"], dtype=torch.int64)
        return lambda: t5.encode(params, d, ids, mask, dtype=torch.float32)
    flop = t5.flops_per_token(d, args.tokens) * args.texts * args.tokens
    return (["--texts", str(args.texts), "--tokens", str(args.tokens), "--vocab", str(args.vocab),
             "--layers", str(args.t5_layers)], torch_pass, flop / 1e9,
            f"umT5-XXL, {args.texts} texts of {args.tokens} tokens, {args.t5_layers} of the 24 blocks at the released "
            f"dimensions + the final norm, a {args.vocab}-row embedding")


def clip_case(args):
    d = clip.ClipDims(layers=args.clip_layers + 1)
    params = bench.random_params(clip.param_shapes(d, with_text=False))
    frames = torch.rand(args.images, 3, args.height, args.width) * 2 - 1
    flop = clip.flops_per_image(d) * args.images
    return (["--images", str(args.images), "--height", str(args.height), "--width", str(args.width),
             "--layers", str(args.clip_layers)],
            lambda ours: lambda: clip.visual_features(params, d, clip.preprocess(frames, d, torch.float32),
                                                      torch.float32),
            flop / 1e9,
            f"CLIP ViT-H/14 features, {args.images} frames of {args.height}x{args.width} bicubic to 224, "
            f"{args.clip_layers} of the 31 blocks at the released dimensions")


CASES = {"vae": vae_case, "umt5": umt5_case, "clip": clip_case}


def compare(name, args):
    options, torch_pass, gflop, what = CASES[name](args)
    command = [args.bench, "--encoder", name, "--repeats", str(args.repeats)] + options
    rounds = []
    for _ in range(args.rounds):
        ours = bench.run_ours(command)
        torch_s, runs = bench.time_passes(args.repeats, torch_pass(ours))
        rounds.append({"embtrain_s": ours["forward_s"], "embtrain_runs_s": ours["runs_s"],
                       "pytorch_s": torch_s, "pytorch_runs_s": runs, "speedup": torch_s / ours["forward_s"]})
    units, unit = ours["units_per_pass"], ours["unit"]
    ours_s = statistics.median(r["embtrain_s"] for r in rounds)
    torch_s = statistics.median(r["pytorch_s"] for r in rounds)
    return {"what": what, "unit": unit, "units_per_pass": units, "gflop_per_pass": gflop,
            "weights_load_s": ours["weights_load_s"],
            "embtrain": {"s_per_pass": ours_s, f"{unit}_per_s": units / ours_s, "gflops": gflop / ours_s},
            "pytorch": {"s_per_pass": torch_s, f"{unit}_per_s": units / torch_s, "gflops": gflop / torch_s},
            "rounds": rounds,
            "speedup": statistics.median(r["speedup"] for r in rounds)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", required=True, help="the bench_dreamzero_encoders executable")
    ap.add_argument("--encoders", default="vae,umt5,clip")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--frames", type=int, default=5)
    ap.add_argument("--height", type=int, default=176)
    ap.add_argument("--width", type=int, default=320)
    ap.add_argument("--texts", type=int, default=4)
    ap.add_argument("--tokens", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=4096)
    ap.add_argument("--t5-layers", type=int, default=2)
    ap.add_argument("--images", type=int, default=2)
    ap.add_argument("--clip-layers", type=int, default=4)
    ap.add_argument("--out", default="outputs/bench/dreamzero_encoders.json")
    args = ap.parse_args()
    load_before = os.getloadavg()[0]
    bench.use_environment_threads()
    encoders = {name: compare(name, args) for name in args.encoders.split(",")}
    result = {"what": "DreamZero's frozen encoders, CPU float32, random weights at the released dimensions; "
                      "embtrain's CPU backend vs PyTorch 1.13 eager (tests/encoders_ref references), back to back",
              **bench.conditions(load_before), "rounds": args.rounds, "repeats": args.repeats,
              "encoders": encoders, "target_speedup": bench.TARGET_SPEEDUP}
    bench.write_result(args.out, result)
    print(json.dumps({n: {"speedup": e["speedup"], "embtrain": e["embtrain"], "pytorch": e["pytorch"]}
                      for n, e in encoders.items()}, indent=1))


if __name__ == "__main__":
    main()
