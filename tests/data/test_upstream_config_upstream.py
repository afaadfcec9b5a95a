#!/usr/bin/env python3
"""data.upstream_config = oxe_droid and = bimanual_panda_gripper against upstream's data path
written again here in torch (Isaac-GR00T 4af2b622; not imported, upstream is not installed):
  gr00t/experiment/data_config.py  the configs' keys, concat order, normalization_modes and
                                   target_rotations (OxeDroidDataConfig :628-697,
                                   BimanualPandaGripperDataConfig :416-500)
  gr00t/data/transform/state_action.py  StateActionTransform.apply (:473-496: rotation, then
                                   normalisation), Normalizer (:98-191: min_max, binary),
                                   the fixed bounds of converted rotations (:309-326, :440-452),
                                   RotationTransform through pytorch3d's matrix functions (:29-95)
  gr00t/data/dataset.py            statistics sliced per key from the columns' (:370-385); past the
                                   episode's end absolute keys repeat their last row, relative keys
                                   are zeros (:611-657, :788)
  gr00t/data/transform/concat.py   keys joined in the config's order (:114-156)
The dataset is built here: Isaac-GR00T's demo rows and videos (../shared/fixtures/
gr00t_demo_pick_n_place) under a meta/modality.json of this test that slices observation.state
and action into each config's keys (quaternion states, Euler-angle / axis-angle actions, relative
deltas, columns in another order than the config's). For each config:
  embpack lerobot DATASET -> embtrain --dump (data.upstream_config = NAME)
and every fed state is upstream's transform of a raw row, every fed action chunk upstream's of the
rows after it (its padding past the episode's end included), the action mask 1 on the config's
action columns only. A checkpoint records the config; resuming it under another is one line. Then the deck's
refusals: an unknown name (one line listing the known ones),
with data.state_encoding = sin_cos, with data.normalize = none, with model.family = wan, a
model.state_dim too small for the transformed state (the needed width named); exit 2, nothing
written.
    test_upstream_config_upstream.py --embtrain BIN --embpack BIN"""
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
MAX_STATE_DIM, MAX_ACTION_DIM = 64, 32
TOL = 1e-5  # float32 here against upstream's float64 (its parquet rows are float64)
BATCH = 192  # samples of the dumped step: enough that some chunks pass an episode's end


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {r.returncode}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return r


def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        sys.exit(1)


# Each config's (key, normalization mode, target rotation) in its concat order, from data_config.py.
CONFIGS = {
    "oxe_droid": {
        "state": [("eef_position", "min_max", None), ("eef_rotation", None, "rotation_6d"),
                  ("gripper_position", "min_max", None)],
        "action": [("eef_position_delta", None, None), ("eef_rotation_delta", None, "axis_angle"),
                   ("gripper_position", "binary", None)],
    },
    "bimanual_panda_gripper": {
        "state": [("right_arm_eef_pos", "min_max", None), ("right_arm_eef_quat", None, "rotation_6d"),
                  ("right_gripper_qpos", "min_max", None), ("left_arm_eef_pos", "min_max", None),
                  ("left_arm_eef_quat", None, "rotation_6d"), ("left_gripper_qpos", "min_max", None)],
        "action": [("right_arm_eef_pos", None, None), ("right_arm_eef_rot", None, None),
                   ("right_gripper_close", "binary", None), ("left_arm_eef_pos", None, None),
                   ("left_arm_eef_rot", None, None), ("left_gripper_close", "binary", None)],
    },
}

