#!/usr/bin/python3
"""Reference for test_vision_tower_training: the gradients of SigLIP and mlp1
(tests/encoders_ref/eagle_reference.py image_embeddings, torch autograd in float64) for
loss = sum(tokens * dtokens) on the test's checkpoint and images.

Usage: vision_tower_grad_reference.py REQUEST.json RESULT.json
REQUEST: {"checkpoint": dir, "eagle_folder": dir, "images": path (uint8 [N, S, S, 3]), "n_images": N,
          "dtokens": path (float32 [N * T, E]), "layout": [{"name", "transposed"}], "out": path prefix}
RESULT:  {"tokens": path (float64 [N * T, E]), "grads": path (float64, each tensor of the layout in
          its order, transposed ones as W [in, out])}
"""
import json
import sys

import numpy as np
import torch

from eagle_request import eagle, read_request


def main():
    request, dims, stored = read_request(sys.argv[1])
    params = {name: t.to(torch.float64) for name, t in stored.items()}
    layout = request["layout"]
    for slot in layout:
        params[slot["name"]].requires_grad_(True)
    n, size = request["n_images"], dims.image_size
    u8 = torch.from_numpy(np.fromfile(request["images"], dtype=np.uint8).reshape(n, size, size, 3).copy())
    tokens = eagle.image_embeddings(params, dims, eagle.uint8_to_pixel_values(u8)).reshape(-1, dims.llm_hidden)
    dtokens = torch.from_numpy(np.fromfile(request["dtokens"], dtype=np.float32).reshape(tokens.shape).copy())
    (tokens * dtokens.to(torch.float64)).sum().backward()
    grads = []
    for slot in layout:
        g = params[slot["name"]].grad
        grads.append((g.reshape(g.shape[0], -1).t() if slot["transposed"] else g).reshape(-1))
    tokens.detach().numpy().astype(np.float64).tofile(request["out"] + ".tokens")
    torch.cat(grads).numpy().astype(np.float64).tofile(request["out"] + ".grads")
    json.dump({"tokens": request["out"] + ".tokens", "grads": request["out"] + ".grads"}, open(sys.argv[2], "w"))


if __name__ == "__main__":
    main()
