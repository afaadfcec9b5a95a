"""The Wan video VAE encoders (Wan2.1 16-channel, Wan2.2 "VAE38" 48-channel) in plain torch,
computed two ways: chunked with the causal feature cache exactly as upstream runs them, and in
one pass over all frames ("plain"). Plus the I2V conditioning `y`.

Written from Wan-Video/Wan2.1 @ 9737cba wan/modules/vae.py:
  17-36    CausalConv3d: time padded 2*p in front, 0 behind; a cache replaces leading zeros
  39-54    RMS_norm: F.normalize over channels * sqrt(C) * gamma (bias 0)
  66-160   Resample: downsample2d = ZeroPad2d(0,1,0,1) + Conv2d 3x3 stride 2 per frame;
           downsample3d = the same, then time_conv (3,1,1) stride (2,1,1), no padding, over
           [last frame of the previous chunk, this chunk]; the first chunk skips time_conv
  186-220  ResidualBlock: norm-SiLU-conv3-norm-SiLU-(dropout)-conv3 + (1x1x1 conv | identity)
  223-262  AttentionBlock: per frame, one head over the H*W positions, q/k/v = channels
           [0,C), [C,2C), [2C,3C) of a 1x1 conv, scale 1/sqrt(C)
  265-366  Encoder3d; 483-542 WanVAE_.encode (chunks 1, 4, 4, ...; conv1; mu = first z)
  592-616  _video_vae: dim 96, dim_mult [1,2,4,4], 2 res blocks, temperal_downsample [F, T, T]
  619-655  WanVAE: mean/std constants, scale = [mean, 1/std], mu = (mu - mean) * (1/std)
  wan/image2video.py 210-217, 240-249: y = [mask 4 channels, VAE(first frame, zeros)]
and Wan-Video/Wan2.2 wan/modules/vae2_2.py:
  280-296 patchify "b c f (h q) (w r) -> b (c r q) f h w"; 316-367 AvgDown3D;
  415-452 Down_ResidualBlock; 500-613 Encoder3d (conv1 from 12 channels); 783-810 encode;
  863-885 _video_vae (dim 160); 888-1022 Wan2_2_VAE (z 48, 48 mean/std constants).
DreamZero (ab790c1) groot/vla/model/dreamzero/modules/wan_video_vae.py runs the same
computation (its classes differ from Wan's only in form; see the spec).

The cache rules make the chunked encoder equal to the one-pass form (a causal conv over all
frames with two zero frames in front; the temporal downsample keeps frame 0 as is and applies
its stride-2 kernel to windows starting at frames 0, 2, 4, ...): `encode(..., chunked=False)`
is that form, and the self-test checks both agree to rounding.
"""
from dataclasses import dataclass, field

import torch

import nn_ops as F

WAN21_MEAN = [-0.7571, -0.7089, -0.9113, 0.1075, -0.1745, 0.9653, -0.1517, 1.5508,
              0.4134, -0.0715, 0.5517, -0.3632, -0.1922, -0.9497, 0.2503, -0.2921]
WAN21_STD = [2.8184, 1.4541, 2.3275, 2.6558, 1.2196, 1.7708, 2.6052, 2.0743,
             3.2687, 2.1526, 2.8652, 1.5579, 1.6382, 1.1253, 2.8251, 1.9160]
WAN22_MEAN = [-0.2289, -0.0052, -0.1323, -0.2339, -0.2799, 0.0174, 0.1838, 0.1557,
              -0.1382, 0.0542, 0.2813, 0.0891, 0.1570, -0.0098, 0.0375, -0.1825,
              -0.2246, -0.1207, -0.0698, 0.5109, 0.2665, -0.2108, -0.2158, 0.2502,
              -0.2055, -0.0322, 0.1109, 0.1567, -0.0729, 0.0899, -0.2799, -0.1230,
              -0.0313, -0.1649, 0.0117, 0.0723, -0.2839, -0.2083, -0.0520, 0.3748,
              0.0152, 0.1957, 0.1433, -0.2944, 0.3573, -0.0548, -0.1681, -0.0667]
