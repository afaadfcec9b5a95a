"""Float64 reference of DreamZero's training loss (teacher forcing, video + actions + states),
re-implemented from the upstream code.

Upstream (read for facts, no code copied):
  CWM = dreamzero ab790c1 groot/vla/model/dreamzero/modules/wan_video_dit_action_casual_chunk.py
  SUB = dreamzero ab790c1 groot/vla/model/dreamzero/modules/wan2_1_submodule.py
  AH  = dreamzero ab790c1 groot/vla/model/dreamzero/action_head/wan_flow_matching_action_tf.py
  FMS = dreamzero ab790c1 groot/vla/model/dreamzero/modules/flow_match_scheduler.py
  AEN = dreamzero ab790c1 groot/vla/model/n1_5/modules/action_encoder.py
  WAN = Wan2.1 9737cba wan/modules/model.py, I2V = Wan2.1 9737cba wan/image2video.py

One sample (AH 603-803, CWM 1998-2162). Latent frames F = 1 + nb * fpb: frame 0 is its own block,
block b holds frames 1 + b*fpb ... (b+1)*fpb. Per-sample token sequence (L tokens):
  [clean video F*fs] [noisy video F*fs] [actions nb*Ha] [states nb*Ns]        (CWM 2064, 2104, 907-922)
  fs = frame_seqlen = (H/2)(W/2) tokens per latent frame, token (f, h, w) at f*fs + h*(W/2) + w.
Timesteps: per-frame ids; every frame of block b takes the id of its first frame 1 + b*fpb, frame 0
keeps its own (AH 694-699, 736-737); actions and states of block b take block b's id (AH 717-718,
CWM 2079-2081). sigma = table[id], t = 1000 sigma (FMS 18-31); clean tokens use t = 0 (CWM 2106-2107).
Noising: x_t = (1 - sigma) x0 + sigma noise, target = noise - x0 for video and actions (FMS 73-85).
Loss (AH 784-800): video = mean over frames f of w(id_f) * mean_{c,h,w}(pred - target)^2 (frame 0
included); action = mean over action tokens j of w(id_j) * mean_a((pred - target)^2 * action_mask *
has_real_action); sample loss = video + action. Several samples: the mean of the per-sample losses
(training runs one sample per device, B = 1; DDP averages over devices).
The teacher-forcing self-attention mask is teacher_forcing_mask() (CWM 555-784, 907-953).
"""
import math
from collections import OrderedDict
from dataclasses import dataclass

import torch

from reference_ops import (F64, f64_params, action_time_sinusoid, attention, embodiment_linear, gelu_erf,
                           gelu_tanh, layer_norm, linear, loss_and_grads, rms_norm, silu)

PREFIX = "action_head.model."
N_CLIP_TOKENS = 257        # WanI2VCrossAttention splits the context at 257 (SUB 330-331)
CLIP_DIM = 1280            # MLPProj(1280, dim) (CWM 1421, SUB 565-577)
CLIP_LN_EPS = 1e-5         # torch.nn.LayerNorm default inside MLPProj (SUB 570-573)
TRAIN_TIMESTEPS = 1000     # FlowMatchScheduler num_train_timesteps; set_timesteps(1000, training=True) (AH 230)
SHIFT = 5.0                # FlowMatchScheduler(shift=5, sigma_min=0.0, extra_one_step=True) (AH 177)
ROPE_THETA = 10000.0

# CausalWanModel constructor defaults for keys absent from diffusion_model_cfg (CWM 1266-1293).
MODEL_DEFAULTS = dict(model_type="t2v", patch_size=(1, 2, 2), frame_seqlen=220, text_len=512, in_dim=16,
                      dim=2048, ffn_dim=8192, freq_dim=256, text_dim=4096, out_dim=16, num_heads=16,
                      num_layers=32, max_chunk_size=-1, qk_norm=True, cross_attn_norm=True, eps=1e-6,
                      num_frame_per_block=1, action_dim=32, max_state_dim=64, hidden_size=1024,
                      num_action_per_block=32, num_state_per_block=1, concat_first_frame_latent=True)


