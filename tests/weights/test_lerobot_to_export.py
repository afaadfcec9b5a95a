#!/usr/bin/python3
"""From a LeRobot dataset to a deployable GR00T-N1.5, end to end (issue 33, "Done when", second
bullet; README "From a LeRobot dataset to a deployable GR00T-N1.5"):

  Isaac-GR00T's own demo dataset (../shared/fixtures/gr00t_demo_pick_n_place, as upstream ships it)
  -> embpack lerobot --embodiment-tag new_embodiment
  -> embpack features --backbone DIR      (--backbone offline; skipped with --backbone online)
  -> embtrain with train.init_from = DIR  (a few steps)
  -> embtrain export RUN -o OUT

DIR is a tiny random GR00T-N1.5 checkpoint in upstream's format: the action head of
tests/upstream/make_tiny_checkpoint.py, sized for the dataset's 44-wide state and action, and the
tiny Eagle backbone of tests/encoders_ref/make_tiny_encoders.py (backbone.eagle_model.*), its
eagle2_hg_model/ holding the real tokenizer files of ../shared/fixtures/eagle2_5_tokenizer.
Asserts: OUT holds DIR's backbone tensors byte for byte and config.json unchanged, the
action_head.* tensors trained, and experiment_cfg/metadata.json built from the dataset: its
statistics equal the dataset's own (computed here from the rows embpack lerobot read from its
Parquet files), its modalities those of meta/modality.json + meta/info.json; and (offline) what the
loader fed the model (data.normalize = upstream: `embtrain --dump` of a step) is exactly upstream's
min_max normalisation (Isaac-GR00T 4af2b622 gr00t/data/transform/state_action.py:153-173) of the
packed rows with metadata.json's statistics, which are the numbers the checkpoint recorded.

With --backbone tune_visual (train.tune_visual = on, the step trains the vision tower and mlp1,
5 steps): OUT's vision_model.* and mlp1.* tensors trained, in DIR's dtype (BF16) and shapes, the
LLM's tensors (and SigLIP's pooling head, which Eagle does not use) byte for byte; init_from OUT (one step at learning rate 0) holds the trained
checkpoint's parameters as OUT stores them: bit for bit, the BF16 ones rounded as PyTorch rounds.

With --upstream-config NAME (a data config the demo's keys support; the run trains with --set
data.upstream_config=NAME): the checkpoint records the config and its keys, metadata.json
describes each of the config's keys as upstream's policy reads them (absolute, rotation_type,
continuous, shape; min/max = the recorded statistics = the dataset's), and a dumped step holds the
config's transforms of packed rows (fourier_gr1_arms_only: [sin, cos] of each state key, min_max of
each action key, in the config's order), by value.

    test_lerobot_to_export.py --embtrain BIN --embpack BIN [--backbone offline|online|tune_visual]
                              [--upstream-config NAME]
"""
import argparse
import copy
import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "..", "shared", "fixtures")
DEMO = os.path.join(FIXTURES, "gr00t_demo_pick_n_place")
TOKENIZER = os.path.join(FIXTURES, "eagle2_5_tokenizer")
sys.path.insert(0, os.path.join(HERE, "..", "upstream"))
import make_tiny_checkpoint  # noqa: E402
import safetensors_io  # noqa: E402
import upstream_presets  # noqa: E402

STEPS = 4
TUNE_VISUAL_STEPS = 5
VISUAL = ("backbone.eagle_model.vision_model.vision_model.", "backbone.eagle_model.mlp1.")


