"""GR00T-N1.5's frozen Eagle 2.5 backbone in plain torch: frames -> pixels -> SigLIP -> mlp1 ->
Qwen3 (first `select_layer` layers) -> final RMSNorm = the `vl` features.

Written from (Isaac-GR00T @ 4af2b622892f unless named):
  gr00t/experiment/data_config.py 171-181     frame transforms and their parameters
  gr00t/data/transform/video.py 243-341, 423-462, 547-584
                                              crop, resize, colour jitter, /255 and x255->uint8
  gr00t/model/backbone/eagle2_hg_model/image_processing_eagle2_5_vl_fast.py 261-330, 390-436
                                              one 224x224 tile, no thumbnail; rescale+normalize
  .../eagle2_hg_model/preprocessor_config.json do_resize false, mean = std = 0.5, 1/255
  .../eagle2_hg_model/modeling_eagle2_5_vl.py 92-157, 235-269, 311-339
                                              vision tower, mlp1, scatter of image tokens
  .../eagle2_hg_model/config.json             dimensions (SigLIP 1152/27/16, Qwen3-1.7B)
  gr00t/model/backbone/eagle_backbone.py 50-60, 100-113
                                              layers popped to select_layer, hidden_states[select_layer]
  transformers 4.51.3 models/siglip/modeling_siglip.py (SiglipVisionEmbeddings,
  SiglipEncoderLayer, SiglipVisionTransformer) and models/qwen3/modeling_qwen3.py
  (Qwen3RMSNorm, Qwen3RotaryEmbedding, Qwen3Attention, Qwen3MLP, Qwen3Model.forward:
  hidden_states gets each layer's input, then norm(last output) as its last entry).

Parameters are a {name: tensor} dict with the checkpoint's names (see `param_names`); the
reference computes in `dtype` (float64 by default) except where upstream fixes float32 on
purpose: the frame pipeline (float32, uint8 truncation) and the RoPE cos/sin tables.
"""
from dataclasses import dataclass, field

import torch

import nn_ops as F
from resize import resize_aa_bilinear_f32

PREFIX = "backbone.eagle_model."
VISION = PREFIX + "vision_model.vision_model."
LM = PREFIX + "language_model.model."
IMAGE_SIZE = 224          # data_config.py 173 (VideoResize) = eagle config force_image_size
CROP_SCALE = 0.95         # data_config.py 172 (VideoCrop)
JITTER_RANGES = {"brightness": 0.3, "contrast": 0.4, "saturation": 0.5, "hue": 0.08}  # data_config.py 174-180


