"""Float64 reference of GR00T-N1.5's action-head training loss, re-implemented from the upstream code.

Upstream (read for facts, no code copied):
  FM  = Isaac-GR00T 4af2b622892f gr00t/model/action_head/flow_matching_action_head.py
  CAD = Isaac-GR00T 4af2b622892f gr00t/model/action_head/cross_attention_dit.py
  AE  = Isaac-GR00T 4af2b622892f gr00t/model/action_head/action_encoder.py
  EMB = diffusers v0.30.2 src/diffusers/models/embeddings.py
  ATT = diffusers v0.30.2 src/diffusers/models/attention.py
  AP  = diffusers v0.30.2 src/diffusers/models/attention_processor.py

What one sample computes (FM 270-347), tokens of a sample = [state (1), future (Nf), actions (H)]:
  vl    = VL(vlln(vl))                                   FM 263-268 (vlln FM 199-201, VL FM 202-206)
  s     = state_encoder(state, e)                        FM 303, 44-54
  x_t   = (1 - tau) noise + tau actions ; v = actions - noise     FM 311-312
  tq    = trunc(1000 tau)  (float32 product)             FM 315
  a     = action_encoder(x_t, tq, e) + pos_emb[0:H]      FM 316-322
  h     = DiT([s, future_tokens, a], vl, tq)             FM 325-336, CAD 262-306
  pred  = action_decoder(h, e)[-H:]                      FM 337-338
  loss  = sum(mask (pred - v)^2) / sum(mask)             FM 341-343

Loss over several samples (what embtrain computes for a step): the sum over all samples of
mask * (pred - v)^2 divided by the total mask count of the step (all samples, all micro-batches,
all ranks). Upstream averages per-micro-batch means instead (HF Trainer); the two agree for one
micro-batch. Pass loss_denominator to evaluate a part of a step (then the parts' losses add up).

Dropout (p = config dropout, 0.2 released; training mode): four sites per block, in the VL blocks
and the DiT blocks. Keep-masks come per sample in sample["dropout"], keyed by site name (see
dropout_sites); without them dropout is off. A kept element is scaled by 1 / (1 - p).
  {vl|dit}.{l}.attn_out    [T, W]   Attention.to_out[1] after to_out[0] (AP 237-240, 2366-2368)
  {vl|dit}.{l}.attn_final  [T, W]   the block's final_dropout on the same output (CAD 145-148, 174-175)
  {vl|dit}.{l}.ff_hidden   [T, 4W]  FeedForward net[1] after GELU (ATT 1150-1154)
  {vl|dit}.{l}.ff_out      [T, W]   FeedForward net[3] after the second linear (ATT 1157-1159)
  (T = n_vl, W = Dvl for vl; T = 1 + Nf + H, W = D for dit)
"""
import math
from collections import OrderedDict
from dataclasses import dataclass

import torch

from reference_ops import (F64, f64_params, action_time_sinusoid, attention, dropout, embodiment_linear,
                           gelu_tanh, layer_norm, linear, loss_and_grads, silu)

PREFIX = "action_head."
DROPOUT_KINDS = ("attn_out", "attn_final", "ff_hidden", "ff_out")

# Constructor defaults that apply when a key is absent from config.json.
HEAD_DEFAULTS = dict(add_pos_embed=True, input_embedding_dim=1536, backbone_embedding_dim=1536,  # FM 107-154
                     hidden_size=1024, max_seq_len=1024, num_timestep_buckets=1000,
                     max_num_embodiments=32, use_vlln=True, num_target_vision_tokens=32)
DIT_DEFAULTS = dict(num_attention_heads=8, attention_head_dim=64, output_dim=26, num_layers=12,  # CAD 195-215
                    dropout=0.1, attention_bias=True, activation_fn="gelu-approximate",
                    norm_type="ada_norm", norm_elementwise_affine=False, norm_eps=1e-5,
                    final_dropout=True, positional_embeddings="sinusoidal",
                    interleave_self_attention=False, cross_attention_dim=None)