# This test's modality.json per config: {key: (start, end, extra fields)} of observation.state / action.
MODALITIES = {
    "oxe_droid": {
        "state": {"eef_position": (10, 13, {}), "eef_rotation": (0, 4, {"rotation_type": "quaternion"}),
                  "gripper_position": (30, 31, {})},
        "action": {"eef_position_delta": (0, 3, {"absolute": False}),
                   "eef_rotation_delta": (22, 25, {"rotation_type": "euler_angles_rpy", "absolute": False}),
                   "gripper_position": (40, 41, {})},
    },
    "bimanual_panda_gripper": {
        "state": {"right_arm_eef_pos": (22, 25, {}), "right_arm_eef_quat": (25, 29, {"rotation_type": "quaternion"}),
                  "right_gripper_qpos": (29, 31, {}), "left_arm_eef_pos": (0, 3, {}),
                  "left_arm_eef_quat": (3, 7, {"rotation_type": "quaternion"}), "left_gripper_qpos": (7, 9, {})},
        "action": {"right_arm_eef_pos": (22, 25, {}), "right_arm_eef_rot": (25, 28, {"rotation_type": "axis_angle"}),
                   "right_gripper_close": (28, 29, {}), "left_arm_eef_pos": (0, 3, {}),
                   "left_arm_eef_rot": (3, 6, {"rotation_type": "axis_angle"}), "left_gripper_close": (6, 7, {})},
    },
}


# pytorch3d's rotation conventions (transforms/rotation_conversions.py, which RotationTransform calls).
def quaternion_to_matrix(q):
    w, x, y, z = q.unbind(-1)
    s = 2.0 / (q * q).sum(-1)
    rows = [1 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w),
            s * (x * y + z * w), 1 - s * (x * x + z * z), s * (y * z - x * w),
            s * (x * z - y * w), s * (y * z + x * w), 1 - s * (x * x + y * y)]
    return torch.stack(rows, -1).reshape(q.shape[:-1] + (3, 3))


def matrix_to_quaternion(m):
    """The candidate of the largest |q_c| (c over w, x, y, z), its real part made non-negative."""
    m00, m01, m02, m10, m11, m12, m20, m21, m22 = m.reshape(m.shape[:-2] + (9,)).unbind(-1)
    q_abs = torch.stack([1 + m00 + m11 + m22, 1 + m00 - m11 - m22, 1 - m00 + m11 - m22,
                         1 - m00 - m11 + m22], -1).clamp(min=0).sqrt()
    candidates = torch.stack([
        torch.stack([q_abs[..., 0] ** 2, m21 - m12, m02 - m20, m10 - m01], -1),
        torch.stack([m21 - m12, q_abs[..., 1] ** 2, m10 + m01, m02 + m20], -1),
        torch.stack([m02 - m20, m10 + m01, q_abs[..., 2] ** 2, m12 + m21], -1),
        torch.stack([m10 - m01, m20 + m02, m21 + m12, q_abs[..., 3] ** 2], -1)], -2)
    candidates = candidates / (2.0 * q_abs[..., None].clamp(min=0.1))
    best = q_abs.argmax(-1)
    q = torch.gather(candidates, -2, best[..., None, None].expand(best.shape + (1, 4))).squeeze(-2)
    return torch.where(q[..., :1] < 0, -q, q)


def axis_angle_to_matrix(v):
    angle = v.norm(dim=-1, keepdim=True)
    q = torch.cat([torch.cos(angle / 2), v * 0.5 * torch.sinc(angle / 2 / torch.pi)], -1)
    return quaternion_to_matrix(q)


def matrix_to_axis_angle(m):
    q = matrix_to_quaternion(m)
    half = torch.atan2(q[..., 1:].norm(dim=-1, keepdim=True), q[..., :1])
    return q[..., 1:] / (0.5 * torch.sinc(half / torch.pi))


def euler_to_matrix(e, letters):
    def about(axis, a):
        c, s, one, zero = torch.cos(a), torch.sin(a), torch.ones_like(a), torch.zeros_like(a)
        flat = {"X": (one, zero, zero, zero, c, -s, zero, s, c),
                "Y": (c, zero, s, zero, one, zero, -s, zero, c),
                "Z": (c, -s, zero, s, c, zero, zero, zero, one)}[axis]
        return torch.stack(flat, -1).reshape(a.shape + (3, 3))
    axes = [{"r": "X", "p": "Y", "y": "Z"}[c] for c in letters]
    a, b, c = e.unbind(-1)
    return about(axes[0], a) @ about(axes[1], b) @ about(axes[2], c)


