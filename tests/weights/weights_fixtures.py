#!/usr/bin/env python3
"""Fixtures and checks for the weights layer (tests/weights), independent of embtrain's code.

  weights_fixtures.py make DIR    writes safetensors files (with a safetensors writer of its
                                  own: struct + json, there is no safetensors package here),
                                  torch.save .pth files, every corruption the readers must
                                  refuse, and DIR/<fixture>.expected/ with each tensor's values
                                  as PyTorch converts them (<name>.f32), its stored bytes
                                  (<name>.raw) and manifest.json (name, dtype, shape).
  weights_fixtures.py check DIR   reads what the C++ writer wrote into DIR (written.safetensors,
                                  sharded/) with a safetensors reader of its own and compares
                                  every value bit for bit with PyTorch's conversion of the
                                  float32 inputs in DIR/inputs/<name>.f32. Exit 0 when all match.
"""
import collections
import json
import os
import re
import struct
import sys
import zipfile

import numpy as np
import torch

DTYPE_NAMES = {torch.float32: "F32", torch.bfloat16: "BF16", torch.float16: "F16", torch.float64: "F64",
               torch.int64: "I64"}
FLOAT_TYPES = (torch.float32, torch.bfloat16, torch.float16)


def stored_bytes(t):
    """The tensor's elements in row-major order as stored (bf16 through its bits)."""
    c = t.contiguous()
    return (c.view(torch.int16) if c.dtype == torch.bfloat16 else c).numpy().tobytes()


