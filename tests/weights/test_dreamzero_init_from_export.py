#!/usr/bin/python3
"""DreamZero's released weights in and out (issue 32, "Weights in and out"), on the tiny sharded
checkpoint of tests/upstream/make_tiny_checkpoint.py (two shards and model.safetensors.index.json,
the DiT under Wan's native names in F32, a few umT5 tensors in BF16; img_emb CLIP_DIM wide), with
training data in the DreamZero layout (an `embpack synth` file rewritten into it: per step a clip
of 5 latent frames with the I2V y, CLIP rows, states):

  refused      a packed file whose CLIP rows are wider than the deck's model.d_clip: refused on
               every rank, exit 2, one line naming the dataset and both widths, nothing written
  round_trip   init_from takes the upstream layout from config.json (dreamzero_14b_droid: y
               channels = in_dim - out_dim, the CLIP context, the state encoder); the imported
               parameters are the checkpoint's tensors in our layouts, CLIP context, y columns of
               the patch embedding and state encoder included; train a few steps on NP ranks
               (ZeRO-3), export; the export is sharded as the source with its index, its key set,
               shapes and dtypes are the checkpoint's, the umT5 tensors and config.json are
               byte-identical, the DiT changed; init_from the export gives the trained parameters
               bit for bit

    test_dreamzero_init_from_export.py --embtrain BIN --embpack BIN [--np N] [--device cpu|cuda]
                                       --case refused|round_trip
"""
import json
import os
import sys

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "upstream"))
import safetensors_io  # noqa: E402
from test_init_from_export import check, mpi, run, run_case  # noqa: E402

STEPS = 4
PREFIX = "action_head.model."
CLIP_DIM = 16      # img_emb's input width in the tiny checkpoint and the packed CLIP rows
CLIP_TOKENS = 257  # upstream's CLIP rows per sample
LATENT_FRAMES = 5  # frame 0 + two blocks of num_frame_per_block = 2


def dreamzero_layout(src, dst, latent_channels, clip_dim, seed):
    """`embpack synth`'s wan file `src` (one view of latent_channels + y channels, a latent per
    step) rewritten into the DreamZero layout (src/data/packed_format.hpp) as `dst`: per step the
    clip of LATENT_FRAMES latent frames from it (the episode's last repeated), y = [mask 4 | the
    clip's frame-0 latents] on frame 0 and [0 | random] elsewhere, random CLIP rows per step."""
    rng = np.random.default_rng(seed)
    with h5py.File(src, "r") as f, h5py.File(dst, "w") as g:
        for name in f:
            if name != "latents":
                f.copy(name, g)
        g.attrs.update(f.attrs)
        lat, offsets = f["latents/view0"][()], f["latents/view0_offsets"][()]
        ep = f["episodes/offsets"][()]
        C = latent_channels
        clips = []
        for e in range(len(ep) - 1):
            frames = lat[offsets[e]:offsets[e + 1]]
            for t in range(len(frames)):
                clip = frames[np.minimum(np.arange(t, t + LATENT_FRAMES), len(frames) - 1)].copy()
                clip[:, :, :, C:C + 4] = 0
                clip[0, :, :, C:C + 4] = 1
                clip[0, :, :, C + 4:] = clip[0, :, :, :C]
                clips.append(clip)
        out = g.create_dataset("latents/view0", data=np.concatenate(clips))
        out.attrs.update(f["latents/view0"].attrs)
        for key, value in (("clip_frames", LATENT_FRAMES), ("frame_stride", 1), ("cond_channels", lat.shape[3] - C),
                           ("frames", 1 + 4 * (LATENT_FRAMES - 1))):
            out.attrs[key] = str(value)
        g["latents/view0_offsets"] = (LATENT_FRAMES * ep).astype(np.int64)
        steps = int(ep[-1])
        g["features/clip"] = rng.standard_normal((steps * CLIP_TOKENS, clip_dim)).astype(np.float16)
        g["features/clip_offsets"] = (CLIP_TOKENS * np.arange(steps + 1)).astype(np.int64)


# The relative-action keys of the released DROID recipe's experiment_cfg/conf.yaml (droid_relative.yaml).
RELEASED_CONF = "max_state_dim: 64\nrelative_action: true\nrelative_action_keys:\n- joint_position\nmax_chunk_size: 4\n"