@dataclass
class DreamZeroDims:
    dim: int
    heads: int
    layers: int
    ffn: int
    freq_dim: int
    text_dim: int
    text_len: int
    in_dim: int
    out_dim: int
    patch: tuple
    frame_seqlen: int
    fpb: int                   # latent frames per block
    actions_per_block: int     # Ha
    states_per_block: int      # Ns
    max_chunk_size: int        # -1: token-causal clean stream; else window of max_chunk*fpb + 1 frames
    action_dim: int
    state_dim: int
    hidden: int                # state-encoder / action-decoder MLP width
    eps: float
    concat_y: bool             # concat_first_frame_latent: [x; y] before patch_embedding

    @property
    def head_dim(self):
        return self.dim // self.heads


def model_config(config):
    """diffusion_model_cfg of a DreamZero config.json (or that dict itself)."""
    if "action_head_cfg" in config:
        config = config["action_head_cfg"]
    if "config" in config:
        config = config["config"]
    return config.get("diffusion_model_cfg", config)


def dims_from_config(config):
    cfg = dict(MODEL_DEFAULTS, **model_config(config))
    dims = DreamZeroDims(
        dim=cfg["dim"], heads=cfg["num_heads"], layers=cfg["num_layers"], ffn=cfg["ffn_dim"],
        freq_dim=cfg["freq_dim"], text_dim=cfg["text_dim"], text_len=cfg["text_len"], in_dim=cfg["in_dim"],
        out_dim=cfg["out_dim"], patch=tuple(cfg["patch_size"]), frame_seqlen=cfg["frame_seqlen"],
        fpb=cfg["num_frame_per_block"], actions_per_block=cfg["num_action_per_block"],
        states_per_block=cfg["num_state_per_block"], max_chunk_size=cfg["max_chunk_size"],
        action_dim=cfg["action_dim"], state_dim=cfg["max_state_dim"], hidden=cfg["hidden_size"],
        eps=cfg["eps"], concat_y=cfg["concat_first_frame_latent"])
    problems = []
    if cfg["model_type"] not in ("i2v", "ti2v"):
        problems.append(f"model_type {cfg['model_type']!r}: the causal model's t2v cross-attention is not "
                        "callable upstream (CWM 1202 passes no context_lens); only i2v/ti2v")
    if not (cfg["qk_norm"] and cfg["cross_attn_norm"]):
        problems.append("only qk_norm and cross_attn_norm true (the released values) are implemented")
    if dims.patch[0] != 1:
        problems.append("temporal patch size must be 1 (timesteps are per latent frame)")
    if dims.dim % dims.heads or dims.head_dim % 2:
        problems.append("dim must split into heads of even size (CWM 1410)")
    if dims.actions_per_block % dims.fpb or dims.fpb % dims.states_per_block:
        problems.append("num_action_per_block must be a multiple of num_frame_per_block and "
                        "num_state_per_block must divide it (AH 703-704)")
    if problems:
        raise ValueError("DreamZero config not supported: " + "; ".join(problems))
    return dims