WAN22_STD = [0.4765, 1.0364, 0.4514, 1.1677, 0.5313, 0.4990, 0.4818, 0.5013,
             0.8158, 1.0344, 0.5894, 1.0901, 0.6885, 0.6165, 0.8454, 0.4978,
             0.5759, 0.3523, 0.7135, 0.6804, 0.5833, 1.4146, 0.8986, 0.5659,
             0.7069, 0.5338, 0.4889, 0.4917, 0.4069, 0.4999, 0.6866, 0.4093,
             0.5709, 0.6065, 0.6415, 0.4944, 0.5726, 1.2042, 0.5458, 1.6887,
             0.3971, 1.0600, 0.3943, 0.5537, 0.5444, 0.4089, 0.7468, 0.7744]


@dataclass
class VaeDims:
    """kind "wan21": Wan2.1_VAE.pth (dim 96, z 16); "wan22": Wan2.2_VAE.pth (dim 160, z 48,
    decoder dim 256, 2x2 patchify in front)."""
    kind: str = "wan21"
    dim: int = 96
    z: int = 16
    dim_mult: list = field(default_factory=lambda: [1, 2, 4, 4])
    num_res_blocks: int = 2
    temporal_down: list = field(default_factory=lambda: [False, True, True])
    dec_dim: int = 256        # wan22 only (the Wan2.1 decoder uses `dim`)

    @classmethod
    def wan21(cls):
        return cls()

    @classmethod
    def wan22(cls):
        return cls(kind="wan22", dim=160, z=48)

    @property
    def stage_dims(self):
        return [self.dim * u for u in [1] + self.dim_mult]

    @property
    def in_channels(self):
        return 12 if self.kind == "wan22" else 3

    @property
    def spatial_factor(self):
        return 2 ** (len(self.dim_mult) - 1) * (2 if self.kind == "wan22" else 1)

    def constants(self):
        """(mean, std) of the latent normalisation: z = (mu - mean) * (1 / std)."""
        if self.kind == "wan22":
            return WAN22_MEAN, WAN22_STD
        return WAN21_MEAN, WAN21_STD


# ---- parameter names and shapes (the whole published state dict) -------------------------
def _res_shapes(p, cin, cout):
    s = {p + "residual.0.gamma": (cin, 1, 1, 1), p + "residual.2.weight": (cout, cin, 3, 3, 3),
         p + "residual.2.bias": (cout,), p + "residual.3.gamma": (cout, 1, 1, 1),
         p + "residual.6.weight": (cout, cout, 3, 3, 3), p + "residual.6.bias": (cout,)}
    if cin != cout:
        s[p + "shortcut.weight"], s[p + "shortcut.bias"] = (cout, cin, 1, 1, 1), (cout,)
    return s


def _attn_shapes(p, c):
    return {p + "norm.gamma": (c, 1, 1), p + "to_qkv.weight": (3 * c, c, 1, 1), p + "to_qkv.bias": (3 * c,),
            p + "proj.weight": (c, c, 1, 1), p + "proj.bias": (c,)}


def _resample_shapes(p, c, mode):
    s = {}
    if mode.startswith("down"):
        s[p + "resample.1.weight"], s[p + "resample.1.bias"] = (c, c, 3, 3), (c,)
        if mode == "downsample3d":
            s[p + "time_conv.weight"], s[p + "time_conv.bias"] = (c, c, 3, 1, 1), (c,)
    else:
        out = c // 2 if mode.endswith("wan21") else c
        s[p + "resample.1.weight"], s[p + "resample.1.bias"] = (out, c, 3, 3), (out,)
        if mode.startswith("upsample3d"):
            s[p + "time_conv.weight"], s[p + "time_conv.bias"] = (2 * c, c, 3, 1, 1), (2 * c,)
    return s


def _middle_head_shapes(p, c, out_channels):
    s = {}
    s.update(_res_shapes(p + "middle.0.", c, c))
    s.update(_attn_shapes(p + "middle.1.", c))
    s.update(_res_shapes(p + "middle.2.", c, c))
    s[p + "head.0.gamma"] = (c, 1, 1, 1)
    s[p + "head.2.weight"], s[p + "head.2.bias"] = (out_channels, c, 3, 3, 3), (out_channels,)
    return s


