"""PyTorch parity for one model step (MODEL.md "Dump").

Recomputes the loss and every gradient of a one-micro-batch dump with torch autograd in float64
from the dump file and MODEL.md's math alone, over the packed micro-batch as MODEL.md states it
(gr00t's math is upstream GR00T-N1.5's; its parity against upstream's own computation is
tests/upstream/gr00t_dump_parity.py, and this packed formulation is also the PyTorch eager
baseline of bench_torch_step.py), and checks embtrain's fp32 values against them:
per tensor, rel = max|embtrain - torch| / max(max|torch|, 1e-3 * G) must be <= 1e-4, where G
is the largest |gradient| of the step. The floor matters only for tensors whose exact
gradient is zero up to round-off: the biases of attention keys without qk-norm (softmax is
invariant to adding q·b_k to every score of a row), compared on the step's gradient scale.

    parity_torch.py DUMP.h5
    parity_torch.py --tool model_dump_tool --deck inputs/tiny_wan.in [--tool-args ...]
The second form makes the dump first (in a temporary directory), then checks it.
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

EPS = 1e-6
TOL = 1e-4


# ---- MODEL.md "Conventions" ----------------------------------------------------------
def layer_norm(x, w=None, b=None, eps=EPS):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    y = (x - mu) / torch.sqrt(var + eps)
    return y * w + b if w is not None else y


def rms_norm(x, w):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * torch.sigmoid(x)


def sinus(t, n, shift=0, cos_first=True):
    """sinus(t, n) of MODEL.md; shift 1: sinus_ts (diffusers' Timesteps); cos_first False: sinus_sc."""
    half = n // 2
    f = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=t.dtype) / (half - shift))
    a = t[:, None] * f[None, :]
    halves = [torch.cos(a), torch.sin(a)]
    return torch.cat(halves if cos_first else halves[::-1], dim=1)


class Params:
    def __init__(self, tensors):
        self.t = tensors

    def __getitem__(self, name):
        return self.t[name]

    def lin(self, x, n):
        return x @ self.t[n + ".weight"] + self.t[n + ".bias"]

    def lin_emb(self, x, n, groups):
        """Per-embodiment linear; groups = [(embodiment, row indices)] of the rows of x."""
        w, b = self.t[n + ".weight"], self.t[n + ".bias"]
        out = x.new_zeros(x.shape[0], w.shape[2])
        for e, rows in groups:
            out = out.index_put((rows,), x[rows] @ w[e] + b[e])
        return out


def emb_groups(emb):
    return [(int(e), torch.tensor(np.nonzero(emb == e)[0])) for e in np.unique(emb)]


# ---- masks and attention ("Packed batch") --------------------------------------------
def self_mask(kind, seq, blk, grp):
    s = (seq[:, None] == seq[None, :]) & (seq[:, None] >= 0)
    bi, bj, gi, gj = blk[:, None], blk[None, :], grp[:, None], grp[None, :]
    if kind == "full":
        return s
    if kind == "block_causal":
        clean = (gi == 0) & (gj == 0) & (bj <= bi)
        noisy = (gi == 1) & (((gj == 0) & (bj < bi)) | ((gj == 1) & (bj == bi)))
        return s & (clean | noisy)
    if kind == "prefix":
        return s & ((gj == 0) | (gi == 1))
    raise ValueError(kind)


def cross_mask(seq, cseq):
    return (seq[:, None] == cseq[None, :]) & (seq[:, None] >= 0)


class Mask:
    """A dense mask and its additive form; rows with no allowed key (padding) output 0."""

    def __init__(self, allowed, dt):
        self.real = allowed.any(1)[:, None].to(dt)
        ok = allowed | ~allowed.any(1)[:, None]
        self.bias = torch.zeros(allowed.shape, dtype=dt).masked_fill(~ok, float("-inf"))


def attention(q, k, v, mask, H):
    T, D = q.shape
    hd = D // H
    qh, kh, vh = (x.reshape(x.shape[0], H, hd).transpose(0, 1) for x in (q, k, v))
    s = qh @ kh.transpose(1, 2) / math.sqrt(hd) + mask.bias
    o = (torch.softmax(s, -1) @ vh).transpose(0, 1).reshape(T, D)
    return o * mask.real