def to_matrix(rep, x):
    if rep == "quaternion":
        return quaternion_to_matrix(x)
    if rep == "axis_angle":
        return axis_angle_to_matrix(x)
    if rep.startswith("euler_angles_"):
        return euler_to_matrix(x, rep.split("_")[-1])
    raise ValueError(rep)


def from_matrix(rep, m):
    if rep == "rotation_6d":
        return m[..., :2, :].reshape(m.shape[:-2] + (6,))
    if rep == "axis_angle":
        return matrix_to_axis_angle(m)
    raise ValueError(rep)


DEFAULT_BOUNDS = {"rotation_6d": 1.0, "quaternion": 1.0, "axis_angle": np.pi, "euler_angles": np.pi}


def normalize(mode, x, low, high):
    """Normalizer.forward: statistics as torch.tensor(list) (float32) cast to x's dtype."""
    if mode == "binary":
        return (x > 0.5).to(x.dtype)
    assert mode == "min_max"
    low, high = torch.tensor(low).to(x.dtype), torch.tensor(high).to(x.dtype)
    out = torch.zeros_like(x)
    mask = low != high
    out[..., mask] = 2 * ((x[..., mask] - low[mask]) / (high[mask] - low[mask])) - 1
    return out


def upstream_field(rows, config, modality, part, stats):
    """StateActionTransform then ConcatTransform on rows [T, columns] (float64) of one part."""
    parts = []
    for key, mode, target in config[part]:
        start, end, extra = modality[part][key]
        x = rows[:, start:end]
        source = extra.get("rotation_type")
        rotated = target is not None and target != source
        if rotated:
            x = from_matrix(target, to_matrix(source, x))
        if mode is not None:
            if rotated:
                limit = DEFAULT_BOUNDS["euler_angles" if target.startswith("euler") else target]
                low, high = [-limit] * x.shape[-1], [limit] * x.shape[-1]
            else:
                low, high = stats["min"][start:end].tolist(), stats["max"][start:end].tolist()
            x = normalize(mode, x, low, high)
        parts.append(x)
    return torch.cat(parts, -1)


def make_dataset(root, name):
    """The demo's rows, videos and task files under this test's modality.json."""
    os.makedirs(os.path.join(root, "meta"))
    for sub in ("data", "videos"):
        os.symlink(os.path.abspath(os.path.join(DEMO, sub)), os.path.join(root, sub))
    for f in ("info.json", "tasks.jsonl", "episodes.jsonl"):
        os.symlink(os.path.abspath(os.path.join(DEMO, "meta", f)), os.path.join(root, "meta", f))
    demo = json.load(open(os.path.join(DEMO, "meta", "modality.json")))
    modality = {part: {key: dict(start=s, end=e, **extra) for key, (s, e, extra) in keys.items()}
                for part, keys in MODALITIES[name].items()}
    modality["video"], modality["annotation"] = demo["video"], demo["annotation"]
    json.dump(modality, open(os.path.join(root, "meta", "modality.json"), "w"), indent=2)


def deck_text(tmp, name, packed, data_lines, state_dim=MAX_STATE_DIM, batch=16, preset="tiny_gr00t"):
    return (f"[run]\nseed = 3\noutput_dir = {tmp}/out_{name}\nname = u\n[model]\npreset = {preset}\n"
            f"state_dim = {state_dim}\naction_dim = {MAX_ACTION_DIM}\nn_embodiments = 32\n[data]\n"
            f"paths = {packed}\n{data_lines}[train]\nsteps = 2\nckpt_every = 2\nglobal_batch = {batch}\n")


