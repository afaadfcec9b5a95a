#!/usr/bin/python3
"""Reference for the DreamZero encoder tests (test_wan_vae, test_umt5_encoder, test_clip_encoder):
tests/encoders_ref's torch references written from the upstream modules (wan_vae_reference.py,
umt5_reference.py, clip_reference.py), float64, on the test's tiny upstream-format checkpoints
(make_tiny_encoders.py; the constructor arguments from the tiny_dims.json beside them).

Usage: wan_encoders_reference.py REQUEST.json RESULT.json
REQUEST: {"jobs": [job, ...]}, each job writes float64 to job["out"]:
  {"encoder": "vae", "checkpoint": .pth, "video": path (float32 [T, H, W, 3]), "T", "H", "W",
   "i2v": bool}  -> [F, h, w, z] latents, or with i2v the y of the clip's first frame [F, h, w, 4 + z]
  {"encoder": "t5", "checkpoint": .pth, "ids": [[int]]}  -> each text's [len, dim] rows, back to back
  {"encoder": "clip", "checkpoint": .pth, "frames": path (float32 [N, H, W, 3] in [-1, 1]), "N", "H", "W"}
                                                         -> [N, 257, dim] (tiny: tokens, dim)
RESULT: {"done": number of jobs}
"""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "encoders_ref"))
import clip_reference as clip  # noqa: E402
import umt5_reference as umt5  # noqa: E402
import wan_vae_reference as vae  # noqa: E402

torch.set_num_threads(1)


def tiny_args(checkpoint):
    stem = os.path.splitext(os.path.basename(checkpoint))[0]
    return json.load(open(os.path.join(os.path.dirname(checkpoint), "tiny_dims.json")))[stem], stem


def vae_job(job):
    args, stem = tiny_args(job["checkpoint"])
    d = vae.VaeDims(kind="wan22" if stem.startswith("Wan2.2") else "wan21", dim=args["dim"], z=args["z_dim"],
                    dim_mult=args["dim_mult"], num_res_blocks=args["num_res_blocks"],
                    temporal_down=args["temperal_downsample"], dec_dim=args.get("dec_dim", 256))
    params = torch.load(job["checkpoint"])
    t, h, w = job["T"], job["H"], job["W"]
    video = torch.from_numpy(np.fromfile(job["video"], dtype=np.float32).reshape(t, h, w, 3).copy())
    video = video.permute(3, 0, 1, 2)[None]                        # [1, 3, T, H, W]
    if job.get("i2v"):
        out = vae.i2v_condition(params, d, video[:, :, 0], t)
    else:
        out = vae.encode(params, d, video, chunked=True)
    return out[0].permute(1, 2, 3, 0)                               # [F, h, w, C]


def t5_job(job):
    args, _ = tiny_args(job["checkpoint"])
    d = umt5.T5Dims(vocab=args["vocab"], dim=args["dim"], dim_attn=args["dim_attn"], dim_ffn=args["dim_ffn"],
                    heads=args["num_heads"], layers=args["num_layers"], buckets=args["num_buckets"])
    params = torch.load(job["checkpoint"])
    rows = []
    for ids in job["ids"]:
        if not ids:
            continue
        # Upstream pads to 512 with id 0 and masks the padding; the real rows do not depend on it.
        n = len(ids)
        padded = torch.zeros(1, max(n, 512), dtype=torch.int64)
        padded[0, :n] = torch.tensor(ids)
        mask = torch.zeros(1, padded.shape[1], dtype=torch.int64)
        mask[0, :n] = 1
        rows.append(umt5.encode(params, d, padded, mask)[0, :n])
    return torch.cat(rows) if rows else torch.zeros(0)


def clip_job(job):
    args, _ = tiny_args(job["checkpoint"])
    d = clip.ClipDims(image_size=args["image_size"], patch=args["patch_size"], dim=args["vision_dim"],
                      heads=args["vision_heads"], layers=args["vision_layers"], mlp_ratio=args["vision_mlp_ratio"])
    params = torch.load(job["checkpoint"])
    n, h, w = job["N"], job["H"], job["W"]
    frames = torch.from_numpy(np.fromfile(job["frames"], dtype=np.float32).reshape(n, h, w, 3).copy())
    pixels = clip.preprocess(frames.permute(0, 3, 1, 2), d)
    return clip.visual_features(params, d, pixels)


def main():
    request = json.load(open(sys.argv[1]))
    run = {"vae": vae_job, "t5": t5_job, "clip": clip_job}
    with torch.no_grad():
        for job in request["jobs"]:
            run[job["encoder"]](job).to(torch.float64).numpy().tofile(job["out"])
    json.dump({"done": len(request["jobs"])}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