VL_DEFAULTS = dict(num_attention_heads=8, attention_head_dim=64, num_layers=12, dropout=0.1,  # CAD 313-329
                   attention_bias=True, activation_fn="gelu-approximate", final_dropout=True,
                   positional_embeddings="sinusoidal")

LN_EPS = 1e-5        # nn.LayerNorm default: vlln (FM 200), VL norm1/norm3 (CAD 83, 122, 136)
NORM_OUT_EPS = 1e-6  # DiT norm_out (CAD 254)
TIME_CHANNELS = 256  # Timesteps(num_channels=256, flip_sin_to_cos=True, downscale_freq_shift=1) (CAD 34)


@dataclass
class Gr00tDims:
    d: int            # DiT width = heads * head_dim = input_embedding_dim
    heads: int
    layers: int
    d_out: int        # DiT output_dim = hidden_size (the action decoder's input)
    d_vl: int         # backbone_embedding_dim
    vl_heads: int
    vl_layers: int
    use_vlln: bool
    d_hidden: int     # hidden_size: state-encoder / action-decoder MLP width
    action_dim: int
    state_dim: int    # max_state_dim
    horizon: int
    n_future: int
    n_embodiments: int
    max_seq_len: int
    add_pos_embed: bool
    interleave: bool
    dit_eps: float
    dropout: float
    final_dropout: bool
    vl_dropout: float
    vl_final_dropout: bool
    buckets: int

    def cross_layer(self, layer):
        """Even layers attend to the VL features, odd ones to themselves when interleaved (CAD 230, 281)."""
        return not (self.interleave and layer % 2 == 1)


def head_config(config):
    """The action_head_cfg dict of a GR00T-N1.5 config.json (or that dict itself)."""
    return config["action_head_cfg"] if "action_head_cfg" in config else config


def dims_from_config(config):
    """Model dimensions from a released-format config.json; rejects what upstream cannot express."""
    head = dict(HEAD_DEFAULTS, **head_config(config))
    dit = dict(DIT_DEFAULTS, **head["diffusion_model_cfg"])
    vl = dict(VL_DEFAULTS, **(head.get("vl_self_attention_cfg") or {}))
    dims = Gr00tDims(
        d=dit["num_attention_heads"] * dit["attention_head_dim"], heads=dit["num_attention_heads"],
        layers=dit["num_layers"], d_out=dit["output_dim"], d_vl=head["backbone_embedding_dim"],
        vl_heads=vl["num_attention_heads"], vl_layers=vl["num_layers"] if head["use_vlln"] else 0,
        use_vlln=head["use_vlln"], d_hidden=head["hidden_size"], action_dim=head["action_dim"],
        state_dim=head["max_state_dim"], horizon=head["action_horizon"],
        n_future=head["num_target_vision_tokens"], n_embodiments=head["max_num_embodiments"],
        max_seq_len=head["max_seq_len"], add_pos_embed=head["add_pos_embed"],
        interleave=dit["interleave_self_attention"], dit_eps=dit["norm_eps"], dropout=dit["dropout"],
        final_dropout=dit["final_dropout"], vl_dropout=vl["dropout"], vl_final_dropout=vl["final_dropout"],
        buckets=head["num_timestep_buckets"])
    problems = []
    if dims.d != head["input_embedding_dim"]:
        problems.append(f"DiT width {dims.d} (heads*head_dim) != input_embedding_dim {head['input_embedding_dim']}")
    if dims.d_out != dims.d_hidden:
        problems.append(f"DiT output_dim {dims.d_out} != hidden_size {dims.d_hidden} (the action decoder reads "
                        "hidden_size features, FM 190-195)")
    if dims.use_vlln and vl["num_attention_heads"] * vl["attention_head_dim"] != dims.d_vl:
        problems.append("VL self-attention width (heads*head_dim) != backbone_embedding_dim")
    cross = dit["cross_attention_dim"] if dit["cross_attention_dim"] is not None else dims.d
    if cross != dims.d_vl:
        problems.append(f"cross_attention_dim {cross} != backbone_embedding_dim {dims.d_vl}")
    for name, cfg in (("diffusion_model_cfg", dit), ("vl_self_attention_cfg", vl)):
        if cfg["positional_embeddings"] is not None:
            problems.append(f"{name}.positional_embeddings must be null (the released value); in-block "
                            "sinusoidal embeddings are not implemented here")
        if cfg["activation_fn"] != "gelu-approximate" or not cfg["attention_bias"]:
            problems.append(f"{name}: only activation gelu-approximate with attention_bias is implemented")
    if dit["norm_type"] != "ada_norm" or dit["norm_elementwise_affine"]:
        problems.append("diffusion_model_cfg: only norm_type ada_norm without affine norms is implemented")
    if problems:
        raise ValueError("GR00T config not supported: " + "; ".join(problems))
    return dims