def param_shapes(config, clip_dim=CLIP_DIM):
    """Every DiT tensor under its upstream name (action_head.model. prefix) and its shape.
    clip_dim is 1280 upstream (hard-coded); tests may shrink it."""
    dm = dims_from_config(config)
    d = dm.dim
    shapes = OrderedDict()

    def lin(name, n_out, n_in):
        shapes[name + ".weight"] = (n_out, n_in)
        shapes[name + ".bias"] = (n_out,)

    def emb_lin(name, n_in, n_out):  # CategorySpecificLinear with max_num_embodiments = 1 (CWM 1365)
        shapes[name + ".W"] = (1, n_in, n_out)
        shapes[name + ".b"] = (1, n_out)

    def qkvo_norms(name):
        for proj in ("q", "k", "v", "o"):
            lin(f"{name}.{proj}", d, d)
        shapes[name + ".norm_q.weight"] = (d,)
        shapes[name + ".norm_k.weight"] = (d,)

    p = PREFIX
    emb_lin(p + "state_encoder.layer1", dm.state_dim, dm.hidden)
    emb_lin(p + "state_encoder.layer2", dm.hidden, d)
    emb_lin(p + "action_encoder.W1", dm.action_dim, d)
    emb_lin(p + "action_encoder.W2", 2 * d, d)
    emb_lin(p + "action_encoder.W3", d, d)
    emb_lin(p + "action_decoder.layer1", d, dm.hidden)
    emb_lin(p + "action_decoder.layer2", dm.hidden, dm.action_dim)
    shapes[p + "patch_embedding.weight"] = (d, dm.in_dim) + dm.patch
    shapes[p + "patch_embedding.bias"] = (d,)
    lin(p + "text_embedding.0", d, dm.text_dim)
    lin(p + "text_embedding.2", d, d)
    lin(p + "time_embedding.0", d, dm.freq_dim)
    lin(p + "time_embedding.2", d, d)
    lin(p + "time_projection.1", 6 * d, d)
    for layer in range(dm.layers):
        b = f"{p}blocks.{layer}."
        shapes[b + "modulation"] = (1, 6, d)
        qkvo_norms(b + "self_attn")
        shapes[b + "norm3.weight"] = (d,)  # cross_attn_norm: affine LayerNorm before the cross-attention
        shapes[b + "norm3.bias"] = (d,)
        qkvo_norms(b + "cross_attn")
        lin(b + "cross_attn.k_img", d, d)
        lin(b + "cross_attn.v_img", d, d)
        shapes[b + "cross_attn.norm_k_img.weight"] = (d,)
        lin(b + "ffn.0", dm.ffn, d)
        lin(b + "ffn.2", d, dm.ffn)
    shapes[p + "head.modulation"] = (1, 2, d)
    lin(p + "head.head", math.prod(dm.patch) * dm.out_dim, d)
    shapes[p + "img_emb.proj.0.weight"] = (clip_dim,)
    shapes[p + "img_emb.proj.0.bias"] = (clip_dim,)
    lin(p + "img_emb.proj.1", clip_dim, clip_dim)
    lin(p + "img_emb.proj.3", d, clip_dim)
    shapes[p + "img_emb.proj.4.weight"] = (d,)
    shapes[p + "img_emb.proj.4.bias"] = (d,)
    return shapes


def schedule_tables(mode="float64"):
    """(sigma[1000], t[1000], weight[1000]) indexed by timestep id (FMS 18-38, 88-92).

    s_i = linspace(1, 0, 1001)[:-1] = 1 - i/1000; sigma = 5 s / (1 + 4 s); t = 1000 sigma;
    y = exp(-2 ((t - 500) / 1000)^2); weight = (y - min y) * 1000 / sum(y - min y) (min 0, mean 1).
    Upstream builds them in float32 with torch ops (mode 'float32' repeats those ops; the float32
    linspace is torch-version dependent, so the spec defines the float64 values)."""
    n = TRAIN_TIMESTEPS
    if mode == "float32":
        s = torch.linspace(1.0, 0.0, n + 1)[:-1]
        sigma = SHIFT * s / (1 + (SHIFT - 1) * s)
        t = sigma * n
        y = torch.exp(-2 * ((t - n / 2) / n) ** 2)
        y = y - y.min()
        return sigma.to(F64), t.to(F64), (y * (n / y.sum())).to(F64)
    if mode != "float64":
        raise ValueError(f"table mode must be 'float64' or 'float32', got {mode!r}")
    s = 1.0 - torch.arange(n, dtype=F64) / n
    sigma = SHIFT * s / (1 + (SHIFT - 1) * s)
    t = sigma * n
    y = torch.exp(-2 * ((t - n / 2) / n) ** 2)
    y = y - y.min()
    return sigma, t, y * (n / y.sum())


