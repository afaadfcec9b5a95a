#!/usr/bin/python3
"""model.encoders = online (issue 34): the DreamZero step runs the frozen Wan VAE, umT5 and CLIP
itself on the raw frames and task text of a packed file made by `embpack lerobot`, instead of
reading what `embpack features --dreamzero` stored. Inputs as test_dreamzero_lerobot_to_export.py
makes them (the LeRobot fixture, tiny random upstream-format encoders, an spm_train tokenizer, the
tiny DreamZero checkpoint).

  equal:     the same run (seed, data order, init_from) on the features file and online, 2 ranks.
             The first step's model inputs (--dump: video rows with the I2V y, CLIP rows, text rows)
             computed online equal the file's after float16 rounding exactly (the file stores
             float16; the shared code computes the same float32 values), and the per-step losses
             agree within LOSS_RTOL: the file's inputs differ from the online ones only by that
             rounding (at most 2^-11 relative per value, of random sign), which a loss averaged
             over thousands of values moves far less (measured 3e-6 over the 4 steps).
  cuda:      the online run on run.device = cuda (the emulation in CI) gives the CPU online run's
             losses within 1e-4 relative (fp32 encoders and model on both), over CUDA_STEPS steps
             of one sample a rank (the emulation's cost is per sample; step 2 runs on the model
             step 1 updated).
  bad_input: model.encoders_dir missing, encoders whose dims disagree with the DiT (umT5 of width
             16 for model.d_ctx 32), a packed file without raw frames (/video deleted): one line
             naming it, exit 2, no run directory written.

    test_dreamzero_online.py --embtrain BIN --embpack BIN [--np N] --case equal|cuda|bad_input
"""
import csv
import json
import os
import shutil

import h5py
import numpy as np

from test_dreamzero_lerobot_to_export import CLIP_DIM, FRAMES, LATENT_FRAMES, make_inputs
from test_init_from_export import check, mpi, run, run_case

TRAIN_STEPS = 4
LOSS_RTOL = 1e-4   # float16 storage of the offline inputs (see above)
CUDA_RTOL = 1e-4
CUDA_STEPS = 2


def write_deck(tmp, name, released, data, extra=""):
    """The tiny DreamZero run of test_dreamzero_lerobot_to_export.py; 2x2 tiles of 16x16 -> 4x4 latents."""
    deck = os.path.join(tmp, name + ".in")
    with open(deck, "w") as f:
        f.write(f"[run]\nseed = 7\noutput_dir = {tmp}/out\nname = {name}\n[data]\npaths = {data}\nview = dreamzero\n"
                # the fixture's 5-step episodes hold no whole clip window: every step a sample, the end repeated
                f"dreamzero_episode_end = repeat\n"
                # raw state and actions: the features file's /stats q01/q99 differ from the frames
                # file's (same rows; embpack's percentiles), and this test compares the encoders' inputs
                f"normalize = none\n"
                f"tokens_per_mb = 4096\nview_tile = 16x16\n[model]\nlatent_height = 4\nlatent_width = 4\n"
                f"latent_frames = {LATENT_FRAMES}\nd_clip = {CLIP_DIM}\n{extra}[train]\ninit_from = {released}\n"
                f"steps = {TRAIN_STEPS}\nglobal_batch = 4\nlr = 1e-3\nckpt_every = 0\nshard = full\n")
    return deck


def online(encoders):
    return f"encoders = online\nencoders_dir = {encoders}\n"


def losses(tmp, name):
    with open(os.path.join(tmp, "out", name, "loss.csv")) as f:
        return [float(r["loss"]) for r in csv.DictReader(f)]


def features_file(args, encoders, frames, out):
    """embpack features --dreamzero as the online step computes: 2x2 tiles of 16x16, clips of FRAMES
    frames, the VAE in upstream's chunks of 4 (the default)."""
    run(mpi([args.embpack, "features", "--dreamzero", encoders, frames, "--tile", "16x16", "--frames", str(FRAMES),
             "-o", out], args.np))
    return out


def dump(args, tmp, deck, name):
    path = os.path.join(tmp, name + ".h5")
    run(mpi([args.embtrain, deck, "--dump", path], args.np))
    return path


def check_inputs_equal(offline_dump, online_dump):
    """Every dumped model input the encoders make: online, rounded to float16, is the file's."""
    with h5py.File(offline_dump, "r") as a, h5py.File(online_dump, "r") as b:
        groups = sorted(a["micro_batch"])
        check(groups == sorted(b["micro_batch"]), f"the same {len(groups)} micro-batches")
        for g in groups:
            x, y = a["micro_batch"][g], b["micro_batch"][g]
            check(np.array_equal(x["sample_id"][()], y["sample_id"][()]), f"{g}: the same samples")
            for name in ("video_x0", "clip", "txt"):
                file_values, computed = x[name][()], y[name][()]
                rounded = computed.astype(np.float16).astype(np.float32)
                check(file_values.shape == computed.shape and np.array_equal(file_values, rounded) and
                      np.any(computed != 0), f"{g}/{name} {computed.shape}: online = the file's after float16 rounding")
            for name in ("act_x0", "state", "action_mask"):
                check(np.array_equal(x[name][()], y[name][()]), f"{g}/{name}: the same")


