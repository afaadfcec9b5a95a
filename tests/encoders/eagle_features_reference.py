#!/usr/bin/python3
"""Reference for test_eagle_backbone: tests/encoders_ref/eagle_reference.py (the torch reference
written from the upstream modules) on the test's checkpoint, frames and prompt ids.

Usage: eagle_features_reference.py REQUEST.json RESULT.json
REQUEST: {"checkpoint": dir, "eagle_folder": dir, "frames": path (uint8, every sample's
          [V, H, W, 3] back to back), "samples": [{"views", "height", "width", "ids": [int],
          "crop": [top, left] | null, "jitter": {brightness, contrast, saturation, hue, order} | null}],
          "out": path prefix}
RESULT:  {"frames": path (uint8 [Σ V, 224, 224, 3]), "vl": path (float64 [Σ N, E], each sample
          alone: batch-1 inference), "rows": [N per sample], "dims": {...}}
The vl rows are computed in float64 (the reference's default) from the float32 frame pipeline.
"""
import json
import sys

import numpy as np
import torch

from eagle_request import eagle, read_request


def main():
    request, dims, params = read_request(sys.argv[1])
    raw = np.fromfile(request["frames"], dtype=np.uint8)
    at = 0
    frames_out, vl_out, rows = [], [], []
    for s in request["samples"]:
        v, h, w = s["views"], s["height"], s["width"]
        n = v * h * w * 3
        frames = torch.from_numpy(raw[at:at + n].reshape(v, h, w, 3).copy())
        at += n
        jitter = None
        if s.get("jitter"):
            j = s["jitter"]
            jitter = eagle.ColorJitter(brightness=j["brightness"], contrast=j["contrast"],
                                       saturation=j["saturation"], hue=j["hue"], order=list(j["order"]))
        crop = tuple(s["crop"]) if s.get("crop") else None
        u8 = eagle.frames_to_uint8(frames, crop, jitter)
        frames_out.append(u8.numpy())
        pixels = eagle.uint8_to_pixel_values(u8)
        ids = torch.tensor([s["ids"]], dtype=torch.int64)
        vl = eagle.vl_features(params, dims, ids, pixels)[0]
        vl_out.append(vl.numpy().astype(np.float64))
        rows.append(int(vl.shape[0]))
    np.concatenate(frames_out).astype(np.uint8).tofile(request["out"] + ".frames")
    np.concatenate(vl_out).astype(np.float64).tofile(request["out"] + ".vl")
    json.dump({"frames": request["out"] + ".frames", "vl": request["out"] + ".vl", "rows": rows,
               "dims": {"llm_hidden": dims.llm_hidden, "select_layer": dims.select_layer}},
              open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