def run(cmd):
    start = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    print(f"ran {os.path.basename(cmd[0])} {cmd[1] if len(cmd) > 1 else ''} in {time.time() - start:.1f} s")
    return p


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def head_config(d_vl, max_state_dim):
    """The tiny head (upstream_presets.TINY_GR00T) reading the tiny Eagle's d_vl-wide features, with
    room for the demo's 44-wide state and action (upstream pads both to max_*_dim) or, with
    --upstream-config, for the state the config gives the model."""
    config = copy.deepcopy(upstream_presets.TINY_GR00T)
    head = config["action_head_cfg"]
    head.update(backbone_embedding_dim=d_vl, max_state_dim=max_state_dim, max_action_dim=48, action_dim=48)
    head["diffusion_model_cfg"]["cross_attention_dim"] = d_vl
    head["vl_self_attention_cfg"].update(attention_head_dim=d_vl // 2, num_attention_heads=2)
    config.update(action_dim=48)
    return config


def make_checkpoint(tmp, max_state_dim):
    """DIR: the tiny Eagle (make_tiny_encoders.py) + the tiny head (make_tiny_checkpoint.py) in one
    model.safetensors, the backbone stored BF16 as upstream saves it."""
    run(["/usr/bin/python3", os.path.join(ROOT, "tests", "encoders_ref", "make_tiny_encoders.py"), "--which", "eagle",
         "--out", tmp])
    eagle = os.path.join(tmp, "eagle")
    backbone_cfg = json.load(open(os.path.join(eagle, "config.json")))["backbone_cfg"]
    d_vl = json.load(open(os.path.join(eagle, "eagle2_hg_model", "config.json")))["text_config"]["hidden_size"]
    backbone = {k: (v, "BF16") for k, v in safetensors_io.read_file(os.path.join(eagle, "model.safetensors")).items()}
    released = os.path.join(tmp, "gr00t_n15_tiny")
    config = head_config(d_vl, max_state_dim)
    config["backbone_cfg"].update(backbone_cfg)  # select_layer: the tiny Eagle's
    make_tiny_checkpoint.write_gr00t(released, 3, config, backbone)
    shutil.copytree(os.path.join(eagle, "eagle2_hg_model"), os.path.join(released, "eagle2_hg_model"))
    for name in os.listdir(TOKENIZER):
        if name != "config.json":
            shutil.copy(os.path.join(TOKENIZER, name), os.path.join(released, "eagle2_hg_model", name))
    return released


def dataset_rows(packed):
    """The demo's state and action rows as embpack lerobot packed them from its Parquet files (all
    of them: info.json's total_frames)."""
    with h5py.File(packed, "r") as f:
        rows = {"state": f["steps/state"][()].astype(np.float64), "action": f["steps/action"][()].astype(np.float64)}
    total = json.load(open(os.path.join(DEMO, "meta", "info.json")))["total_frames"]
    check(len(rows["state"]) == len(rows["action"]) == total, f"all {total} rows of the dataset packed")
    return rows


def check_metadata(exported, packed):
    meta = json.load(open(os.path.join(exported, "experiment_cfg", "metadata.json")))
    check(list(meta) == ["new_embodiment"] and meta["new_embodiment"]["embodiment_tag"] == "new_embodiment",
          "metadata.json: one entry, new_embodiment")
    entry = meta["new_embodiment"]
    modality = json.load(open(os.path.join(DEMO, "meta", "modality.json")))
    info = json.load(open(os.path.join(DEMO, "meta", "info.json")))
    rows = dataset_rows(packed)
    for part in ("state", "action"):
        check(sorted(entry["statistics"][part]) == sorted(modality[part]) ==
              sorted(entry["modalities"][part]), f"{part}: the sub-keys of modality.json")
        for key, s in modality[part].items():
            values = rows[part][:, s["start"]:s["end"]]
            expected = {"mean": values.mean(0), "std": values.std(0), "min": values.min(0), "max": values.max(0)}
            stats = entry["statistics"][part][key]
            close = all(np.allclose(stats[k], v, rtol=1e-5, atol=1e-5) for k, v in expected.items())
            described = {"absolute": s.get("absolute", True), "rotation_type": s.get("rotation_type"),
                         "shape": [s["end"] - s["start"]], "continuous": s.get("dtype", "float32").startswith("float")}
            check(close and entry["modalities"][part][key] == described,
                  f"{part}.{key}: mean/std/min/max of the dataset's rows, modality {described}")
    view = info["features"]["observation.images.ego_view"]
    expected_video = {"ego_view": {"resolution": [view["shape"][1], view["shape"][0]], "channels": view["shape"][2],
                                   "fps": info["fps"]}}
    check(entry["modalities"]["video"] == expected_video, f"video modality {expected_video}")


def upstream_min_max(x, low, high):
    """Upstream's min_max in float32: 2·((x − min)/(max − min)) − 1, 0 where min == max."""
    x, low, high = x.astype(np.float32), low.astype(np.float32), high.astype(np.float32)
    span = np.where(high != low, high - low, np.float32(1))
    out = np.float32(2) * ((x - low) / span) - np.float32(1)
    return np.where(high != low, out, np.float32(0)).astype(np.float32)


def metadata_bounds(entry, part, width):
    """metadata.json's min and max of one part as whole vectors (its sub-keys put back in place)."""
    modality = json.load(open(os.path.join(DEMO, "meta", "modality.json")))[part]
    low, high = np.zeros(width), np.zeros(width)
    for key, s in modality.items():
        low[s["start"]:s["end"]] = entry["statistics"][part][key]["min"]
        high[s["start"]:s["end"]] = entry["statistics"][part][key]["max"]
    return low, high


def check_loader_inputs(args, tmp, deck, exported, packed, steps):
    """The dumped step's states and action chunks are upstream's normalisation of packed rows with the
    exported statistics, bit for bit; the checkpoint recorded the same statistics."""
    entry = json.load(open(os.path.join(exported, "experiment_cfg", "metadata.json")))["new_embodiment"]
    rows = dataset_rows(packed)
    with h5py.File(os.path.join(tmp, "out", "ckpt", "ft", f"step_{steps:08d}.h5"), "r") as f:
        recorded = json.loads(f.attrs["normalization"])
    check(len(recorded) == 1, "the checkpoint recorded the statistics of one embodiment")
    recorded = next(iter(recorded.values()))
    dump = os.path.join(tmp, "step.h5")
    run([args.embtrain, deck, "--dump", dump, "--set", "train.global_batch=16"])
    with h5py.File(dump, "r") as f:
        batches = [f["micro_batch"][k] for k in f["micro_batch"]]
        fed = {"state": np.concatenate([b["state"][()] for b in batches]),
               "action": np.concatenate([b["actions"][()].reshape(-1, b["actions"].shape[-1]) for b in batches])}
    for part in ("state", "action"):
        width = rows[part].shape[1]
        low, high = metadata_bounds(entry, part, width)
        check(np.array_equal(low, recorded[part]["min"]) and np.array_equal(high, recorded[part]["max"]),
              f"{part}: metadata.json's min/max are the checkpoint's recorded statistics")
        expected = {upstream_min_max(r, low, high).tobytes() for r in rows[part]}
        got = fed[part][:, :width]
        raw = {r.astype(np.float32).tobytes() for r in rows[part]}
        check(len(got) > 0 and all(g.astype(np.float32).tobytes() in expected for g in got) and
              not all(g.astype(np.float32).tobytes() in raw for g in got) and
              np.all(fed[part][:, width:] == 0) and np.abs(got).max() <= 1,
              f"{part}: all {len(got)} rows the loader fed are upstream's min_max of packed rows, bit for bit")


# What each data config this test can run does to the demo's keys (Isaac-GR00T 4af2b622
# gr00t/experiment/data_config.py): fourier_gr1_arms_only (:150-205) gives the model each state key
# as [sin(K), cos(K)] and min_max-normalises each action key, both in this order; the state then
# needs 2·26 columns, upstream's max_state_dim 64 holds them.
UPSTREAM_CONFIGS = {
    "fourier_gr1_arms_only": {"keys": ["left_arm", "right_arm", "left_hand", "right_hand"], "max_state_dim": 64},
}


def check_upstream_config(args, tmp, deck, exported, packed, steps):
    """data.upstream_config = NAME end to end: the checkpoint records the config and its keys, the
    exported metadata.json gives upstream's policy what the config's transforms read of each key
    (absolute, rotation_type, continuous, shape; min/max for the actions' min_max, the recorded
    numbers), and the dumped step is the config's transform of packed rows, by value."""
    keys = UPSTREAM_CONFIGS[args.upstream_config]["keys"]
    modality = json.load(open(os.path.join(DEMO, "meta", "modality.json")))
    with h5py.File(os.path.join(tmp, "out", "ckpt", "ft", f"step_{steps:08d}.h5"), "r") as f:
        recorded = next(iter(json.loads(f.attrs["normalization"]).values()))
    plan = recorded["key_transforms"]
    columns = {part: [(modality[part][k]["start"], modality[part][k]["end"]) for k in keys] for part in modality
               if part in ("state", "action")}
    expected_plan = {
        "state": [{"key": k, "start": a, "width": b - a, "rotation_from": "", "rotation_to": "", "normalization": "",
                   "absolute": True, "sin_cos": True} for k, (a, b) in zip(keys, columns["state"])],
        "action": [{"key": k, "start": a, "width": b - a, "rotation_from": "", "rotation_to": "",
                    "normalization": "min_max", "absolute": True, "sin_cos": False}
                   for k, (a, b) in zip(keys, columns["action"])]}
    check(plan["upstream_config"] == args.upstream_config and
          plan["selected_by"] == f"data.upstream_config = {args.upstream_config}" and
          plan["state"] == expected_plan["state"] and plan["action"] == expected_plan["action"],
          f"the checkpoint records {args.upstream_config}: {keys} sin/cos states, min_max actions, their columns")
    entry = json.load(open(os.path.join(exported, "experiment_cfg", "metadata.json")))["new_embodiment"]
    rows = dataset_rows(packed)
    for part in ("state", "action"):
        for key, (a, b) in zip(keys, columns[part]):
            described = entry["modalities"][part][key]
            stats = entry["statistics"][part][key]
            values = rows[part][:, a:b]
            check(described == {"absolute": True, "rotation_type": None, "shape": [b - a], "continuous": True} and
                  stats["min"] == recorded[part]["min"][a:b] and stats["max"] == recorded[part]["max"][a:b] and
                  np.allclose(stats["min"], values.min(0), atol=1e-5) and
                  np.allclose(stats["max"], values.max(0), atol=1e-5),
                  f"metadata.json {part}.{key}: absolute, no rotation, continuous, shape [{b - a}]; min/max the "
                  f"checkpoint's and the dataset's")
    dump = os.path.join(tmp, "step.h5")
    run([args.embtrain, deck, "--dump", dump, "--set", "train.global_batch=8", "--set",
         f"data.upstream_config={args.upstream_config}"])
    with h5py.File(dump, "r") as f:
        batches = [f["micro_batch"][k] for k in f["micro_batch"]]
        fed_state = np.concatenate([bt["state"][()] for bt in batches])
        fed_action = np.concatenate([bt["actions"][()].reshape(-1, bt["actions"].shape[-1]) for bt in batches])
    state = np.concatenate([np.concatenate([np.sin(rows["state"][:, a:b].astype(np.float32)),
                                            np.cos(rows["state"][:, a:b].astype(np.float32))], axis=1)
                            for a, b in columns["state"]], axis=1)
    action = np.concatenate([upstream_min_max(rows["action"][:, a:b], np.array(entry["statistics"]["action"][k]["min"]),
                                              np.array(entry["statistics"]["action"][k]["max"]))
                             for k, (a, b) in zip(keys, columns["action"])], axis=1)
    width = {"state": state.shape[1], "action": action.shape[1]}
    nearest = {name: np.array([np.abs(want - g[:width[name]]).max(1).min() for g in got])
               for name, want, got in (("state", state, fed_state), ("action", action, fed_action))}
    check(width["state"] == 52 and len(fed_state) > 0 and nearest["state"].max() <= 2e-7 and
          np.all(fed_state[:, 52:] == 0),
          f"all {len(fed_state)} states fed are [sin, cos] of a packed row's {keys} in this order "
          f"(within {nearest['state'].max():.1e}), zeros after column 52")
    check(width["action"] == 26 and nearest["action"].max() == 0 and np.all(fed_action[:, 26:] == 0),
          f"all {len(fed_action)} action rows fed are upstream's min_max of a packed row's {keys} in this order, "
          f"bit for bit, zeros after column 26")


def check_reimport(args, tmp, deck, exported, original):
    """init_from the export with train.tune_visual = on, one step at learning rate 0: its checkpoint
    holds the trained run's parameters as the export stores them (the vision tensors in DIR's BF16)."""
    run([args.embtrain, deck, "--set", "run.name=reimport", "--set", f"train.init_from={exported}", "--set",
         "train.steps=1", "--set", "train.ckpt_every=1", "--set", "train.lr=0", "--set", "train.min_lr=0"])
    ckpt = os.path.join(tmp, "out", "ckpt")
    with h5py.File(os.path.join(ckpt, "ft", f"step_{TUNE_VISUAL_STEPS:08d}.h5"), "r") as f:
        trained = {k: torch.from_numpy(f["params"][k][()]) for k in f["params"]}
    with h5py.File(os.path.join(ckpt, "reimport", "step_00000001.h5"), "r") as f:
        reimported = {k: torch.from_numpy(f["params"][k][()]) for k in f["params"]}
    head_f32 = all(v.dtype == torch.float32 for k, v in original.items() if k.startswith("action_head."))
    stored = {k: original[k].dtype if k in original else torch.float32 for k in trained}
    check(head_f32 and sorted(reimported) == sorted(trained) and
          all(torch.equal(reimported[k], trained[k].to(stored[k]).float()) for k in trained),
          f"export then init_from: all {len(trained)} trained parameters bit-exact as stored "
          f"({sum(k.startswith(VISUAL) for k in trained)} vision/mlp1 tensors in BF16)")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embtrain", required=True)
    ap.add_argument("--embpack", required=True)
    ap.add_argument("--backbone", choices=("offline", "online", "tune_visual"), default="offline",
                    help="offline: embpack features computes the vl features; online: the step runs the backbone; "
                         "tune_visual: the step trains its vision tower and mlp1")
    ap.add_argument("--upstream-config", choices=sorted(UPSTREAM_CONFIGS),
                    help="train with data.upstream_config = NAME (--set) and check what the export carries for it")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="lerobot_to_export_") as tmp:
        released = make_checkpoint(tmp, UPSTREAM_CONFIGS[args.upstream_config]["max_state_dim"]
                                   if args.upstream_config else 48)
        packed = os.path.join(tmp, "demo.h5")
        run([args.embpack, "lerobot", DEMO, "--embodiment-tag", "new_embodiment", "-o", packed])
        train_data, extra = packed, "[model]\nbackbone = online\n"
        if args.backbone == "offline":
            train_data, extra = os.path.join(tmp, "demo_features.h5"), ""
            run(["mpirun", "-np", "2", "--oversubscribe", args.embpack, "features", "--backbone", released, packed,
                 "-o", train_data])  # 2096 steps: two ranks halve the test's longest phase
            with h5py.File(train_data, "r") as f:
                check(f["features/vl"].attrs["checkpoint"] == released, "vl features made by DIR's backbone")
        tune_visual = args.backbone == "tune_visual"
        steps = TUNE_VISUAL_STEPS if tune_visual else STEPS
        # tune_visual: steps large enough to show in the BF16 the export stores the vision tower in
        lr = "1e-2\nwarmup_steps = 0" if tune_visual else "1e-3"
        deck = os.path.join(tmp, "ft.in")
        with open(deck, "w") as f:
            f.write(f"[run]\nseed = 7\noutput_dir = {tmp}/out\nname = ft\n[data]\npaths = {train_data}\n[train]\n"
                    f"init_from = {released}\nsteps = {steps}\nckpt_every = {steps}\nglobal_batch = 2\nlr = {lr}\n"
                    f"tune_visual = {'on' if tune_visual else 'off'}\n{extra}")
        run([args.embtrain, deck] + (["--set", f"data.upstream_config={args.upstream_config}"]
                                     if args.upstream_config else []))
        with open(os.path.join(tmp, "out", "ft", "timings.csv")) as f:
            backbone_s = sum(float(r["seconds"]) for r in csv.DictReader(f) if r["phase"] == "backbone")
        if not tune_visual:  # the trained backbone runs inside the model's step, not in the backbone phase
            check((backbone_s > 0) == (args.backbone == "online"), f"{args.backbone}: the step ran the backbone for "
                  f"{backbone_s:.2f} s")
        exported = os.path.join(tmp, "export")
        run([args.embtrain, "export", os.path.join(tmp, "out", "ft"), "-o", exported])
        original = safetensors_io.read_checkpoint(released)
        out = safetensors_io.read_checkpoint(exported)
        check(sorted(out) == sorted(original), f"export holds DIR's {len(original)} tensors")
        check(all(original[k].dtype == out[k].dtype and original[k].shape == out[k].shape for k in original),
              "every exported tensor has DIR's dtype and shape")
        with h5py.File(os.path.join(tmp, "out", "ckpt", "ft", f"step_{steps:08d}.h5"), "r") as f:
            visual = [k for k in f["params"] if k in original]  # the tuned tensors keep upstream's names
        check(all(k.startswith(VISUAL) for k in visual) and (len(visual) > 0) == tune_visual,
              f"{len(visual)} backbone tensors trained, all of the vision tower and mlp1")
        frozen = [k for k in original if k.startswith("backbone.eagle_model.") and k not in visual]
        check(frozen and all(torch.equal(original[k], out[k]) for k in frozen),
              f"{len(frozen)} frozen backbone.eagle_model.* tensors unchanged")
        for part, names in (("action_head.*", [k for k in original if k.startswith("action_head.")]),
                            ("vision_model.* and mlp1.*", visual)):
            if not names:
                continue
            changed = [k for k in names if not torch.equal(original[k], out[k])]
            check(len(changed) >= 0.9 * len(names), f"{len(changed)} of {len(names)} {part} tensors trained "
                  f"(unchanged: {sorted(set(names) - set(changed))[:3]})")
        check(open(os.path.join(released, "config.json"), "rb").read() ==
              open(os.path.join(exported, "config.json"), "rb").read(), "config.json unchanged")
        if tune_visual:
            check_reimport(args, tmp, deck, exported, original)
        check_metadata(exported, packed)
        if args.upstream_config:
            check_upstream_config(args, tmp, deck, exported, packed, steps)
        elif args.backbone == "offline":
            check_loader_inputs(args, tmp, deck, exported, packed, steps)
    print("PASS")


if __name__ == "__main__":
    main()