def param_shapes(config):
    """Every action-head tensor under its upstream name (with the action_head. prefix) and its shape,
    in module order. 314 tensors for the released N1.5-3B config."""
    dm = dims_from_config(config)
    shapes = OrderedDict()

    def lin(name, n_out, n_in):
        shapes[name + ".weight"] = (n_out, n_in)
        shapes[name + ".bias"] = (n_out,)

    def emb_lin(name, n_in, n_out):
        shapes[name + ".W"] = (dm.n_embodiments, n_in, n_out)
        shapes[name + ".b"] = (dm.n_embodiments, n_out)

    def block(pre, width, kv_width, ada):
        if ada:
            lin(pre + "norm1.linear", 2 * width, width)
        else:
            shapes[pre + "norm1.weight"] = (width,)
            shapes[pre + "norm1.bias"] = (width,)
        lin(pre + "attn1.to_q", width, width)
        lin(pre + "attn1.to_k", width, kv_width)
        lin(pre + "attn1.to_v", width, kv_width)
        lin(pre + "attn1.to_out.0", width, width)
        if not ada:
            shapes[pre + "norm3.weight"] = (width,)
            shapes[pre + "norm3.bias"] = (width,)
        lin(pre + "ff.net.0.proj", 4 * width, width)
        lin(pre + "ff.net.2", width, 4 * width)

    p = PREFIX
    lin(p + "model.timestep_encoder.timestep_embedder.linear_1", dm.d, TIME_CHANNELS)
    lin(p + "model.timestep_encoder.timestep_embedder.linear_2", dm.d, dm.d)
    for layer in range(dm.layers):
        block(f"{p}model.transformer_blocks.{layer}.", dm.d, dm.d_vl if dm.cross_layer(layer) else dm.d, True)
    lin(p + "model.proj_out_1", 2 * dm.d, dm.d)
    lin(p + "model.proj_out_2", dm.d_out, dm.d)
    emb_lin(p + "state_encoder.layer1", dm.state_dim, dm.d_hidden)
    emb_lin(p + "state_encoder.layer2", dm.d_hidden, dm.d)
    emb_lin(p + "action_encoder.W1", dm.action_dim, dm.d)
    emb_lin(p + "action_encoder.W2", 2 * dm.d, dm.d)
    emb_lin(p + "action_encoder.W3", dm.d, dm.d)
    emb_lin(p + "action_decoder.layer1", dm.d_hidden, dm.d_hidden)
    emb_lin(p + "action_decoder.layer2", dm.d_hidden, dm.action_dim)
    shapes[p + "future_tokens.weight"] = (dm.n_future, dm.d)
    if dm.use_vlln:
        shapes[p + "vlln.weight"] = (dm.d_vl,)
        shapes[p + "vlln.bias"] = (dm.d_vl,)
        for layer in range(dm.vl_layers):
            block(f"{p}vl_self_attention.transformer_blocks.{layer}.", dm.d_vl, dm.d_vl, False)
    if dm.add_pos_embed:
        shapes[p + "position_embedding.weight"] = (dm.max_seq_len, dm.d)
    return shapes


