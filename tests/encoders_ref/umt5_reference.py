"""Wan's umT5-XXL text encoder in plain torch: token ids + mask -> context [B, L, 4096], and the
zero padding to 512 rows the DiT sees.

Written from Wan-Video/Wan2.1 @ 9737cba wan/modules/t5.py:
  46-50    GELU: the tanh approximation, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  53-66    T5LayerNorm: x * rsqrt(mean(x^2) + 1e-6) in float32, cast to the weight's dtype
           when that is fp16/bf16, times weight (no mean removed, no bias)
  69-120   T5Attention: q, k, v, o without bias; scores = q k^T with NO 1/sqrt(d) scale, plus
           the position bias; masked keys set to finfo.min; softmax in float32
  123-141  T5FeedForward: fc2(fc1(x) * GELU(gate(x)))
  144-175  T5SelfAttention: x + attn(norm1(x)); x + ffn(norm2(x)); with shared_pos=False each
           block has its own T5RelativeEmbedding (bidirectional)
  221-264  T5RelativeEmbedding: rel = key - query; 32 buckets, half for rel > 0; |rel| < 8
           exact, else 8 + trunc(log(|rel| / 8) / log(128 / 8) * 8) capped at 15 (float32 log)
  267-312  T5Encoder: embedding, blocks, final norm (dropout is inert in eval)
  456-469  umt5_xxl: vocab 256384, dim 4096, dim_attn 4096, ffn 10240, 64 heads, 24 layers,
           32 buckets, shared_pos False
  472-513  T5EncoderModel: bf16 weights, tokenizer padded to text_len = 512, returns each
           prompt's rows [:len]; wan/modules/model.py pads them back with zeros to 512
DreamZero (ab790c1) wan_video_text_encoder.py: the same modules; encode_prompt (AH 542-548)
keeps all 512 rows and zeroes rows >= len.
"""
import math
from dataclasses import dataclass
from fractions import Fraction

import torch

import nn_ops as F


@dataclass
class T5Dims:
    vocab: int = 256384
    dim: int = 4096
    dim_attn: int = 4096
    dim_ffn: int = 10240
    heads: int = 64
    layers: int = 24
    buckets: int = 32
    max_distance: int = 128
    eps: float = 1e-6
    text_len: int = 512


def param_shapes(d: T5Dims):
    """{name: shape} of models_t5_umt5-xxl-enc-bf16.pth (a T5Encoder state dict)."""
    s = {"token_embedding.weight": (d.vocab, d.dim), "norm.weight": (d.dim,)}
    for i in range(d.layers):
        b = f"blocks.{i}."
        s.update({b + "norm1.weight": (d.dim,), b + "norm2.weight": (d.dim,),
                  b + "attn.q.weight": (d.dim_attn, d.dim), b + "attn.k.weight": (d.dim_attn, d.dim),
                  b + "attn.v.weight": (d.dim_attn, d.dim), b + "attn.o.weight": (d.dim, d.dim_attn),
                  b + "ffn.gate.0.weight": (d.dim_ffn, d.dim), b + "ffn.fc1.weight": (d.dim_ffn, d.dim),
                  b + "ffn.fc2.weight": (d.dim, d.dim_ffn),
                  b + "pos_embedding.embedding.weight": (d.buckets, d.heads)})
    return s


def relative_buckets(lq, lk, buckets=32, max_distance=128):
    """[lq, lk] bucket of rel = k - q, bidirectional, computed as upstream does: the log in
    float32 (torch.log of a float32 tensor, divided by the float32 value of log(16), times 8,
    truncated). The log branch only applies for |rel| >= 8."""
    rel = torch.arange(lk)[None, :] - torch.arange(lq)[:, None]
    half = buckets // 2
    out = (rel > 0).long() * half
    n = rel.abs()
    exact = half // 2
    ratio = torch.log(n.to(torch.float32) / exact) / math.log(max_distance / exact)
    large = exact + (ratio * (half - exact)).long()
    large = torch.minimum(large, torch.full_like(large, half - 1))
    return out + torch.where(n < exact, n, large)


def bucket_of_distance(n, buckets=32, max_distance=128):
    """The bucket of a key at distance n = |k - q| not after the query (k <= q), in exact
    arithmetic: 8 + the largest k with (n / 8)^8 >= 16^k, capped at 15; n < 8 is its own bucket.
    A key after the query adds buckets // 2. Thresholds: n = 8, 12, 16, 23, 32, 46, 64, 91 start
    buckets 8..15 (16, 32 and 64 sit exactly on a threshold)."""
    half = buckets // 2
    exact = half // 2
    if n < exact:
        return n
    steps = half - exact
    growth = Fraction(max_distance, exact)
    k = 0
    while k + 1 < steps and Fraction(n, exact) ** steps >= growth ** (k + 1):
        k += 1
    return exact + k


def encode(params, d: T5Dims, ids, mask, dtype=torch.float64):
    """ids [B, L] int64, mask [B, L] (1 real, 0 padding) -> [B, L, dim] after the final norm.
    Rows of padding are computed too (upstream does) but carry no meaning."""
    p = lambda n: F.param(params, n, dtype)  # noqa: E731
    b, L = ids.shape
    x = p("token_embedding.weight")[ids]
    bucket = relative_buckets(L, L, d.buckets, d.max_distance)
    key_mask = mask.to(torch.bool)[:, None, None, :]
    for i in range(d.layers):
        pre = f"blocks.{i}."
        bias = p(pre + "pos_embedding.embedding.weight")[bucket].permute(2, 0, 1)[None]   # [1, H, L, L]
        h = F.rms_norm(x, p(pre + "norm1.weight"), d.eps)
        q, k, v = (F.split_heads(F.linear(h, p(pre + f"attn.{n}.weight")), d.heads) for n in "qkv")
        a = F.merge_heads(F.attention(q, k, v, 1.0, bias=bias, key_mask=key_mask))
        x = x + F.linear(a, p(pre + "attn.o.weight"))
        h = F.rms_norm(x, p(pre + "norm2.weight"), d.eps)
        h = F.linear(h, p(pre + "ffn.fc1.weight")) * F.gelu_tanh(F.linear(h, p(pre + "ffn.gate.0.weight")))
        x = x + F.linear(h, p(pre + "ffn.fc2.weight"))
    return F.rms_norm(x, p("norm.weight"), d.eps)


def context_rows(encoded, mask, text_len=512):
    """What the DiT's text_embedding receives: each prompt's first len rows, zeros after, text_len
    rows (model.py 553-559 pads u[:len] with zeros; DreamZero zeroes rows >= len)."""
    b, L, c = encoded.shape
    out = encoded.new_zeros(b, text_len, c)
    lengths = mask.to(torch.bool).sum(1)
    for i in range(b):
        n = int(lengths[i])
        out[i, :n] = encoded[i, :n]
    return out


def flops_per_token(d: T5Dims, context):
    """Multiply-adds x 2 per token of the whole encoder, attending to `context` keys."""
    proj = 2 * 4 * d.dim * d.dim_attn
    ffn = 2 * 3 * d.dim * d.dim_ffn
    attn = 2 * 2 * d.dim_attn * context
    return d.layers * (proj + ffn + attn)
