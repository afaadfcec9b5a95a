#!/usr/bin/python3
"""DreamZero's released weights in and out (issue 32, "Weights in and out"), on the tiny sharded
checkpoint of tests/upstream/make_tiny_checkpoint.py (two shards and model.safetensors.index.json,
the DiT under Wan's native names in F32, a few umT5 tensors in BF16):

  refused      the checkpoint holds tensors our wan model does not compute yet (the state encoder,
               the CLIP image context: upstream_map.cpp's NOT YET MODELLED table): init_from is
               refused on every rank, exit 2, one line naming them, nothing written
  round_trip   train.init_from_unmodelled = drop: the imported parameters are the checkpoint's
               tensors in our layouts; train a few steps on NP ranks (ZeRO-3), export; the export is
               sharded as the source with its index, its key set, shapes and dtypes are the
               checkpoint's minus the not-yet-modelled tensors, the umT5 tensors and config.json are
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
# Upstream names (after PREFIX) of the tensors the model does not compute yet: the table in
# src/weights/upstream_map.cpp, as name parts.
NOT_YET_MODELLED = ("state_encoder.", "img_emb.", ".k_img.", ".v_img.", ".norm_k_img.")


def not_yet_modelled(name):
    return name.startswith(PREFIX) and any(part in name[len(PREFIX) - 1:] for part in NOT_YET_MODELLED)


def make_inputs(tmp, embpack):
    """The tiny checkpoint, and a packed dataset of its dimensions (frame_seqlen 4 = a 4x4 latent
    in 2x2 patches, in_dim latent channels, text_dim context width)."""
    run(["/usr/bin/python3", os.path.join(HERE, "..", "upstream", "make_tiny_checkpoint.py"), tmp,
         "--family", "dreamzero", "--seed", "3"])
    released = os.path.join(tmp, "dreamzero_tiny")
    cfg = json.load(open(os.path.join(released, "config.json")))["action_head_cfg"]["config"]
    dit = cfg["diffusion_model_cfg"]
    data = os.path.join(tmp, "data.h5")
    run([embpack, "synth", "--family", "wan", "--episodes", "8", "--min-steps", "20", "--max-steps", "40",
         "--seed", "5", "--action-dim", str(dit["action_dim"]), "--d-txt", str(dit["text_dim"]),
         "--latent-channels", str(dit["in_dim"]), "--latent-height", "4", "--latent-width", "4", "-o", data])
    return released, data


def write_deck(tmp, name, released, data, device, extra=""):
    path = os.path.join(tmp, name + ".in")
    with open(path, "w") as f:
        f.write(f"[run]\nseed = 7\ndevice = {device}\noutput_dir = {tmp}/out\nname = {name}\n[data]\npaths = {data}\n"
                f"tokens_per_mb = 1280\n[model]\nlatent_height = 4\nlatent_width = 4\nlatent_frames = 5\n[train]\n"
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
    deck = write_deck(tmp, "refused", released, data, args.device)
    p = run(mpi([args.embtrain, deck], args.np), expect_rc=2)
    lines = [l for l in p.stderr.splitlines() if l.startswith("embtrain")]
    check(len(lines) == 1 and released in lines[0] and "not model yet" in lines[0] and
          "state_encoder.layer1.W" in lines[0] and "blocks.{l}.cross_attn.k_img.weight" in lines[0] and
          "init_from_unmodelled = drop" in lines[0],
          f"exit 2 on {args.np} rank(s), one line naming the not-yet-modelled tensors: {lines[-1:]}")
    check(not os.path.exists(os.path.join(tmp, "out", "refused")), "nothing written")


def case_round_trip(args, tmp, released, data):
    deck = write_deck(tmp, "dz", released, data, args.device, "init_from_unmodelled = drop\n")
    original = safetensors_io.read_checkpoint(released)
    imported = dumped_params(args, tmp, deck, released)
    pairs = {"blocks.0.attn1.q.weight": PREFIX + "blocks.0.self_attn.q.weight",
             "blocks.1.ffn.fc2.weight": PREFIX + "blocks.1.ffn.2.weight"}
    check(all(np.array_equal(imported[ours].reshape(original[theirs].shape[::-1]), original[theirs].numpy().T)
              for ours, theirs in pairs.items()), "imported linears are the checkpoint's, transposed")
    check(np.array_equal(imported["blocks.0.modulation"].ravel(), original[PREFIX + "blocks.0.modulation"].numpy().ravel()),
          "imported modulation table is the checkpoint's [1, 6, D] as [6, D]")

    run(mpi([args.embtrain, deck], args.np))
    exported = os.path.join(tmp, "dz_export")
    run([args.embtrain, "export", os.path.join(tmp, "out", "ckpt", "dz"), "-o", exported])
    out = safetensors_io.read_checkpoint(exported)
    expected = sorted(k for k in original if not not_yet_modelled(k))
    check(len(expected) < len(original) and sorted(out) == expected,
          f"export holds the checkpoint's key set minus {len(original) - len(expected)} not-yet-modelled tensors")
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