def make_inputs(tmp, embpack):
    """The tiny checkpoint, and a packed dataset of its dimensions in the DreamZero layout
    (frame_seqlen 4 = a 4x4 latent in 2x2 patches, in_dim channels, text_dim context width)."""
    run(["/usr/bin/python3", os.path.join(HERE, "..", "upstream", "make_tiny_checkpoint.py"), tmp,
         "--family", "dreamzero", "--seed", "3", "--clip-dim", str(CLIP_DIM)])
    released = os.path.join(tmp, "dreamzero_tiny")
    os.makedirs(os.path.join(released, "experiment_cfg"))
    with open(os.path.join(released, "experiment_cfg", "conf.yaml"), "w") as f:  # as the DROID release trained
        f.write(RELEASED_CONF)
    cfg = json.load(open(os.path.join(released, "config.json")))["action_head_cfg"]["config"]
    dit = cfg["diffusion_model_cfg"]
    synth = os.path.join(tmp, "synth.h5")
    run([embpack, "synth", "--family", "wan", "--episodes", "4", "--min-steps", "16", "--max-steps", "24",
         "--views", "1", "--steps-per-latent", "1", "--seed", "5", "--action-dim", str(dit["action_dim"]),
         "--state-dim", str(dit["max_state_dim"]), "--d-txt", str(dit["text_dim"]), "--latent-channels",
         str(dit["in_dim"]), "--latent-height", "4", "--latent-width", "4", "-o", synth])
    data = os.path.join(tmp, "data.h5")
    dreamzero_layout(synth, data, dit["out_dim"], CLIP_DIM, 11)
    run([embpack, "verify", data])
    return released, data


def write_deck(tmp, name, released, data, device, extra=""):
    path = os.path.join(tmp, name + ".in")
    with open(path, "w") as f:
        f.write(f"[run]\nseed = 7\ndevice = {device}\noutput_dir = {tmp}/out\nname = {name}\n[data]\npaths = {data}\n"
                f"tokens_per_mb = 1280\n[model]\nlatent_height = 4\nlatent_width = 4\nlatent_frames = {LATENT_FRAMES}\n"
                f"d_clip = {CLIP_DIM}\n[train]\n"
                f"init_from = {released}\nsteps = {STEPS}\nglobal_batch = 2\nlr = 1e-3\nckpt_every = {STEPS}\n"
                f"shard = full\n{extra}")
    return path


def dumped_params(args, tmp, deck, init_from):
    """The parameters a run starting from init_from holds (--dump of its first step), by our name."""
    dump = os.path.join(tmp, "reimport.h5")
    run(mpi([args.embtrain, deck, "--set", f"train.init_from={init_from}", "--set", "model.precision=fp32",
             "--dump", dump], args.np))
    with h5py.File(dump, "r") as f:
        return {k: f["params"][k][()] for k in f["params"]}


def case_refused(args, tmp, released, data):
    wide = os.path.join(tmp, "wide_clip.h5")
    with h5py.File(data, "r") as f, h5py.File(wide, "w") as g:
        for name in f:
            f.copy(name, g)
        g.attrs.update(f.attrs)
        rows = g["features/clip"].shape[0]
        del g["features/clip"]
        g["features/clip"] = np.zeros((rows, CLIP_DIM + 8), np.float16)
    deck = write_deck(tmp, "refused", released, wide, args.device)
    p = run(mpi([args.embtrain, deck], args.np), expect_rc=2)
    lines = [l for l in p.stderr.splitlines() if l.startswith("embtrain")]
    check(len(lines) == 1 and wide in lines[0] and "/features/clip" in lines[0] and
          f"width {CLIP_DIM + 8} per step" in lines[0] and f"of width {CLIP_DIM} (model.clip_tokens, model.d_clip)" in lines[0],
          f"exit 2 on {args.np} rank(s), one line naming the dataset and both CLIP widths: {lines[-1:]}")
    check(not os.path.exists(os.path.join(tmp, "out", "refused")), "nothing written")