def time_sinusoid(t, dim):
    """sinusoidal_embedding_1d (SUB 16-26, WAN 18-28), float64 upstream: [cos(t f_k), sin(t f_k)],
    f_k = 10000^(-k / (dim/2))."""
    half = dim // 2
    arg = t.to(F64)[:, None] * torch.pow(torch.tensor(10000.0, dtype=F64), -torch.arange(half, dtype=F64) / half)
    return torch.cat([torch.cos(arg), torch.sin(arg)], dim=1)


def block_timestep_ids(frame_ids, fpb):
    """Per-frame ids after upstream's block rule (AH 697-699, 736-737): frame 0 keeps its id, every
    frame of block b takes the id of frame 1 + b*fpb."""
    ids = torch.as_tensor(frame_ids, dtype=torch.long).clone()
    nb = (ids.numel() - 1) // fpb
    firsts = ids[1::fpb][:nb]
    ids[1:] = firsts.repeat_interleave(fpb)
    return ids


def teacher_forcing_mask(n_frames, frame_seqlen, fpb, actions_per_block, states_per_block, max_chunk_size):
    """Boolean [L, L] (query, key) self-attention mask of one sample, True = may attend, over the
    sequence [clean F*fs][noisy F*fs][actions nb*Ha][states nb*Ns].

    clean frame 0: itself (CWM 579-584)
    clean block b: with max_chunk_size = -1 token-causal over the clean stream, frame 0 included (a
      bottom-right aligned causal flash call, CWM 586-598); else clean frame 0 plus the clean tokens
      [max(fs, end_b - w*fs), end_b), w = max_chunk_size*fpb + 1 frames, end_b the block's end (CWM
      600-622, 1350) - the window cuts at frame granularity
    noisy frame 0: itself (CWM 678-683)
    noisy video block b and action block b: clean tokens [0, fs + b*fpb*fs) (frame 0 and clean blocks
      < b, no window) + noisy block b + actions of b + states of b (CWM 688-723, 747-782)
    state block b: itself (CWM 626-659)"""
    fs = frame_seqlen
    nb = (n_frames - 1) // fpb
    if n_frames != 1 + nb * fpb or nb < 1:
        raise ValueError(f"{n_frames} latent frames do not make 1 + nb*{fpb} with nb >= 1")
    nv = n_frames * fs
    ha, ns = actions_per_block, states_per_block
    act0, st0 = 2 * nv, 2 * nv + nb * ha
    size = st0 + nb * ns
    allowed = torch.zeros(size, size, dtype=torch.bool)
    allowed[:fs, :fs] = True
    block = fpb * fs
    window = max_chunk_size * fpb + 1 if max_chunk_size != -1 else -1
    for b in range(nb):
        start, end = fs + b * block, fs + (b + 1) * block
        if window == -1:
            for i in range(start, end):
                allowed[i, : i + 1] = True
        else:
            allowed[start:end, :fs] = True
            allowed[start:end, max(fs, end - window * fs):end] = True
    allowed[nv:nv + fs, nv:nv + fs] = True
    for b in range(nb):
        noisy = slice(nv + fs + b * block, nv + fs + (b + 1) * block)
        acts = slice(act0 + b * ha, act0 + (b + 1) * ha)
        states = slice(st0 + b * ns, st0 + (b + 1) * ns)
        for rows in (noisy, acts):
            allowed[rows, : fs + b * block] = True
            allowed[rows, noisy] = True
            allowed[rows, acts] = True
            allowed[rows, states] = True
        allowed[states, states] = True
    return allowed


def _rope_freqs(n_positions, dim):
    """rope_params (SUB 29-44): angle of pair k at position p = p / theta^(2k/dim), k < dim/2."""
    inv = 1.0 / torch.pow(torch.tensor(ROPE_THETA, dtype=F64), torch.arange(0, dim, 2, dtype=F64) / dim)
    return torch.arange(n_positions, dtype=F64)[:, None] * inv[None, :]


