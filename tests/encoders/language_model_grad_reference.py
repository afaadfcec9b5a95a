#!/usr/bin/python3
"""Reference for test_language_model_training: Qwen3's kept layers and final norm
(tests/encoders_ref/eagle_reference.py language_features, torch autograd in float64), frozen but
in the graph as upstream's tune_visual trains them: the gradient of loss = sum(vl * dvl) with
respect to the input embeddings only. Each sample runs alone (batch-1 inference, positions from 0).

Usage: language_model_grad_reference.py REQUEST.json RESULT.json
REQUEST: {"checkpoint": dir, "eagle_folder": dir, "embeds": path (float32 [N, E]),
          "dvl": path (float32 [N, E]), "offsets": [0, N_0, N_0 + N_1, ..., N], "out": path prefix}
RESULT:  {"vl": path (float64 [N, E]), "dembeds": path (float64 [N, E])}
"""
import json
import sys

import numpy as np
import torch

from eagle_request import eagle, read_request


def main():
    request, dims, stored = read_request(sys.argv[1])
    params = {name: t.to(torch.float64) for name, t in stored.items()}
    embeds = torch.from_numpy(np.fromfile(request["embeds"], dtype=np.float32).reshape(-1, dims.llm_hidden).copy())
    embeds = embeds.to(torch.float64).requires_grad_(True)
    dvl = torch.from_numpy(np.fromfile(request["dvl"], dtype=np.float32).reshape(embeds.shape).copy())
    offsets = request["offsets"]
    vl = torch.cat([eagle.language_features(params, dims, embeds[None, offsets[s]:offsets[s + 1]])[0]
                    for s in range(len(offsets) - 1)])
    (vl * dvl.to(torch.float64)).sum().backward()
    vl.detach().numpy().astype(np.float64).tofile(request["out"] + ".vl")
    embeds.grad.numpy().astype(np.float64).tofile(request["out"] + ".dembeds")
    json.dump({"vl": request["out"] + ".vl", "dembeds": request["out"] + ".dembeds"}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