def check_config(args, tmp, name, raw_state, raw_action, offsets, small):
    root = os.path.join(tmp, name)
    make_dataset(root, name)
    packed = os.path.join(tmp, f"{name}.h5")
    run([args.embpack, "lerobot", root, "-o", packed] + small)
    deck = os.path.join(tmp, f"{name}.in")
    with open(deck, "w") as f:
        f.write(deck_text(tmp, name, packed, f"upstream_config = {name}\n", batch=BATCH))
    dump = os.path.join(tmp, f"{name}_step.h5")
    run([args.embtrain, deck, "--dump", dump])
    with h5py.File(dump, "r") as f:
        mbs = [f["micro_batch"][k] for k in f["micro_batch"]]
        fed_state = np.concatenate([mb["state"][()] for mb in mbs])
        fed_action = np.concatenate([mb["actions"][()] for mb in mbs])
        fed_mask = np.concatenate([mb["action_mask"][()] for mb in mbs])
    config, modality = CONFIGS[name], MODALITIES[name]
    state_stats = {"min": raw_state.min(0), "max": raw_state.max(0)}
    action_stats = {"min": raw_action.min(0), "max": raw_action.max(0)}
    expected_state = upstream_field(torch.from_numpy(raw_state.astype(np.float64)), config, modality, "state",
                                    state_stats).numpy()
    width_s = expected_state.shape[1]
    check(fed_state.shape == (BATCH, MAX_STATE_DIM), f"{name}: the dump holds the step's {BATCH} states")
    diff = np.abs(fed_state[:, None, :width_s] - expected_state[None, :, :]).max(axis=2)
    rows, state_err = diff.argmin(axis=1), diff.min(axis=1)
    check(float(state_err.max()) <= TOL, f"{name}: every fed state is upstream's transform of a raw row "
          f"({width_s} columns, largest difference {float(state_err.max()):.1e})")
    check(np.all(fed_state[:, width_s:] == 0), f"{name}: state columns past {width_s} are 0")
    horizon = fed_action.shape[1]
    relative = {k for k, (s, e, extra) in modality["action"].items() if extra.get("absolute") is False}
    largest, past_end = 0.0, 0
    for i, r in enumerate(rows):
        end = offsets[np.searchsorted(offsets, r, side="right")]
        chunk = np.zeros((horizon, raw_action.shape[1]))
        for h in range(horizon):
            chunk[h] = raw_action[min(r + h, end - 1)]
            if r + h >= end:  # upstream's padding: relative keys zero, absolute ones their last row
                past_end += 1
                for k in relative:
                    s, e, _ = modality["action"][k]
                    chunk[h, s:e] = 0
        expected = upstream_field(torch.from_numpy(chunk), config, modality, "action", action_stats).numpy()
        width_a = expected.shape[1]
        largest = max(largest, float(np.abs(fed_action[i, :, :width_a] - expected).max()))
        if not (np.all(fed_action[i, :, width_a:] == 0) and np.all(fed_mask[i, :, :width_a] == 1) and
                np.all(fed_mask[i, :, width_a:] == 0)):
            check(False, f"{name}: sample {i} (row {r}): actions and mask past {width_a} columns are 0, the mask 1 "
                  "before")
    check(past_end > 0 and largest <= TOL, f"{name}: every fed action chunk is upstream's transform of the rows after its state's "
          f"({past_end} steps past an episode's end; largest difference {largest:.1e})")
    return packed


def check_resume_refused(args, tmp, packed):
    """A checkpoint trained with oxe_droid records it; resuming it under another config is one line."""
    deck = os.path.join(tmp, "resume.in")
    with open(deck, "w") as f:
        f.write(deck_text(tmp, "resume", packed, "upstream_config = oxe_droid\n"))
    run([args.embtrain, deck])
    ckpt = os.path.join(tmp, "out_resume", "ckpt", "u", "step_00000002.h5")
    with h5py.File(ckpt, "r") as f:
        recorded = json.loads(f.attrs["normalization"])
    plan = [e["key_transforms"] for e in recorded.values()]
    check([p["selected_by"] for p in plan] == ["data.upstream_config = oxe_droid"] and
          [[k["key"] for k in p["state"]] for p in plan] == [["eef_position", "eef_rotation", "gripper_position"]] and
          plan[0]["state"][1]["rotation_from"] == "quaternion" and plan[0]["state"][1]["rotation_to"] == "rotation_6d",
          "the checkpoint records the config's keys in its order and the rotation it converts")
    r = subprocess.run([args.embtrain, deck, "--set", "data.upstream_config=so100", "--set", f"train.resume={ckpt}",
                        "--set", "train.steps=4"], capture_output=True, text=True)
    errors = [l for l in r.stderr.splitlines() if "error:" in l]  # after the warning that names the continued run
    check(r.returncode == 2 and len(errors) == 1 and
          "the resumed checkpoint trained with data.upstream_config = oxe_droid, the deck has data.upstream_config = "
          "so100" in r.stderr and not os.path.exists(ckpt.replace("00000002", "00000004")),
          f"a resume under another config is refused in one line\n    {r.stderr.strip()}")


