#!/usr/bin/python3
"""DreamZero's data path end to end (issues 32 and 34): the LeRobot fixture (../shared/fixtures
/lerobot/g1_v21, trimmed to a few steps per episode to stay small) -> `embpack lerobot` (a 7-wide
state/action slice through a modality.json) -> `embpack features --dreamzero` with tiny random
upstream-format encoders (make_tiny_encoders.py: Wan2.1 VAE, umT5 of the DiT's text width, CLIP;
umT5's tokenizer trained here by Debian's spm_train on our own corpus) -> train the tiny DreamZero
checkpoint (make_tiny_checkpoint.py, img_emb as wide as the tiny CLIP's features) a few steps on
the packed file (train.init_from: the DreamZero DROID layout with its states, CLIP context and I2V
y) -> `embtrain export` -> the exported key set, shapes and dtypes are the checkpoint's, and its
metadata.json the release's entry with the statistics the run recorded. The
model's inputs are the file's (--dump: every sample's video rows, latents and y, are its step's
patchified latents, its states, CLIP rows, action mask and has_real_action), and the loss changes
when the file's CLIP rows are zeroed. And the bad input of `embpack features --dreamzero`:
frames the VAE's strides cannot take, a frame count the causal chunking cannot take, a tokenizer
model that does not load, encoder weights of the wrong shape, features of other encoders at
training: one line naming it, exit 2, nothing written.

    test_dreamzero_lerobot_to_export.py --embtrain BIN --embpack BIN [--np N] --case end_to_end|bad_input
"""
import json
import os
import shutil
import subprocess
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(HERE, "..", "upstream"))
import safetensors_io  # noqa: E402
from test_init_from_export import check, mpi, run, run_case  # noqa: E402

FIXTURE = os.path.join(ROOT, "..", "shared", "fixtures", "lerobot", "g1_v21")
STEPS_PER_EPISODE = 5  # kept of each fixture episode
FRAMES = 9             # clip frames: 1 + 4·2 -> 3 latent frames = frame 0 + one block of 2
LATENT_FRAMES = 3
CLIP_DIM = 32          # the tiny CLIP's feature width (make_tiny_encoders.py TINY_CLIP)
ACTION_WIDTH = 7       # the modality.json slice packed_frames() writes
TRAIN_STEPS = 3


def spm_model(tmp):
    """umT5's tokenizer stand-in: a SentencePiece model with T5's ids (<pad> 0, </s> 1, <unk> 2)."""
    objects = ["cup", "bowl", "towel", "apple", "drawer", "block", "lid", "sponge"]
    verbs = ["pick up", "put", "wipe", "open", "close", "push", "stack", "move"]
    with open(os.path.join(tmp, "corpus.txt"), "w") as f:
        for i in range(400):
            f.write(f"A multi-view video shows that a robot {verbs[i % 8]} the {objects[i * 3 % 8]}. "
                    f"The robot {verbs[i * 5 % 8]} the {objects[i % 8]} on the table.\n")
    run(["spm_train", f"--input={tmp}/corpus.txt", f"--model_prefix={tmp}/spiece", "--vocab_size=200",
         "--model_type=unigram", "--character_coverage=1.0", "--pad_id=0", "--eos_id=1", "--unk_id=2",
         "--bos_id=-1", "--hard_vocab_limit=false", "--minloglevel=2"])
    return os.path.join(tmp, "spiece.model")


