"""Image resampling as PyTorch's CPU kernels compute it, written from their rules.

Three resamplers are used by the frozen encoders' preprocessing:
- antialiased bilinear (triangle filter widened by the scale factor, PIL's algorithm as ported
  to ATen) in float32: GR00T's `VideoResize` = torchvision v2 `Resize(antialias=True)` on a
  float32 tensor = `torch.nn.functional.interpolate(mode="bilinear", antialias=True)`;
- plain bilinear (align_corners=False, no antialias): DreamZero 5B's resize to 160x320;
- plain bicubic (A = -0.75, align_corners=False, no antialias): Wan's CLIP input resize.

Each resize is separable: a [out, K] table of source indices and weights per axis, applied to
the width first, then the height (ATen's order for the antialiased kernel; the plain kernels
mix both axes in one pass, which only changes rounding).

The antialiased weights are computed exactly as ATen does in float32 (`scalar_t` = float for a
float32 image, with the double-precision literals 0.5 promoting some intermediates), because
GR00T truncates the result to uint8 right after, so a one-ulp difference can move a pixel by
one level. The accumulation is sequential over the taps with a fused multiply-add per tap, as
ATen's AVX2 kernel rounds it (checked bit-exact against torch 1.13's CPU interpolate).
"""
import math

import numpy as np
import torch

F32 = np.float32


def _tri(x):
    """ATen's antialias bilinear filter, evaluated in float32 like `aa_filter<float>`."""
    x = abs(F32(x))
    return F32(1.0 - float(x)) if x < 1.0 else F32(0.0)


def aa_bilinear_table(in_size, out_size):
    """Source start, length and float32 weights of ATen's antialiased bilinear resize.

    Returns (xmin [out] int64, weights [out, K] float32 with zeros past each row's length).
    The rules (ATen UpSampleKernel.cpp, HelperInterpBase::_compute_indices_min_size_weights_aa):
      scale  = float(in) / out                      (float32 division)
      support= scale if scale >= 1 else 1.0         (bilinear: interp_size 2 -> 1.0 * scale)
      center = float(scale * (i + 0.5))            (product in double, stored as float)
      xmin   = max(trunc(float(center - support) + 0.5), 0)
      xsize  = min(trunc(float(center + support) + 0.5), in) - xmin
      w_j    = tri(float((float(j + xmin - center) + 0.5) * invscale)), invscale = float(1/scale)
      w_j   /= sum_j w_j                            (float32 running sum, float32 division)
    """
    scale = F32(in_size) / F32(out_size)
    support = scale if scale >= 1.0 else F32(1.0)
    invscale = F32(1.0 / float(scale)) if scale >= 1.0 else F32(1.0)
    max_taps = int(math.ceil(float(support))) * 2 + 1
    xmins = np.zeros(out_size, dtype=np.int64)
    weights = np.zeros((out_size, max_taps), dtype=F32)
    for i in range(out_size):
        center = F32(float(scale) * (i + 0.5))
        xmin = max(int(float(F32(center - support)) + 0.5), 0)
        xsize = min(int(float(F32(center + support)) + 0.5), in_size) - xmin
        xsize = min(max(xsize, 0), max_taps)
        total = F32(0.0)
        for j in range(xsize):
            arg = F32((float(F32(F32(j + xmin) - center)) + 0.5) * float(invscale))
            w = _tri(arg)
            weights[i, j] = w
            total = F32(total + w)
        if total != 0.0:
            for j in range(xsize):
                weights[i, j] = F32(weights[i, j] / total)
        xmins[i] = xmin
    return xmins, weights


def _source_index(scale, dst, cubic):
    """ATen's area_pixel_compute_source_index for align_corners=False."""
    src = scale * (dst + 0.5) - 0.5
    return src if cubic else max(src, 0.0)


def linear_table(in_size, out_size):
    """Plain bilinear (no antialias): taps floor(src) and floor(src) + 1, the second one clamped
    to the last pixel (ATen's `h1p`), so both weights can land on the same edge pixel."""
    scale = in_size / out_size
    idx = np.zeros((out_size, 2), dtype=np.int64)
    weights = np.zeros((out_size, 2), dtype=np.float64)
    for i in range(out_size):
        src = _source_index(scale, i, cubic=False)
        i0 = int(math.floor(src))
        lam = src - i0
        idx[i] = (i0, min(i0 + 1, in_size - 1))
        weights[i] = (1.0 - lam, lam)
    return idx, weights