class Expected:
    """DIR/<label>.expected/: what a reader must return for each tensor of one fixture."""

    def __init__(self, root, label):
        self.dir = os.path.join(root, label + ".expected")
        os.makedirs(self.dir, exist_ok=True)
        self.manifest = []

    def add(self, name, t):
        self.manifest.append({"name": name, "dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape)})
        with open(os.path.join(self.dir, name + ".raw"), "wb") as f:
            f.write(stored_bytes(t))
        if t.dtype in FLOAT_TYPES:
            with open(os.path.join(self.dir, name + ".f32"), "wb") as f:
                f.write(t.contiguous().float().numpy().tobytes())

    def close(self):
        with open(os.path.join(self.dir, "manifest.json"), "w") as f:
            json.dump(self.manifest, f)


def write_safetensors(path, tensors, metadata=None):
    """tensors: [(name, torch tensor)] laid out in this order, as the format specifies."""
    header, data, offset = {}, [], 0
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, t in tensors:
        raw = stored_bytes(t)
        header[name] = {"dtype": DTYPE_NAMES[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        data.append(raw)
        offset += len(raw)
    write_raw_safetensors(path, json.dumps(header).encode(), b"".join(data))


def write_raw_safetensors(path, header_text, data, header_length=None):
    header_text += b" " * (-len(header_text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(header_text) if header_length is None else header_length))
        f.write(header_text)
        f.write(data)


def bf16_from_bits(bits):
    return torch.tensor(np.array(bits, dtype=np.uint16).astype(np.int16)).view(torch.bfloat16)


def sample_tensors(gen):
    """Every kind of value the conversions must get exactly right."""
    f32 = torch.tensor([0.0, -0.0, 1.0, -2.5, 3.0e38, -1.0e-45, 1.17549435e-38, float("inf"), float("-inf"),
                        float("nan"), 0.1, 123456.789], dtype=torch.float32).reshape(3, 4)
    # bf16: random bit patterns (NaNs included: bf16 -> f32 is a shift in every converter).
    bf16 = bf16_from_bits(torch.randint(0, 65536, (5, 7), generator=gen).numpy())
    # f16: random bit patterns without NaNs (converters differ in quieting them), subnormals kept.
    bits = torch.randint(0, 65536, (2, 9), generator=gen).numpy().astype(np.uint16)
    bits[(bits & 0x7C00) == 0x7C00] &= 0xFC00  # NaN -> infinity of the same sign
    bits[0, :3] = [0x0001, 0x03FF, 0x8200]      # the smallest and largest subnormals, a negative one
    f16 = torch.tensor(bits.view(np.float16))
    return [("a.f32", f32), ("b.bf16", bf16), ("c.f16", f16), ("scalar", torch.tensor(-7.25)),
            ("empty", torch.zeros(0, 4)), ("ints", torch.arange(-3, 3)),
            ("doubles", torch.tensor([1.5, -2.25], dtype=torch.float64))]


def make_safetensors(root, gen):
    tensors = sample_tensors(gen)
    expected = Expected(root, "single")
    for name, t in tensors:
        expected.add(name, t)
    expected.close()
    write_safetensors(os.path.join(root, "single.safetensors"), tensors, {"format": "pt", "note": "fixture"})

    # The same tensors as a folder with one model.safetensors, and as three shards + index.
    os.makedirs(os.path.join(root, "single_folder"))
    write_safetensors(os.path.join(root, "single_folder", "model.safetensors"), tensors, {"format": "pt"})
    expected = Expected(root, "sharded")
    for name, t in tensors:
        expected.add(name, t)
    expected.close()
    write_sharded(os.path.join(root, "sharded"), [tensors[:3], tensors[3:5], tensors[5:]])

    # A sparse 2 GiB file: one F32 tensor of 2^29 elements, values only in one 16 KiB stretch.
    n, at = 1 << 29, 3 << 26
    header = json.dumps({"big": {"dtype": "F32", "shape": [n], "data_offsets": [0, 4 * n]}}).encode()
    header += b" " * (-len(header) % 8)
    with open(os.path.join(root, "big.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.seek(8 + len(header) + 4 * at)
        f.write(np.arange(4096, dtype=np.float32).tobytes())
        f.truncate(8 + len(header) + 4 * n)


def write_sharded(folder, shards, weight_map_edit=None):
    os.makedirs(folder)
    weight_map = {}
    for k, tensors in enumerate(shards):
        name = "model-%05d-of-%05d.safetensors" % (k + 1, len(shards))
        write_safetensors(os.path.join(folder, name), tensors, {"format": "pt"})
        weight_map.update({t: name for t, _ in tensors})
    text = json.dumps({"metadata": {"total_size": 0}, "weight_map": weight_map}, indent=2)
    if weight_map_edit:
        text = weight_map_edit(text)
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        f.write(text)


def make_corrupt_safetensors(root):
    def entry(name, dtype="F32", shape=(2, 2), offsets=(0, 16)):
        return '"%s": {"dtype": "%s", "shape": %s, "data_offsets": [%d, %d]}' % (name, dtype, list(shape), *offsets)

    def bad(label, *entries, data=bytes(32), header_length=None, raw=None):
        text = raw if raw is not None else ("{" + ", ".join(entries) + "}").encode()
        write_raw_safetensors(os.path.join(root, "bad_%s.safetensors" % label), text, data, header_length)

    bad("header_past_end", entry("w"), header_length=4096)
    bad("header_absurd", entry("w"), header_length=1 << 40)
    bad("json", raw=b'{"w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]')
    bad("duplicate", entry("w"), entry("w", offsets=(16, 32)))
    bad("duplicate_field", '"w": {"dtype": "F32", "dtype": "F16", "shape": [2, 2], "data_offsets": [0, 16]}',
        entry("v", offsets=(16, 32)))
    bad("dtype", entry("w", dtype="F128", offsets=(0, 16)), entry("v", offsets=(16, 32)))
    bad("out_of_region", entry("w"), entry("v", offsets=(1000000, 1000016)))
    bad("overlap", entry("w", offsets=(0, 16)), entry("v", offsets=(8, 24)), data=bytes(24))
    bad("length", entry("w", offsets=(0, 12)), entry("v", offsets=(12, 28)), data=bytes(28))
    bad("gap", entry("w", offsets=(0, 16)), entry("v", offsets=(20, 36)), data=bytes(36))
    bad("truncated", entry("w"), entry("v", offsets=(16, 32)), data=bytes(27))
    bad("metadata", '"__metadata__": {"format": 3}', entry("w"), data=bytes(16))

    tensors = [("w", torch.ones(2, 2)), ("v", torch.zeros(3))]
    write_sharded(os.path.join(root, "shard_missing"), [tensors[:1], tensors[1:]],
                  lambda text: text.replace("model-00002-of-00002", "model-00002-of-00003"))
    write_sharded(os.path.join(root, "index_extra"), [tensors[:1], tensors[1:]],
                  lambda text: text.replace('"weight_map": {', '"weight_map": {"ghost": "model-00001-of-00002.safetensors", '))
    drop_v = lambda text: re.sub(r'\s*"v": "model-00002-of-00002.safetensors",?', "", text).replace(",\n  }", "\n  }")
    write_sharded(os.path.join(root, "shard_extra"), [tensors[:1], tensors[1:] + [("u", torch.ones(1))]], drop_v)
    write_sharded(os.path.join(root, "shard_unlisted"), [tensors[:1], tensors[1:]], drop_v)
    write_sharded(os.path.join(root, "index_duplicate"), [tensors[:1], tensors[1:]],
                  lambda text: text.replace('"weight_map": {', '"weight_map": {"v": "model-00001-of-00002.safetensors", '))


def make_torch(root, gen):
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6) * 0.5 - 3
    linear = torch.nn.Linear(4, 3)
    with torch.no_grad():
        linear.weight.copy_(torch.randn(3, 4, generator=gen))
        linear.bias.copy_(torch.randn(3, generator=gen))
    state = linear.state_dict()  # an OrderedDict carrying _metadata, as real state dicts do
    tensors = sample_tensors(gen)
    state["b.bf16"] = tensors[1][1]
    state["c.f16"] = tensors[2][1]
    state["doubles"] = tensors[6][1]
    state["ints"] = tensors[5][1]
    state["base"] = base
    state["transposed"] = base.t()             # shares base's storage, non-contiguous
    state["row"] = base[2]                     # shares it at storage offset 12
    state["columns"] = base[:, 1:5:2]          # strided in both dimensions
    state["expanded"] = torch.tensor([1.0, 2.0, 3.0]).expand(2, 3)  # stride 0
    state["bf16_transposed"] = tensors[1][1].t()
    state["scalar"] = torch.tensor(7.25)
    state["empty"] = torch.zeros(0, 3)
    expected = Expected(root, "state")
    for name, t in state.items():
        expected.add(name, t)
    expected.close()
    torch.save(state, os.path.join(root, "state.pth"))
    rewrite_zip64(os.path.join(root, "state.pth"), os.path.join(root, "state_zip64.pth"))

    params = {"w": torch.nn.Parameter(torch.randn(2, 3, generator=gen)), "h": torch.randn(4, generator=gen).half()}
    expected = Expected(root, "param")
    for name, t in params.items():
        expected.add(name, t.detach())
    expected.close()
    torch.save(params, os.path.join(root, "param.pth"))

    torch.save(linear.state_dict(), os.path.join(root, "legacy.pth"), _use_new_zipfile_serialization=False)
    torch.save(linear, os.path.join(root, "module.pth"))
    torch.save({"model": linear.state_dict(), "epoch": 3}, os.path.join(root, "nested.pth"))
    torch.save({"w": base, "step": 5}, os.path.join(root, "number.pth"))
    torch.save({"w": base}, os.path.join(root, "protocol4.pth"), pickle_protocol=4)
    with zipfile.ZipFile(os.path.join(root, "state.pth")) as src:
        with zipfile.ZipFile(os.path.join(root, "compressed.pth"), "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                dst.writestr(info.filename, src.read(info.filename))
        with zipfile.ZipFile(os.path.join(root, "missing_storage.pth"), "w", zipfile.ZIP_STORED) as dst:
            for info in src.infolist():
                if not info.filename.endswith("/data/0"):
                    dst.writestr(info.filename, src.read(info.filename))
    with open(os.path.join(root, "state.pth"), "rb") as f:
        data = f.read()
    with open(os.path.join(root, "truncated.pth"), "wb") as f:
        f.write(data[: len(data) // 2])


def rewrite_zip64(src, dst):
    """The same archive with every central-directory size and offset moved into a ZIP64 extra
    field, as writers do for entries past 4 GB: the local headers and data stay where they are."""
    with open(src, "rb") as f:
        data = f.read()
    with zipfile.ZipFile(src) as z:
        infos = z.infolist()
    directory_start = min(len(data), data.find(b"PK\x01\x02"))
    directory = b""
    for info in infos:
        name = info.filename.encode()
        extra = struct.pack("<HHQQQ", 1, 24, info.file_size, info.compress_size, info.header_offset)
        directory += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, info.CRC, 0xFFFFFFFF,
                                 0xFFFFFFFF, len(name), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + name + extra
    end64 = directory_start + len(directory)
    tail = struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, len(infos), len(infos), len(directory),
                       directory_start)
    tail += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
    tail += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    with open(dst, "wb") as f:
        f.write(data[:directory_start] + directory + tail)
    with zipfile.ZipFile(dst) as z:  # Python's own reader agrees on every entry
        assert all(z.read(i.filename) == zipfile.ZipFile(src).read(i.filename) for i in infos)


def make(root):
    gen = torch.Generator().manual_seed(20240601)
    make_safetensors(root, gen)
    make_corrupt_safetensors(root)
    make_torch(root, gen)


# ---- check: what the C++ writer wrote ----------------------------------------------------

TORCH_TYPES = {"F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16}
SIZES = {"F32": 4, "BF16": 2, "F16": 2}


def read_safetensors(path):
    """Our own reader: validates the layout the writer promises and returns {name: (dtype, shape, bytes)}."""
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    assert (8 + n) % 8 == 0, "%s: data start %d not 8-byte aligned" % (path, 8 + n)
    text = data[8 : 8 + n]
    assert text == text.rstrip(b" ") + b" " * (len(text) - len(text.rstrip(b" "))), "header padding is not spaces"
    header = json.loads(text, object_pairs_hook=collections.OrderedDict)
    metadata = header.pop("__metadata__", None)
    assert metadata == {"format": "pt"}, "%s: __metadata__ %r" % (path, metadata)
    body = data[8 + n :]
    covered, out = 0, {}
    for name, e in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"]):
        begin, end = e["data_offsets"]
        assert begin == covered, "%s: %s starts at %d, previous ends at %d" % (path, name, begin, covered)
        assert begin % SIZES[e["dtype"]] == 0, "%s: %s not aligned to its element size" % (path, name)
        assert end - begin == SIZES[e["dtype"]] * int(np.prod(e["shape"], dtype=np.int64)), name
        out[name] = (e["dtype"], e["shape"], body[begin:end])
        covered = end
    assert covered == len(body), "%s: %d trailing bytes" % (path, len(body) - covered)
    return out


def decoded(raw, dtype):
    """float32 values of stored bytes, decoded with numpy alone."""
    if dtype == "BF16":
        return (np.frombuffer(raw, np.uint16).astype(np.uint32) << 16).view(np.float32)
    return np.frombuffer(raw, {"F32": np.float32, "F16": np.float16}[dtype]).astype(np.float32)


def check_tensors(root, tensors):
    """Each tensor's bytes equal PyTorch's conversion of the float32 inputs; where they differ
    both must be NaN (converters disagree on NaN payloads, and nothing reads those)."""
    for name, (dtype, shape, raw) in tensors.items():
        inputs = np.fromfile(os.path.join(root, "inputs", name + ".f32"), dtype=np.float32)
        reference = stored_bytes(torch.from_numpy(inputs).reshape(shape).to(TORCH_TYPES[dtype]))
        assert len(raw) == len(reference), "%s: %d bytes, PyTorch has %d" % (name, len(raw), len(reference))
        width = np.uint32 if dtype == "F32" else np.uint16
        differ = np.frombuffer(raw, width) != np.frombuffer(reference, width)
        both_nan = np.isnan(decoded(raw, dtype)) & np.isnan(decoded(reference, dtype))
        assert not (differ & ~both_nan).any(), "%s: %d values differ from PyTorch's %s, first at %d" % (
            name, int((differ & ~both_nan).sum()), dtype, int(np.argmax(differ & ~both_nan)))


def check(root):
    single = read_safetensors(os.path.join(root, "written.safetensors"))
    check_tensors(root, single)
    folder = os.path.join(root, "sharded")
    with open(os.path.join(folder, "model.safetensors.index.json")) as f:
        index = json.load(f)
    shards = sorted(set(index["weight_map"].values()))
    assert shards == ["model-%05d-of-%05d.safetensors" % (k + 1, len(shards)) for k in range(len(shards))], shards
    seen, total = {}, 0
    for shard in shards:
        for name, (dtype, shape, raw) in read_safetensors(os.path.join(folder, shard)).items():
            assert index["weight_map"][name] == shard, name
            seen[name] = (dtype, shape, raw)
            total += len(raw)
    assert set(seen) == set(index["weight_map"]), "index and shards disagree"
    assert index["metadata"] == {"total_size": total}, index["metadata"]
    check_tensors(root, seen)
    print("check: %d tensors in one file, %d in %d shards, all bit-equal to PyTorch" % (len(single), len(seen),
                                                                                        len(shards)))


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
