#!/usr/bin/python3
"""Released weights in and out, end to end (issue 32, "Weights in and out"; README "Fine-tuning
released weights"), on a tiny GR00T-N1.5 checkpoint in upstream's format:

  round_trip   init_from the checkpoint, train 20 steps on NP ranks (ZeRO-3), export, then:
               the export's key set, shapes and dtypes are the checkpoint's; backbone tensors,
               config.json and the other files are byte-identical; action_head.* changed; the
               metadata.json names the data's embodiment tag and statistics; re-importing the
               export (init_from it, --dump) gives the trained checkpoint's parameters bit for bit;
               the first step from the released folder and from the export equals the float64
               upstream reference computed from the folder's own tensors (1e-5; 1e-4 on cuda);
               the checkpoint folder exports its newest checkpoint that verifies, whatever
               `latest` names, skipping a corrupt one with one warning line (none: exit 2).
  freezing     train.tune_diffusion_model = off and tune_projector = off: after 20 steps the
               frozen tensors (action_head.model.*, the state/action encoders and decoder, the
               position table) are bit-identical to the released ones; the vl blocks trained; the
               frozen DiT runs without dropout as upstream's eval mode; frozen tensors hold no AdamW
               moments: the moments are two floats per trainable parameter (the run's log),
               the checkpoint stores moments of trainable tensors only and is that much smaller.
  bad_input    a truncated file, a header lying about offsets or a dtype, a duplicated key, a
               missing shard, a tensor missing, extra or of another shape: exit 2 on every rank, one line naming
               the file and the tensor, no run folder written.

    test_init_from_export.py --embtrain BIN --embpack BIN [--np N] [--device cpu|cuda]
                             --case round_trip|freezing|bad_input
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import h5py
import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "upstream"))
import safetensors_io  # noqa: E402

STEPS = 20


def run(cmd, expect_rc=0):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != expect_rc:
        sys.exit(f"FAIL: {' '.join(cmd)}: exit {p.returncode}, expected {expect_rc}\n{p.stdout}\n{p.stderr}")
    return p


def mpi(args, np_):
    return ["mpirun", "-np", str(np_), "--oversubscribe"] + args if np_ > 1 else args


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def make_inputs(tmp, embpack):
    """The tiny checkpoint, and a packed dataset of its dimensions under upstream's new_embodiment
    tag (projector slot 31): synth writes embodiment 0, which upstream names nothing."""
    run(["/usr/bin/python3", os.path.join(HERE, "..", "upstream", "make_tiny_checkpoint.py"), tmp,
         "--family", "gr00t", "--seed", "3"])
    released = os.path.join(tmp, "gr00t_n15_tiny")
    cfg = json.load(open(os.path.join(released, "config.json")))["action_head_cfg"]
    data = os.path.join(tmp, "data.h5")
    run([embpack, "synth", "--family", "gr00t", "--episodes", "8", "--min-steps", "20", "--max-steps", "40",
         "--seed", "5", "--embodiments", "1", "--state-dim", str(cfg["max_state_dim"]), "--action-dim",
         str(cfg["action_dim"]), "--d-vl", str(cfg["backbone_embedding_dim"]), "-o", data])
    with h5py.File(data, "r+") as f:
        for key in ("embodiments/state_dim", "embodiments/action_dim"):
            widths = f[key][()]
            del f[key]
            f.create_dataset(key, data=np.repeat(widths, 32).astype(widths.dtype))
        f["episodes/embodiment"][...] = 31
    return released, data


def write_deck(tmp, name, released, data, extra="", device="cpu"):
    path = os.path.join(tmp, name + ".in")
    with open(path, "w") as f:
        f.write(f"[run]\nseed = 7\ndevice = {device}\noutput_dir = {tmp}/out\nname = {name}\n[data]\npaths = {data}\n"
                f"tokens_per_mb = 256\n[train]\ninit_from = {released}\nsteps = {STEPS}\nglobal_batch = 4\n"
                f"lr = 1e-3\nckpt_every = {STEPS}\nshard = full\n{extra}")
    return path


def train_and_export(args, tmp, name, released, data, extra="", from_run_dir=False):
    """Trains, then exports from the run's output folder or from its checkpoint folder."""
    deck = write_deck(tmp, name, released, data, extra, args.device)
    p = run(mpi([args.embtrain, deck], args.np))
    exported = os.path.join(tmp, name + "_export")
    source = os.path.join(tmp, "out", name) if from_run_dir else os.path.join(tmp, "out", "ckpt", name)
    run([args.embtrain, "export", source, "-o", exported])
    return deck, exported, p.stdout + p.stderr