def rope_angles(pos, hd, dt, one_d):
    """3d RoPE angles, or 1d over all pairs (position pos[:, 0]) on the tokens where one_d."""
    pairs = hd // 2
    ch = pairs // 3
    cf = pairs - 2 * ch
    angles = []
    for axis, c in ((0, cf), (1, ch), (2, ch)):
        k = torch.arange(c, dtype=torch.float64)
        angles.append(pos[:, axis:axis + 1].double() * 10000.0 ** (-k[None, :] / c))
    phi = torch.cat(angles, 1)  # [T, pairs]
    k = torch.arange(pairs, dtype=torch.float64)
    phi = torch.where(one_d[:, None], pos[:, :1].double() * 10000.0 ** (-k[None, :] / pairs), phi)
    return torch.cos(phi).to(dt)[:, None, :], torch.sin(phi).to(dt)[:, None, :]


def rope(x, cos_sin, H):
    T, D = x.shape
    cos, sin = cos_sin
    xr = x.reshape(T, H, D // H // 2, 2)
    x0, x1 = xr[..., 0], xr[..., 1]
    return torch.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], -1).reshape(T, D)


def kind_index(seq, kind, k):
    """For tokens of kind k: their index among that sample's tokens of kind k (token order)."""
    out, count = np.full(len(seq), -1), {}
    for t in range(len(seq)):
        if kind[t] == k:
            out[t] = count.get(seq[t], 0)
            count[seq[t]] = out[t] + 1
    return out


def tensor(x, dt):
    return torch.tensor(np.asarray(x)).to(dt)


def index(x):
    return torch.tensor(np.asarray(x), dtype=torch.long)


# ---- gr00t ---------------------------------------------------------------------------
GR00T_EPS, GR00T_NORM_OUT_EPS = 1e-5, 1e-6


def dropout_rows(keep, seq, dt, stack):
    """Per site of `stack` ("vl" reads the context rows, "dit" the query rows), the keep-mask rows
    of the packed tokens whose sample slots are `seq`: a sample's masks are in its token order,
    which is the packed order of its tokens; padding keeps all."""
    if keep is None:
        return None
    sites = {}
    for site in (name for name in keep[0] if name.startswith(stack + ".")):
        width = keep[0][site].shape[1]
        rows = np.ones((len(seq), width))
        for s, masks in keep.items():
            rows[seq == s] = masks[site]
        sites[site] = tensor(rows, dt)
    return sites


def prepare_gr00t(a, bt, keep, dt):
    """Everything of the batch that does not depend on the parameters."""
    seq, kind = bt["seq"], bt["kind"]
    c = {"T": len(seq)}
    tau = tensor(bt["tau"], dt)[:, None, None]
    actions, noise, mask = (tensor(bt[k], dt) for k in ("actions", "noise", "action_mask"))
    x_act = (1 - tau) * noise + tau * actions
    c["sin_t"] = sinus(tensor(bt["temb_t"], dt), 256, shift=1)
    c["state_rows"] = index(np.nonzero(kind == 3)[0])
    s = seq[kind == 3]
    c["state"], c["state_groups"] = tensor(bt["state"][s], dt), emb_groups(bt["emb_id"][s])
    fut = kind_index(seq, kind, 4)
    c["future_rows"], c["future_k"] = index(np.nonzero(kind == 4)[0]), index(fut[kind == 4])
    act = kind_index(seq, kind, 2)
    sel = np.nonzero(kind == 2)[0]
    s_of, h_of = seq[sel], act[sel]
    c["act_rows"], c["act_h"] = index(sel), index(h_of)
    c["act_groups"] = emb_groups(bt["emb_id"][s_of])
    c["x_act"] = x_act[s_of, h_of]
    c["sin_tq"] = sinus(tensor(bt["tq"], dt)[s_of], a["d_model"], cos_first=False)
    c["target"] = actions[s_of, h_of] - noise[s_of, h_of]
    c["mask"], c["mask_sum"] = mask[s_of, h_of], mask.sum()
    c["vl"] = tensor(bt["vl"], dt)
    cseq = index(bt["cseq"])
    tseq, blk, grp = index(seq), index(bt["blk"]), index(bt["grp"])
    c["vl_mask"] = Mask(self_mask("full", cseq, cseq, cseq), dt)
    c["self_mask"] = Mask(self_mask(a["self_mask"], tseq, blk, grp), dt)
    c["cross_mask"] = Mask(cross_mask(tseq, cseq), dt)
    c["drop_vl"], c["drop_dit"] = dropout_rows(keep, bt["cseq"], dt, "vl"), dropout_rows(keep, seq, dt, "dit")
    return c