def dropout_sites(dims, n_vl):
    """Site name -> keep-mask shape for one sample with n_vl backbone tokens (see the module doc)."""
    sites = OrderedDict()
    for stack, n_layers, n_tok, width, final in (
            ("vl", dims.vl_layers, n_vl, dims.d_vl, dims.vl_final_dropout),
            ("dit", dims.layers, 1 + dims.n_future + dims.horizon, dims.d, dims.final_dropout)):
        for layer in range(n_layers):
            for kind in DROPOUT_KINDS:
                if kind in ("attn_final", "ff_out") and not final:
                    continue
                sites[f"{stack}.{layer}.{kind}"] = (n_tok, 4 * width if kind == "ff_hidden" else width)
    return sites


def timestep_sinusoid(tq, mode):
    """diffusers Timesteps(256, flip_sin_to_cos=True, downscale_freq_shift=1) (EMB 27-78, 675-691):
    [cos(t f_k), sin(t f_k)], f_k = exp(-ln(1e4) k / (128 - 1)), k < 128. Upstream computes it in
    float32; mode 'float64' evaluates the same formula in double. tq: [N] -> [N, 256] float64."""
    half = TIME_CHANNELS // 2
    if mode == "float32":
        exponent = -math.log(10000) * torch.arange(0, half, dtype=torch.float32)
        exponent = exponent / (half - 1)
        arg = tq[:, None].float() * torch.exp(exponent)[None, :]
        emb = torch.cat([torch.sin(arg), torch.cos(arg)], dim=-1)
        return torch.cat([emb[:, half:], emb[:, :half]], dim=-1).to(F64)
    if mode != "float64":
        raise ValueError(f"sinusoid mode must be 'float64' or 'float32', got {mode!r}")
    arg = tq.to(F64)[:, None] * torch.exp(-math.log(10000.0) * torch.arange(half, dtype=F64) / (half - 1))[None, :]
    return torch.cat([torch.cos(arg), torch.sin(arg)], dim=-1)


def timestep_bucket(tau, buckets):
    """(t * num_timestep_buckets).long() on the float32 t upstream holds (FM 315): truncation of a
    float32 product."""
    return int((torch.tensor(float(tau), dtype=torch.float32) * buckets).long())


def tau_from_beta_sample(beta_sample, noise_s=0.999):
    """sample_time (FM 256-258): tau = (noise_s - s) / noise_s in float32, s ~ Beta(1.5, 1)."""
    s = torch.tensor(float(beta_sample), dtype=torch.float32)
    return float((noise_s - s) / noise_s)


class _Sample:
    """One sample's inputs as float64 tensors, validated against the model dimensions."""

    def __init__(self, raw, dims):
        def f64(key, shape):
            t = torch.as_tensor(raw[key]).to(F64)
            if shape is not None and tuple(t.shape) != tuple(shape):
                raise ValueError(f"sample[{key!r}] has shape {tuple(t.shape)}, expected {tuple(shape)}")
            return t

        h, a = dims.horizon, dims.action_dim
        self.vl = f64("vl", None)
        if self.vl.dim() != 2 or self.vl.shape[1] != dims.d_vl:
            raise ValueError(f"sample['vl'] must be [n_vl, {dims.d_vl}], got {tuple(self.vl.shape)}")
        self.state = f64("state", None).reshape(1, -1)
        if self.state.shape[1] != dims.state_dim:
            raise ValueError(f"sample['state'] must have max_state_dim={dims.state_dim} entries")
        self.actions = f64("actions", (h, a))
        self.action_mask = f64("action_mask", (h, a))
        self.noise = f64("noise", (h, a))
        if "tau" in raw:
            self.tau = float(raw["tau"])
        elif "beta_sample" in raw:
            self.tau = tau_from_beta_sample(raw["beta_sample"])
        else:
            raise ValueError("a sample needs 'tau' (the flow time used for x_t) or 'beta_sample'")
        self.tq = int(raw["tq"]) if "tq" in raw else timestep_bucket(self.tau, dims.buckets)
        self.emb_id = int(raw["emb_id"])
        if not 0 <= self.emb_id < dims.n_embodiments:
            raise ValueError(f"emb_id {self.emb_id} outside [0, {dims.n_embodiments})")
        self.dropout = raw.get("dropout")
        if self.dropout is not None:
            expected = dropout_sites(dims, self.vl.shape[0])
            missing = [s for s in expected if s not in self.dropout]
            extra = [s for s in self.dropout if s not in expected]
            if missing or extra:
                raise ValueError(f"dropout masks: missing sites {missing[:4]}, unknown sites {extra[:4]}")

    def keep(self, site):
        return None if self.dropout is None else torch.as_tensor(self.dropout[site])


