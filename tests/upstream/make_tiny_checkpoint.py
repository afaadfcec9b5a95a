#!/usr/bin/python3
"""Writes tiny upstream-format checkpoints with random weights, for import/export tests.

    make_tiny_checkpoint.py OUT_DIR [--seed N] [--family gr00t|dreamzero|both] [--clip-dim N]

OUT_DIR/gr00t_n15_tiny/
  model.safetensors   backbone.eagle_model.* (a tiny SigLIP vision tower incl. its unused pooling
                      head, mlp1, a tiny Qwen3 truncated to select_layer layers, lm_head tied so not
                      stored) in BF16, and every action_head.* tensor under its upstream name/layout
                      in F32
  config.json         the released config.json's structure with upstream_presets.TINY_GR00T values
  eagle_config.json   the tiny backbone's dimensions (upstream reads the backbone config from its
                      package, eagle_backbone.py 50, not from the checkpoint folder)
OUT_DIR/dreamzero_tiny/
  model-0000k-of-00002.safetensors + model.safetensors.index.json: action_head.model.* (the
                      causal Wan DiT with action/state modules, Wan-native names) in F32, plus a few
                      action_head.text_encoder.* tensors (tiny umT5 names) in BF16 that an export must
                      pass through unchanged
  config.json         upstream_presets.TINY_DREAMZERO
                      (--clip-dim: img_emb's input width, upstream's 1280 unless a test's CLIP
                      features are narrower)

Dtypes: GR00T-N1.5 fine-tuning builds the Eagle model from a config whose torch_dtype is bfloat16
(eagle2_hg_model/config.json 55, AutoModel.from_config in eagle_backbone.py 50-51 uses it) while
the action head is built in float32 (model_dtype float32), so a saved checkpoint holds BF16 backbone
and F32 action-head tensors; this is read from the code, not checked against the released file.
For DreamZero the release's dtypes were not available: the DiT is written F32 (model_dtype float32,
full fine-tuning), the umT5 tensors BF16 (its weights ship as bf16, models_t5_umt5-xxl-enc-bf16.pth).
"""
import argparse
import json
import math
import os
import sys
from collections import OrderedDict

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dreamzero_reference  # noqa: E402
import gr00t_n15_reference  # noqa: E402
import safetensors_io  # noqa: E402
import upstream_presets  # noqa: E402

NORM_WORDS = ("norm", "vlln", "layernorm", "layer_norm", "img_emb.proj.0.", "img_emb.proj.4.")


def random_tensor(name, shape, gen):
    """A random value with a sensible scale for the tensor's role (norm scales near 1, small biases,
    fan-in scaled weights), so a forward pass is well conditioned."""
    last = name.rsplit(".", 1)[-1]
    if len(shape) == 1 and last == "weight" and any(w in name for w in NORM_WORDS):
        return 1.0 + 0.1 * torch.randn(shape, generator=gen)
    if last in ("bias", "b") or name.endswith("in_proj_bias"):
        return 0.05 * torch.randn(shape, generator=gen)
    if last == "modulation" or last == "probe":
        return torch.randn(shape, generator=gen) / math.sqrt(shape[-1])
    if name.endswith(("future_tokens.weight", "position_embedding.weight", "embed_tokens.weight",
                      "token_embedding.weight")):
        return 0.5 * torch.randn(shape, generator=gen)
    if last == "W":  # CategorySpecificLinear [E, in, out]
        return torch.randn(shape, generator=gen) / math.sqrt(shape[1])
    fan_in = math.prod(shape[1:]) if len(shape) > 1 else shape[0]
    return torch.randn(shape, generator=gen) / math.sqrt(fan_in)


