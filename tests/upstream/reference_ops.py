"""Float64 building blocks shared by the two upstream references (GR00T-N1.5, DreamZero).

Every function here is plain torch on float64 tensors, differentiable by autograd. Layouts are
upstream's: an nn.Linear weight is [out, in] (y = x W^T + b); a per-embodiment linear
(CategorySpecificLinear) stores W [E, in, out] and b [E, out] and is used without a transpose.
Upstream file:line citations are at the call sites (gr00t_n15_reference.py, dreamzero_reference.py).
"""
import math

import torch

F64 = torch.float64


def linear(x, weight, bias=None):
    """nn.Linear with upstream's [out, in] weight."""
    y = x @ weight.t()
    return y + bias if bias is not None else y


def embodiment_linear(x, weight, bias, emb_id):
    """CategorySpecificLinear: x [T, in] @ W[emb_id] [in, out] + b[emb_id] [out]."""
    return x @ weight[emb_id] + bias[emb_id]


def layer_norm(x, eps, weight=None, bias=None):
    """nn.LayerNorm over the last dim (biased variance); affine only when weight is given."""
    mean = x.mean(-1, keepdim=True)
    var = ((x - mean) ** 2).mean(-1, keepdim=True)
    y = (x - mean) / torch.sqrt(var + eps)
    if weight is not None:
        y = y * weight + bias
    return y


def rms_norm(x, eps, weight):
    """RMS norm over the last dim with a learned scale (Wan's WanRMSNorm)."""
    return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + eps) * weight


def gelu_tanh(x):
    """GELU with the tanh approximation (F.gelu(approximate='tanh'))."""
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    """Exact GELU (nn.GELU() default)."""
    return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))


def silu(x):
    return x * torch.sigmoid(x)


def dropout(x, keep_mask, p):
    """Inverted dropout with an explicit keep-mask (1 keep, 0 drop): x * mask / (1 - p).
    keep_mask None means dropout is off (eval mode)."""
    if keep_mask is None:
        return x
    if tuple(keep_mask.shape) != tuple(x.shape):
        raise ValueError(f"dropout keep-mask has shape {tuple(keep_mask.shape)}, expected {tuple(x.shape)}")
    return x * keep_mask.to(x.dtype) / (1.0 - p)


def attention(q, k, v, heads, allowed=None):
    """Multi-head scaled dot-product attention, softmax(q k^T / sqrt(hd) + mask) v.

    q [Lq, heads*hd], k and v [Lk, heads*hd]; allowed: None (every key) or bool [Lq, Lk]
    (True = query may attend to key). Returns [Lq, heads*hd]."""
    lq, width = q.shape
    hd = width // heads
    qh = q.reshape(lq, heads, hd).transpose(0, 1)
    kh = k.reshape(k.shape[0], heads, hd).transpose(0, 1)
    vh = v.reshape(v.shape[0], heads, hd).transpose(0, 1)
    scores = qh @ kh.transpose(1, 2) / math.sqrt(hd)
    if allowed is not None:
        if not bool(allowed.any(dim=1).all()):
            raise ValueError("attention mask has a query row with no allowed key")
        scores = scores.masked_fill(~allowed.unsqueeze(0), float("-inf"))
    probs = torch.softmax(scores, dim=-1)
    return (probs @ vh).transpose(0, 1).reshape(lq, width)


def action_time_sinusoid(t, dim, mode):
    """The action encoders' time sinusoid, [sin(t f_k), cos(t f_k)] with f_k = exp(-k ln(1e4)/(dim/2)).

    Both upstreams use the same class for it (Isaac-GR00T gr00t/model/action_head/action_encoder.py
    24-54; DreamZero groot/vla/model/n1_5/modules/action_encoder.py 10-40), and it computes in
    float32. mode 'float32' reproduces that computation op by op in torch; 'float64' evaluates the
    same formula in double (what a float64 parity check against a C++ implementation wants).
    t: [T] (any real dtype). Returns [T, dim] float64."""
    half = dim // 2
    if mode == "float32":
        tt = t.to(torch.float32)
        exponent = -torch.arange(half, dtype=torch.float32) * (torch.log(torch.tensor(10000.0)) / half)
        freqs = tt.unsqueeze(-1) * exponent.exp()
        return torch.cat([torch.sin(freqs), torch.cos(freqs)], dim=-1).to(F64)
    if mode != "float64":
        raise ValueError(f"sinusoid mode must be 'float64' or 'float32', got {mode!r}")
    freqs = t.to(F64).unsqueeze(-1) * torch.exp(-torch.arange(half, dtype=F64) * (math.log(10000.0) / half))
    return torch.cat([torch.sin(freqs), torch.cos(freqs)], dim=-1)


def f64_params(state_dict, expected_shapes):
    """Float64 leaf copies (requires_grad) of the expected tensors; an error names what is missing
    or mis-shaped. Other entries of state_dict (e.g. backbone tensors) are ignored."""
    missing = [n for n in expected_shapes if n not in state_dict]
    wrong = [f"{n} {tuple(state_dict[n].shape)} != {tuple(s)}" for n, s in expected_shapes.items()
             if n in state_dict and tuple(state_dict[n].shape) != tuple(s)]
    if missing or wrong:
        raise ValueError(f"state dict does not match the config: missing {missing[:4]}, wrong shapes {wrong[:4]}")
    return {n: torch.as_tensor(state_dict[n]).detach().to(F64).clone().requires_grad_(True) for n in expected_shapes}


def loss_and_grads(loss_fn, params):
    """Runs loss_fn() and returns (loss float, {name: float64 gradient}); zeros where unused."""
    loss = loss_fn()
    names = list(params)
    grads = torch.autograd.grad(loss, [params[n] for n in names], allow_unused=True)
    out = {}
    for name, g in zip(names, grads):
        out[name] = g.detach() if g is not None else torch.zeros_like(params[name]).detach()
    return float(loss.detach()), out