def gr00t_loss(P, a, c):
    D, H = a["d_model"], a["n_heads"]

    def dropped(y, drop, site, kind, p):
        return y if drop is None else y * drop[f"{site}.{kind}"] / (1 - p)

    def block(x, h, kv, p, attn, mask, heads, norm, drop, site, p_drop):
        """x + drop(drop(Attn·o)) then + drop(gelu_tanh(norm(x)·fc1)·fc2 with its hidden dropped)."""
        src = h if kv is None else kv
        att = attention(P.lin(h, f"{p}{attn}.q"), P.lin(src, f"{p}{attn}.k"), P.lin(src, f"{p}{attn}.v"), mask, heads)
        out = dropped(dropped(P.lin(att, f"{p}{attn}.o"), drop, site, "attn_out", p_drop), drop, site, "attn_final",
                      p_drop)
        x = x + out
        f = dropped(gelu_tanh(P.lin(norm(x), p + "ffn.fc1")), drop, site, "ff_hidden", p_drop)
        return x + dropped(P.lin(f, p + "ffn.fc2"), drop, site, "ff_out", p_drop)

    temb = P.lin(silu(P.lin(c["sin_t"], "time_enc.fc1")), "time_enc.fc2")
    st = P.lin_emb(torch.relu(P.lin_emb(c["state"], "state_enc.fc1", c["state_groups"])), "state_enc.fc2",
                   c["state_groups"])
    g = c["act_groups"]
    a1 = P.lin_emb(c["x_act"], "action_enc.fc1", g)
    a3 = P.lin_emb(silu(P.lin_emb(torch.cat([a1, c["sin_tq"]], 1), "action_enc.fc2", g)), "action_enc.fc3", g)
    x = c["sin_t"].new_zeros(c["T"], D)
    x = x.index_put((c["state_rows"],), st)
    x = x.index_put((c["future_rows"],), P["future_tokens"][c["future_k"]])
    x = x.index_put((c["act_rows"],), a3 + P["pos_emb"][c["act_h"]])

    ctx = layer_norm(c["vl"], P["vlln.weight"], P["vlln.bias"], GR00T_EPS)
    for l in range(a["n_layers_vl"]):
        p = f"vl_blocks.{l}."
        h = layer_norm(ctx, P[p + "ln1.weight"], P[p + "ln1.bias"], GR00T_EPS)
        ctx = block(ctx, h, None, p, "attn", c["vl_mask"], a["n_heads_vl"],
                    lambda y: layer_norm(y, P[p + "ln2.weight"], P[p + "ln2.bias"], GR00T_EPS), c["drop_vl"],
                    f"vl.{l}", a["dropout_vl"])

    stemb = silu(temb)
    for l in range(a["n_layers"]):
        p = f"blocks.{l}."
        sc, sh = P.lin(stemb, p + "norm1.linear").chunk(2, dim=1)
        h = layer_norm(x, eps=GR00T_EPS) * (1 + sc) + sh
        kv, m = (ctx, c["cross_mask"]) if l % 2 == 0 else (None, c["self_mask"])
        x = block(x, h, kv, p, "attn1", m, H, lambda y: layer_norm(y, eps=GR00T_EPS), c["drop_dit"], f"dit.{l}",
                  a["dropout"])

    shift, scale = P.lin(stemb[c["act_rows"]], "proj_out_1").chunk(2, dim=1)
    y = P.lin(layer_norm(x[c["act_rows"]], eps=GR00T_NORM_OUT_EPS) * (1 + scale) + shift, "proj_out_2")
    v = P.lin_emb(torch.relu(P.lin_emb(y, "action_dec.fc1", g)), "action_dec.fc2", g)
    return (c["mask"] * (v - c["target"]) ** 2).sum() / c["mask_sum"]


