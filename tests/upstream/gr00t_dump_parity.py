#!/usr/bin/python3
"""GR00T-N1.5 parity of an embtrain training step with upstream's computation (issue 32).

Reads the dump of a gr00t step (`embtrain DECK --dump FILE.h5`, MODEL.md "Dump": every
micro-batch of every rank), maps embtrain's parameters onto upstream's state dict with the name
map below (the correspondence written out here, independently of embtrain's code), rebuilds each
sample as upstream's training step sees it (its vl rows, state, actions, action mask, noise, flow
time, timestep bucket, embodiment and dropout keep-masks), runs the float64 reference
(gr00t_n15_reference.py) over all of the step's samples (the loss is their masked squared error
over the step's total mask count) and compares the loss and every gradient:
    rel = max|embtrain − reference| / max|reference|  per tensor, at most --tol
(1e-5 for the CPU backend, 1e-4 for CUDA). A tensor whose exact gradient is zero (the attention
key biases: softmax is invariant to adding q·b_k to a row) is held to max|embtrain| ≤ tol·G,
G the step's largest gradient.

    gr00t_dump_parity.py DUMP.h5 [--tol 1e-5]
    gr00t_dump_parity.py --embtrain BUILD/embtrain --deck DECK [--np N] [--tol T] [--set KEY=VALUE ...]
The second form makes the dump first (mpirun for N > 1, in a temporary directory), then checks it.
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
import gr00t_dump_backbone  # noqa: E402
import gr00t_n15_reference as gr  # noqa: E402
import safetensors_io  # noqa: E402

F64 = torch.float64


def upstream_config(a):
    """The config.json of the dumped model: embtrain's hyperparameters under upstream's keys
    (Isaac-GR00T's FlowmatchingActionHeadConfig, DiT and the VL self-attention's constructor keys)."""
    d, heads = a["d_model"], a["n_heads"]
    return {"action_head_cfg": {
        "action_dim": a["action_dim"], "action_horizon": a["horizon"], "add_pos_embed": True,
        "backbone_embedding_dim": a["d_vl"], "hidden_size": a["d_hidden_enc"], "input_embedding_dim": d,
        "max_state_dim": a["state_dim"], "num_target_vision_tokens": a["n_future"],
        "max_seq_len": a["max_seq_len"], "max_num_embodiments": a["n_embodiments"], "num_timestep_buckets": 1000,
        "use_vlln": True,
        "diffusion_model_cfg": {
            "num_attention_heads": heads, "attention_head_dim": d // heads, "num_layers": a["n_layers"],
            "output_dim": a["d_out"], "cross_attention_dim": a["d_vl"], "interleave_self_attention": True,
            "dropout": a["dropout"], "final_dropout": True, "norm_type": "ada_norm", "positional_embeddings": None},
        "vl_self_attention_cfg": {
            "num_attention_heads": a["n_heads_vl"], "attention_head_dim": a["d_vl"] // a["n_heads_vl"],
            "num_layers": a["n_layers_vl"], "dropout": a["dropout_vl"], "final_dropout": True,
            "positional_embeddings": None},
    }}


# embtrain's parameter names -> (upstream's name under action_head., transposed). An nn.Linear's
# weight is [out, in] upstream and W [in, out] in embtrain (transposed); CategorySpecificLinear's W
# [E, in, out] and b [E, out], the norms, the future tokens and the position table are stored alike;
# the DiT's norm3 has no parameters on either side. {l} is a layer index: of the vl blocks in
# vl_blocks.* rows, of the DiT blocks in blocks.* rows. Written from MODEL.md and upstream's
# module names (UPSTREAM.md's state-dict map), not read from embtrain.
NAME_MAP = {
    "vlln.weight":                    ("vlln.weight", False),
    "vlln.bias":                      ("vlln.bias", False),
    "vl_blocks.{l}.ln1.weight":       ("vl_self_attention.transformer_blocks.{l}.norm1.weight", False),
    "vl_blocks.{l}.ln1.bias":         ("vl_self_attention.transformer_blocks.{l}.norm1.bias", False),
    "vl_blocks.{l}.attn.q.weight":    ("vl_self_attention.transformer_blocks.{l}.attn1.to_q.weight", True),
    "vl_blocks.{l}.attn.q.bias":      ("vl_self_attention.transformer_blocks.{l}.attn1.to_q.bias", False),
    "vl_blocks.{l}.attn.k.weight":    ("vl_self_attention.transformer_blocks.{l}.attn1.to_k.weight", True),
    "vl_blocks.{l}.attn.k.bias":      ("vl_self_attention.transformer_blocks.{l}.attn1.to_k.bias", False),
    "vl_blocks.{l}.attn.v.weight":    ("vl_self_attention.transformer_blocks.{l}.attn1.to_v.weight", True),
    "vl_blocks.{l}.attn.v.bias":      ("vl_self_attention.transformer_blocks.{l}.attn1.to_v.bias", False),
    "vl_blocks.{l}.attn.o.weight":    ("vl_self_attention.transformer_blocks.{l}.attn1.to_out.0.weight", True),
    "vl_blocks.{l}.attn.o.bias":      ("vl_self_attention.transformer_blocks.{l}.attn1.to_out.0.bias", False),
    "vl_blocks.{l}.ln2.weight":       ("vl_self_attention.transformer_blocks.{l}.norm3.weight", False),
    "vl_blocks.{l}.ln2.bias":         ("vl_self_attention.transformer_blocks.{l}.norm3.bias", False),
    "vl_blocks.{l}.ffn.fc1.weight":   ("vl_self_attention.transformer_blocks.{l}.ff.net.0.proj.weight", True),
    "vl_blocks.{l}.ffn.fc1.bias":     ("vl_self_attention.transformer_blocks.{l}.ff.net.0.proj.bias", False),
    "vl_blocks.{l}.ffn.fc2.weight":   ("vl_self_attention.transformer_blocks.{l}.ff.net.2.weight", True),
    "vl_blocks.{l}.ffn.fc2.bias":     ("vl_self_attention.transformer_blocks.{l}.ff.net.2.bias", False),
    "state_enc.fc1.weight":           ("state_encoder.layer1.W", False),
    "state_enc.fc1.bias":             ("state_encoder.layer1.b", False),
    "state_enc.fc2.weight":           ("state_encoder.layer2.W", False),
    "state_enc.fc2.bias":             ("state_encoder.layer2.b", False),
    "action_enc.fc1.weight":          ("action_encoder.W1.W", False),
    "action_enc.fc1.bias":            ("action_encoder.W1.b", False),
    "action_enc.fc2.weight":          ("action_encoder.W2.W", False),
    "action_enc.fc2.bias":            ("action_encoder.W2.b", False),
    "action_enc.fc3.weight":          ("action_encoder.W3.W", False),
    "action_enc.fc3.bias":            ("action_encoder.W3.b", False),
    "future_tokens":                  ("future_tokens.weight", False),
    "pos_emb":                        ("position_embedding.weight", False),
    "time_enc.fc1.weight":            ("model.timestep_encoder.timestep_embedder.linear_1.weight", True),
    "time_enc.fc1.bias":              ("model.timestep_encoder.timestep_embedder.linear_1.bias", False),
    "time_enc.fc2.weight":            ("model.timestep_encoder.timestep_embedder.linear_2.weight", True),
    "time_enc.fc2.bias":              ("model.timestep_encoder.timestep_embedder.linear_2.bias", False),
    "blocks.{l}.norm1.linear.weight": ("model.transformer_blocks.{l}.norm1.linear.weight", True),
    "blocks.{l}.norm1.linear.bias":   ("model.transformer_blocks.{l}.norm1.linear.bias", False),
    "blocks.{l}.attn1.q.weight":      ("model.transformer_blocks.{l}.attn1.to_q.weight", True),
    "blocks.{l}.attn1.q.bias":        ("model.transformer_blocks.{l}.attn1.to_q.bias", False),
    "blocks.{l}.attn1.k.weight":      ("model.transformer_blocks.{l}.attn1.to_k.weight", True),
    "blocks.{l}.attn1.k.bias":        ("model.transformer_blocks.{l}.attn1.to_k.bias", False),
    "blocks.{l}.attn1.v.weight":      ("model.transformer_blocks.{l}.attn1.to_v.weight", True),
    "blocks.{l}.attn1.v.bias":        ("model.transformer_blocks.{l}.attn1.to_v.bias", False),
    "blocks.{l}.attn1.o.weight":      ("model.transformer_blocks.{l}.attn1.to_out.0.weight", True),
    "blocks.{l}.attn1.o.bias":        ("model.transformer_blocks.{l}.attn1.to_out.0.bias", False),
    "blocks.{l}.ffn.fc1.weight":      ("model.transformer_blocks.{l}.ff.net.0.proj.weight", True),
    "blocks.{l}.ffn.fc1.bias":        ("model.transformer_blocks.{l}.ff.net.0.proj.bias", False),
    "blocks.{l}.ffn.fc2.weight":      ("model.transformer_blocks.{l}.ff.net.2.weight", True),
    "blocks.{l}.ffn.fc2.bias":        ("model.transformer_blocks.{l}.ff.net.2.bias", False),
    "proj_out_1.weight":              ("model.proj_out_1.weight", True),
    "proj_out_1.bias":                ("model.proj_out_1.bias", False),
    "proj_out_2.weight":              ("model.proj_out_2.weight", True),
    "proj_out_2.bias":                ("model.proj_out_2.bias", False),
    "action_dec.fc1.weight":          ("action_decoder.layer1.W", False),
    "action_dec.fc1.bias":            ("action_decoder.layer1.b", False),
    "action_dec.fc2.weight":          ("action_decoder.layer2.W", False),
    "action_dec.fc2.bias":            ("action_decoder.layer2.b", False),
}


def name_map(dims):
    """NAME_MAP expanded over the model's layers, with upstream's action_head. prefix."""
    m = {}
    for ours, (theirs, transposed) in NAME_MAP.items():
        layers = range(dims.vl_layers if ours.startswith("vl_blocks.") else dims.layers) if "{l}" in ours else [None]
        for l in layers:
            m[ours.format(l=l)] = (gr.PREFIX + theirs.format(l=l), transposed)
    return m


def check_bijection(ours, mapping, upstream_shapes):
    """Every embtrain tensor maps to one upstream tensor of the same shape (after the transpose)
    and every upstream tensor has exactly one embtrain counterpart."""
    problems = []
    unmapped = sorted(set(ours) - set(mapping))
    missing = sorted(set(mapping) - set(ours))
    if unmapped or missing:
        problems.append(f"embtrain tensors without an upstream name {unmapped[:4]}, map entries embtrain lacks "
                        f"{missing[:4]}")
    targets = [mapping[n][0] for n in ours if n in mapping]
    if len(set(targets)) != len(targets):
        problems.append("two embtrain tensors map to one upstream tensor")
    uncovered = sorted(set(upstream_shapes) - set(targets))
    if uncovered:
        problems.append(f"upstream tensors without an embtrain counterpart {uncovered[:4]}")
    for name, value in ours.items():
        if name not in mapping:
            continue
        theirs, transposed = mapping[name]
        shape = tuple(value.shape[::-1]) if transposed else tuple(value.shape)
        if theirs in upstream_shapes and shape != tuple(upstream_shapes[theirs]):
            problems.append(f"{name} {tuple(value.shape)} -> {theirs} {tuple(upstream_shapes[theirs])}")
    if problems:
        raise ValueError("name map: " + "; ".join(problems))


def to_upstream(tensors, mapping):
    return {mapping[n][0]: (torch.as_tensor(v).t() if mapping[n][1] else torch.as_tensor(v)) for n, v in tensors.items()}


def read_samples(f, dims, backbone=None):
    """Every sample of every micro-batch of the dump, as gr00t_loss_and_grads takes them. With the
    online backbone each sample's vl is the reference's of its frames and prompt (tune_visual: a
    function of the vision leaves), and the worst relative difference of the dumped rows from it
    is returned too."""
    samples, vl_err = [], 0.0
    for k in range(int(f.attrs["micro_batches"])):
        mb = f["micro_batch"][str(k)]
        cseq = np.array(mb["cseq"])
        vl = np.array(mb["vl"])
        if backbone:
            prompt, frames = np.array(mb["prompt"]), np.array(mb["frames"])
            views = frames.shape[0] // len(np.array(mb["tau"]))
        state, actions, mask, noise = (np.array(mb[n]) for n in ("state", "actions", "action_mask", "noise"))
        tau, tq, emb = np.array(mb["tau"]), np.array(mb["tq"]), np.array(mb["emb_id"])
        for s in range(len(tau)):
            sample = dict(vl=vl[cseq == s], state=state[s], actions=actions[s], action_mask=mask[s], noise=noise[s],
                          tau=float(tau[s]), tq=int(tq[s]), emb_id=int(emb[s]))
            if backbone:
                sample["vl"] = backbone.vl(prompt[cseq == s], frames[s * views:(s + 1) * views])
                ref = sample["vl"].detach().numpy()
                vl_err = max(vl_err, float(np.max(np.abs(vl[cseq == s] - ref)) / np.max(np.abs(ref))))
            if gr.timestep_bucket(tau[s], dims.buckets) != int(tq[s]):
                raise ValueError(f"micro-batch {k} sample {s}: tq {int(tq[s])}, upstream's bucket of tau "
                                 f"{float(tau[s])!r} is {gr.timestep_bucket(tau[s], dims.buckets)}")
            if "dropout" in mb:
                group = mb["dropout"][str(s)]
                sample["dropout"] = {site: torch.as_tensor(np.array(group[site])).to(F64) for site in group}
            samples.append(sample)
    return samples, vl_err


def print_table(rows):
    print(f"{'tensor (ours)':44} {'max abs err':>12} {'rel err':>10}")
    for name, abs_err, rel_err in rows:
        print(f"{name:44} {abs_err:12.3e} {rel_err:10.3e}")


def released_parameters(folder, ours, mapping):
    """The action head of a released (or exported) checkpoint folder, upstream's names; every tensor
    must equal the dump's parameter mapped onto it bit for bit (the run imported it exactly)."""
    theirs = {k: v for k, v in safetensors_io.read_checkpoint(folder).items() if k.startswith(gr.PREFIX)}
    mapped = to_upstream(ours, mapping)
    differ = sorted(k for k in mapped if k not in theirs or not torch.equal(mapped[k].float(), theirs[k].float()))
    if differ or len(theirs) != len(mapped):
        raise ValueError(f"{folder}: {len(differ)} action-head tensors differ from the dump's parameters "
                         f"{differ[:4]}; {len(theirs)} in the folder, {len(mapped)} in the dump")
    return theirs