def dumped_params(args, tmp, deck, init_from):
    """The parameters a run starting from init_from holds (--dump of its first step), by our name;
    the float64 re-implementation of upstream (tests/upstream/gr00t_dump_parity.py) computes that
    step's loss and gradients from init_from's own tensors and must agree to 1e-5."""
    dump = os.path.join(tmp, "reimport.h5")
    run(mpi([args.embtrain, deck, "--set", f"train.init_from={init_from}", "--set", "model.precision=fp32",
             "--dump", dump], args.np))
    p = run(["/usr/bin/python3", os.path.join(HERE, "..", "upstream", "gr00t_dump_parity.py"), dump,
             "--weights", init_from, "--tol", "1e-5" if args.device == "cpu" else "1e-4"])
    check("vs upstream reference" in p.stdout, f"upstream reference from {os.path.basename(init_from)}: "
          + p.stdout.strip().split("; ")[1])
    with h5py.File(dump, "r") as f:
        return {k: f["params"][k][()] for k in f["params"]}


def case_round_trip(args, tmp, released, data):
    deck, exported, _ = train_and_export(args, tmp, "ft", released, data, from_run_dir=True)
    dumped_params(args, tmp, deck, released)  # the import itself, against upstream's names and math
    original = safetensors_io.read_checkpoint(released)
    out = safetensors_io.read_checkpoint(exported)
    check(sorted(out) == sorted(original), f"export holds the released key set ({len(original)} tensors)")
    head, _ = safetensors_io.read_header(os.path.join(released, "model.safetensors"))
    head_out, _ = safetensors_io.read_header(os.path.join(exported, "model.safetensors"))
    same_layout = all(head[k]["dtype"] == head_out[k]["dtype"] and head[k]["shape"] == head_out[k]["shape"]
                      for k in original)
    check(same_layout, "every exported tensor has the released shape and dtype")
    backbone = [k for k in original if not k.startswith("action_head.")]
    check(backbone and all(torch.equal(original[k], out[k]) for k in backbone),
          f"{len(backbone)} backbone tensors exported bit-identical")
    changed = [k for k in original if k.startswith("action_head.") and not torch.equal(original[k], out[k])]
    check(len(changed) > 0.9 * (len(original) - len(backbone)), f"{len(changed)} action_head tensors trained")
    for name in ("config.json", "eagle_config.json"):
        check(open(os.path.join(released, name), "rb").read() == open(os.path.join(exported, name), "rb").read(),
              f"{name} kept byte for byte")
    meta = json.load(open(os.path.join(exported, "experiment_cfg", "metadata.json")))
    stats = meta["new_embodiment"]["statistics"]
    with h5py.File(data, "r") as f:
        mean = f["stats/action/mean"][()]
    check(np.allclose(stats["action"]["action"]["mean"], mean, rtol=0, atol=1e-6) and
          meta["new_embodiment"]["embodiment_tag"] == "new_embodiment",
          "metadata.json: the data's action statistics under new_embodiment")
    with h5py.File(os.path.join(tmp, "out", "ckpt", "ft", f"step_{STEPS:08d}.h5"), "r") as f:
        trained = {k: f["params"][k][()] for k in f["params"]}  # flat; the dump's have their shapes
    reimported = dumped_params(args, tmp, deck, exported)
    check(sorted(reimported) == sorted(trained) and all(np.array_equal(reimported[k].ravel(), trained[k].ravel()) for k in trained),
          f"export then init_from: all {len(trained)} trained parameters bit-exact")
    check(not os.path.exists(exported + ".export-tmp"), "no staging folder left behind")
    p = run([args.embtrain, "export", os.path.join(tmp, "out", "ckpt", "ft"), "-o", exported], expect_rc=2)
    check("exists" in p.stderr and len(p.stderr.strip().splitlines()) == 1, "an existing DIR is refused in one line")
    check_newest_verified(args, tmp)