def case_equal(args, tmp, released, inputs):
    encoders, frames = inputs
    data = features_file(args, encoders, frames, os.path.join(tmp, "dz.h5"))
    offline_deck = write_deck(tmp, "offline", released, data)
    online_deck = write_deck(tmp, "online", released, frames, online(encoders))
    check_inputs_equal(dump(args, tmp, offline_deck, "offline_dump"), dump(args, tmp, online_deck, "online_dump"))
    run(mpi([args.embtrain, offline_deck], args.np))
    p = run(mpi([args.embtrain, online_deck], args.np))
    a, b = losses(tmp, "offline"), losses(tmp, "online")
    rel = max(abs(x - y) / abs(x) for x, y in zip(a, b))
    check(len(a) == len(b) == TRAIN_STEPS and rel <= LOSS_RTOL,
          f"per-step losses offline {a} vs online {b}: max relative difference {rel:.2e} <= {LOSS_RTOL}")
    with open(os.path.join(tmp, "out", "online", "summary.json")) as f:
        phases = json.load(f)["phases"]
    check(phases["encoders"]["per_step"]["mean"] > 0, "the encoders phase timed in summary.json")
    with open(os.path.join(tmp, "out", "offline", "summary.json")) as f:
        check(json.load(f)["phases"]["encoders"]["per_step"]["mean"] == 0, "no encoders phase offline")
    check(f"step {TRAIN_STEPS}" in p.stdout + p.stderr, "the online run's progress lines")


def case_cuda(args, tmp, released, inputs):
    encoders, frames = inputs
    small = ["--set", f"train.steps={CUDA_STEPS}", "--set", f"train.global_batch={args.np}"]
    deck = write_deck(tmp, "cpu", released, frames, online(encoders))
    run(mpi([args.embtrain, deck] + small, args.np))
    cuda = write_deck(tmp, "cuda", released, frames, online(encoders))
    run(mpi([args.embtrain, cuda, "--set", "run.device=cuda"] + small, args.np))
    a, b = losses(tmp, "cpu"), losses(tmp, "cuda")
    rel = max(abs(x - y) / abs(x) for x, y in zip(a, b))
    check(len(a) == len(b) == CUDA_STEPS and rel <= CUDA_RTOL,
          f"online losses cpu {a} vs cuda {b}: max relative difference {rel:.2e} <= {CUDA_RTOL}")


def expect_refused(args, tmp, deck, needle, what):
    name = os.path.splitext(os.path.basename(deck))[0]
    p = run(mpi([args.embtrain, deck], args.np), expect_rc=2)
    lines = sorted({l for l in p.stderr.splitlines() if l.startswith("embtrain")})  # not mpirun's own lines
    check(len(lines) == 1 and needle in lines[0] and not os.path.exists(os.path.join(tmp, "out", name)),
          f"{what}: {lines}")


def case_bad_input(args, tmp, released, inputs):
    encoders, frames = inputs
    missing = os.path.join(tmp, "no_such_folder")
    expect_refused(args, tmp, write_deck(tmp, "missing", released, frames, online(missing)), missing,
                   "encoders folder missing")
    narrow = os.path.join(tmp, "narrow")
    run(["/usr/bin/python3", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "encoders_ref",
                                          "make_tiny_encoders.py"), "--which", "vae21,t5,clip", "--t5-dim", "16",
         "--out", narrow])
    shutil.copyfile(os.path.join(encoders, "spiece.model"), os.path.join(narrow, "wan", "spiece.model"))
    expect_refused(args, tmp, write_deck(tmp, "narrow", released, frames, online(os.path.join(narrow, "wan"))),
                   "umT5's width 16 disagrees with the DiT's model.d_ctx = 32", "umT5 narrower than the DiT's text width")
    no_video = os.path.join(tmp, "no_video.h5")
    shutil.copyfile(frames, no_video)
    with h5py.File(no_video, "r+") as f:
        del f["video"]
    expect_refused(args, tmp, write_deck(tmp, "no_video", released, no_video, online(encoders)),
                   "no camera frames, but model.encoders = online", "a packed file without raw frames")


def main():
    run_case(__doc__, "dreamzero_online_", {"equal": case_equal, "cuda": case_cuda, "bad_input": case_bad_input},
             make_inputs)


if __name__ == "__main__":
    main()
