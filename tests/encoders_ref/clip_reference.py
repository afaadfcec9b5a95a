"""The CLIP ViT-H/14 visual tower as Wan's I2V uses it, in plain torch: the first frame ->
[257, 1280] features of the 31st block.

Written from Wan-Video/Wan2.1 @ 9737cba wan/modules/clip.py:
  47-50    LayerNorm computed in float32, cast back
  53-91    SelfAttention: to_qkv (bias) viewed [b, s, 3, heads, d]: q/k/v = channels
           [0, D), [D, 2D), [2D, 3D), heads contiguous; scale 1/sqrt(d); proj (bias)
  112-153  AttentionBlock (post_norm False): x + attn(norm1(x)); x + mlp(norm2(x)) with
           mlp = Linear(D, 4D), nn.GELU() (exact erf), Linear(4D, D)
  209-300  VisionTransformer: patch conv 14x14 stride 14 without bias (bias = not pre_norm),
           [cls, patches] + pos_embedding [1, 257, D], pre_norm LayerNorm (eps 1e-5), then with
           use_31_block the blocks transformer[:-1] (all but the last); no post_norm, no head
  453-467  transforms: Normalize with the OpenAI mean/std
  471-498  clip_xlm_roberta_vit_h_14: 224, patch 14, dim 1280, 16 heads, 32 layers, mlp x4, gelu
  527-542  CLIPModel.visual: bicubic resize to 224x224 (align_corners=False, no antialias, no
           clamp) of frames in [-1, 1], then x * 0.5 + 0.5, then (x - mean) / std
DreamZero (ab790c1) wan_video_image_encoder.py 856-887 does the same on videos[:, :, :1].
"""
from dataclasses import dataclass

import torch

import nn_ops as F
from resize import resize_bicubic

OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


@dataclass
class ClipDims:
    image_size: int = 224
    patch: int = 14
    dim: int = 1280
    heads: int = 16
    layers: int = 32
    mlp_ratio: int = 4
    eps: float = 1e-5
    embed_dim: int = 1024          # visual.head / textual output (stored, unused for I2V)
    text_vocab: int = 250002       # the XLM-Roberta text tower, stored in the same .pth
    text_max_len: int = 514
    text_dim: int = 1024
    text_layers: int = 24

    @property
    def tokens(self):
        return (self.image_size // self.patch) ** 2 + 1


def param_shapes(d: ClipDims, with_text=True):
    """{name: shape} of models_clip_open-clip-xlm-roberta-large-vit-huge-14.pth (an
    XLMRobertaCLIP state dict: visual.*, textual.*, log_scale)."""
    D, M = d.dim, d.dim * d.mlp_ratio
    s = {"visual.patch_embedding.weight": (D, 3, d.patch, d.patch), "visual.cls_embedding": (1, 1, D),
         "visual.pos_embedding": (1, d.tokens, D), "visual.pre_norm.weight": (D,), "visual.pre_norm.bias": (D,),
         "visual.post_norm.weight": (D,), "visual.post_norm.bias": (D,), "visual.head": (D, d.embed_dim)}
    for i in range(d.layers):
        b = f"visual.transformer.{i}."
        s.update({b + "norm1.weight": (D,), b + "norm1.bias": (D,), b + "norm2.weight": (D,), b + "norm2.bias": (D,),
                  b + "attn.to_qkv.weight": (3 * D, D), b + "attn.to_qkv.bias": (3 * D,),
                  b + "attn.proj.weight": (D, D), b + "attn.proj.bias": (D,),
                  b + "mlp.0.weight": (M, D), b + "mlp.0.bias": (M,), b + "mlp.2.weight": (D, M), b + "mlp.2.bias": (D,)})
    if with_text:
        T, mid = d.text_dim, (d.text_dim + d.embed_dim) // 2
        s.update({"log_scale": (), "textual.token_embedding.weight": (d.text_vocab, T),
                  "textual.type_embedding.weight": (1, T), "textual.pos_embedding.weight": (d.text_max_len, T),
                  "textual.norm.weight": (T,), "textual.norm.bias": (T,),
                  "textual.head.0.weight": (mid, T), "textual.head.2.weight": (d.embed_dim, mid)})
        for i in range(d.text_layers):
            b = f"textual.blocks.{i}."
            for n in "qkvo":
                s[b + f"attn.{n}.weight"], s[b + f"attn.{n}.bias"] = (T, T), (T,)
            for n in ("norm1", "norm2"):
                s[b + n + ".weight"], s[b + n + ".bias"] = (T,), (T,)
            s[b + "ffn.0.weight"], s[b + "ffn.0.bias"] = (4 * T, T), (4 * T,)
            s[b + "ffn.2.weight"], s[b + "ffn.2.bias"] = (T, 4 * T), (T,)
    return s


def preprocess(frames, d: ClipDims = ClipDims(), dtype=torch.float64):
    """frames [B, 3, H, W] in [-1, 1] -> normalised [B, 3, 224, 224]: bicubic squash to 224x224
    (aspect ratio not kept, values not clamped), x * 0.5 + 0.5, (x - mean) / std."""
    x = resize_bicubic(frames.to(dtype), d.image_size, d.image_size)
    x = x * 0.5 + 0.5
    mean = torch.tensor(OPENAI_MEAN, dtype=dtype).view(1, 3, 1, 1)
    std = torch.tensor(OPENAI_STD, dtype=dtype).view(1, 3, 1, 1)
    return (x - mean) / std


def visual_features(params, d: ClipDims, pixels, dtype=torch.float64):
    """pixels [B, 3, 224, 224] (preprocessed) -> [B, 257, dim]: the output of block layers - 2
    (0-based), i.e. after 31 of the 32 blocks; token 0 is the class token."""
    p = lambda n: F.param(params, "visual." + n, dtype)  # noqa: E731
    x = torch.nn.functional.conv2d(pixels.to(dtype), p("patch_embedding.weight"), stride=d.patch)
    x = x.flatten(2).transpose(1, 2)
    x = torch.cat([p("cls_embedding").expand(x.shape[0], -1, -1), x], 1) + p("pos_embedding")
    x = F.layer_norm(x, p("pre_norm.weight"), p("pre_norm.bias"), d.eps)
    hd = d.dim // d.heads
    for i in range(d.layers - 1):
        b = f"transformer.{i}."
        h = F.layer_norm(x, p(b + "norm1.weight"), p(b + "norm1.bias"), d.eps)
        qkv = F.linear(h, p(b + "attn.to_qkv.weight"), p(b + "attn.to_qkv.bias"))
        q, k, v = (F.split_heads(t, d.heads) for t in qkv.split(d.dim, dim=-1))
        x = x + F.linear(F.merge_heads(F.attention(q, k, v, hd ** -0.5)), p(b + "attn.proj.weight"),
                         p(b + "attn.proj.bias"))
        h = F.layer_norm(x, p(b + "norm2.weight"), p(b + "norm2.bias"), d.eps)
        h = F.gelu_erf(F.linear(h, p(b + "mlp.0.weight"), p(b + "mlp.0.bias")))
        x = x + F.linear(h, p(b + "mlp.2.weight"), p(b + "mlp.2.bias"))
    return x


def flops_per_image(d: ClipDims):
    """Multiply-adds x 2 of the patch embedding and the 31 blocks for one image."""
    n, D = d.tokens, d.dim
    per_block = 2 * n * (4 * D * D + 2 * D * D * d.mlp_ratio) + 2 * 2 * n * n * D
    return 2 * (n - 1) * D * 3 * d.patch * d.patch + (d.layers - 1) * per_block
