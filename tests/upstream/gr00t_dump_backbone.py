"""The Eagle backbone of a gr00t dump made with model.backbone = online (MODEL.md "Dump"): each
sample's vl rows recomputed from the dump's frames (after GR00T's transforms) and prompt ids with
tests/encoders_ref/eagle_reference.py on the backbone_dir checkpoint. With train.tune_visual the
vision tower and mlp1 are the dump's parameters (embtrain's layout mapped back onto the
checkpoint's shapes), float64 leaves the step's loss reaches through the frozen LLM, so their
gradients are the reference's to compare with the dump's."""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.append(os.path.join(HERE, "..", "encoders_ref"))
import eagle_reference as eagle  # noqa: E402
import safetensors_io  # noqa: E402

F64 = torch.float64
PREFIX = "backbone."


def transposed(name, shape):
    """Whether embtrain stores the checkpoint tensor transposed: nn.Linear [out, in] and the patch
    convolution [out, 3, p, p] as W [in, out] (the convolution over (channel, y, x)); the position
    table as it is, vectors as [1, n]."""
    return len(shape) > 1 and "position_embedding" not in name


def to_checkpoint_shape(name, ours, shape):
    return ours.t().reshape(shape) if transposed(name, shape) else ours.reshape(shape)


def to_layout(name, theirs, ours_shape):
    return theirs.reshape(theirs.shape[0], -1).t() if transposed(name, theirs.shape) else theirs.reshape(ours_shape)


class Backbone:
    def __init__(self, attrs, ours):
        folder = attrs["backbone_dir"]
        eagle_config = json.load(open(os.path.join(folder, "eagle2_hg_model", "config.json")))
        gr00t_config = json.load(open(os.path.join(folder, "config.json")))
        self.dims = eagle.EagleDims.from_configs(eagle_config, gr00t_config["backbone_cfg"])
        stored = safetensors_io.read_checkpoint(folder)
        self.params = {k: v.to(F64) for k, v in stored.items() if k.startswith(PREFIX)}
        self.leaves, self.layout_shapes = {}, {}
        if int(attrs.get("tune_visual", 0)):
            for name, value in ours.items():
                if not name.startswith(PREFIX):
                    continue
                leaf = to_checkpoint_shape(name, torch.as_tensor(value).to(F64), stored[name].shape).detach().clone()
                self.leaves[name] = leaf.requires_grad_(True)
                self.params[name] = self.leaves[name]
                self.layout_shapes[name] = tuple(value.shape)

    def vl(self, ids, frames):
        """vl [N, E] of one sample's prompt ids [N] and its views' frames uint8 [V, S, S, 3]."""
        pixels = eagle.uint8_to_pixel_values(torch.from_numpy(np.ascontiguousarray(frames)))
        input_ids = torch.as_tensor(np.asarray(ids, dtype=np.int64))[None]
        return eagle.vl_features(self.params, self.dims, input_ids, pixels)[0]
