"""Minimal safetensors reader/writer (no safetensors package on this machine).

File layout: 8-byte little-endian header length N, N bytes of UTF-8 JSON
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {...}} (padded with spaces
to a multiple of 8), then the data buffer; offsets are relative to the buffer, little-endian,
row-major. Sharded checkpoints add model.safetensors.index.json
{"metadata": {"total_size": bytes}, "weight_map": {name: shard file}}.
"""
import json
import os
import struct

import numpy as np
import torch

DTYPES = {"F64": torch.float64, "F32": torch.float32, "BF16": torch.bfloat16, "F16": torch.float16,
          "I64": torch.int64, "I32": torch.int32}
ELEMENT_BYTES = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2, "I64": 8, "I32": 4}
NUMPY_LE = {"F64": "<f8", "F32": "<f4", "BF16": "<i2", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def _to_bytes(tensor, dtype):
    t = torch.as_tensor(tensor).detach().contiguous().to(DTYPES[dtype])
    if dtype == "BF16":  # numpy has no bfloat16: the raw 16-bit patterns (torch rounds to nearest even)
        t = t.view(torch.int16)
    return np.ascontiguousarray(t.numpy(), dtype=NUMPY_LE[dtype]).tobytes()


def write_file(path, tensors, metadata=None):
    """tensors: ordered {name: (tensor, dtype string)}; writes atomically (temp file, rename)."""
    header, chunks, offset = {}, [], 0
    for name, (tensor, dtype) in tensors.items():
        data = _to_bytes(tensor, dtype)
        header[name] = {"dtype": dtype, "shape": list(torch.as_tensor(tensor).shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    header["__metadata__"] = dict(metadata or {"format": "pt"})
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)
    os.replace(tmp, path)
    return offset


def read_header(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        return json.loads(f.read(n)), 8 + n


def read_file(path):
    """{name: torch tensor in its stored dtype}; checks that the offsets tile the data buffer."""
    header, start = read_header(path)
    header.pop("__metadata__", None)
    size = os.path.getsize(path) - start
    spans = sorted(tuple(v["data_offsets"]) for v in header.values())
    position = 0
    for begin, end in spans:
        if begin != position:
            raise ValueError(f"{path}: tensor data not contiguous at byte {begin} (expected {position})")
        position = end
    if position != size:
        raise ValueError(f"{path}: data buffer is {size} bytes, tensors cover {position}")
    out = {}
    with open(path, "rb") as f:
        for name, info in header.items():
            begin, end = info["data_offsets"]
            f.seek(start + begin)
            raw = f.read(end - begin)
            dtype, shape = info["dtype"], info["shape"]
            if end - begin != ELEMENT_BYTES[dtype] * int(np.prod(shape, dtype=np.int64)):
                raise ValueError(f"{path}: {name} has {end - begin} bytes for {dtype} {shape}")
            t = torch.from_numpy(np.frombuffer(raw, dtype=NUMPY_LE[dtype]).astype(NUMPY_LE[dtype][1:]))
            out[name] = (t.view(torch.bfloat16) if dtype == "BF16" else t).reshape(shape)
    return out


def write_sharded(folder, tensors, n_shards, metadata=None):
    """Splits ordered tensors into n_shards files model-0000k-of-0000n.safetensors of about equal size
    plus model.safetensors.index.json."""
    names = list(tensors)
    sizes = [len(_to_bytes(*tensors[n])) for n in names]
    total = sum(sizes)
    shards, current, acc = [], [], 0
    for name, size in zip(names, sizes):
        current.append(name)
        acc += size
        if len(shards) < n_shards - 1 and acc >= total * (len(shards) + 1) / n_shards:
            shards.append(current)
            current = []
    shards.append(current)
    weight_map = {}
    for k, shard in enumerate(shards):
        file = f"model-{k + 1:05d}-of-{len(shards):05d}.safetensors"
        write_file(os.path.join(folder, file), {n: tensors[n] for n in shard}, metadata)
        weight_map.update({n: file for n in shard})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2)
    return weight_map


def read_checkpoint(folder):
    """All tensors of a checkpoint folder (model.safetensors, or shards listed by the index)."""
    index = os.path.join(folder, "model.safetensors.index.json")
    if not os.path.exists(index):
        return read_file(os.path.join(folder, "model.safetensors"))
    with open(index) as f:
        weight_map = json.load(f)["weight_map"]
    out = {}
    for file in sorted(set(weight_map.values())):
        part = read_file(os.path.join(folder, file))
        for name in part:
            if weight_map.get(name) != file:
                raise ValueError(f"{folder}: {name} is in {file} but the index says {weight_map.get(name)}")
        out.update(part)
    missing = set(weight_map) - set(out)
    if missing:
        raise ValueError(f"{folder}: index lists tensors no shard holds: {sorted(missing)[:4]}")
    return out