def check_refusals(args, tmp, packed):
    """One line, exit 2, no checkpoint, for each deck upstream would not train or ours cannot."""
    cases = [
        ("unknown", "upstream_config = oxe\n", MAX_STATE_DIM,
         "data.upstream_config = oxe: not one of GR00T-N1.5's data configs (fourier_gr1_arms_waist, "
         "fourier_gr1_arms_only, fourier_gr1_full_upper_body, bimanual_panda_gripper, bimanual_panda_hand, "
         "single_panda_gripper, so100, so100_dualcam, unitree_g1, unitree_g1_full_body, oxe_droid, agibot_genie1)"),
        ("with_sin_cos", "upstream_config = oxe_droid\nstate_encoding = sin_cos\n", MAX_STATE_DIM,
         "data.upstream_config decides the state's encoding"),
        ("raw", "upstream_config = oxe_droid\nnormalize = none\n", MAX_STATE_DIM,
         "data.upstream_config = oxe_droid needs data.normalize = upstream"),
        ("narrow", "upstream_config = oxe_droid\n", 9,
         "embodiment 31: its per-key transforms give the model 10 state columns, model.state_dim is 9; set "
         "model.state_dim to at least 10"),
        ("wan", "upstream_config = oxe_droid\n", MAX_STATE_DIM,
         "data.upstream_config = oxe_droid is GR00T-N1.5's (model.family = gr00t)"),
    ]
    for label, lines, state_dim, message in cases:
        deck = os.path.join(tmp, f"refused_{label}.in")
        with open(deck, "w") as f:
            f.write(deck_text(tmp, f"refused_{label}", packed, lines, state_dim,
                              preset="tiny_wan" if label == "wan" else "tiny_gr00t"))
        r = subprocess.run([args.embtrain, deck], capture_output=True, text=True)
        lines_out = [l for l in r.stderr.splitlines() if l.strip()]
        check(r.returncode == 2 and message in r.stderr and len(lines_out) == 1 and
              not os.path.exists(os.path.join(tmp, f"out_refused_{label}", "ckpt")),
              f"refused ({label}): exit {r.returncode}, one line naming it, nothing written\n    {r.stderr.strip()}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--embtrain", required=True)
    p.add_argument("--embpack", required=True)
    args = p.parse_args()
    with tempfile.TemporaryDirectory(prefix="upstream_config_") as tmp:
        small = ["--height", "16", "--width", "16", "--embodiment-tag", "new_embodiment"]
        raw_file = os.path.join(tmp, "raw.h5")
        run([args.embpack, "lerobot", DEMO, "-o", raw_file] + small)
        with h5py.File(raw_file, "r") as f:
            raw_state, raw_action = f["steps/state"][()], f["steps/action"][()]
            offsets = f["episodes/offsets"][()]
        check(raw_state.shape[1] == 44 and raw_action.shape[1] == 44,
              f"the raw file holds the 44 columns of observation.state and action ({len(raw_state)} rows)")
        droid = check_config(args, tmp, "oxe_droid", raw_state, raw_action, offsets, small)
        check_config(args, tmp, "bimanual_panda_gripper", raw_state, raw_action, offsets, small)
        check_resume_refused(args, tmp, droid)
        check_refusals(args, tmp, droid)
    print("PASS")


if __name__ == "__main__":
    main()