# ---- configuration ------------------------------------------------------------------
@dataclass
class EagleDims:
    """The dimensions the backbone reads from eagle2_hg_model/config.json + GR00T's backbone_cfg."""
    vision_hidden: int = 1152
    vision_intermediate: int = 4304
    vision_heads: int = 16
    vision_layers: int = 27
    patch: int = 14
    image_size: int = 224
    vision_eps: float = 1e-6
    llm_hidden: int = 2048
    llm_intermediate: int = 6144
    llm_heads: int = 16
    llm_kv_heads: int = 8
    head_dim: int = 128
    rms_eps: float = 1e-6
    rope_theta: float = 1e6
    vocab: int = 151680
    image_token_index: int = 151669
    select_layer: int = 12      # GR00T-N1.5-3B config.json backbone_cfg.select_layer

    @property
    def tokens_per_image(self):
        return (self.image_size // self.patch) ** 2

    @classmethod
    def from_configs(cls, eagle_config, backbone_cfg):
        """eagle_config: the eagle2_hg_model/config.json dict; backbone_cfg: GR00T's backbone_cfg."""
        v, t = eagle_config["vision_config"], eagle_config["text_config"]
        if eagle_config.get("use_pixel_shuffle", False) or eagle_config.get("mlp_connector_layers", 1) != 1:
            raise ValueError("eagle config: only use_pixel_shuffle=false with mlp_connector_layers=1 "
                             "(GR00T-N1.5's mlp1 = one Linear) is implemented")
        if eagle_config.get("select_layer", -1) != -1:
            raise ValueError("eagle config: vision select_layer must be -1 (last_hidden_state after post_layernorm)")
        select = backbone_cfg["select_layer"]
        if select < 1:
            raise ValueError(f"backbone_cfg.select_layer = {select}: GR00T pops LLM layers while "
                             "len(layers) > select_layer, so it must be a layer count >= 1")
        return cls(vision_hidden=v["hidden_size"], vision_intermediate=v["intermediate_size"],
                   vision_heads=v["num_attention_heads"], vision_layers=v["num_hidden_layers"],
                   patch=v["patch_size"], image_size=eagle_config.get("force_image_size") or v["image_size"],
                   vision_eps=v["layer_norm_eps"], llm_hidden=t["hidden_size"],
                   llm_intermediate=t["intermediate_size"], llm_heads=t["num_attention_heads"],
                   llm_kv_heads=t["num_key_value_heads"],
                   head_dim=t.get("head_dim") or t["hidden_size"] // t["num_attention_heads"],
                   rms_eps=t["rms_norm_eps"], rope_theta=t["rope_theta"], vocab=t["vocab_size"],
                   image_token_index=eagle_config["image_token_index"], select_layer=select)


def param_shapes(d: EagleDims, with_head=True):
    """{checkpoint name: shape} of the backbone tensors GR00T stores (layers >= select_layer are
    popped before loading, so they are absent; lm_head is tied to embed_tokens and not stored).
    with_head: SigLIP's attention-pooling head (stored, computed upstream, never used)."""
    D, I, P = d.vision_hidden, d.vision_intermediate, d.patch
    s = {VISION + "embeddings.patch_embedding.weight": (D, 3, P, P),
         VISION + "embeddings.patch_embedding.bias": (D,),
         VISION + "embeddings.position_embedding.weight": (d.tokens_per_image, D),
         VISION + "post_layernorm.weight": (D,), VISION + "post_layernorm.bias": (D,)}
    for i in range(d.vision_layers):
        L = f"{VISION}encoder.layers.{i}."
        for n in ("layer_norm1", "layer_norm2"):
            s[L + n + ".weight"], s[L + n + ".bias"] = (D,), (D,)
        for n in ("q_proj", "k_proj", "v_proj", "out_proj"):
            s[L + f"self_attn.{n}.weight"], s[L + f"self_attn.{n}.bias"] = (D, D), (D,)
        s[L + "mlp.fc1.weight"], s[L + "mlp.fc1.bias"] = (I, D), (I,)
        s[L + "mlp.fc2.weight"], s[L + "mlp.fc2.bias"] = (D, I), (D,)
    if with_head:
        H = VISION + "head."
        s.update({H + "probe": (1, 1, D), H + "attention.in_proj_weight": (3 * D, D),
                  H + "attention.in_proj_bias": (3 * D,), H + "attention.out_proj.weight": (D, D),
                  H + "attention.out_proj.bias": (D,), H + "layernorm.weight": (D,),
                  H + "layernorm.bias": (D,), H + "mlp.fc1.weight": (I, D), H + "mlp.fc1.bias": (I,),
                  H + "mlp.fc2.weight": (D, I), H + "mlp.fc2.bias": (D,)})
    E, Q, K, hd = d.llm_hidden, d.llm_heads * d.head_dim, d.llm_kv_heads * d.head_dim, d.head_dim
    s[PREFIX + "mlp1.0.weight"], s[PREFIX + "mlp1.0.bias"] = (E, D), (E,)
    s[LM + "embed_tokens.weight"] = (d.vocab, E)
    s[LM + "norm.weight"] = (E,)
    for i in range(d.select_layer):
        L = f"{LM}layers.{i}."
        s.update({L + "self_attn.q_proj.weight": (Q, E), L + "self_attn.k_proj.weight": (K, E),
                  L + "self_attn.v_proj.weight": (K, E), L + "self_attn.o_proj.weight": (E, Q),
                  L + "self_attn.q_norm.weight": (hd,), L + "self_attn.k_norm.weight": (hd,),
                  L + "mlp.gate_proj.weight": (d.llm_intermediate, E),
                  L + "mlp.up_proj.weight": (d.llm_intermediate, E),
                  L + "mlp.down_proj.weight": (E, d.llm_intermediate),
                  L + "input_layernorm.weight": (E,), L + "post_attention_layernorm.weight": (E,)})
    return s


# ---- frames -> pixel_values ------------------------------------------------------------
@dataclass
class ColorJitter:
    """One draw of torchvision v2 ColorJitter: the factors and the order they are applied in
    (0 brightness, 1 contrast, 2 saturation, 3 hue). The same draw applies to every view and
    frame of a sample: GR00T stacks them into one tensor before the transform (video.py 170-185)."""
    brightness: float = 1.0
    contrast: float = 1.0
    saturation: float = 1.0
    hue: float = 0.0
    order: list = field(default_factory=lambda: [0, 1, 2, 3])

    @classmethod
    def sample(cls, gen: torch.Generator):
        """Draws as torchvision's ColorJitter.forward does: randperm(4), then one uniform per factor
        in [1 - r, 1 + r] (brightness, contrast, saturation; lower bound clipped at 0) and
        [-0.08, 0.08] for hue."""
        order = torch.randperm(4, generator=gen).tolist()
        r = JITTER_RANGES

        def u(lo, hi):
            return float(torch.empty(1).uniform_(lo, hi, generator=gen))

        return cls(brightness=u(max(0.0, 1 - r["brightness"]), 1 + r["brightness"]),
                   contrast=u(max(0.0, 1 - r["contrast"]), 1 + r["contrast"]),
                   saturation=u(max(0.0, 1 - r["saturation"]), 1 + r["saturation"]),
                   hue=u(-r["hue"], r["hue"]), order=order)


def crop_size(height, width, scale=CROP_SCALE):
    """VideoCrop's size (video.py 272): int(h * scale), int(w * scale) in double, truncated."""
    return int(height * scale), int(width * scale)


def center_crop_offsets(height, width, crop_h, crop_w):
    """torchvision CenterCrop: int(round((H - h) / 2)) with Python's round (half to even):
    256 -> 243 starts at round(6.5) = 6."""
    return int(round((height - crop_h) / 2.0)), int(round((width - crop_w) / 2.0))


def _grayscale(x):
    """torchvision's luma: r*0.2989 + g*0.587 + b*0.114, accumulated in that order (float32)."""
    r, g, b = x.unbind(-3)
    return (r * 0.2989 + g * 0.587 + b * 0.114).unsqueeze(-3)


def _blend(x, other, ratio):
    """torchvision _blend for float images: clamp(x * ratio + other * (1 - ratio), 0, 1)."""
    return (x * ratio + other * (1.0 - ratio)).clamp(0.0, 1.0)


def _rgb_to_hsv(x):
    r, g, _ = x.unbind(-3)
    maxc, _ = x.max(-3)
    minc, _ = x.min(-3)
    eqc = maxc == minc
    span = maxc - minc
    ones = torch.ones_like(maxc)
    s = span / torch.where(eqc, ones, maxc)
    div = torch.where(eqc, ones, span).unsqueeze(-3)
    rc, gc, bc = ((maxc.unsqueeze(-3) - x) / div).unbind(-3)
    max_is_r = maxc == r
    max_is_g = (maxc == g) & ~max_is_r
    max_is_b = ~max_is_r & ~(maxc == g)
    h = (bc - gc) * max_is_r + (rc + 2.0 - bc) * max_is_g + (gc + 4.0 - rc) * max_is_b
    h = torch.fmod(h * (1.0 / 6.0) + 1.0, 1.0)
    return h, s, maxc


def _hsv_to_rgb(h, s, v):
    h6 = h * 6
    i = torch.floor(h6)
    f = h6 - i
    i = i.to(torch.int64) % 6
    sf = s * f
    p = ((1.0 - s) * v).clamp(0.0, 1.0)
    q = ((1.0 - sf) * v).clamp(0.0, 1.0)
    t = ((sf + (1.0 - s)) * v).clamp(0.0, 1.0)
    # sector i -> (r, g, b) among (v, p, q, t): 0 (v,t,p) 1 (q,v,p) 2 (p,v,t) 3 (p,q,v) 4 (t,p,v) 5 (v,p,q)
    vpqt = torch.stack((v, p, q, t), 0)
    pick = torch.tensor([[0, 2, 1, 1, 3, 0], [3, 0, 0, 2, 1, 1], [1, 1, 3, 0, 0, 2]])
    chans = [torch.gather(vpqt, 0, pick[c][i].unsqueeze(0))[0] for c in range(3)]
    return torch.stack(chans, -3)


def color_jitter(x, jit: ColorJitter):
    """torchvision v2 ColorJitter on float images in [0, 1] (functional/_color.py): brightness =
    clamp(x*b); contrast blends with the per-image mean of the luma; saturation blends with the
    luma; hue rotates h in HSV. Every step clamps to [0, 1]."""
    for op in jit.order:
        if op == 0:
            x = (x * jit.brightness).clamp(0.0, 1.0)
        elif op == 1:
            x = _blend(x, _grayscale(x).mean(dim=(-3, -2, -1), keepdim=True), jit.contrast)
        elif op == 2:
            x = _blend(x, _grayscale(x), jit.saturation)
        elif op == 3:
            h, s, v = _rgb_to_hsv(x)
            x = _hsv_to_rgb(torch.remainder(h + jit.hue, 1.0), s, v)
    return x


def frames_to_uint8(frames, crop_offset=None, jitter=None):
    """GR00T's video transforms on one sample: frames uint8 [N, H, W, 3] (its views x time, one
    resolution) -> uint8 [N, 224, 224, 3], in float32 as upstream computes them:
      x = u8 / 255                                   VideoToTensor (video.py 556)
      crop to int(0.95 H) x int(0.95 W)              VideoCrop: centre (eval) or crop_offset (train)
      antialiased bilinear resize to 224x224         VideoResize (torchvision Resize, antialias=True)
      colour jitter if `jitter` (train only)         VideoColorJitter
      u8 = trunc(x * 255)                            VideoToNumpy (video.py 584: .to(torch.uint8))
    crop_offset: (top, left) of the random crop, drawn uniformly in [0, H - h] x [0, W - w]."""
    if frames.dtype != torch.uint8 or frames.dim() != 4 or frames.shape[-1] != 3:
        raise ValueError(f"frames must be uint8 [N, H, W, 3], got {frames.dtype} {list(frames.shape)}")
    x = frames.permute(0, 3, 1, 2).to(torch.float32) / 255.0
    h, w = x.shape[-2:]
    ch, cw = crop_size(h, w)
    top, left = center_crop_offsets(h, w, ch, cw) if crop_offset is None else crop_offset
    if not (0 <= top <= h - ch and 0 <= left <= w - cw):
        raise ValueError(f"crop offset ({top}, {left}) puts a {ch}x{cw} crop outside a {h}x{w} frame")
    x = x[:, :, top:top + ch, left:left + cw]
    x = resize_aa_bilinear_f32(x, IMAGE_SIZE, IMAGE_SIZE)
    if jitter is not None:
        x = color_jitter(x, jitter)
    return (x * 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous()


def uint8_to_pixel_values(u8):
    """Eagle's image processor on a 224x224 uint8 frame [N, 224, 224, 3]: one tile, no resize (the
    tile resize 224 -> 224 is the identity), then the fused rescale+normalize of transformers'
    fast processors, (x - 0.5*255) / (0.5*255) in float32 -> [N, 3, 224, 224]."""
    x = u8.permute(0, 3, 1, 2).to(torch.float32)
    return (x - 127.5) / 127.5


def preprocess(frames, crop_offset=None, jitter=None):
    """frames uint8 [N, H, W, 3] -> pixel_values float32 [N, 3, 224, 224] (eval: centre crop, no
    jitter; train: a random crop offset and a ColorJitter draw)."""
    return uint8_to_pixel_values(frames_to_uint8(frames, crop_offset, jitter))


# ---- SigLIP vision tower + mlp1 -----------------------------------------------------------
def vision_features(params, d: EagleDims, pixel_values, dtype=torch.float64):
    """SigLIP: [N, 3, 224, 224] -> last_hidden_state after post_layernorm [N, 256, Dv]."""
    p = lambda n: F.param(params, VISION + n, dtype)  # noqa: E731
    x = pixel_values.to(dtype)
    x = torch.nn.functional.conv2d(x, p("embeddings.patch_embedding.weight"),
                                   p("embeddings.patch_embedding.bias"), stride=d.patch)
    x = x.flatten(2).transpose(1, 2)                      # token = row * 16 + col
    x = x + p("embeddings.position_embedding.weight")
    hd = d.vision_hidden // d.vision_heads
    for i in range(d.vision_layers):
        L = f"encoder.layers.{i}."
        h = F.layer_norm(x, p(L + "layer_norm1.weight"), p(L + "layer_norm1.bias"), d.vision_eps)
        q, k, v = (F.split_heads(F.linear(h, p(L + f"self_attn.{n}.weight"), p(L + f"self_attn.{n}.bias")),
                                 d.vision_heads) for n in ("q_proj", "k_proj", "v_proj"))
        a = F.merge_heads(F.attention(q, k, v, hd ** -0.5))
        x = x + F.linear(a, p(L + "self_attn.out_proj.weight"), p(L + "self_attn.out_proj.bias"))
        h = F.layer_norm(x, p(L + "layer_norm2.weight"), p(L + "layer_norm2.bias"), d.vision_eps)
        h = F.gelu_tanh(F.linear(h, p(L + "mlp.fc1.weight"), p(L + "mlp.fc1.bias")))
        x = x + F.linear(h, p(L + "mlp.fc2.weight"), p(L + "mlp.fc2.bias"))
    return F.layer_norm(x, p("post_layernorm.weight"), p("post_layernorm.bias"), d.vision_eps)


def image_embeddings(params, d: EagleDims, pixel_values, dtype=torch.float64):
    """extract_feature: mlp1 (one Linear Dv -> D) on the vision tokens -> [N, 256, D]."""
    v = vision_features(params, d, pixel_values, dtype)
    return F.linear(v, F.param(params, PREFIX + "mlp1.0.weight", dtype), F.param(params, PREFIX + "mlp1.0.bias", dtype))


# ---- Qwen3 ---------------------------------------------------------------------------------
def rope_cos_sin(positions, head_dim, theta):
    """Qwen3RotaryEmbedding in float32 (upstream disables autocast for it):
    inv_freq_k = 1 / theta^(2k / head_dim) (float32 pow), angle = inv_freq * pos (float32),
    cos/sin of [angle, angle] (the halves repeated: rotate-half pairs i and i + head_dim/2)."""
    exponents = torch.arange(0, head_dim, 2, dtype=torch.int64).to(torch.float32) / head_dim
    inv_freq = 1.0 / (theta ** exponents)
    angles = positions.to(torch.float32)[..., None] * inv_freq
    emb = torch.cat((angles, angles), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def qwen3_layer(params, L, d: EagleDims, x, cos, sin, key_mask, dtype):
    p = lambda n: F.param(params, L + n, dtype)  # noqa: E731
    b, n, _ = x.shape
    h = F.rms_norm(x, p("input_layernorm.weight"), d.rms_eps)
    q = F.linear(h, p("self_attn.q_proj.weight")).reshape(b, n, d.llm_heads, d.head_dim)
    k = F.linear(h, p("self_attn.k_proj.weight")).reshape(b, n, d.llm_kv_heads, d.head_dim)
    v = F.linear(h, p("self_attn.v_proj.weight")).reshape(b, n, d.llm_kv_heads, d.head_dim)
    q = F.rms_norm(q, p("self_attn.q_norm.weight"), d.rms_eps).transpose(1, 2)   # per head, over head_dim
    k = F.rms_norm(k, p("self_attn.k_norm.weight"), d.rms_eps).transpose(1, 2)
    v = v.transpose(1, 2)
    c, s = cos[None, None].to(dtype), sin[None, None].to(dtype)   # [1, 1, N, hd]
    q = q * c + rotate_half(q) * s
    k = k * c + rotate_half(k) * s
    group = d.llm_heads // d.llm_kv_heads                  # q head j reads kv head j // group
    k = k.repeat_interleave(group, dim=1)
    v = v.repeat_interleave(group, dim=1)
    a = F.merge_heads(F.attention(q, k, v, d.head_dim ** -0.5, key_mask=key_mask))
    x = x + F.linear(a, p("self_attn.o_proj.weight"))
    h = F.rms_norm(x, p("post_attention_layernorm.weight"), d.rms_eps)
    h = F.silu(F.linear(h, p("mlp.gate_proj.weight"))) * F.linear(h, p("mlp.up_proj.weight"))
    return x + F.linear(h, p("mlp.down_proj.weight"))


def language_features(params, d: EagleDims, inputs_embeds, attention_mask=None, dtype=torch.float64,
                      return_hidden_states=False):
    """The first `select_layer` Qwen3 layers and the final norm: hidden_states[select_layer].

    inputs_embeds [B, N, D]; attention_mask [B, N] (1 real, 0 left padding) or None. Positions
    are 0..N-1 whatever the padding (upstream passes no position_ids); a padded key is never
    attended; a padded query row's attention output is zero (flash-attention's unpadding)."""
    b, n, _ = inputs_embeds.shape
    positions = torch.arange(n)
    cos, sin = rope_cos_sin(positions, d.head_dim, d.rope_theta)
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    key_mask = causal[None, None]
    if attention_mask is not None:
        real = attention_mask.to(torch.bool)
        key_mask = key_mask & real[:, None, None, :] & real[:, None, :, None]
    x = inputs_embeds.to(dtype)
    hidden = []
    for i in range(d.select_layer):
        hidden.append(x)
        x = qwen3_layer(params, f"{LM}layers.{i}.", d, x, cos, sin, key_mask, dtype)
    out = F.rms_norm(x, F.param(params, LM + "norm.weight", dtype), d.rms_eps)
    hidden.append(out)
    return (out, hidden) if return_hidden_states else out


def vl_features(params, d: EagleDims, input_ids, pixel_values, attention_mask=None, dtype=torch.float64):
    """The backbone's `backbone_features` [B, N, D] for token ids [B, N] and the samples' images
    pixel_values [n_images, 3, 224, 224] (in order: sample 0's views, then sample 1's, ...).

    Every id == image_token_index is replaced, in order, by the next image token embedding
    (modeling_eagle2_5_vl.py 243-259: input_embeds * 0 + vit_embeds, i.e. the vision output)."""
    emb = F.param(params, LM + "embed_tokens.weight", dtype)[input_ids]
    selected = input_ids == d.image_token_index
    n_needed = int(selected.sum())
    vit = image_embeddings(params, d, pixel_values, dtype).reshape(-1, d.llm_hidden)
    if n_needed != vit.shape[0]:
        raise ValueError(f"{n_needed} image-context tokens (id {d.image_token_index}) in input_ids but "
                         f"{pixel_values.shape[0]} images x {d.tokens_per_image} tokens = {vit.shape[0]}")
    emb = emb.clone()
    emb[selected] = vit
    return language_features(params, d, emb, attention_mask, dtype)


def flops_per_image(d: EagleDims):
    """Multiply-adds x 2 of the vision tower + mlp1 for one 224x224 image (attention included)."""
    n, D, I = d.tokens_per_image, d.vision_hidden, d.vision_intermediate
    patch = 2 * n * D * 3 * d.patch * d.patch
    per_layer = 2 * n * (4 * D * D + 2 * D * I) + 2 * 2 * n * n * D
    return patch + d.vision_layers * per_layer + 2 * n * D * d.llm_hidden


def flops_per_token(d: EagleDims, context):
    """Multiply-adds x 2 of the LLM layers for one token attending to `context` tokens."""
    E, q, kv, hd = d.llm_hidden, d.llm_heads, d.llm_kv_heads, d.head_dim
    proj = 2 * E * (q * hd + 2 * kv * hd) + 2 * q * hd * E
    mlp = 2 * 3 * E * d.llm_intermediate
    attn = 2 * 2 * q * hd * context
    return d.select_layer * (proj + mlp + attn)