def rope_angles(dims, n_frames, grid_h, grid_w, with_register):
    """Per-token rotation angles [L_part, hd/2] for one stream. Video token (f, h, w): pairs split
    [d - 4(d//6), 2(d//6), 2(d//6)] dims over (f, h, w) (CWM 1413-1419, 2198-2221). Action token j of
    the register: 1D position j over all pairs; state token k: position k (SUB 146-154)."""
    d = dims.head_dim
    axes = [d - 4 * (d // 6), 2 * (d // 6), 2 * (d // 6)]
    f = _rope_freqs(n_frames, axes[0])[:, None, None, :].expand(n_frames, grid_h, grid_w, -1)
    h = _rope_freqs(grid_h, axes[1])[None, :, None, :].expand(n_frames, grid_h, grid_w, -1)
    w = _rope_freqs(grid_w, axes[2])[None, None, :, :].expand(n_frames, grid_h, grid_w, -1)
    video = torch.cat([f, h, w], dim=-1).reshape(n_frames * grid_h * grid_w, d // 2)
    if not with_register:
        return video
    nb = (n_frames - 1) // dims.fpb
    return torch.cat([video, _rope_freqs(nb * dims.actions_per_block, d),
                      _rope_freqs(nb * dims.states_per_block, d)], dim=0)


def apply_rope(x, angles, heads):
    """Rotates adjacent pairs (x[2k], x[2k+1]) of every head by the token's angles (complex product,
    SUB 130-159). x [L, heads*hd], angles [L, hd/2]."""
    n_tok, width = x.shape
    pairs = x.reshape(n_tok, heads, width // heads // 2, 2)
    cos, sin = torch.cos(angles)[:, None, :], torch.sin(angles)[:, None, :]
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], dim=-1).reshape(n_tok, width)


def patch_embed(P, dims, video):
    """Conv3d with kernel = stride = patch (CWM 1386-1387): video [C, F, H, W] -> tokens
    [F*(H/ph)*(W/pw), D], token order (f, h, w), patch vector order (c, kt, kh, kw)."""
    c, n_f, h, w = video.shape
    pt, ph, pw = dims.patch
    patches = video.reshape(c, n_f // pt, pt, h // ph, ph, w // pw, pw).permute(1, 3, 5, 0, 2, 4, 6)
    patches = patches.reshape(-1, c * pt * ph * pw)
    weight = P[PREFIX + "patch_embedding.weight"]
    return patches @ weight.reshape(weight.shape[0], -1).t() + P[PREFIX + "patch_embedding.bias"]


def unpatchify(dims, tokens, n_frames, grid_h, grid_w):
    """Head output [F*gh*gw, pt*ph*pw*C] -> [C, F, H, W]; the head's feature order is (kt, kh, kw, c),
    c fastest (CWM 2174-2196) - not the patch-embedding order."""
    pt, ph, pw = dims.patch
    c = dims.out_dim
    x = tokens.reshape(n_frames // pt, grid_h, grid_w, pt, ph, pw, c).permute(6, 0, 3, 1, 4, 2, 5)
    return x.reshape(c, n_frames, grid_h * ph, grid_w * pw)


class _Sample:
    """One sample's inputs, validated; the video tensors are [C, F, H, W] (channels first)."""

    def __init__(self, raw, dims, text_pad):
        def f64(key, shape=None):
            if key not in raw:
                raise ValueError(f"a DreamZero sample needs {key!r}")
            t = torch.as_tensor(raw[key]).to(F64)
            if shape is not None and tuple(t.shape) != tuple(shape):
                raise ValueError(f"sample[{key!r}] has shape {tuple(t.shape)}, expected {tuple(shape)}")
            return t

        self.latents = f64("latents")
        c, n_f, h, w = self.latents.shape
        _, ph, pw = dims.patch
        if c != dims.out_dim or h % ph or w % pw or (h // ph) * (w // pw) != dims.frame_seqlen:
            raise ValueError(f"latents [C, F, H, W] = {tuple(self.latents.shape)} do not fit out_dim "
                             f"{dims.out_dim}, patch {dims.patch} and frame_seqlen {dims.frame_seqlen}")
        self.nb = (n_f - 1) // dims.fpb
        if n_f != 1 + self.nb * dims.fpb or self.nb < 1:
            raise ValueError(f"{n_f} latent frames: need 1 + nb * {dims.fpb} with nb >= 1")
        self.noise = f64("noise", self.latents.shape)
        y_channels = dims.in_dim - dims.out_dim
        self.y = f64("y", (y_channels, n_f, h, w)) if dims.concat_y else None
        self.frame_ids = block_timestep_ids(raw["timestep_id"], dims.fpb)
        ids = self.frame_ids
        if ids.shape != (n_f,) or int(ids.min()) < 0 or int(ids.max()) >= TRAIN_TIMESTEPS:
            raise ValueError(f"timestep_id must be {n_f} ids in [0, {TRAIN_TIMESTEPS})")
        text = f64("text")
        if text.dim() != 2 or text.shape[1] != dims.text_dim or text.shape[0] > text_pad:
            raise ValueError(f"text must be [n <= {text_pad}, {dims.text_dim}], got {tuple(text.shape)}")
        self.text = torch.cat([text, text.new_zeros(text_pad - text.shape[0], text.shape[1])])
        self.clip = f64("clip")
        if self.clip.shape[0] != N_CLIP_TOKENS:
            raise ValueError(f"clip must have {N_CLIP_TOKENS} rows (the cross-attention split, SUB 330)")
        n_act = self.nb * dims.actions_per_block
        self.actions = f64("actions", (n_act, dims.action_dim))
        if n_act and (float(self.actions.min()) < -1.0 or float(self.actions.max()) > 1.0):
            raise ValueError("actions must lie in [-1, 1] (AH 618-619)")
        self.action_noise = f64("action_noise", (n_act, dims.action_dim))
        self.action_mask = f64("action_mask", (n_act, dims.action_dim))
        self.state = f64("state", (self.nb * dims.states_per_block, dims.state_dim))
        self.has_real_action = float(raw["has_real_action"])
        self.grid = (h // ph, w // pw)


def stream_inputs(s, sigma_table):
    """Patch-embedding inputs [C_in, F, H, W] of the clean and the noisy stream: latents, and
    (1 - sigma_f) latents + sigma_f noise per frame (FMS 73-81), each followed by the same y channels
    [mask 4 | first-frame latents] when concat_first_frame_latent (CWM 2038-2039, 2098-2099; y is
    never noised, AH 563-581)."""
    sigma = sigma_table[s.frame_ids][None, :, None, None]
    noisy = (1 - sigma) * s.latents + sigma * s.noise
    if s.y is None:
        return s.latents, noisy
    return torch.cat([s.latents, s.y]), torch.cat([noisy, s.y])


def _block(P, pre, dims, x, e0, angles, allowed, ctx_txt, ctx_img):
    """CausalWanAttentionBlock (CWM 1151-1210) with the i2v cross-attention (SUB 308-361)."""
    mod = P[pre + "modulation"][0] + e0  # [L, 6, D]: shift1, scale1, gate1, shift2, scale2, gate2
    shift1, scale1, gate1, shift2, scale2, gate2 = mod.unbind(1)
    h = layer_norm(x, dims.eps) * (1 + scale1) + shift1
    sa = pre + "self_attn."
    q = rms_norm(linear(h, P[sa + "q.weight"], P[sa + "q.bias"]), dims.eps, P[sa + "norm_q.weight"])
    k = rms_norm(linear(h, P[sa + "k.weight"], P[sa + "k.bias"]), dims.eps, P[sa + "norm_k.weight"])
    v = linear(h, P[sa + "v.weight"], P[sa + "v.bias"])
    q, k = apply_rope(q, angles, dims.heads), apply_rope(k, angles, dims.heads)
    x = x + linear(attention(q, k, v, dims.heads, allowed), P[sa + "o.weight"], P[sa + "o.bias"]) * gate1
    ca = pre + "cross_attn."
    h = layer_norm(x, dims.eps, P[pre + "norm3.weight"], P[pre + "norm3.bias"])
    q = rms_norm(linear(h, P[ca + "q.weight"], P[ca + "q.bias"]), dims.eps, P[ca + "norm_q.weight"])
    k = rms_norm(linear(ctx_txt, P[ca + "k.weight"], P[ca + "k.bias"]), dims.eps, P[ca + "norm_k.weight"])
    v = linear(ctx_txt, P[ca + "v.weight"], P[ca + "v.bias"])
    k_img = rms_norm(linear(ctx_img, P[ca + "k_img.weight"], P[ca + "k_img.bias"]), dims.eps,
                     P[ca + "norm_k_img.weight"])
    v_img = linear(ctx_img, P[ca + "v_img.weight"], P[ca + "v_img.bias"])
    cross = attention(q, k, v, dims.heads) + attention(q, k_img, v_img, dims.heads)
    x = x + linear(cross, P[ca + "o.weight"], P[ca + "o.bias"])
    h = layer_norm(x, dims.eps) * (1 + scale2) + shift2
    f = linear(gelu_tanh(linear(h, P[pre + "ffn.0.weight"], P[pre + "ffn.0.bias"])),
               P[pre + "ffn.2.weight"], P[pre + "ffn.2.bias"])
    return x + f * gate2


def sample_loss(P, dims, s, tables, sinusoid):
    """(video loss, action loss) of one validated sample, differentiable in P."""
    p = PREFIX
    sigma_table, t_table, weight_table = tables
    n_f = s.latents.shape[1]
    fs = dims.frame_seqlen
    ha, ns = dims.actions_per_block, dims.states_per_block
    clean_in, noisy_in = stream_inputs(s, sigma_table)
    target = s.noise - s.latents

    block_ids = s.frame_ids[1::dims.fpb][: s.nb]
    action_ids = block_ids.repeat_interleave(ha)
    state_ids = block_ids.repeat_interleave(ns)
    a_sigma = sigma_table[action_ids][:, None]
    noisy_actions = (1 - a_sigma) * s.actions + a_sigma * s.action_noise
    action_target = s.action_noise - s.actions
    # Action encoder (CWM 57-90): W3(swish(W2([W1(a_t), sinusoid(t)]))), one embodiment slot (CWM 2058).
    a = embodiment_linear(noisy_actions, P[p + "action_encoder.W1.W"], P[p + "action_encoder.W1.b"], 0)
    a = torch.cat([a, action_time_sinusoid(t_table[action_ids], dims.dim, sinusoid)], dim=-1)
    a = silu(embodiment_linear(a, P[p + "action_encoder.W2.W"], P[p + "action_encoder.W2.b"], 0))
    a = embodiment_linear(a, P[p + "action_encoder.W3.W"], P[p + "action_encoder.W3.b"], 0)

    def mlp(name, x):  # CategorySpecificMLP (CWM 45-54)
        hidden = torch.relu(embodiment_linear(x, P[f"{p}{name}.layer1.W"], P[f"{p}{name}.layer1.b"], 0))
        return embodiment_linear(hidden, P[f"{p}{name}.layer2.W"], P[f"{p}{name}.layer2.b"], 0)

    x = torch.cat([patch_embed(P, dims, clean_in), patch_embed(P, dims, noisy_in), a, mlp("state_encoder", s.state)])
    t_tok = torch.cat([torch.zeros(n_f * fs, dtype=F64), t_table[s.frame_ids].repeat_interleave(fs),
                       t_table[action_ids], t_table[state_ids]])
    tp = p + "time_embedding."
    e = linear(silu(linear(time_sinusoid(t_tok, dims.freq_dim), P[tp + "0.weight"], P[tp + "0.bias"])),
               P[tp + "2.weight"], P[tp + "2.bias"])
    e0 = linear(silu(e), P[p + "time_projection.1.weight"], P[p + "time_projection.1.bias"]).reshape(-1, 6, dims.dim)

    ctx_txt = linear(gelu_tanh(linear(s.text, P[p + "text_embedding.0.weight"], P[p + "text_embedding.0.bias"])),
                     P[p + "text_embedding.2.weight"], P[p + "text_embedding.2.bias"])
    im = p + "img_emb.proj."
    c = layer_norm(s.clip, CLIP_LN_EPS, P[im + "0.weight"], P[im + "0.bias"])
    c = linear(gelu_erf(linear(c, P[im + "1.weight"], P[im + "1.bias"])), P[im + "3.weight"], P[im + "3.bias"])
    ctx_img = layer_norm(c, CLIP_LN_EPS, P[im + "4.weight"], P[im + "4.bias"])

    gh, gw = s.grid
    angles = torch.cat([rope_angles(dims, n_f, gh, gw, False), rope_angles(dims, n_f, gh, gw, True)])
    allowed = teacher_forcing_mask(n_f, fs, dims.fpb, ha, ns, dims.max_chunk_size)
    for layer in range(dims.layers):
        x = _block(P, f"{p}blocks.{layer}.", dims, x, e0, angles, allowed, ctx_txt, ctx_img)

    nv = n_f * fs
    xv, ev = x[nv:2 * nv], e[nv:2 * nv]
    shift = P[p + "head.modulation"][0, 0] + ev
    scale = P[p + "head.modulation"][0, 1] + ev
    out = linear(layer_norm(xv, dims.eps) * (1 + scale) + shift, P[p + "head.head.weight"], P[p + "head.head.bias"])
    pred = unpatchify(dims, out, n_f, gh, gw)
    video = (weight_table[s.frame_ids] * ((pred - target) ** 2).mean(dim=(0, 2, 3))).mean()

    action_pred = mlp("action_decoder", x[2 * nv:2 * nv + s.nb * ha])
    per_token = ((action_pred - action_target) ** 2 * s.action_mask * s.has_real_action).mean(dim=1)
    action = (weight_table[action_ids] * per_token).mean()
    return video, action


def dreamzero_loss(P, dims, samples, tables, sinusoid):
    total = 0.0
    for s in samples:
        video, action = sample_loss(P, dims, s, tables, sinusoid)
        total = total + video + action
    return total / len(samples)


def dreamzero_loss_and_grads(state_dict, config, samples, *, text_pad=512, tables="float64", sinusoid="float64"):
    """Loss and float64 gradients of every DiT parameter (action_head.model.*), keyed by upstream name.

    samples: list of dicts with latents/noise [C, F, H, W], y [in_dim - C, F, H, W] (when
    concat_first_frame_latent), timestep_id [F], text [n_txt, Dtxt] (unpadded; padded with zero rows
    to text_pad), clip [257, Dclip], actions/action_noise/action_mask [nb*Ha, A], state [nb*Ns, Sd],
    has_real_action. tables/sinusoid: 'float64' (default) or 'float32' (upstream's own float32 schedule
    tables / action sinusoid)."""
    if not samples:
        raise ValueError("no samples")
    dims = dims_from_config(config)
    clip_key = PREFIX + "img_emb.proj.0.weight"
    if clip_key not in state_dict:
        raise ValueError(f"state dict has no {clip_key}")
    params = f64_params(state_dict, param_shapes(config, clip_dim=int(state_dict[clip_key].shape[0])))
    checked = [_Sample(s, dims, text_pad) for s in samples]
    table = schedule_tables(tables)
    return loss_and_grads(lambda: dreamzero_loss(params, dims, checked, table, sinusoid), params)