def _block(P, pre, x, kv, heads, ada_temb, norm3_eps, affine_norms, p_drop, final_dropout, sample, site):
    """One diffusers-style BasicTransformerBlock as GR00T uses it (CAD 150-188).
    ada_temb: the time embedding for ada_norm (DiT) or None (VL blocks: affine LayerNorm norm1)."""
    if ada_temb is not None:
        # AdaLayerNorm(dim) (CAD 44-67, 120): scale, shift = chunk(Linear(silu(temb))); LN without
        # affine with its own default eps 1e-5 (the config's norm_eps does not reach it).
        scale, shift = linear(silu(ada_temb), P[pre + "norm1.linear.weight"], P[pre + "norm1.linear.bias"]).chunk(2)
        h = layer_norm(x, LN_EPS) * (1 + scale) + shift
    else:
        h = layer_norm(x, LN_EPS, P[pre + "norm1.weight"], P[pre + "norm1.bias"])
    src = h if kv is None else kv  # self-attention when no encoder states are passed (AP 2335-2341)
    q = linear(h, P[pre + "attn1.to_q.weight"], P[pre + "attn1.to_q.bias"])
    k = linear(src, P[pre + "attn1.to_k.weight"], P[pre + "attn1.to_k.bias"])
    v = linear(src, P[pre + "attn1.to_v.weight"], P[pre + "attn1.to_v.bias"])
    out = linear(attention(q, k, v, heads), P[pre + "attn1.to_out.0.weight"], P[pre + "attn1.to_out.0.bias"])
    out = dropout(out, sample.keep(site + "attn_out"), p_drop)
    if final_dropout:
        out = dropout(out, sample.keep(site + "attn_final"), p_drop)
    x = x + out
    if affine_norms:
        h = layer_norm(x, norm3_eps, P[pre + "norm3.weight"], P[pre + "norm3.bias"])
    else:
        h = layer_norm(x, norm3_eps)  # DiT norm3: config norm_eps, norm_elementwise_affine False (CAD 136, 207, 243)
    f = gelu_tanh(linear(h, P[pre + "ff.net.0.proj.weight"], P[pre + "ff.net.0.proj.bias"]))
    f = dropout(f, sample.keep(site + "ff_hidden"), p_drop)
    f = linear(f, P[pre + "ff.net.2.weight"], P[pre + "ff.net.2.bias"])
    if final_dropout:
        f = dropout(f, sample.keep(site + "ff_out"), p_drop)
    return x + f