def check_newest_verified(args, tmp):
    """A checkpoint folder exports the newest checkpoint whose tensors verify, whatever `latest`
    names (resume's rule): a corrupt newest one is skipped with one warning line naming it, and a
    folder with none left is one error line, exit 2."""
    folder = os.path.join(tmp, "out", "ckpt", "ft")
    newest = os.path.join(folder, f"step_{STEPS:08d}.h5")
    older = os.path.join(folder, f"step_{STEPS // 2:08d}.h5")
    shutil.copy(newest, older)
    with h5py.File(older, "r+") as f:
        f.attrs["step"] = np.int64(STEPS // 2)
    with open(os.path.join(folder, "latest"), "w") as f:
        f.write(os.path.basename(older) + "\n")

    def export(name, expect_rc=0):
        return run([args.embtrain, "export", folder, "-o", os.path.join(tmp, name)], expect_rc)

    p = export("from_newest")
    check(f"from {newest} (step {STEPS})" in p.stdout and "skipping" not in p.stderr,
          "a folder exports its newest complete checkpoint, not the older one `latest` names")
    with h5py.File(newest, "r") as f:
        tensor = sorted(f["params"])[0]
        offset = f["params"][tensor].id.get_offset()
    with open(newest, "r+b") as f:
        f.seek(offset + 5)
        byte = f.read(1)[0]
        f.seek(offset + 5)
        f.write(bytes([byte ^ 0x10]))
    p = export("from_older")
    skipped = [l for l in p.stderr.splitlines() if "skipping" in l]
    check(f"from {older} (step {STEPS // 2})" in p.stdout and len(skipped) == 1 and
          f"skipping {newest}:/params/{tensor}: checksum mismatch" in skipped[0],
          f"a corrupt newest checkpoint is skipped with one warning line: {skipped}")
    os.remove(older)
    p = export("from_none", expect_rc=2)
    errors = [l for l in p.stderr.splitlines() if "skipping" not in l and l.strip()]
    check(len(errors) == 1 and "no complete checkpoint with intact tensors" in errors[0] and
          not os.path.exists(os.path.join(tmp, "from_none")), f"nothing valid: one error line, exit 2: {errors}")


def check_frozen_state(args, log, ckpt):
    """Frozen tensors hold no AdamW moments, on the device (the run's log line) nor in checkpoints."""
    m = re.search(r"freezing: (\d+) of (\d+) parameters frozen .* rank 0 holds (\d+) bytes of moments, "
                  r"checkpoints (\d+) bytes at most", log)
    check(m is not None, "the run logs its frozen parameters and optimizer state")
    frozen, total, moments, bound = (int(g) for g in m.groups())
    with h5py.File(ckpt, "r") as f:
        params = {k: f["params"][k].size for k in f["params"]}
        stored = {g: sorted(f[g]) for g in ("exp_avg", "exp_avg_sq")}
        moment_elements = sum(f["exp_avg"][k].size for k in f["exp_avg"])
    trainable = total - frozen
    check(sum(params.values()) == total and stored["exp_avg"] == stored["exp_avg_sq"] and
          moment_elements == trainable and 0 < frozen < total,
          f"the checkpoint holds moments of the {trainable} trainable parameters only ({frozen} frozen have none)")
    # One rank holds them all; with ZeRO-3 each rank holds the trainable part of its half of every
    # bucket, which need not be half of them (a unit may hold frozen and trainable tensors).
    if args.np == 1:
        check(moments == 2 * 4 * trainable, f"the moments take {moments} B: two floats per trainable parameter")
    else:
        check(0 < moments < 2 * 4 * trainable,
              f"rank 0 holds {moments} B of moments, a shard of the trainable parameters' {2 * 4 * trainable} B")
    size = os.path.getsize(ckpt)
    check(size <= bound < 4 * total * 3,
          f"checkpoint {size} B <= {bound} B, below the {12 * total} B of one with every moment")
    check(size < 4 * (total + 2 * trainable) + 4 * frozen,
          f"checkpoint {size} B: parameters and trainable moments ({4 * (total + 2 * trainable)} B) plus "
          "metadata, less than the frozen moments' bytes")


def case_freezing(args, tmp, released, data):
    deck, exported, log = train_and_export(args, tmp, "frozen", released, data,
                                           "tune_diffusion_model = off\ntune_projector = off\n")
    check_frozen_state(args, log, os.path.join(tmp, "out", "ckpt", "frozen", f"step_{STEPS:08d}.h5"))
    dump = os.path.join(tmp, "frozen.h5")
    run([args.embtrain, deck, "--set", "model.precision=fp32", "--dump", dump])
    with h5py.File(dump, "r") as f:
        check(float(f.attrs["dropout"]) == 0 and float(f.attrs["dropout_vl"]) == 0.2,
              "a frozen DiT runs without dropout (upstream's eval mode), the vl blocks keep 0.2")
    original = safetensors_io.read_checkpoint(released)
    out = safetensors_io.read_checkpoint(exported)
    frozen_prefixes = ("action_head.model.", "action_head.state_encoder.", "action_head.action_encoder.",
                       "action_head.action_decoder.", "action_head.position_embedding.")
    frozen = [k for k in original if k.startswith(frozen_prefixes)]
    check(frozen and all(torch.equal(original[k], out[k]) for k in frozen),
          f"{len(frozen)} frozen tensors bit-identical after {STEPS} steps")
    trained = [k for k in original if k.startswith("action_head.vl_self_attention.")]
    check(trained and all(not torch.equal(original[k], out[k]) for k in trained if k.endswith("weight")),
          "the vl blocks (always trained) changed")


def corrupt(folder, how):
    """A copy of the released folder broken one way; returns (folder, the tensor the error must name)."""
    path = os.path.join(folder, "model.safetensors")
    header, start = safetensors_io.read_header(path)
    raw = open(path, "rb").read()
    names = [k for k in header if k != "__metadata__"]
    victim = "action_head.model.proj_out_2.weight"
    last = max(names, key=lambda k: header[k]["data_offsets"][1])

    def rewrite(h, body=None):
        text = json.dumps(h).encode()
        text += b" " * (-len(text) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text + (raw[start:] if body is None else body))

    if how == "truncated":
        open(path, "wb").write(raw[:-64])
        return last
    if how == "offsets":
        header[victim]["data_offsets"][1] += 4
        rewrite(header)
        return victim
    if how == "dtype":
        header[victim]["dtype"] = "F16"
        rewrite(header)
        return victim
    if how == "duplicate":
        text = json.dumps(header)
        dup = json.dumps({victim: header[victim]})[1:-1]
        text = text[:-1] + ", " + dup + "}"
        data = text.encode() + b" " * (-len(text) % 8)
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(data)) + data + raw[start:])
        return victim
    if how == "shape":
        header[victim]["shape"] = header[victim]["shape"][::-1] + [1]
        rewrite(header)
        return victim
    if how in ("missing", "extra"):
        tensors = {k: (v, header[k]["dtype"]) for k, v in safetensors_io.read_file(path).items()}
        name = victim if how == "missing" else "action_head.model.proj_out_3.weight"
        if how == "missing":
            del tensors[name]
        else:
            tensors[name] = (torch.zeros(4, 4), "F32")
        safetensors_io.write_file(path, tensors)
        return name
    if how == "missing_shard":
        tensors = safetensors_io.read_file(path)
        os.remove(path)
        ordered = {k: (v, header[k]["dtype"]) for k, v in tensors.items()}
        safetensors_io.write_sharded(folder, ordered, 2)
        index = json.load(open(os.path.join(folder, "model.safetensors.index.json")))
        gone = sorted(set(index["weight_map"].values()))[1]
        os.remove(os.path.join(folder, gone))
        return next(k for k, f in sorted(index["weight_map"].items()) if f == gone)
    raise ValueError(how)