def eagle_shapes(eagle):
    """backbone.eagle_model.* tensors of SigLIP (transformers SiglipVisionModel) + mlp1 + Qwen3 under
    their upstream names (modeling_eagle2_5_vl.py 86-160)."""
    v, t = eagle["vision"], eagle["text"]
    shapes = OrderedDict()
    vp = "backbone.eagle_model.vision_model.vision_model."
    dv, p = v["hidden_size"], v["patch_size"]
    shapes[vp + "embeddings.patch_embedding.weight"] = (dv, v["num_channels"], p, p)
    shapes[vp + "embeddings.patch_embedding.bias"] = (dv,)
    shapes[vp + "embeddings.position_embedding.weight"] = ((v["image_size"] // p) ** 2, dv)

    def lin(name, n_out, n_in, bias=True):
        shapes[name + ".weight"] = (n_out, n_in)
        if bias:
            shapes[name + ".bias"] = (n_out,)

    def ln(name, width):
        shapes[name + ".weight"] = (width,)
        shapes[name + ".bias"] = (width,)

    for i in range(v["num_hidden_layers"]):
        layer = f"{vp}encoder.layers.{i}."
        for proj in ("k_proj", "v_proj", "q_proj", "out_proj"):
            lin(layer + "self_attn." + proj, dv, dv)
        ln(layer + "layer_norm1", dv)
        lin(layer + "mlp.fc1", v["intermediate_size"], dv)
        lin(layer + "mlp.fc2", dv, v["intermediate_size"])
        ln(layer + "layer_norm2", dv)
    ln(vp + "post_layernorm", dv)
    shapes[vp + "head.probe"] = (1, 1, dv)
    shapes[vp + "head.attention.in_proj_weight"] = (3 * dv, dv)
    shapes[vp + "head.attention.in_proj_bias"] = (3 * dv,)
    lin(vp + "head.attention.out_proj", dv, dv)
    ln(vp + "head.layernorm", dv)
    lin(vp + "head.mlp.fc1", v["intermediate_size"], dv)
    lin(vp + "head.mlp.fc2", dv, v["intermediate_size"])
    lin("backbone.eagle_model.mlp1.0", t["hidden_size"], dv)
    lp = "backbone.eagle_model.language_model.model."
    d, hd = t["hidden_size"], t["head_dim"]
    shapes[lp + "embed_tokens.weight"] = (t["vocab_size"], d)
    for i in range(t["kept_layers"]):
        layer = f"{lp}layers.{i}."
        lin(layer + "self_attn.q_proj", t["num_attention_heads"] * hd, d, bias=False)
        lin(layer + "self_attn.k_proj", t["num_key_value_heads"] * hd, d, bias=False)
        lin(layer + "self_attn.v_proj", t["num_key_value_heads"] * hd, d, bias=False)
        lin(layer + "self_attn.o_proj", d, t["num_attention_heads"] * hd, bias=False)
        shapes[layer + "self_attn.q_norm.weight"] = (hd,)
        shapes[layer + "self_attn.k_norm.weight"] = (hd,)
        lin(layer + "mlp.gate_proj", t["intermediate_size"], d, bias=False)
        lin(layer + "mlp.up_proj", t["intermediate_size"], d, bias=False)
        lin(layer + "mlp.down_proj", d, t["intermediate_size"], bias=False)
        shapes[layer + "input_layernorm.weight"] = (d,)
        shapes[layer + "post_attention_layernorm.weight"] = (d,)
    shapes[lp + "norm.weight"] = (d,)
    return shapes


def umt5_passthrough_shapes(dim, vocab):
    """A few tensors of DreamZero's umT5 encoder (wan_video_text_encoder.py 113-136, 210-248)."""
    p = "action_head.text_encoder."
    return OrderedDict([(p + "token_embedding.weight", (vocab, dim)), (p + "blocks.0.norm1.weight", (dim,)),
                        (p + "blocks.0.attn.q.weight", (dim, dim)), (p + "norm.weight", (dim,))])


def build(shapes, dtype, gen):
    return OrderedDict((name, (random_tensor(name, shape, gen), dtype)) for name, shape in shapes.items())


def write_json(path, value):
    with open(path + ".tmp", "w") as f:
        json.dump(value, f, indent=2)
    os.replace(path + ".tmp", path)


def write_gr00t(folder, seed, config=upstream_presets.TINY_GR00T, backbone=None):
    """The tiny checkpoint; `config` and `backbone` ({name: (tensor, dtype)}, e.g. the tiny Eagle of
    tests/encoders_ref/make_tiny_encoders.py that embpack features can run) replace the defaults,
    and then no eagle_config.json is written (the backbone's own Eagle folder describes it)."""
    os.makedirs(folder, exist_ok=True)
    gen = torch.Generator().manual_seed(seed)
    eagle = upstream_presets.TINY_EAGLE
    if backbone is None and eagle["text"]["hidden_size"] != config["action_head_cfg"]["backbone_embedding_dim"]:
        raise ValueError("tiny Eagle LLM width must equal the head's backbone_embedding_dim (project_to_dim null)")
    tensors = build(eagle_shapes(eagle), "BF16", gen) if backbone is None else OrderedDict(backbone)
    tensors.update(build(gr00t_n15_reference.param_shapes(config), "F32", gen))
    safetensors_io.write_file(os.path.join(folder, "model.safetensors"), tensors)
    write_json(os.path.join(folder, "config.json"), config)
    if backbone is None:
        write_json(os.path.join(folder, "eagle_config.json"), eagle)
    return tensors


def write_dreamzero(folder, seed, clip_dim=dreamzero_reference.CLIP_DIM):
    os.makedirs(folder, exist_ok=True)
    gen = torch.Generator().manual_seed(seed + 1)
    config = upstream_presets.TINY_DREAMZERO
    dims = dreamzero_reference.dims_from_config(config)
    tensors = build(dreamzero_reference.param_shapes(config, clip_dim=clip_dim), "F32", gen)
    tensors.update(build(umt5_passthrough_shapes(dims.text_dim, 64), "BF16", gen))
    safetensors_io.write_sharded(folder, tensors, n_shards=2)
    write_json(os.path.join(folder, "config.json"), config)
    return tensors


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out_dir", help="folder to write gr00t_n15_tiny/ and dreamzero_tiny/ into")
    parser.add_argument("--seed", type=int, default=0, help="random seed of the weights (default 0)")
    parser.add_argument("--family", choices=("gr00t", "dreamzero", "both"), default="both")
    parser.add_argument("--clip-dim", type=int, default=dreamzero_reference.CLIP_DIM,
                        help="DreamZero img_emb's input width (default upstream's 1280)")
    args = parser.parse_args(argv)
    if args.family in ("gr00t", "both"):
        n = len(write_gr00t(os.path.join(args.out_dir, "gr00t_n15_tiny"), args.seed))
        print(f"wrote {args.out_dir}/gr00t_n15_tiny ({n} tensors)")
    if args.family in ("dreamzero", "both"):
        n = len(write_dreamzero(os.path.join(args.out_dir, "dreamzero_tiny"), args.seed, args.clip_dim))
        print(f"wrote {args.out_dir}/dreamzero_tiny ({n} tensors, 2 shards)")


if __name__ == "__main__":
    main()
