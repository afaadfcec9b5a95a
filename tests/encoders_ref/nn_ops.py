"""The small set of tensor operations the encoder references are written in.

Every function computes in the dtype of its input (float64 or float32 in the references);
nothing here upcasts or downcasts, so a reference's precision is the caller's choice. Where
an upstream module fixes a precision on purpose (RoPE tables, resize weights), the reference
module says so and does it itself.
"""
import math

import torch


def param(params, name, dtype):
    """params[name] converted to the compute dtype; a missing name is an error that names it."""
    if name not in params:
        raise KeyError(f"missing parameter {name} (checkpoint names as upstream stores them)")
    return params[name].to(dtype)


def linear(x, weight, bias=None):
    """nn.Linear: x [..., in] @ weight[out, in]^T + bias[out]."""
    y = torch.matmul(x, weight.t())
    return y + bias if bias is not None else y


def layer_norm(x, weight, bias, eps):
    """nn.LayerNorm over the last axis: biased variance, eps inside the square root."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    return (x - mean) / torch.sqrt(var + eps) * weight + bias


def rms_norm(x, weight, eps):
    """RMSNorm as Qwen3 and T5 write it: x * rsqrt(mean(x^2) + eps) * weight (no mean removed)."""
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * weight


def l2_channel_norm(x, gamma, dim=1, eps=1e-12):
    """Wan VAE's RMS_norm: F.normalize(x, dim) * sqrt(C) * gamma = x / max(||x||_2, eps) * sqrt(C) * gamma."""
    norm = torch.sqrt((x * x).sum(dim, keepdim=True)).clamp_min(eps)
    return x / norm * math.sqrt(x.shape[dim]) * gamma


def gelu_tanh(x):
    """GELU, tanh approximation (transformers' gelu_pytorch_tanh; Wan T5's GELU class)."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    """GELU, exact (nn.GELU() default)."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x * torch.sigmoid(x)


def attention(q, k, v, scale, bias=None, key_mask=None):
    """softmax(q k^T * scale + bias) v with q [B, H, Lq, d], k/v [B, H, Lk, d].

    bias: broadcastable to [B, H, Lq, Lk], added before the softmax. key_mask: bool,
    broadcastable to [B, H, Lq, Lk], True where a key may be attended; a query row with no
    allowed key returns zeros (flash-attention's output for an empty row)."""
    scores = torch.matmul(q, k.transpose(-1, -2)) * scale
    if bias is not None:
        scores = scores + bias
    if key_mask is not None:
        scores = scores.masked_fill(~key_mask, float("-inf"))
    row_empty = torch.isinf(scores).all(-1, keepdim=True) if key_mask is not None else None
    if row_empty is not None:
        scores = scores.masked_fill(row_empty, 0.0)
    probs = torch.softmax(scores, dim=-1)
    out = torch.matmul(probs, v)
    if row_empty is not None:
        out = out.masked_fill(row_empty, 0.0)
    return out


def split_heads(x, n_heads):
    """[B, L, n_heads * d] -> [B, n_heads, L, d] (heads are contiguous blocks of d channels)."""
    b, l, c = x.shape
    return x.reshape(b, l, n_heads, c // n_heads).transpose(1, 2)


def merge_heads(x):
    """[B, n_heads, L, d] -> [B, L, n_heads * d]."""
    b, h, l, d = x.shape
    return x.transpose(1, 2).reshape(b, l, h * d)