def encoder_layout(d: VaeDims):
    """The encoder's stages as a list of (name prefix, kind, cin, cout) in execution order, kind in
    res | down2d | down3d; wan22 groups each stage in a Down_ResidualBlock ('avg' entries mark
    where its average-pool shortcut adds, with (cin, factor_t, factor_s))."""
    dims = d.stage_dims
    layout = []
    k = 0
    for i, (cin, cout) in enumerate(zip(dims[:-1], dims[1:])):
        last = i == len(d.dim_mult) - 1
        t_down = d.temporal_down[i] if i < len(d.temporal_down) else False
        if d.kind == "wan22":
            base = f"encoder.downsamples.{i}.downsamples."
            layout.append((f"encoder.downsamples.{i}.", "avg_begin", cin, cout))
            for j in range(d.num_res_blocks):
                layout.append((f"{base}{j}.", "res", cin if j == 0 else cout, cout))
            if not last:
                layout.append((f"{base}{d.num_res_blocks}.", "down3d" if t_down else "down2d", cout, cout))
            layout.append((f"encoder.downsamples.{i}.", "avg_end",
                           (cin, 2 if t_down else 1, 1 if last else 2), cout))
        else:
            for j in range(d.num_res_blocks):
                layout.append((f"encoder.downsamples.{k}.", "res", cin if j == 0 else cout, cout))
                k += 1
            if not last:
                layout.append((f"encoder.downsamples.{k}.", "down3d" if t_down else "down2d", cout, cout))
                k += 1
    return layout


def param_shapes(d: VaeDims):
    """{name: shape} of the full published state dict (encoder, conv1, conv2, decoder), which
    upstream loads strictly (vae.py 613)."""
    s = {"encoder.conv1.weight": (d.dim, d.in_channels, 3, 3, 3), "encoder.conv1.bias": (d.dim,)}
    for prefix, kind, cin, cout in encoder_layout(d):
        if kind == "res":
            s.update(_res_shapes(prefix, cin, cout))
        elif kind in ("down2d", "down3d"):
            s.update(_resample_shapes(prefix, cout, "downsample3d" if kind == "down3d" else "downsample2d"))
    top = d.stage_dims[-1]
    s.update(_middle_head_shapes("encoder.", top, 2 * d.z))
    s["conv1.weight"], s["conv1.bias"] = (2 * d.z, 2 * d.z, 1, 1, 1), (2 * d.z,)
    s["conv2.weight"], s["conv2.bias"] = (d.z, d.z, 1, 1, 1), (d.z,)
    s.update(_decoder_shapes(d))
    return s


def _decoder_shapes(d: VaeDims):
    """Wan2.1 Decoder3d (vae.py 369-421) or Wan2.2 Decoder3d (vae2_2.py 616-670) parameters."""
    base = d.dec_dim if d.kind == "wan22" else d.dim
    mult = d.dim_mult
    dims = [base * u for u in [mult[-1]] + mult[::-1]]
    up = d.temporal_down[::-1]
    s = {"decoder.conv1.weight": (dims[0], d.z, 3, 3, 3), "decoder.conv1.bias": (dims[0],)}
    s.update({k: v for k, v in _middle_head_shapes("decoder.", dims[0], 1).items() if ".middle." in k})
    k = 0
    for i, (cin, cout) in enumerate(zip(dims[:-1], dims[1:])):
        last = i == len(mult) - 1
        t_up = up[i] if i < len(up) else False
        if d.kind == "wan22":
            p = f"decoder.upsamples.{i}.upsamples."
            for j in range(d.num_res_blocks + 1):
                s.update(_res_shapes(f"{p}{j}.", cin if j == 0 else cout, cout))
            if not last:
                mode = ("upsample3d" if t_up else "upsample2d") + "_wan22"
                s.update(_resample_shapes(f"{p}{d.num_res_blocks + 1}.", cout, mode))
        else:
            if i in (1, 2, 3):
                cin = cin // 2
            for j in range(d.num_res_blocks + 1):
                s.update(_res_shapes(f"decoder.upsamples.{k}.", cin if j == 0 else cout, cout))
                k += 1
            if not last:
                mode = ("upsample3d" if t_up else "upsample2d") + "_wan21"
                s.update(_resample_shapes(f"decoder.upsamples.{k}.", cout, mode))
                k += 1
    out_dim = dims[-1]
    s["decoder.head.0.gamma"] = (out_dim, 1, 1, 1)
    s["decoder.head.2.weight"] = (d.in_channels, out_dim, 3, 3, 3)
    s["decoder.head.2.bias"] = (d.in_channels,)
    return s