def trim(src, dst, keep):
    """The packed file `src` with the first `keep` steps of every episode (every per-step array)."""
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        offsets = f["episodes/offsets"][()]
        rows = np.concatenate([np.arange(a, min(b, a + keep)) for a, b in zip(offsets[:-1], offsets[1:])])
        lengths = [min(b - a, keep) for a, b in zip(offsets[:-1], offsets[1:])]
        per_step = {"steps/state", "steps/action", "steps/reward", "steps/done"} | {f"video/{v}" for v in f["video"]}

        def copy(name, obj):
            if not isinstance(obj, h5py.Dataset) or name.startswith("features/"):
                return
            g.create_dataset(name, data=obj[()][rows] if name in per_step else obj[()])
            g[name].attrs.update(obj.attrs)
        f.visititems(copy)
        del g["episodes/offsets"]
        g["episodes/offsets"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        vl_rows = np.concatenate([np.arange(f["features/vl_offsets"][r], f["features/vl_offsets"][r + 1]) for r in rows])
        g["features/vl"] = f["features/vl"][()][vl_rows]
        g["features/vl_offsets"] = np.concatenate([[0], np.cumsum(np.diff(f["features/vl_offsets"][()])[rows])])
        g.attrs.update(f.attrs)


def packed_frames(tmp, embpack):
    """The fixture packed by embpack lerobot at 48x64 with a 7-wide state and action, trimmed."""
    modality = {"state": {"left_arm": {"start": 0, "end": 7}}, "action": {"left_arm": {"start": 0, "end": 7}},
                "video": {"cam_high": {"original_key": "observation.images.cam_high"}},
                "annotation": {"human.task_description": {"original_key": "task_index"}}}
    with open(os.path.join(tmp, "modality.json"), "w") as f:
        json.dump(modality, f)
    full = os.path.join(tmp, "lerobot.h5")
    run([embpack, "lerobot", FIXTURE, "--modality", os.path.join(tmp, "modality.json"), "--height", "48",
         "--width", "64", "-o", full])
    frames = os.path.join(tmp, "frames.h5")
    trim(full, frames, STEPS_PER_EPISODE)
    run([embpack, "verify", frames])
    return frames


def make_inputs(tmp, embpack):
    """The tiny DreamZero checkpoint, tiny encoders of its text width with a tokenizer, the frames."""
    run(["/usr/bin/python3", os.path.join(ROOT, "tests", "upstream", "make_tiny_checkpoint.py"), tmp,
         "--family", "dreamzero", "--seed", "3", "--clip-dim", str(CLIP_DIM)])
    released = os.path.join(tmp, "dreamzero_tiny")
    dit = json.load(open(os.path.join(released, "config.json")))["action_head_cfg"]["config"]["diffusion_model_cfg"]
    run(["/usr/bin/python3", os.path.join(ROOT, "tests", "encoders_ref", "make_tiny_encoders.py"), "--which",
         "vae21,t5,clip", "--t5-dim", str(dit["text_dim"]), "--out", tmp])
    encoders = os.path.join(tmp, "wan")
    os.rename(spm_model(tmp), os.path.join(encoders, "spiece.model"))
    return released, (encoders, packed_frames(tmp, embpack))


def features(args, encoders, frames, out, *extra, expect_rc=0):
    """embpack features --dreamzero: 2x2 tiles of 16x16 (a 32x32 picture -> 4x4 latents), clips of
    FRAMES frames, unless `extra` sets them."""
    defaults = [opt for name, value in (("--tile", "16x16"), ("--frames", str(FRAMES))) if name not in extra
                for opt in (name, value)]
    return run(mpi([args.embpack, "features", "--dreamzero", encoders, frames, "--vae-chunk", "0", *defaults,
                    *extra, "-o", out], args.np), expect_rc)

def dumped_step(args, tmp, deck, data, name):
    """--dump of the first step of the run on `data` (the deck's other settings): the dump file."""
    dump = os.path.join(tmp, name + ".h5")
    run(mpi([args.embtrain, deck, "--set", f"data.paths={data}", "--dump", dump], args.np))
    return dump


def upstream_q99(x, q01, q99):
    """DreamZero's q99 in float32: 2·((x − q01)/(q99 − q01)) − 1, x where q01 == q99, clamped to [−1, 1]."""
    x, q01, q99 = x.astype(np.float32), q01.astype(np.float32), q99.astype(np.float32)
    span = np.where(q99 != q01, q99 - q01, np.float32(1))
    out = np.where(q99 != q01, np.float32(2) * ((x - q01) / span) - np.float32(1), x)
    return np.clip(out, np.float32(-1), np.float32(1)).astype(np.float32)


def check_model_inputs(dump, data):
    """Every dumped sample's model inputs are its packed step's: the step whose CLIP rows it holds
    gives its video rows (per patch pixel (kh, kw) the latents then the y, [mask 4 | image
    latents], clean and noisy tokens alike), its state rows are the file's as upstream normalises them
    (data.normalize = upstream: DreamZero's q99 with the file's /stats, dreamzero ab790c1
    groot/vla/data/transform/state_action.py:99-120), its action mask is 1 on the packed action
    width only, has_real_action 1."""
    with h5py.File(data, "r") as f:
        lat = f["latents/dreamzero"][()].astype(np.float32)
        clip = f["features/clip"][()].astype(np.float32).reshape(-1, 257, CLIP_DIM)
        states = upstream_q99(f["steps/state"][()], f["stats/state/q01"][()], f["stats/state/q99"][()])
    samples = 0
    with h5py.File(dump, "r") as d:
        for g in d["micro_batch"].values():
            kind, seq, pos = g["kind"][()], g["seq"][()], g["pos"][()]
            video = (kind == 0) | (kind == 1)
            x0, vseq, vpos = g["video_x0"][()], seq[video], pos[video]
            for b, rows in enumerate(g["clip"][()]):
                steps = [s for s in range(len(clip)) if np.array_equal(clip[s], rows)]
                expect = lambda s, r: lat[s * LATENT_FRAMES + vpos[r][0], 2 * vpos[r][1]:2 * vpos[r][1] + 2,  # noqa: E731
                                          2 * vpos[r][2]:2 * vpos[r][2] + 2].ravel()
                mine = np.nonzero(vseq == b)[0]
                check(any(all(np.array_equal(x0[r], expect(s, r)) for r in mine) for s in steps),
                      f"sample {b}: its {len(mine)} video rows are the patchified latents and y of its CLIP rows' step")
                samples += 1
            state = g["state"][()]
            check(all(np.any(np.all(states == row[:states.shape[1]], axis=1)) and not np.any(row[states.shape[1]:])
                      for row in state), f"{len(state)} state rows are the file's q99-normalised, bit for bit, zero-padded")
            mask = g["action_mask"][()]
            check(np.all(mask[:, :ACTION_WIDTH] == 1) and not np.any(mask[:, ACTION_WIDTH:]),
                  f"action mask 1 on the {ACTION_WIDTH} packed action dims only")
            check(np.all(g["has_real_action"][()] == 1), "has_real_action 1 for every packed sample")
    check(samples > 0, f"{samples} samples checked")


def clip_zeroed(data, out):
    """A copy of the packed file whose CLIP rows are all zero."""
    shutil.copyfile(data, out)
    with h5py.File(out, "r+") as f:
        f["features/clip"][...] = 0
    return out


def released_metadata(released):
    """The released folder's experiment_cfg/metadata.json: DROID's entry, as DreamZero's release has
    one embodiment, with statistics no run computes (7 everywhere)."""
    stats = {name: [7.0] * ACTION_WIDTH for name in ("min", "max", "mean", "std", "q01", "q99")}
    modality = {"absolute": True, "rotation_type": None, "shape": [ACTION_WIDTH], "continuous": True}
    entry = {"statistics": {"state": {"joint_position": stats}, "action": {"joint_position": stats}},
             "modalities": {"state": {"joint_position": modality}, "action": {"joint_position": modality},
                            "video": {}},
             "embodiment_tag": "oxe_droid"}
    os.makedirs(os.path.join(released, "experiment_cfg"), exist_ok=True)
    with open(os.path.join(released, "experiment_cfg", "metadata.json"), "w") as f:
        json.dump({"oxe_droid": entry}, f)


def check_metadata(tmp, exported, log):
    """The export's metadata.json: the released entry (oxe_droid) with the statistics the run
    normalised with (the checkpoint's record) under the run's sub-key, and a warning naming the
    sub-keys the release had."""
    meta = json.load(open(os.path.join(exported, "experiment_cfg", "metadata.json")))
    check(list(meta) == ["oxe_droid"] and meta["oxe_droid"]["embodiment_tag"] == "oxe_droid",
          f"metadata.json: the release's one entry, oxe_droid: {list(meta)}")
    ckpt = os.path.join(tmp, "out", "ckpt", "dz", f"step_{TRAIN_STEPS:08d}.h5")
    with h5py.File(ckpt, "r") as f:
        recorded = json.loads(f.attrs["normalization"])
    check(len(recorded) == 1, "the checkpoint recorded the statistics of one embodiment")
    recorded = next(iter(recorded.values()))
    entry = meta["oxe_droid"]
    for part in ("state", "action"):
        stats = entry["statistics"][part]
        names = sorted(name for name in recorded[part] if name != "rows")
        check(list(stats) == ["left_arm"] and sorted(stats["left_arm"]) == names and
              all(np.array_equal(stats["left_arm"][name], recorded[part][name][:ACTION_WIDTH]) for name in names)
              and stats["left_arm"]["q99"] != [7.0] * ACTION_WIDTH,
              f"{part}: the run's recorded statistics (left_arm), not the release's")
        check(entry["modalities"][part]["left_arm"]["shape"] == [ACTION_WIDTH], f"{part}: modality of left_arm")
    check("the run's statistics under oxe_droid" in log and "sub-keys left_arm where the release has joint_position" in log,
          f"export says where the statistics went and which sub-keys differ: {log.strip()}")


def case_end_to_end(args, tmp, released, inputs):
    encoders, frames = inputs
    released_metadata(released)
    data = os.path.join(tmp, "dz.h5")
    p = features(args, encoders, frames, data)
    check(f"DreamZero features of {2 * STEPS_PER_EPISODE} steps" in p.stdout, p.stdout.strip())
    with h5py.File(data, "r") as f:
        lat = f["latents/dreamzero"]
        check(f.attrs["family"] == "wan" and lat.shape == (2 * STEPS_PER_EPISODE * 3, 4, 4, 36) and
              lat.attrs["clip_frames"] == "3" and lat.attrs["cond_channels"] == "20",
              f"per step a clip of 3 latent frames of 4x4x(16 + 20): {lat.shape}")
        mask = lat[()][:, :, :, 16:20].reshape(-1, 3, 16, 4)
        check(np.all(mask[:, 0] == 1) and np.all(mask[:, 1:] == 0), "the I2V mask: 1 on latent frame 0 only")
        check(f["features/clip"].shape == (2 * STEPS_PER_EPISODE * 257, 32), "CLIP rows [257, 32] per step")
        check(f["features/txt"].shape[1] == 32 and f["features/txt_offsets"].shape == (2,), "umT5 rows per task")
        digests = {f[d].attrs["encoders_digest"] for d in ("latents/dreamzero", "features/txt", "features/clip")}
        check(len(digests) == 1 and "vae " in digests.pop(), "the encoders' digest on all three arrays")
    deck = os.path.join(tmp, "dz.in")
    with open(deck, "w") as f:
        f.write(f"[run]\nseed = 7\noutput_dir = {tmp}/out\nname = dz\n[data]\npaths = {data}\nview = dreamzero\n"
                # the fixture's 5-step episodes hold no whole clip window: every step a sample, the end repeated
                f"dreamzero_episode_end = repeat\n"
                f"dreamzero_encoders = {encoders}\ntokens_per_mb = 4096\n[model]\nlatent_height = 4\n"
                f"latent_width = 4\nlatent_frames = {LATENT_FRAMES}\nd_clip = {CLIP_DIM}\n[train]\ninit_from = {released}\n"
                f"steps = {TRAIN_STEPS}\nglobal_batch = 2\nlr = 1e-3\nckpt_every = {TRAIN_STEPS}\nshard = full\n")
    dump = dumped_step(args, tmp, deck, data, "dump")
    check_model_inputs(dump, data)
    no_clip = dumped_step(args, tmp, deck, clip_zeroed(data, os.path.join(tmp, "no_clip.h5")), "dump_no_clip")
    with h5py.File(dump, "r") as a, h5py.File(no_clip, "r") as b:
        check(a.attrs["loss"] != b.attrs["loss"], f"the CLIP rows feed the loss: {a.attrs['loss']} vs {b.attrs['loss']} "
              "with them zeroed")
    p = run(mpi([args.embtrain, deck], args.np))
    check(f"step {TRAIN_STEPS}" in p.stdout + p.stderr, f"trained {TRAIN_STEPS} steps on the packed DreamZero file")
    exported = os.path.join(tmp, "dz_export")
    p = run([args.embtrain, "export", os.path.join(tmp, "out", "ckpt", "dz"), "-o", exported])
    check_metadata(tmp, exported, p.stdout + p.stderr)
    original = safetensors_io.read_checkpoint(released)
    out = safetensors_io.read_checkpoint(exported)
    expected = sorted(original)
    check(sorted(out) == expected, f"export holds the checkpoint's {len(expected)} tensors")
    shards = set(json.load(open(os.path.join(released, "model.safetensors.index.json")))["weight_map"].values())
    headers = {}
    for folder in (released, exported):
        for shard in shards:
            headers.setdefault(folder, {}).update(safetensors_io.read_header(os.path.join(folder, shard))[0])
    check(all(headers[exported][k]["dtype"] == headers[released][k]["dtype"] and
              headers[exported][k]["shape"] == headers[released][k]["shape"] for k in expected),
          "every exported tensor has the checkpoint's shape and dtype")
    # Features of other encoders are refused at training: one line naming the file, exit 2.
    other = os.path.join(tmp, "other")
    run(["/usr/bin/python3", os.path.join(ROOT, "tests", "encoders_ref", "make_tiny_encoders.py"), "--which",
         "vae21,t5,clip", "--t5-dim", "32", "--seed", "9", "--out", other])
    os.link(os.path.join(encoders, "spiece.model"), os.path.join(other, "wan", "spiece.model"))
    p = run(mpi([args.embtrain, deck, "--set", f"data.dreamzero_encoders={other}/wan"], args.np), expect_rc=2)
    lines = [l for l in p.stderr.splitlines() if l.startswith("embtrain")]
    check(len(lines) == 1 and data in lines[0] and "not data.dreamzero_encoders'" in lines[0],
          f"features of other encoders refused: {lines}")


def expect_refused(args, tmp, encoders, frames, extra, needle, what):
    """embpack features --dreamzero with `extra` options: exit 2, one line holding `needle`, no output."""
    out = os.path.join(tmp, "bad.h5")
    p = features(args, encoders, frames, out, *extra, expect_rc=2)
    lines = [l for l in p.stderr.splitlines() if l.strip()]
    check(len(lines) == 1 and needle in lines[0] and not os.path.exists(out), f"{what}: {lines}")


def case_bad_input(args, tmp, released, inputs):
    encoders, frames = inputs
    expect_refused(args, tmp, encoders, frames, ["--tile", "10x10"], "multiples of 8", "frames of 20x20 (VAE /8)")
    expect_refused(args, tmp, encoders, frames, ["--frames", "8"], "8 frames", "8 frames (not 1 + 4k)")
    bad_tok = os.path.join(tmp, "garbage.model")
    with open(bad_tok, "wb") as f:
        f.write(b"not a sentencepiece model")
    expect_refused(args, tmp, encoders, frames, ["--tokenizer", bad_tok], bad_tok, "a tokenizer model that does not load")
    tensors = safetensors_io.read_file(os.path.join(encoders, "Wan2.1_VAE.safetensors"))
    tensors["encoder.head.2.weight"] = tensors["encoder.head.2.weight"][:, :, :2]
    bad_vae = os.path.join(tmp, "bad_vae.safetensors")
    safetensors_io.write_file(bad_vae, {name: (t, "F32") for name, t in tensors.items()})
    expect_refused(args, tmp, encoders, frames, ["--vae", bad_vae], "encoder.head.2.weight", "VAE weights of the wrong shape")


def main():
    run_case(__doc__, "dreamzero_lerobot_to_export_", {"end_to_end": case_end_to_end, "bad_input": case_bad_input},
             make_inputs)


if __name__ == "__main__":
    main()
