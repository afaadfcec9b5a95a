#!/usr/bin/env python3
"""embpack lerobot --relative-actions on Isaac-GR00T's demo dataset (../shared/fixtures/
gr00t_demo_pick_n_place, 5 episodes): /stats/action_relative against upstream's computation written
again in numpy (dreamzero ab790c1 groot/vla/data/dataset/lerobot.py:613-725, _calculate_relative_stats_
for_key: for every step i of an episode with i + chunk <= its length, actions i .. i + chunk - 1 of
the sub-key minus its state at i, pooled; np.mean/std/min/max, np.quantile 0.01/0.99), the other
columns /stats/action's; and a key without a state partner refused in one line."""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DEMO = os.path.join(HERE, "..", "..", "..", "shared", "fixtures", "gr00t_demo_pick_n_place")
KEYS, CHUNK = ["left_arm", "right_arm"], 16
STATS = ["mean", "std", "min", "max", "q01", "q99"]


def upstream_relative(state, action, offsets, s, a):
    rel = []
    for e in range(len(offsets) - 1):
        st, ac = state[offsets[e]:offsets[e + 1], s], action[offsets[e]:offsets[e + 1], a]
        for i in range(len(st) - (CHUNK - 1)):
            rel.extend(ac[i:i + CHUNK] - st[i])
    rel = np.array(rel)
    return {"mean": rel.mean(0), "std": rel.std(0), "min": rel.min(0), "max": rel.max(0),
            "q01": np.quantile(rel, 0.01, axis=0), "q99": np.quantile(rel, 0.99, axis=0)}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--embpack", required=True)
    args = p.parse_args()
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "demo.h5")
        subprocess.run([args.embpack, "lerobot", DEMO, "--relative-actions", ",".join(KEYS), "--relative-chunk",
                        str(CHUNK), "-o", out], check=True, capture_output=True)
        with h5py.File(out, "r") as f:
            m = json.loads(f.attrs["modality"])
            state, action, offsets = f["steps/state"][()], f["steps/action"][()], f["episodes/offsets"][()]
            rel, absolute = f["stats/action_relative"], f["stats/action"]
            ok = rel.attrs["keys"] == ",".join(KEYS) and float(rel.attrs["chunk"]) == CHUNK
            relative_columns = set()
            for key in KEYS:
                s = slice(m["state"][key]["start"], m["state"][key]["end"])
                a = slice(m["action"][key]["start"], m["action"][key]["end"])
                relative_columns.update(range(a.start, a.stop))
                for name, want in upstream_relative(state, action, offsets, s, a).items():
                    err = float(np.abs(rel[name][a] - want).max())
                    ok = ok and err <= 1e-6 * max(1.0, float(np.abs(want).max()))
                    print(f"{key} {name}: max |embpack - numpy| = {err:.3g}")
            others = [i for i in range(action.shape[1]) if i not in relative_columns]
            ok = ok and all(np.array_equal(rel[n][others], absolute[n][others]) for n in STATS)
        print("PASS" if ok else "FAIL", "relative chunk statistics equal upstream's computation")
        failed += not ok
        bad = subprocess.run([args.embpack, "lerobot", DEMO, "--relative-actions", "annotation", "-o",
                              os.path.join(tmp, "bad.h5")], capture_output=True, text=True)
        lines = bad.stderr.strip().splitlines()
        ok = (bad.returncode == 2 and len(lines) == 1 and "'annotation'" in lines[0] and "bad.h5" in lines[0]
              and not os.path.exists(os.path.join(tmp, "bad.h5")))
        print("PASS" if ok else "FAIL", f"a key that is no action sub-key: exit 2, one line, no file: {lines}")
        failed += not ok
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
