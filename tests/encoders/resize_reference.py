#!/usr/bin/python3
"""Reference for test_resize: torch 1.13's own CPU interpolate on the test's float32 images, and
tests/encoders_ref/resize.py's antialiased bilinear (the rules the C++ follows, itself checked
bit-exact against torch by encoders_reference_selfcheck).

Usage: resize_reference.py REQUEST.json RESULT.json
REQUEST: {"cases": [{"mode": "aa_bilinear"|"bilinear"|"bicubic", "h", "w", "c", "out_h", "out_w",
          "data": [float] (HWC)}]}
RESULT:  {"torch": [[float] (HWC)], "rules": [[float] or null]}
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "encoders_ref"))
from resize import resize_aa_bilinear_f32  # noqa: E402


def main():
    request = json.load(open(sys.argv[1]))
    torch_out, rules_out = [], []
    for case in request["cases"]:
        x = torch.tensor(case["data"], dtype=torch.float32).reshape(case["h"], case["w"], case["c"])
        x = x.permute(2, 0, 1).unsqueeze(0).contiguous()
        size = (case["out_h"], case["out_w"])
        mode = case["mode"]
        if mode == "aa_bilinear":
            y = torch.nn.functional.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
            rules = resize_aa_bilinear_f32(x, *size)
            rules_out.append(rules[0].permute(1, 2, 0).reshape(-1).tolist())
        else:
            y = torch.nn.functional.interpolate(x, size=size, mode=mode, align_corners=False)
            rules_out.append(None)
        torch_out.append(y[0].permute(1, 2, 0).reshape(-1).tolist())
    json.dump({"torch": torch_out, "rules": rules_out}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