def case_round_trip(args, tmp, released, data):
    deck = write_deck(tmp, "dz", released, data, args.device)
    original = safetensors_io.read_checkpoint(released)
    imported = dumped_params(args, tmp, deck, released)
    pairs = {"blocks.0.attn1.q.weight": PREFIX + "blocks.0.self_attn.q.weight",
             "blocks.1.ffn.fc2.weight": PREFIX + "blocks.1.ffn.2.weight",
             "blocks.1.attn2.k_img.weight": PREFIX + "blocks.1.cross_attn.k_img.weight",
             "img_emb.fc1.weight": PREFIX + "img_emb.proj.1.weight"}
    check(all(np.array_equal(imported[ours].reshape(original[theirs].shape[::-1]), original[theirs].numpy().T)
              for ours, theirs in pairs.items()), "imported linears are the checkpoint's, transposed")
    check(np.array_equal(imported["blocks.0.modulation"].ravel(), original[PREFIX + "blocks.0.modulation"].numpy().ravel()),
          "imported modulation table is the checkpoint's [1, 6, D] as [6, D]")
    check(np.array_equal(imported["state_enc.fc1.weight"].ravel(),
                         original[PREFIX + "state_encoder.layer1.W"].numpy().ravel()),
          "imported state encoder is the checkpoint's (its one embodiment slot)")
    patch = original[PREFIX + "patch_embedding.weight"].numpy()  # [D, in_dim = latents + y, pt, ph, pw]
    check(patch.shape[1] == 36 and np.array_equal(imported["patch_embed.weight"].reshape(patch.shape[2:] + patch.shape[1::-1]),
                                                  patch.transpose(2, 3, 4, 1, 0)),
          "imported patch embedding is the checkpoint's, its 20 y columns included, per pixel [latents | y]")

    run(mpi([args.embtrain, deck], args.np))
    exported = os.path.join(tmp, "dz_export")
    run([args.embtrain, "export", os.path.join(tmp, "out", "ckpt", "dz"), "-o", exported])
    out = safetensors_io.read_checkpoint(exported)
    expected = sorted(original)
    check(sorted(out) == expected and any(".k_img." in k for k in expected) and
          any(k.startswith(PREFIX + "state_encoder.") for k in expected),
          f"export holds the checkpoint's {len(expected)} tensors, CLIP context and state encoder included")
    index = json.load(open(os.path.join(exported, "model.safetensors.index.json")))["weight_map"]
    source_index = json.load(open(os.path.join(released, "model.safetensors.index.json")))["weight_map"]
    check(all(index[k] == source_index[k] for k in expected) and sorted(index) == expected,
          "exported index: every tensor in the shard the source had it in")
    headers = {}
    for folder in (released, exported):
        for shard in set(source_index.values()):
            headers.setdefault(folder, {}).update(safetensors_io.read_header(os.path.join(folder, shard))[0])
    check(all(headers[exported][k]["dtype"] == headers[released][k]["dtype"] and
              headers[exported][k]["shape"] == headers[released][k]["shape"] for k in expected),
          "every exported tensor has the checkpoint's shape and dtype")
    passthrough = [k for k in expected if not k.startswith(PREFIX)]
    check(passthrough and all(torch.equal(original[k], out[k]) for k in passthrough),
          f"{len(passthrough)} umT5 tensors exported bit-identical")
    check(open(os.path.join(released, "config.json"), "rb").read() ==
          open(os.path.join(exported, "config.json"), "rb").read(), "config.json kept byte for byte")
    check(open(os.path.join(exported, "experiment_cfg", "conf.yaml")).read() ==
          RELEASED_CONF.replace("relative_action: true\nrelative_action_keys:\n- joint_position\n",
                                "relative_action: false\nrelative_action_keys: []\n"),
          "conf.yaml: the run's absolute actions (upstream inference adds no state), its other lines as released")
    changed = [k for k in expected if k.startswith(PREFIX) and not torch.equal(original[k], out[k])]
    check(len(changed) > 0.9 * (len(expected) - len(passthrough)), f"{len(changed)} DiT tensors trained")
    with h5py.File(os.path.join(tmp, "out", "ckpt", "dz", f"step_{STEPS:08d}.h5"), "r") as f:
        trained = {k: f["params"][k][()] for k in f["params"]}
    reimported = dumped_params(args, tmp, deck, exported)
    check(sorted(reimported) == sorted(trained) and
          all(np.array_equal(reimported[k].ravel(), trained[k].ravel()) for k in trained),
          f"export then init_from: all {len(trained)} trained parameters bit-exact")


def main():
    run_case(__doc__, "dreamzero_init_from_export_", {"refused": case_refused, "round_trip": case_round_trip},
             make_inputs)


if __name__ == "__main__":
    main()