def forward_sample(P, dims, sample, sinusoid):
    """(pred [H, A], target velocity [H, A]) for one validated sample; P maps upstream names to tensors."""
    p = PREFIX
    e = sample.emb_id
    vl = sample.vl
    if dims.use_vlln:
        vl = layer_norm(vl, LN_EPS, P[p + "vlln.weight"], P[p + "vlln.bias"])
        for layer in range(dims.vl_layers):
            vl = _block(P, f"{p}vl_self_attention.transformer_blocks.{layer}.", vl, None, dims.vl_heads, None,
                        LN_EPS, True, dims.vl_dropout, dims.vl_final_dropout, sample, f"vl.{layer}.")

    def mlp(name, x):  # CategorySpecificMLP: layer2(relu(layer1(x))) (FM 44-54)
        hidden = torch.relu(embodiment_linear(x, P[f"{p}{name}.layer1.W"], P[f"{p}{name}.layer1.b"], e))
        return embodiment_linear(hidden, P[f"{p}{name}.layer2.W"], P[f"{p}{name}.layer2.b"], e)

    state_tok = mlp("state_encoder", sample.state)
    tau = sample.tau
    x_t = (1 - tau) * sample.noise + tau * sample.actions
    velocity = sample.actions - sample.noise
    tq = torch.tensor([sample.tq])
    # MultiEmbodimentActionEncoder (FM 56-100): W3(swish(W2([W1(x_t), sinusoid(tq)]))).
    a = embodiment_linear(x_t, P[p + "action_encoder.W1.W"], P[p + "action_encoder.W1.b"], e)
    tau_emb = action_time_sinusoid(tq.expand(dims.horizon), dims.d, sinusoid)
    a = silu(embodiment_linear(torch.cat([a, tau_emb], dim=-1), P[p + "action_encoder.W2.W"],
                               P[p + "action_encoder.W2.b"], e))
    a = embodiment_linear(a, P[p + "action_encoder.W3.W"], P[p + "action_encoder.W3.b"], e)
    if dims.add_pos_embed:
        a = a + P[p + "position_embedding.weight"][: dims.horizon]
    x = torch.cat([state_tok, P[p + "future_tokens.weight"], a], dim=0)

    # TimestepEncoder (CAD 31-41): TimestepEmbedding linear_1 -> SiLU -> linear_2 (EMB 627-672).
    pre = p + "model.timestep_encoder.timestep_embedder."
    temb = linear(silu(linear(timestep_sinusoid(tq, sinusoid), P[pre + "linear_1.weight"], P[pre + "linear_1.bias"])),
                  P[pre + "linear_2.weight"], P[pre + "linear_2.bias"])[0]
    for layer in range(dims.layers):
        kv = vl if dims.cross_layer(layer) else None
        x = _block(P, f"{p}model.transformer_blocks.{layer}.", x, kv, dims.heads, temb, dims.dit_eps, False,
                   dims.dropout, dims.final_dropout, sample, f"dit.{layer}.")
    # Output (CAD 299-306): shift, scale = chunk(proj_out_1(silu(temb))); norm_out eps 1e-6, no affine.
    shift, scale = linear(silu(temb), P[p + "model.proj_out_1.weight"], P[p + "model.proj_out_1.bias"]).chunk(2)
    x = layer_norm(x, NORM_OUT_EPS) * (1 + scale) + shift
    x = linear(x, P[p + "model.proj_out_2.weight"], P[p + "model.proj_out_2.bias"])
    pred = mlp("action_decoder", x)[-dims.horizon:]
    return pred, velocity


def gr00t_loss(P, dims, samples, sinusoid="float64", loss_denominator=None):
    """Differentiable loss over already-validated samples (see the module doc for the combination)."""
    total = 0.0
    mask_count = 0.0
    for sample in samples:
        pred, velocity = forward_sample(P, dims, sample, sinusoid)
        total = total + (sample.action_mask * (pred - velocity) ** 2).sum()
        mask_count += float(sample.action_mask.sum())
    denominator = mask_count if loss_denominator is None else float(loss_denominator)
    if denominator <= 0:
        raise ValueError("the action masks of the step sum to zero: nothing to train on")
    return total / denominator


def gr00t_loss_and_grads(state_dict, config, samples, *, sinusoid="float64", loss_denominator=None, inputs=None):
    """Loss and float64 gradients of every action-head parameter, keyed by upstream name, and of
    `inputs` (further float64 leaves the samples' vl were computed from: tune_visual's backbone).

    state_dict: upstream names (action_head. prefix) -> tensors in upstream layouts; other keys
    (backbone.*) are ignored. config: a released-format config.json dict. samples: list of dicts
    with vl [n_vl, Dvl], state [Sd], actions/action_mask/noise [H, A], tau (or beta_sample), emb_id,
    optionally tq (overrides trunc(1000 tau)) and dropout ({site: keep-mask}).
    sinusoid: 'float64' (default, tight parity) or 'float32' (upstream's own float32 sinusoids)."""
    dims = dims_from_config(config)
    params = f64_params(state_dict, param_shapes(config))
    checked = [_Sample(s, dims) for s in samples]
    return loss_and_grads(lambda: gr00t_loss(params, dims, checked, sinusoid, loss_denominator),
                          {**params, **(inputs or {})})