def case_bad_input(args, tmp, released, data):
    for how in ("truncated", "offsets", "dtype", "duplicate", "shape", "missing", "extra", "missing_shard"):
        broken = os.path.join(tmp, "broken_" + how)
        shutil.copytree(released, broken)
        tensor = corrupt(broken, how)
        deck = write_deck(tmp, "bad_" + how, broken, data, device=args.device)
        p = run(mpi([args.embtrain, deck], args.np), expect_rc=2)
        lines = [l for l in p.stderr.splitlines() if l.startswith("embtrain")]  # not mpirun's banner
        check(len(lines) == 1 and broken in lines[0] and tensor in lines[0],
              f"{how}: exit 2 on {args.np} rank(s), one line naming the file and '{tensor}': {lines[-1:]}")
        check(not os.path.exists(os.path.join(tmp, "out", "bad_" + how)) and
              not os.path.exists(os.path.join(tmp, "out", "ckpt", "bad_" + how)), f"{how}: nothing written")


def run_case(doc, prefix, cases, make):
    """The command line of an init_from/export test (doc: its usage), then cases[--case] on the
    inputs make(tmp, embpack) returns, in a temporary folder."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--embtrain", required=True)
    ap.add_argument("--embpack", required=True)
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="run.device (cuda: the emulation in CI)")
    ap.add_argument("--case", choices=tuple(cases), required=True)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        released, data = make(tmp, args.embpack)
        cases[args.case](args, tmp, released, data)
    print("PASS")


def main():
    run_case(__doc__, "init_from_export_",
             {"round_trip": case_round_trip, "freezing": case_freezing, "bad_input": case_bad_input}, make_inputs)


if __name__ == "__main__":
    main()
