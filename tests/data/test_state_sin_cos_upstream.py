#!/usr/bin/env python3
"""data.state_encoding = sin_cos on Isaac-GR00T's demo dataset (../shared/fixtures/
gr00t_demo_pick_n_place) against upstream's fourier_gr1_arms_only data path written again in torch
(Isaac-GR00T 4af2b622 gr00t/experiment/data_config.py FourierGr1ArmsOnlyDataConfig: state keys
left_arm, right_arm, left_hand, right_hand, StateActionSinCosTransform on each,
torch.cat([sin, cos], -1), ConcatTransform joining them in that order, padded to max_state_dim 64):
  embpack lerobot DEMO (all 44 columns: the raw observation.state rows)
  embpack lerobot DEMO --state-keys/--action-keys (the config's four keys in its order) -> embtrain --dump
and every state row the loader fed the model is upstream's encoding of a raw row; the checkpoint
records the keys' widths [7, 7, 6, 6]; data.upstream_config = fourier_gr1_arms_only feeds the same.
    test_state_sin_cos_upstream.py --embtrain BIN --embpack BIN"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "gr00t_demo_pick_n_place")
KEYS = ["left_arm", "right_arm", "left_hand", "right_hand"]  # FourierGr1ArmsOnlyDataConfig.state_keys
MAX_STATE_DIM = 64


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        sys.exit(1)


def upstream_state(raw, modality):
    """Upstream's model input of one raw observation.state row: per key [sin, cos], keys in order."""
    x = torch.from_numpy(raw.astype(np.float32))
    parts = [torch.cat([torch.sin(x[s["start"]:s["end"]]), torch.cos(x[s["start"]:s["end"]])], dim=-1)
             for s in (modality[k] for k in KEYS)]
    state = torch.cat(parts, dim=-1)
    return torch.nn.functional.pad(state, (0, MAX_STATE_DIM - state.shape[-1])).numpy()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--embtrain", required=True)
    p.add_argument("--embpack", required=True)
    args = p.parse_args()
    modality = json.load(open(os.path.join(DEMO, "meta", "modality.json")))
    with tempfile.TemporaryDirectory(prefix="state_sin_cos_") as tmp:
        raw_file, packed = os.path.join(tmp, "raw.h5"), os.path.join(tmp, "arms_only.h5")
        small = ["--height", "16", "--width", "16", "--embodiment-tag", "gr1"]
        run([args.embpack, "lerobot", DEMO, "-o", raw_file] + small)
        keys = ",".join(KEYS)
        run([args.embpack, "lerobot", DEMO, "--state-keys", keys, "--action-keys", keys, "-o", packed] + small)
        bad = subprocess.run([args.embpack, "lerobot", DEMO, "--state-keys", "left_arm,right_elbow", "-o",
                              os.path.join(tmp, "bad.h5")] + small, capture_output=True, text=True)
        check(bad.returncode == 2 and "--state-keys: no state sub-key 'right_elbow' (its state sub-keys: left_arm, "
              "left_hand, left_leg, neck, right_arm, right_hand, right_leg, waist)" in bad.stderr and
              not os.path.exists(os.path.join(tmp, "bad.h5")), "an unknown sub-key refused in one line, no output")
        with h5py.File(raw_file, "r") as f:
            raw = f["steps/state"][()]
        check(raw.shape[1] == 44, f"the raw file holds observation.state's 44 columns ({len(raw)} rows)")
        expected = np.stack([upstream_state(r, modality["state"]) for r in raw])

        deck = os.path.join(tmp, "sin_cos.in")
        with open(deck, "w") as f:
            f.write(f"[run]\nseed = 3\noutput_dir = {tmp}/out\nname = sc\n[model]\npreset = tiny_gr00t\n"
                    f"state_dim = {MAX_STATE_DIM}\naction_dim = 32\nn_embodiments = 32\n[data]\npaths = {packed}\n"
                    "state_encoding = sin_cos\n[train]\nsteps = 2\nckpt_every = 2\nglobal_batch = 16\n")
        run([args.embtrain, deck])
        with h5py.File(os.path.join(tmp, "out", "ckpt", "sc", "step_00000002.h5"), "r") as f:
            recorded = json.loads(f.attrs["normalization"])
        state_keys = [e["key_transforms"]["state"] for e in recorded.values()]
        check([[k["width"] for k in keys if k["sin_cos"]] for keys in state_keys] == [[7, 7, 6, 6]],
              "the checkpoint records the config's keys sin/cos-encoded, widths [7, 7, 6, 6]")
        dump = os.path.join(tmp, "step.h5")
        run([args.embtrain, deck, "--dump", dump])
        with h5py.File(dump, "r") as f:
            fed = np.concatenate([f["micro_batch"][k]["state"][()] for k in f["micro_batch"]])
        check(fed.shape == (16, MAX_STATE_DIM), f"the dump holds the step's 16 states of {MAX_STATE_DIM}")
        # Each fed state is upstream's encoding of some raw row (float32 sin/cos: within 1 ulp).
        nearest = np.abs(fed[:, None, :] - expected[None, :, :]).max(axis=2).min(axis=1)
        check(float(nearest.max()) <= 2e-7, f"every fed state is upstream's sin/cos of a raw row "
              f"(largest difference {float(nearest.max()):.1e})")
        check(np.all(fed[:, 52:] == 0), "columns past the 52 encoded ones are zero, as upstream pads")
        # data.upstream_config = fourier_gr1_arms_only is the same per-key encoding (and min_max actions).
        with open(deck) as f:
            text = f.read()
        with open(deck, "w") as f:
            f.write(text.replace("state_encoding = sin_cos\n", "upstream_config = fourier_gr1_arms_only\n"))
        config_dump = os.path.join(tmp, "config_step.h5")
        run([args.embtrain, deck, "--dump", config_dump])
        with h5py.File(dump, "r") as a, h5py.File(config_dump, "r") as b:
            same = all(np.array_equal(a["micro_batch"][k][field][()], b["micro_batch"][k][field][()])
                       for k in a["micro_batch"] for field in ("state", "actions", "action_mask"))
        check(same, "data.upstream_config = fourier_gr1_arms_only feeds the same states, actions and masks")
    print("PASS")


if __name__ == "__main__":
    main()
