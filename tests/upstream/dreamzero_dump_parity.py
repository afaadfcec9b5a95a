#!/usr/bin/python3
"""DreamZero parity of an embtrain training step with upstream's computation (issue 32).

Runs model_dump_tool on a DreamZero-layout deck (several samples packed into each of one or more
micro-batches of a step, random parameters at trained scales, on the CPU or the CUDA backend),
maps the dump to upstream's names, layouts and per-sample inputs, and recomputes the loss and every gradient with the float64 reference (dreamzero_reference.py):
the step's loss is the mean of the per-sample losses. Each gradient must match within --tol
relative to its largest reference element.

The dump carries what upstream's forward reads: the text rows (text_len's zero rows included,
embtrain pads as upstream's text encoder does, so the reference pads nothing more), the CLIP rows
(/micro_batch/k/clip), the I2V y channels inside the video_x0 rows (per patch pixel [latents | y],
upstream's channel order), the action mask and has_real_action. A model without the CLIP context
or the y channels (model.clip_tokens / cond_channels 0) is compared with them neutral on the
reference's side: v_img = 0, so every image attention adds exactly 0 (img_emb.*, k_img, v_img,
norm_k_img then not compared), and concat_first_frame_latent = false.

    dreamzero_dump_parity.py --tool model_dump_tool --deck inputs/tiny_dreamzero.in [--samples N]
                             [--micro-batches K] [--np R] [--device cpu|cuda] [--padded] [--tol T]
--np R runs model_dump_tool on R ranks (mpirun): micro-batch m on rank m % R, the gradients and
losses summed over the ranks as --dump does.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dreamzero_reference as ref  # noqa: E402
from reference_ops import F64, f64_params, loss_and_grads  # noqa: E402

P = ref.PREFIX
NEUTRAL_CLIP_DIM = 16  # the CLIP width of the neutral image context (the reference reads it from img_emb.proj.0)
NEUTRAL = ("img_emb.", "cross_attn.k_img", "cross_attn.v_img", "cross_attn.norm_k_img")

# embtrain linear (x @ W + b, W [in, out]) -> upstream nn.Linear (W [out, in]).
LINEARS = {"text_emb.fc1": "text_embedding.0", "text_emb.fc2": "text_embedding.2",
           "time_enc.fc1": "time_embedding.0", "time_enc.fc2": "time_embedding.2",
           "time_proj": "time_projection.1", "head.proj": "head.head", "img_emb.fc1": "img_emb.proj.1",
           "img_emb.fc2": "img_emb.proj.3"}
# embtrain affine LayerNorm -> upstream's, as is.
NORMS = {"img_emb.ln1": "img_emb.proj.0", "img_emb.ln2": "img_emb.proj.4"}
# embtrain linear -> upstream CategorySpecificLinear with one slot (W [1, in, out], b [1, out]).
SLOT_LINEARS = {"action_enc.fc1": "action_encoder.W1", "action_enc.fc2": "action_encoder.W2",
                "action_enc.fc3": "action_encoder.W3", "state_enc.fc1": "state_encoder.layer1",
                "state_enc.fc2": "state_encoder.layer2", "action_dec.fc1": "action_decoder.layer1",
                "action_dec.fc2": "action_decoder.layer2"}
BLOCK_LINEARS = {"attn1": "self_attn", "attn2": "cross_attn"}


def upstream_name(name):
    """(upstream name, kind) of an embtrain parameter; kind says how its layout maps."""
    stem, _, leaf = name.rpartition(".")
    if stem in LINEARS:
        return P + LINEARS[stem] + "." + leaf, "linear"
    if stem in NORMS:
        return P + NORMS[stem] + "." + leaf, "same"
    if stem in SLOT_LINEARS:
        return P + SLOT_LINEARS[stem] + "." + ("W" if leaf == "weight" else "b"), "slot"
    if name == "patch_embed.weight":
        return P + "patch_embedding.weight", "patch"
    if name == "patch_embed.bias":
        return P + "patch_embedding.bias", "same"
    if name == "head.modulation" or name.endswith(".modulation"):
        return P + name, "unsqueeze"
    parts = name.split(".")  # blocks.{l}.<sub>...
    if parts[0] == "blocks":
        sub = parts[2:]
        if sub[0] in BLOCK_LINEARS:
            sub[0] = BLOCK_LINEARS[sub[0]]
            kind = "same" if sub[1].startswith("norm_") else "linear"
        elif sub[0] == "ffn":
            sub[1] = {"fc1": "0", "fc2": "2"}[sub[1]]
            kind = "linear"
        else:
            kind = "same"  # norm3
        return P + ".".join(parts[:2] + sub), kind
    raise KeyError(f"no upstream name for embtrain parameter {name!r}")


def to_upstream(t, kind, a):
    if kind == "linear":
        return t.t() if t.dim() == 2 else t
    if kind in ("slot", "unsqueeze"):
        return t.unsqueeze(0)
    if kind == "patch":  # rows (kh, kw, c), c fastest over [latents | y] -> [D, C_in, 1, kh, kw]
        C = a["latent_channels"] + a["cond_channels"]
        return t.reshape(2, 2, C, -1).permute(3, 2, 0, 1).unsqueeze(2)
    return t


def config_of(a):
    fs = (a["latent_height"] // 2) * (a["latent_width"] // 2)
    return {"diffusion_model_cfg": dict(
        model_type="ti2v", dim=a["d_model"], num_heads=a["n_heads"], num_layers=a["n_layers"], ffn_dim=a["d_ff"],
        freq_dim=256, text_dim=a["d_txt"], text_len=512, in_dim=a["latent_channels"] + a["cond_channels"],
        out_dim=a["out_channels"],
        patch_size=[1, 2, 2], frame_seqlen=fs, num_frame_per_block=a["frames_per_block"],
        num_action_per_block=a["actions_per_block"], num_state_per_block=a["states_per_block"],
        max_chunk_size=a["max_chunk_size"], action_dim=a["action_dim"], max_state_dim=a["state_dim"],
        hidden_size=a["d_hidden_enc"], eps=1e-6, qk_norm=True, cross_attn_norm=True,
        concat_first_frame_latent=a["cond_channels"] > 0)}


def clip_dim(a):
    return a["d_clip"] if a["clip_tokens"] > 0 else NEUTRAL_CLIP_DIM


def neutral_tensors(config, rng):
    """The image context of a model without one: random, with v_img = 0 so it adds nothing."""
    out = {}
    for name, shape in ref.param_shapes(config, clip_dim=NEUTRAL_CLIP_DIM).items():
        if any(k in name for k in NEUTRAL):
            zero = "v_img" in name
            out[name] = torch.zeros(shape, dtype=F64) if zero else torch.from_numpy(rng.normal(0, 0.1, shape))
    return out


def unpatchify_rows(rows, pos, C, n_frames, height, width, channels=None):
    """Patch vectors [(kh, kw, c)] over `C` channels of tokens at pos (f, h, w) -> the channels
    `channels` (default all) as [len, F, H, W]."""
    channels = range(C) if channels is None else channels
    out = np.zeros((len(channels), n_frames, height, width))
    for vec, (f, h, w) in zip(rows, pos):
        patch = vec[:4 * C].reshape(2, 2, C)[:, :, list(channels)]
        out[:, f, 2 * h:2 * h + 2, 2 * w:2 * w + 2] = patch.transpose(2, 0, 1)
    return out


def samples_of(a, mb, sigma_table):
    """Upstream's per-sample inputs from the dump's packed micro-batch."""
    seq, kind, pos = mb["seq"], mb["kind"], mb["pos"]
    video = np.nonzero((kind == 0) | (kind == 1))[0]
    video_row = {int(t): r for r, t in enumerate(video)}
    act_row = {int(t): r for r, t in enumerate(np.nonzero(kind == 2)[0])}
    state_row = {int(t): r for r, t in enumerate(np.nonzero(kind == 3)[0])}
    sigma32 = sigma_table.numpy().astype(np.float32)
    C, H, W = a["latent_channels"], a["latent_height"], a["latent_width"]
    C_in = C + a["cond_channels"]  # video_x0 rows: per patch pixel [latents | y]
    out = []
    for s in range(len(mb["sample_id"])):
        mine = np.nonzero(seq == s)[0]
        clean, noisy = mine[kind[mine] == 0], mine[kind[mine] == 1]
        n_frames = int(pos[clean, 0].max()) + 1
        x0_rows = mb["video_x0"][[video_row[int(t)] for t in clean]]
        lat = unpatchify_rows(x0_rows, pos[clean], C_in, n_frames, H, W, range(C))
        y = unpatchify_rows(x0_rows, pos[clean], C_in, n_frames, H, W, range(C, C_in)) if C_in > C else None
        noise = unpatchify_rows(mb["video_noise"][[video_row[int(t)] for t in noisy]], pos[noisy], C, n_frames, H, W)
        ids = np.zeros(n_frames, dtype=np.int64)
        for t in noisy:  # σ as embtrain drew it -> the schedule id it came from
            ids[pos[t, 0]] = int(np.argmin(np.abs(sigma32 - mb["sigma"][t])))
        acts = mine[kind[mine] == 2]
        states = mine[kind[mine] == 3]
        actions = mb["act_x0"][[act_row[int(t)] for t in acts]]
        clip = (mb["clip"][s] if "clip" in mb else
                np.random.default_rng(int(mb["sample_id"][s])).normal(size=(ref.N_CLIP_TOKENS, NEUTRAL_CLIP_DIM)))
        mask = mb["action_mask"][[act_row[int(t)] for t in acts]] if "action_mask" in mb else np.ones_like(actions)
        out.append(dict(latents=lat, noise=noise, y=y, timestep_id=ids, text=mb["txt"][mb["cseq"] == s], clip=clip,
                        actions=actions, action_noise=mb["act_noise"][[act_row[int(t)] for t in acts]],
                        action_mask=mask,
                        has_real_action=float(mb["has_real_action"][s]) if "has_real_action" in mb else 1.0,
                        state=mb["state"][[state_row[int(t)] for t in states]]))
    return out


def check(path, tol):
    with h5py.File(path, "r") as f:
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        a = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.items()}
        ours = {k: torch.from_numpy(np.array(f["params"][k])).to(F64) for k in f["params"]}
        grads = {k: np.array(f["grads"][k]) for k in f["grads"]}
        mbs = [{k: np.array(v) for k, v in f["micro_batch"][str(m)].items() if isinstance(v, h5py.Dataset)}
               for m in range(a["micro_batches"])]
    config = config_of(a)
    dims = ref.dims_from_config(config)
    names = {name: upstream_name(name) for name in ours}
    state = {up: to_upstream(ours[name], kind, a) for name, (up, kind) in names.items()}
    if a["clip_tokens"] == 0:
        state.update(neutral_tensors(config, np.random.default_rng(7)))
    params = f64_params(state, ref.param_shapes(config, clip_dim=clip_dim(a)))
    tables = ref.schedule_tables("float64")
    samples = [ref._Sample(raw, dims, text_pad=len(raw["text"])) for mb in mbs for raw in samples_of(a, mb, tables[0])]

    def loss():
        total = 0.0
        for s in samples:
            video, action = ref.sample_loss(params, dims, s, tables, "float64")
            total = total + video + action
        return total / len(samples)

    ref_loss, ref_grads = loss_and_grads(loss, params)
    failures = []
    loss_rel = abs(a["loss"] - ref_loss) / abs(ref_loss)
    if loss_rel > tol:
        failures.append(f"loss: embtrain {a['loss']:.9g} upstream {ref_loss:.9g} rel {loss_rel:.3g}")
    worst = ("", 0.0)
    for name, (up, kind) in names.items():
        mine = to_upstream(torch.from_numpy(grads[name]).to(F64), kind, a)
        r = ref_grads[up]
        scale = float(r.abs().max())
        if scale == 0.0:
            failures.append(f"{name} ({up}): the upstream gradient is all zero")
            continue
        rel = float((mine - r).abs().max()) / scale
        worst = max(worst, (name, rel), key=lambda w: w[1])
        if rel > tol:
            failures.append(f"{name} ({up}): rel {rel:.3g}")
    compared = set(up for up, _ in names.values())
    left_out = sorted(set(params) - compared)
    print(f"{path}: {len(samples)} samples packed in {len(mbs)} micro-batch(es), loss {a['loss']:.8f} vs upstream "
          f"{ref_loss:.8f} (rel {loss_rel:.2e}), {len(names)} gradients, worst rel {worst[1]:.2e} ({worst[0]}); "
          f"not compared (neutral on upstream's side): {len(left_out)} tensors "
          f"({', '.join(sorted(set(n.split('.')[-2] if 'blocks' in n else n[len(P):] for n in left_out)))})")
    for line in failures:
        print("FAIL", line)
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tool", required=True, help="model_dump_tool")
    ap.add_argument("--deck", required=True)
    ap.add_argument("--samples", type=int, default=4)
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--micro-batches", type=int, default=1)
    ap.add_argument("--np", type=int, default=1, help="ranks of the dump (mpirun for more than 1)")
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--padded", action="store_true", help="pad the samples (packing = off) instead of packing")
    ap.add_argument("--keep", help="write the dump here instead of a temporary file")
    args = ap.parse_args()
    torch.set_default_dtype(F64)
    with tempfile.TemporaryDirectory() as d:
        path = args.keep or os.path.join(d, "dump.h5")
        cmd = [args.tool, args.deck, path, "--samples", str(args.samples), "--micro-batches", str(args.micro_batches),
               "--device", args.device, "--random-params"] + (["--padded"] if args.padded else [])
        if args.np > 1:
            cmd = ["mpirun", "--oversubscribe", "-np", str(args.np), "-x", "OMP_NUM_THREADS=1",
                   "-x", "OPENBLAS_NUM_THREADS=1"] + cmd
        subprocess.run(cmd, check=True)
        return 0 if check(path, args.tol) else 1


if __name__ == "__main__":
    sys.exit(main())