def cubic_coefficients(t, a=-0.75):
    """Keys' cubic convolution weights for the 4 taps at offsets -1, 0, 1, 2 of fraction t."""
    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    return (far(t + 1), near(t), near(1 - t), far(2 - t))


def cubic_table(in_size, out_size):
    """Plain bicubic (no antialias): 4 taps at floor(src)-1 .. +2, indices clamped to the image.

    Clamped taps are returned as explicit per-tap indices (a [out, 4] index table), since
    clamping repeats edge pixels rather than shortening the window."""
    scale = in_size / out_size
    idx = np.zeros((out_size, 4), dtype=np.int64)
    weights = np.zeros((out_size, 4), dtype=np.float64)
    for i in range(out_size):
        src = _source_index(scale, i, cubic=True)
        i0 = int(math.floor(src))
        weights[i] = cubic_coefficients(src - i0)
        idx[i] = [min(max(i0 + k, 0), in_size - 1) for k in (-1, 0, 1, 2)]
    return idx, weights


def _window_indices(xmins, n_taps, in_size):
    return np.minimum(xmins[:, None] + np.arange(n_taps)[None, :], in_size - 1)


def apply_table(x, axis, idx, weights, fused=False):
    """out[..., i, ...] = sum_j weights[i, j] * x[..., idx[i, j], ...], summed j = 0, 1, ...

    x: torch tensor; axis: the resized axis; idx, weights: [out, K]. The running sum is kept in
    x's dtype, one tap at a time. fused=True rounds each `sum + x * w` once (a fused
    multiply-add, as ATen's AVX2 build of the antialias kernel does; the first tap is a plain
    rounded product): emulated by an exact float32 product and sum in float64, rounded to x's
    dtype per tap."""
    acc_dtype = torch.float64 if fused else x.dtype
    w = torch.as_tensor(weights, dtype=acc_dtype)
    shape = [1] * x.dim()
    shape[axis] = w.shape[0]
    out = None
    for j in range(w.shape[1]):
        taken = torch.index_select(x, axis, torch.as_tensor(idx[:, j])).to(acc_dtype)
        term = taken * w[:, j].reshape(shape)
        out = term if out is None else out.to(acc_dtype) + term
        out = out.to(x.dtype)
    return out


def resize_aa_bilinear_f32(x, out_h, out_w):
    """GR00T's antialiased bilinear resize of float32 images [..., H, W] to [..., out_h, out_w]."""
    if x.dtype != torch.float32:
        raise ValueError(f"resize_aa_bilinear_f32 expects float32 images, got {x.dtype}")
    h, w = x.shape[-2:]
    if (h, w) == (out_h, out_w):
        return x.clone()
    if w != out_w:
        xmins, wts = aa_bilinear_table(w, out_w)
        x = apply_table(x, x.dim() - 1, _window_indices(xmins, wts.shape[1], w), wts, fused=True)
    if h != out_h:
        xmins, wts = aa_bilinear_table(h, out_h)
        x = apply_table(x, x.dim() - 2, _window_indices(xmins, wts.shape[1], h), wts, fused=True)
    return x


def _resize_separable(x, out_h, out_w, table):
    h, w = x.shape[-2:]
    idx, wts = table(w, out_w)
    x = apply_table(x, x.dim() - 1, idx, wts)
    idx, wts = table(h, out_h)
    return apply_table(x, x.dim() - 2, idx, wts)


def resize_bilinear(x, out_h, out_w):
    """Plain bilinear resize (align_corners=False, no antialias) of [..., H, W] in x's dtype."""
    return _resize_separable(x, out_h, out_w, linear_table)


def resize_bicubic(x, out_h, out_w):
    """Plain bicubic resize (A = -0.75, align_corners=False, no antialias) in x's dtype."""
    return _resize_separable(x, out_h, out_w, cubic_table)