# ---- wan -----------------------------------------------------------------------------
def prepare_wan(a, bt, dt):
    seq, kind = bt["seq"], bt["kind"]
    c = {"T": len(seq)}
    sigma = tensor(bt["sigma"], dt)
    video, acts, noisy = (np.nonzero(m)[0] for m in (((kind == 0) | (kind == 1)), kind == 2, kind == 1))
    x0, vn = tensor(bt["video_x0"], dt), tensor(bt["video_noise"], dt)
    ax0, an = tensor(bt["act_x0"], dt), tensor(bt["act_noise"], dt)
    sv, sa = sigma[index(video)][:, None], sigma[index(acts)][:, None]
    # Each row's loss weight w over its sample's element count of its kind: the step's loss is the
    # mean over samples of upstream's per-sample means.
    weight = tensor(bt["loss_weight"], dt)
    nseq, aseq = seq[noisy], seq[acts]
    per_noisy = np.bincount(nseq)[nseq] * a["out_channels"] * (a["patch_dim"] // a["latent_channels"])
    per_act = np.bincount(aseq, minlength=1)[aseq] * a["action_dim"]
    c["w_noisy"] = weight[index(noisy)][:, None] / tensor(per_noisy, dt)[:, None]
    c["w_act"] = weight[index(acts)][:, None] / tensor(per_act, dt)[:, None]
    c["n_samples"] = len(np.unique(nseq))
    c["vin"], c["ain"] = (1 - sv) * x0 + sv * vn, (1 - sa) * ax0 + sa * an
    c["video_rows"], c["act_rows"], c["noisy_rows"] = index(video), index(acts), index(noisy)
    row_of = {t: r for r, t in enumerate(video)}
    vrows = index([row_of[t] for t in noisy])
    # Patch elements (t, h, w, c): head.proj predicts channels c < out_channels.
    C, Co = a["latent_channels"], a["out_channels"]
    cols = index([p * C + ch for p in range(a["patch_dim"] // C) for ch in range(Co)])
    c["target_v"] = (vn[vrows] - x0[vrows])[:, cols]
    c["target_a"] = an - ax0
    c["sin_t"] = sinus(tensor(bt["temb_t"], dt), 256)
    c["sin_ta"] = sinus(tensor(bt["temb_t"], dt)[index(acts)], a["d_model"], cos_first=False)  # 1000·σ of each action
    c["txt"] = tensor(bt["txt"], dt)
    tseq, blk, grp = index(seq), index(bt["blk"]), index(bt["grp"])
    c["rope"] = rope_angles(index(bt["pos"]), a["d_model"] // a["n_heads"], dt, torch.from_numpy(kind == 2))
    c["self_mask"] = Mask(self_mask(a["self_mask"], tseq, blk, grp), dt)
    c["cross_mask"] = Mask(cross_mask(tseq, index(bt["cseq"])), dt)
    return c


def wan_loss(P, a, c):
    D, H = a["d_model"], a["n_heads"]
    x = c["vin"].new_zeros(c["T"], D)
    x = x.index_put((c["video_rows"],), P.lin(c["vin"], "patch_embed"))
    a1 = P.lin(c["ain"], "action_enc.fc1")
    x = x.index_put((c["act_rows"],), P.lin(silu(P.lin(torch.cat([a1, c["sin_ta"]], 1), "action_enc.fc2")),
                                           "action_enc.fc3"))
    temb = P.lin(silu(P.lin(c["sin_t"], "time_enc.fc1")), "time_enc.fc2")
    tp = P.lin(silu(temb), "time_proj")
    ctx = P.lin(gelu_tanh(P.lin(c["txt"], "text_emb.fc1")), "text_emb.fc2")
    for l in range(a["n_layers"]):
        p = f"blocks.{l}."
        sh1, sc1, g1, sh2, sc2, g2 = (tp + P[p + "modulation"].reshape(1, -1)).chunk(6, dim=1)
        h = layer_norm(x) * (1 + sc1) + sh1
        q = rope(rms_norm(P.lin(h, p + "attn1.q"), P[p + "attn1.norm_q.weight"]), c["rope"], H)
        k = rope(rms_norm(P.lin(h, p + "attn1.k"), P[p + "attn1.norm_k.weight"]), c["rope"], H)
        x = x + g1 * P.lin(attention(q, k, P.lin(h, p + "attn1.v"), c["self_mask"], H), p + "attn1.o")
        h = layer_norm(x, P[p + "norm3.weight"], P[p + "norm3.bias"])
        q = rms_norm(P.lin(h, p + "attn2.q"), P[p + "attn2.norm_q.weight"])
        k = rms_norm(P.lin(ctx, p + "attn2.k"), P[p + "attn2.norm_k.weight"])
        x = x + P.lin(attention(q, k, P.lin(ctx, p + "attn2.v"), c["cross_mask"], H), p + "attn2.o")
        h = layer_norm(x) * (1 + sc2) + sh2
        x = x + g2 * P.lin(gelu_tanh(P.lin(h, p + "ffn.fc1")), p + "ffn.fc2")

    hm = layer_norm(x) * (1 + P["head.modulation"][1] + temb) + P["head.modulation"][0] + temb
    loss = (c["w_noisy"] * (P.lin(hm[c["noisy_rows"]], "head.proj") - c["target_v"]) ** 2).sum() / c["n_samples"]
    if len(c["act_rows"]):
        ya = P.lin(torch.relu(P.lin(x[c["act_rows"]], "action_dec.fc1")), "action_dec.fc2")
        loss = loss + a["action_loss_weight"] * (c["w_act"] * (ya - c["target_a"]) ** 2).sum() / c["n_samples"]
    return loss


def read_dump(path, dt):
    """Attributes, parameters (leaf tensors of dtype dt), embtrain's gradients, the arrays of the
    dump's one micro-batch."""
    with h5py.File(path, "r") as f:
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        a = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.items()}
        if a["micro_batches"] != 1:
            raise ValueError(f"{path}: this check reads one micro-batch, the dump has {a['micro_batches']}")
        tensors = {k: torch.tensor(np.array(f["params"][k])).to(dt).requires_grad_() for k in f["params"]}
        ours = {k: np.array(f["grads"][k]) for k in f["grads"]}
        mb = f["micro_batch"]["0"]
        bt = {k: np.array(mb[k]) for k in mb if isinstance(mb[k], h5py.Dataset)}
        keep = None  # gr00t's dropout keep-masks per sample slot and site
        if "dropout" in mb:
            keep = {int(s): {site: np.array(m) for site, m in mb["dropout"][s].items()} for s in mb["dropout"]}
    return a, tensors, ours, bt, keep


def family_loss(a, bt, keep, dt):
    """(loss function of Params, prepared batch) for the dump's family."""
    if a["family"] == "gr00t":
        return gr00t_loss, prepare_gr00t(a, bt, keep, dt)
    return wan_loss, prepare_wan(a, bt, dt)


# ---- the check -----------------------------------------------------------------------
def rel_error(ours, ref, floor):
    return float(np.max(np.abs(ours - ref))) / max(float(np.max(np.abs(ref))), floor) if ref.size else 0.0


def check(path):
    a, tensors, ours, bt, keep = read_dump(path, torch.float64)
    loss_fn, prepared = family_loss(a, bt, keep, torch.float64)
    loss = loss_fn(Params(tensors), a, prepared)
    loss.backward()
    worst, failures = ("", 0.0), []
    loss_rel = abs(a["loss"] - loss.item()) / max(abs(loss.item()), 1e-30)
    if loss_rel > TOL:
        failures.append(f"loss: embtrain {a['loss']:.8g} torch {loss.item():.8g} rel {loss_rel:.3g}")
    assert set(ours) == set(tensors), "params and grads list different tensors"
    refs = {name: (t.grad.numpy() if t.grad is not None else np.zeros(t.shape)) for name, t in tensors.items()}
    scale = max(float(np.max(np.abs(r), initial=0.0)) for r in refs.values())
    for name, ref in refs.items():
        if np.max(np.abs(ref), initial=0.0) == 0.0:
            failures.append(f"{name}: torch gradient is all zero (tensor unused?)")
            continue
        rel = rel_error(ours[name], ref, 1e-3 * scale)
        worst = max(worst, (name, rel), key=lambda w: w[1])
        if rel > TOL:
            failures.append(f"{name}: rel {rel:.3g}")
    n_tok, n_seq = len(bt["seq"]), len(set(bt["seq"][bt["seq"] >= 0].tolist()))
    print(f"{path}: {a['family']} ({a['self_mask']} self mask), {n_seq} samples in {n_tok} tokens, "
          f"loss {a['loss']:.6f} vs torch {loss.item():.6f} (rel {loss_rel:.2e}), {len(tensors)} gradients, "
          f"worst rel {worst[1]:.2e} ({worst[0]})")
    for line in failures:
        print("FAIL", line)
    return not failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dump", nargs="?")
    ap.add_argument("--tool")
    ap.add_argument("--deck")
    ap.add_argument("--tool-args", nargs=argparse.REMAINDER, default=[])
    args = ap.parse_args()
    if args.dump:
        return 0 if check(args.dump) else 1
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "dump.h5")
        subprocess.run([args.tool, args.deck, path] + args.tool_args, check=True)
        return 0 if check(path) else 1


if __name__ == "__main__":
    sys.exit(main())
