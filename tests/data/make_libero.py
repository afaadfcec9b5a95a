"""Writes a tiny robomimic/LIBERO-layout file for the converter tests.
usage: make_libero.py OUT.hdf5 DEMOS [--nan]"""
import json
import sys

import h5py
import numpy as np

out, demos = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
with h5py.File(out, "w") as f:
    data = f.create_group("data")
    data.attrs["problem_info"] = json.dumps({"language_instruction": "put the bowl on the plate"})
    for i in range(demos):
        T = 6 + i
        g = data.create_group(f"demo_{i}")
        g["actions"] = rng.standard_normal((T, 7))  # float64, as LIBERO stores it
        g["obs/joint_states"] = rng.standard_normal((T, 7)).astype(np.float32)
        g["obs/gripper_states"] = rng.standard_normal((T, 2)).astype(np.float32)
        g["obs/ee_states"] = rng.standard_normal((T, 6)).astype(np.float32)
        g["obs/agentview_rgb"] = rng.integers(0, 255, (T, 16, 16, 3), dtype=np.uint8)
        g["obs/eye_in_hand_rgb"] = rng.integers(0, 255, (T, 16, 16, 3), dtype=np.uint8)
        g["rewards"] = np.eye(T)[-1]
        g["dones"] = np.eye(T, dtype=np.uint8)[-1]
        if "--nan" in sys.argv and i == 1:
            g["obs/joint_states"][2, 3] = np.nan
