"""PyTorch parity for one model step (MODEL.md "Dump").

Recomputes the loss and every gradient of a dump with torch autograd in float64 from the
dump file and MODEL.md's math alone, and checks embtrain's fp32 values against them:
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

torch.set_default_dtype(torch.float64)
EPS = 1e-6
TOL = 1e-4


# ---- MODEL.md "Conventions" ----------------------------------------------------------
def layer_norm(x, w=None, b=None):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    y = (x - mu) / torch.sqrt(var + EPS)
    return y * w + b if w is not None else y


def rms_norm(x, w):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + EPS) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def silu(x):
    return x * torch.sigmoid(x)


def sinus(t, n):
    half = n // 2
    f = torch.exp(-math.log(10000.0) * torch.arange(half) / half)
    a = t[:, None] * f[None, :]
    return torch.cat([torch.cos(a), torch.sin(a)], dim=1)


class Params:
    def __init__(self, tensors):
        self.t = tensors

    def __getitem__(self, name):
        return self.t[name]

    def lin(self, x, n):
        return x @ self.t[n + ".weight"] + self.t[n + ".bias"]

    def lin_emb(self, x, n, emb):
        w, b = self.t[n + ".weight"][emb], self.t[n + ".bias"][emb]
        return torch.einsum("ni,nio->no", x, w) + b


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


def attention(q, k, v, allowed, H):
    T, D = q.shape
    hd = D // H
    qh, kh, vh = (x.reshape(x.shape[0], H, hd).transpose(0, 1) for x in (q, k, v))
    s = qh @ kh.transpose(1, 2) / math.sqrt(hd)
    real = allowed.any(1)  # padding rows have no key: output 0
    a = allowed | ~real[:, None]
    s = s.masked_fill(~a[None], float("-inf"))
    o = (torch.softmax(s, -1) @ vh).transpose(0, 1).reshape(T, D)
    return o * real[:, None]


def rope_3d(x, pos, H):
    T, D = x.shape
    hd = D // H
    pairs = hd // 2
    ch = pairs // 3
    cf = pairs - 2 * ch
    angles = []
    for axis, c in ((0, cf), (1, ch), (2, ch)):
        k = torch.arange(c)
        angles.append(pos[:, axis:axis + 1].double() * 10000.0 ** (-k[None, :] / c))
    phi = torch.cat(angles, 1)  # [T, pairs]
    cos, sin = torch.cos(phi)[:, None, :], torch.sin(phi)[:, None, :]
    xr = x.reshape(T, H, pairs, 2)
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


# ---- gr00t ---------------------------------------------------------------------------
def gr00t_loss(P, a, bt):
    seq, kind = bt["seq"], bt["kind"]
    T, D, H = len(seq), a["d_model"], a["n_heads"]
    tseq = torch.tensor(seq)
    emb, tau, tq = bt["emb_id"], torch.tensor(bt["tau"]).double(), torch.tensor(bt["tq"]).double()
    actions, noise, mask = (torch.tensor(bt[k]).double() for k in ("actions", "noise", "action_mask"))
    x_act = (1 - tau[:, None, None]) * noise + tau[:, None, None] * actions

    temb = P.lin(silu(P.lin(sinus(torch.tensor(bt["temb_t"]).double(), 256), "time_enc.fc1")), "time_enc.fc2")
    rows = []
    fut, act = kind_index(seq, kind, 4), kind_index(seq, kind, 2)
    for t in range(T):
        s = seq[t]
        if kind[t] == 3:
            st = torch.tensor(bt["state"][s:s + 1]).double()
            rows.append(P.lin_emb(torch.relu(P.lin_emb(st, "state_enc.fc1", emb[s:s + 1])), "state_enc.fc2",
                                  emb[s:s + 1])[0])
        elif kind[t] == 4:
            rows.append(P["future_tokens"][fut[t]])
        elif kind[t] == 2:
            h, e = act[t], emb[s:s + 1]
            a1 = P.lin_emb(x_act[s, h][None], "action_enc.fc1", e)
            cat = torch.cat([a1, sinus(tq[s:s + 1], D)], 1)
            a3 = P.lin_emb(silu(P.lin_emb(cat, "action_enc.fc2", e)), "action_enc.fc3", e)
            rows.append(a3[0] + P["pos_emb"][h])
        else:
            rows.append(torch.zeros(D))
    x = torch.stack(rows)

    cseq = torch.tensor(bt["cseq"])
    c = layer_norm(torch.tensor(bt["vl"]).double(), P["vlln.weight"], P["vlln.bias"])
    vl_mask = self_mask("full", cseq, cseq, cseq)
    for l in range(a["n_layers_vl"]):
        p = f"vl_blocks.{l}."
        h = layer_norm(c, P[p + "ln1.weight"], P[p + "ln1.bias"])
        c = c + P.lin(attention(P.lin(h, p + "attn.q"), P.lin(h, p + "attn.k"), P.lin(h, p + "attn.v"), vl_mask,
                                a["n_heads_vl"]), p + "attn.o")
        h = layer_norm(c, P[p + "ln2.weight"], P[p + "ln2.bias"])
        c = c + P.lin(gelu_tanh(P.lin(h, p + "ffn.fc1")), p + "ffn.fc2")

    stemb = silu(temb)
    blk, grp = torch.tensor(bt["blk"]), torch.tensor(bt["grp"])
    smask = self_mask(a["self_mask"], tseq, blk, grp)
    xmask = cross_mask(tseq, cseq)
    for l in range(a["n_layers"]):
        p = f"blocks.{l}."
        sc, sh = P.lin(stemb, p + "norm1.linear").chunk(2, dim=1)
        h = layer_norm(x) * (1 + sc) + sh
        src, m = (c, xmask) if l % 2 == 0 else (h, smask)
        att = attention(P.lin(h, p + "attn1.q"), P.lin(src, p + "attn1.k"), P.lin(src, p + "attn1.v"), m, H)
        x = x + P.lin(att, p + "attn1.o")
        x = x + P.lin(gelu_tanh(P.lin(layer_norm(x, P[p + "norm3.weight"], P[p + "norm3.bias"]), p + "ffn.fc1")),
                      p + "ffn.fc2")

    shift, scale = P.lin(stemb, "proj_out_1").chunk(2, dim=1)
    y = P.lin(layer_norm(x) * (1 + scale) + shift, "proj_out_2")
    sel = np.nonzero(kind == 2)[0]
    s_of, h_of = seq[sel], act[sel]
    e = emb[s_of]
    v = P.lin_emb(torch.relu(P.lin_emb(y[sel], "action_dec.fc1", e)), "action_dec.fc2", e)
    target = actions[s_of, h_of] - noise[s_of, h_of]
    m = mask[s_of, h_of]
    return (m * (v - target) ** 2).sum() / mask.sum()


# ---- wan -----------------------------------------------------------------------------
def wan_loss(P, a, bt):
    seq, kind = bt["seq"], bt["kind"]
    T, D, H = len(seq), a["d_model"], a["n_heads"]
    sigma = torch.tensor(bt["sigma"]).double()
    video = np.nonzero((kind == 0) | (kind == 1))[0]
    acts = np.nonzero(kind == 2)[0]
    x0, vn = torch.tensor(bt["video_x0"]).double(), torch.tensor(bt["video_noise"]).double()
    ax0, an = torch.tensor(bt["act_x0"]).double(), torch.tensor(bt["act_noise"]).double()
    sv, sa = sigma[video][:, None], sigma[acts][:, None]
    vin = (1 - sv) * x0 + sv * vn
    ain = (1 - sa) * ax0 + sa * an

    x = torch.zeros(T, D)
    x = x.index_put((torch.tensor(video),), P.lin(vin, "patch_embed"))
    x = x.index_put((torch.tensor(acts, dtype=torch.long),), P.lin(ain, "action_enc"))
    temb = P.lin(silu(P.lin(sinus(torch.tensor(bt["temb_t"]).double(), 256), "time_enc.fc1")), "time_enc.fc2")
    tp = P.lin(silu(temb), "time_proj")
    c = P.lin(gelu_tanh(P.lin(torch.tensor(bt["txt"]).double(), "text_emb.fc1")), "text_emb.fc2")

    tseq, blk, grp = torch.tensor(seq), torch.tensor(bt["blk"]), torch.tensor(bt["grp"])
    pos = torch.tensor(bt["pos"])
    smask = self_mask(a["self_mask"], tseq, blk, grp)
    xmask = cross_mask(tseq, torch.tensor(bt["cseq"]))
    for l in range(a["n_layers"]):
        p = f"blocks.{l}."
        sh1, sc1, g1, sh2, sc2, g2 = (tp + P[p + "modulation"].reshape(1, -1)).chunk(6, dim=1)
        h = layer_norm(x) * (1 + sc1) + sh1
        q = rope_3d(rms_norm(P.lin(h, p + "attn1.q"), P[p + "attn1.norm_q.weight"]), pos, H)
        k = rope_3d(rms_norm(P.lin(h, p + "attn1.k"), P[p + "attn1.norm_k.weight"]), pos, H)
        x = x + g1 * P.lin(attention(q, k, P.lin(h, p + "attn1.v"), smask, H), p + "attn1.o")
        h = layer_norm(x, P[p + "norm3.weight"], P[p + "norm3.bias"])
        q = rms_norm(P.lin(h, p + "attn2.q"), P[p + "attn2.norm_q.weight"])
        k = rms_norm(P.lin(c, p + "attn2.k"), P[p + "attn2.norm_k.weight"])
        x = x + P.lin(attention(q, k, P.lin(c, p + "attn2.v"), xmask, H), p + "attn2.o")
        h = layer_norm(x) * (1 + sc2) + sh2
        x = x + g2 * P.lin(gelu_tanh(P.lin(h, p + "ffn.fc1")), p + "ffn.fc2")

    hm = layer_norm(x) * (1 + P["head.modulation"][1] + temb) + P["head.modulation"][0] + temb
    noisy = np.nonzero(kind == 1)[0]
    row_of = {t: r for r, t in enumerate(video)}
    vrows = torch.tensor([row_of[t] for t in noisy], dtype=torch.long)
    # Patch elements (t, h, w, c): head.proj predicts channels c < out_channels.
    C, Co = a["latent_channels"], a["out_channels"]
    cols = torch.tensor([p * C + ch for p in range(a["patch_dim"] // C) for ch in range(Co)], dtype=torch.long)
    target_v = (vn[vrows] - x0[vrows])[:, cols]
    yv = P.lin(hm[torch.tensor(noisy)], "head.proj")
    loss = ((yv - target_v) ** 2).mean()
    if len(acts):
        ya = P.lin(hm[torch.tensor(acts, dtype=torch.long)], "action_head")
        loss = loss + a["action_loss_weight"] * ((ya - (an - ax0)) ** 2).mean()
    return loss


# ---- the check -----------------------------------------------------------------------
def rel_error(ours, ref, floor):
    return float(np.max(np.abs(ours - ref))) / max(float(np.max(np.abs(ref))), floor) if ref.size else 0.0


def check(path):
    with h5py.File(path, "r") as f:
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        a = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.items()}
        tensors = {k: torch.tensor(np.array(f["params"][k]), dtype=torch.float64, requires_grad=True)
                   for k in f["params"]}
        ours = {k: np.array(f["grads"][k]) for k in f["grads"]}
        bt = {k: np.array(f["batch"][k]) for k in f["batch"]}
    loss = (gr00t_loss if a["family"] == "gr00t" else wan_loss)(Params(tensors), a, bt)
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