def check(path, tol, table=False, weights=None):
    with h5py.File(path, "r") as f:
        a = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        a = {k: (v.item() if hasattr(v, "item") else v) for k, v in a.items()}
        if a["family"] != "gr00t" or a["self_mask"] != "full":
            raise ValueError(f"{path}: a gr00t dump with the family's masks is needed, got {a['family']} "
                             f"({a['self_mask']} self mask)")
        config = upstream_config(a)
        dims = gr.dims_from_config(config)
        every = {k: np.array(f["params"][k]) for k in f["params"]}
        our_grads = {k: np.array(f["grads"][k]) for k in f["grads"]}
        backbone = gr00t_dump_backbone.Backbone(a, every) if "backbone_dir" in a else None
        samples, vl_err = read_samples(f, dims, backbone)
        denominator = float(np.array(f["loss_denominators"])[0])
    ours = {k: v for k, v in every.items() if not k.startswith(gr00t_dump_backbone.PREFIX)}
    mapping = name_map(dims)
    check_bijection(ours, mapping, gr.param_shapes(config))
    mask_count = sum(float(np.sum(s["action_mask"])) for s in samples)
    if mask_count != denominator:
        raise ValueError(f"{path}: loss denominator {denominator}, the step's samples hold {mask_count} mask elements")
    params = released_parameters(weights, ours, mapping) if weights else to_upstream(ours, mapping)
    leaves = backbone.leaves if backbone else {}
    loss, ref_grads = gr.gr00t_loss_and_grads(params, config, samples, inputs=leaves)
    mapping.update({name: (name, False) for name in leaves})  # compared in embtrain's layout (below)

    failures = []
    loss_rel = abs(a["loss"] - loss) / abs(loss)
    if loss_rel > tol:
        failures.append(f"loss: embtrain {a['loss']:.10g}, reference {loss:.10g}, rel {loss_rel:.3g}")
    scale = max(float(g.abs().max()) for g in ref_grads.values())
    worst, worst_zero = (0.0, ""), (0.0, "")
    rows = [("loss", abs(a["loss"] - loss), loss_rel)]
    if backbone and vl_err > tol:
        failures.append(f"vl: the dumped rows differ from the reference backbone's by rel {vl_err:.3g}")
    for name, (theirs, transposed) in mapping.items():
        ref = ref_grads[theirs]
        if name in leaves:
            ref = gr00t_dump_backbone.to_layout(name, ref, backbone.layout_shapes[name])
        ref = (ref.t() if transposed else ref).numpy()
        got = our_grads[name]
        if np.max(np.abs(ref)) <= 1e-12 * scale:  # an exactly zero gradient, up to float64 round-off
            err = float(np.max(np.abs(got))) / scale
            worst_zero = max(worst_zero, (err, name))
        else:
            err = float(np.max(np.abs(got - ref))) / float(np.max(np.abs(ref)))
            worst = max(worst, (err, name))
        rows.append((name, float(np.max(np.abs(got - ref))), err))
        if err > tol:
            failures.append(f"{name} ({theirs}): rel {err:.3g}")
    n_mb, ranks = a["micro_batches"], a["ranks"]
    drop = f"dropout {a['dropout']}/{a['dropout_vl']} with keep-masks" if "dropout" in samples[0] else "no dropout"
    if backbone:
        print(f"{path}: online backbone{' trained (tune_visual)' if leaves else ''}: vl within rel {vl_err:.2e} of "
              f"the reference's, {len(leaves)} backbone gradients")
    print(f"{path}: gr00t step on {ranks} rank(s), {n_mb} micro-batch(es), {len(samples)} samples, {drop}; "
          f"loss {a['loss']:.8f} vs upstream reference {loss:.8f} (rel {loss_rel:.2e}); {len(mapping)} gradients, "
          f"worst rel {worst[0]:.2e} ({worst[1]}), exactly-zero gradients within {worst_zero[0]:.2e} of the step's "
          f"largest ({worst_zero[1]})")
    if table:
        print_table(rows)
    for line in failures[:12]:
        print("FAIL", line)
    if len(failures) > 12:
        print(f"FAIL ... and {len(failures) - 12} more")
    return not failures


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", nargs="?", help="an embtrain --dump file of a gr00t step")
    ap.add_argument("--tol", type=float, default=1e-5, help="relative tolerance (default 1e-5, the CPU backend's)")
    ap.add_argument("--embtrain", help="make the dump with this embtrain first")
    ap.add_argument("--deck", help="the deck of the dump (with --embtrain)")
    ap.add_argument("--np", type=int, default=1, help="ranks of the dump (mpirun for more than 1)")
    ap.add_argument("--set", action="append", default=[], help="deck overrides of the dump (KEY=VALUE)")
    ap.add_argument("--weights", help="a released or exported checkpoint folder the dump's run was init_from: the "
                                      "reference computes from its tensors (which must equal the dump's)")
    ap.add_argument("--table", action="store_true",
                    help="print every gradient's max abs error and relative error (to its largest reference "
                         "element; an exactly-zero gradient's to the step's largest)")
    args = ap.parse_args()
    if args.dump:
        return 0 if check(args.dump, args.tol, args.table, args.weights) else 1
    if not args.embtrain or not args.deck:
        ap.error("give a dump, or --embtrain and --deck")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "dump.h5")
        cmd = [args.embtrain, args.deck, "--dump", path]
        for s in args.set:
            cmd += ["--set", s]
        if args.np > 1:
            cmd = ["mpirun", "--oversubscribe", "-np", str(args.np), "-x", "OMP_NUM_THREADS=1",
                   "-x", "OPENBLAS_NUM_THREADS=1"] + cmd
        subprocess.run(cmd, check=True)
        return 0 if check(path, args.tol, args.table, args.weights) else 1


if __name__ == "__main__":
    sys.exit(main())