# ---- operations --------------------------------------------------------------------------
def patchify(x):
    """Wan2.2's 2x2 unshuffle: [B, C, T, H, W] -> [B, 4C, T, H/2, W/2] with output channel
    c*4 + col*2 + row for the pixel (2i + row, 2j + col) (einops "(c r q)", r = column offset)."""
    b, c, t, h, w = x.shape
    x = x.reshape(b, c, t, h // 2, 2, w // 2, 2)           # [b, c, t, i, row, j, col]
    x = x.permute(0, 1, 6, 4, 2, 3, 5)                      # [b, c, col, row, t, i, j]
    return x.reshape(b, c * 4, t, h // 2, w // 2)


def avg_down(x, cout, factor_t, factor_s):
    """Wan2.2 AvgDown3D: zero frames in front to a multiple of factor_t, then each output channel
    o is the mean of `group` consecutive channels of the unshuffled tensor, whose channel index is
    c*(ft*fs*fs) + dt*(fs*fs) + dh*fs + dw (row offset before column offset here)."""
    pad_t = (factor_t - x.shape[2] % factor_t) % factor_t
    if pad_t:
        x = torch.cat([x.new_zeros(x.shape[:2] + (pad_t,) + x.shape[3:]), x], 2)
    b, c, t, h, w = x.shape
    x = x.reshape(b, c, t // factor_t, factor_t, h // factor_s, factor_s, w // factor_s, factor_s)
    x = x.permute(0, 1, 3, 5, 7, 2, 4, 6)
    factor = factor_t * factor_s * factor_s
    x = x.reshape(b, cout, c * factor // cout, t // factor_t, h // factor_s, w // factor_s)
    return x.mean(2)


class _Params:
    """name -> parameter in the compute dtype (`in` tells whether the checkpoint has it)."""

    def __init__(self, params, dtype):
        self.params, self.dtype = params, dtype

    def __call__(self, name):
        return F.param(self.params, name, self.dtype)


class _CausalFrames:
    """How a causal time-kernel layer sees its past. Plain: the whole clip is one call, padded
    with zeros in front. Chunked: upstream's feature cache: each k=3 conv keeps the last two
    frames of its input (or one, then two), each temporal downsample the last frame."""

    def __init__(self, chunked):
        self.chunked = chunked
        self.slots = []
        self.next = 0

    def start_chunk(self):
        self.next = 0

    def _slot(self):
        if self.next == len(self.slots):
            self.slots.append(None)
        self.next += 1
        return self.next - 1

    def conv3(self, x, weight, bias):
        """k=3 causal conv (spatial padding 1): out[t] uses in[t-2], in[t-1], in[t]."""
        if self.chunked:
            i = self._slot()
            prev = self.slots[i]
            keep = x[:, :, -2:]
            if keep.shape[2] < 2 and prev is not None:
                keep = torch.cat([prev[:, :, -1:], keep], 2)
            front = prev if prev is not None else x[:, :, :0]
            self.slots[i] = keep
            x = torch.cat([front, x], 2)
            zeros = 2 - front.shape[2]
        else:
            zeros = 2
        x = torch.nn.functional.pad(x, (1, 1, 1, 1, zeros, 0))
        return torch.nn.functional.conv3d(x, weight, bias)

    def time_down(self, x, weight, bias):
        """Temporal stride-2 conv (3,1,1) with frame 0 passed through untouched."""
        if self.chunked:
            i = self._slot()
            prev = self.slots[i]
            self.slots[i] = x[:, :, -1:]
            if prev is None:
                return x
            return torch.nn.functional.conv3d(torch.cat([prev[:, :, -1:], x], 2), weight, bias, stride=(2, 1, 1))
        if x.shape[2] == 1:
            return x
        rest = torch.nn.functional.conv3d(x, weight, bias, stride=(2, 1, 1))
        return torch.cat([x[:, :, :1], rest], 2)


def _per_frame(x, fn):
    b, c, t, h, w = x.shape
    y = fn(x.transpose(1, 2).reshape(b * t, c, h, w))
    return y.reshape(b, t, *y.shape[1:]).transpose(1, 2)


def _residual(p, pre, x, frames):
    h = F.silu(F.l2_channel_norm(x, p(pre + "residual.0.gamma")))
    h = frames.conv3(h, p(pre + "residual.2.weight"), p(pre + "residual.2.bias"))
    h = F.silu(F.l2_channel_norm(h, p(pre + "residual.3.gamma")))
    h = frames.conv3(h, p(pre + "residual.6.weight"), p(pre + "residual.6.bias"))
    short = (torch.nn.functional.conv3d(x, p(pre + "shortcut.weight"), p(pre + "shortcut.bias"))
             if pre + "shortcut.weight" in p.params else x)
    return h + short


def _attention(p, pre, x):
    def one(frame):                                        # [n, c, h, w]
        n, c, hh, ww = frame.shape
        y = F.l2_channel_norm(frame, p(pre + "norm.gamma"))
        qkv = torch.nn.functional.conv2d(y, p(pre + "to_qkv.weight"), p(pre + "to_qkv.bias"))
        qkv = qkv.reshape(n, 3 * c, hh * ww).transpose(1, 2)[:, None]   # [n, 1, hw, 3c]
        q, k, v = qkv[..., :c], qkv[..., c:2 * c], qkv[..., 2 * c:]
        o = F.attention(q, k, v, c ** -0.5)[:, 0].transpose(1, 2).reshape(n, c, hh, ww)
        return torch.nn.functional.conv2d(o, p(pre + "proj.weight"), p(pre + "proj.bias")) + frame
    return _per_frame(x, one)


def _downsample(p, pre, x, kind, frames):
    def spatial(frame):
        frame = torch.nn.functional.pad(frame, (0, 1, 0, 1))
        return torch.nn.functional.conv2d(frame, p(pre + "resample.1.weight"), p(pre + "resample.1.bias"), stride=2)
    x = _per_frame(x, spatial)
    if kind == "down3d":
        x = frames.time_down(x, p(pre + "time_conv.weight"), p(pre + "time_conv.bias"))
    return x


def _encoder(p, d: VaeDims, x, frames):
    x = frames.conv3(x, p("encoder.conv1.weight"), p("encoder.conv1.bias"))
    shortcut_in = None
    for prefix, kind, cin, cout in encoder_layout(d):
        if kind == "avg_begin":
            shortcut_in = x
        elif kind == "avg_end":
            c_in, ft, fs = cin
            x = x + avg_down(shortcut_in, cout, ft, fs)
        elif kind == "res":
            x = _residual(p, prefix, x, frames)
        else:
            x = _downsample(p, prefix, x, kind, frames)
    x = _residual(p, "encoder.middle.0.", x, frames)
    x = _attention(p, "encoder.middle.1.", x)
    x = _residual(p, "encoder.middle.2.", x, frames)
    x = F.silu(F.l2_channel_norm(x, p("encoder.head.0.gamma")))
    return frames.conv3(x, p("encoder.head.2.weight"), p("encoder.head.2.bias"))


def encode(params, d: VaeDims, video, chunked=True, dtype=torch.float64):
    """video [B, 3, T, H, W] in [-1, 1] -> normalised latents [B, z, 1 + (T-1)//4, H/f, W/f].

    Frames past 1 + 4*((T-1)//4) are never encoded upstream (the chunk loop stops there), so
    they are dropped here too. chunked: upstream's loop (first frame, then 4-frame chunks with
    the feature cache); False: one pass over all frames."""
    p = _Params(params, dtype)
    t = video.shape[2]
    used = 1 + 4 * ((t - 1) // 4)
    x = video[:, :, :used].to(dtype)
    if d.kind == "wan22":
        x = patchify(x)
    frames = _CausalFrames(chunked)
    if chunked:
        outs = []
        for begin, end in [(0, 1)] + [(1 + 4 * i, 5 + 4 * i) for i in range((used - 1) // 4)]:
            frames.start_chunk()
            outs.append(_encoder(p, d, x[:, :, begin:end], frames))
        h = torch.cat(outs, 2)
    else:
        h = _encoder(p, d, x, frames)
    h = torch.nn.functional.conv3d(h, p("conv1.weight"), p("conv1.bias"))
    mu = h[:, :d.z]
    mean, std = d.constants()
    mean32 = torch.tensor(mean, dtype=torch.float32)
    inv_std32 = 1.0 / torch.tensor(std, dtype=torch.float32)     # upstream's scale[1], float32
    return (mu - mean32.to(dtype).view(1, -1, 1, 1, 1)) * inv_std32.to(dtype).view(1, -1, 1, 1, 1)


def i2v_condition(params, d: VaeDims, first_frame, num_frames, dtype=torch.float64):
    """The I2V conditioning y [B, 4 + z, T_lat, h, w] for a first frame [B, 3, H, W] in [-1, 1]:
    latents of the clip [first frame, num_frames - 1 zero frames], after a 4-channel mask that
    is 1 on latent frame 0 and 0 elsewhere (image2video.py 210-217, 240-249; DreamZero AH
    563-581 builds the same with msk[:, :, 0:1] = 1)."""
    b, c, h, w = first_frame.shape
    clip = torch.cat([first_frame[:, :, None].to(dtype),
                      torch.zeros(b, c, num_frames - 1, h, w, dtype=dtype)], 2)
    lat = encode(params, d, clip, chunked=True, dtype=dtype)
    mask = torch.zeros(b, 4, lat.shape[2], lat.shape[3], lat.shape[4], dtype=dtype)
    mask[:, :, 0] = 1
    return torch.cat([mask, lat], 1)


def encoder_ops(d: VaeDims, t, h, w):
    """The encoder's compute ops for a clip of t frames (t = 1 + 4n) at h x w, in execution
    order: (op, shape text, FLOPs = 2 x multiply-adds) with frame counts of the one-pass form."""
    ops = []
    if d.kind == "wan22":
        h, w = h // 2, w // 2
        ops.append(("patchify 2x2", f"[3,{t},{2 * h},{2 * w}] -> [12,{t},{h},{w}]", 0))
    cin = d.in_channels

    def conv3(name, ci, co, t_, h_, w_):
        ops.append((name, f"causal conv3d k3 {ci}->{co} @ [{t_},{h_},{w_}]", 2 * 27 * ci * co * t_ * h_ * w_))

    def norm(c, t_, h_, w_):
        ops.append(("channel RMS norm + SiLU", f"C={c} @ [{t_},{h_},{w_}]", 0))

    conv3("conv1", cin, d.dim, t, h, w)
    for prefix, kind, ci, co in encoder_layout(d):
        if kind == "res":
            norm(ci, t, h, w)
            conv3(prefix + "residual.2", ci, co, t, h, w)
            norm(co, t, h, w)
            conv3(prefix + "residual.6", co, co, t, h, w)
            if ci != co:
                ops.append((prefix + "shortcut", f"conv 1x1x1 {ci}->{co} @ [{t},{h},{w}]", 2 * ci * co * t * h * w))
        elif kind in ("down2d", "down3d"):
            ops.append((prefix + "resample.1", f"pad (0,1,0,1) + conv2d 3x3 s2 {co}->{co} @ [{t},{h},{w}] -> "
                        f"[{t},{h // 2},{w // 2}]", 2 * 9 * co * co * t * (h // 2) * (w // 2)))
            h, w = h // 2, w // 2
            if kind == "down3d":
                t_out = 1 + (t - 1) // 2
                ops.append((prefix + "time_conv", f"conv (3,1,1) s(2,1,1) {co}->{co} @ [{t},{h},{w}] -> "
                            f"[{t_out},{h},{w}] (frame 0 passed through)", 2 * 3 * co * co * (t_out - 1) * h * w))
                t = t_out
        elif kind == "avg_end":
            ops.append((prefix + "avg_shortcut", f"unshuffle (t {ci[1]}, s {ci[2]}) + group mean -> C={co} "
                        f"@ [{t},{h},{w}]", 0))
    c = d.stage_dims[-1]
    for name in ("encoder.middle.0.", "encoder.middle.2."):
        conv3(name + "residual.2", c, c, t, h, w)
        conv3(name + "residual.6", c, c, t, h, w)
        if name.endswith("0."):
            ops.append(("encoder.middle.1", f"per-frame attention, 1 head, C={c}, {h * w} positions x {t} frames",
                        t * (2 * 4 * c * c * h * w + 2 * 2 * (h * w) ** 2 * c)))
    conv3("encoder.head.2", c, 2 * d.z, t, h, w)
    ops.append(("conv1 (1x1x1) -> mu", f"{2 * d.z}->{2 * d.z} @ [{t},{h},{w}], keep the first {d.z}",
                2 * (2 * d.z) ** 2 * t * h * w))
    return ops
