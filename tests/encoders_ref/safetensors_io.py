"""Reading and writing .safetensors files by hand (no safetensors package on Debian).

Layout: 8-byte little-endian header length N, N bytes of JSON header
{name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}},
then the tensors' bytes back to back, little-endian, C order. The header is padded with
spaces to a multiple of 8 bytes so that every tensor starts 8-aligned, as the reference
writer does.
"""
import json
import struct

import numpy as np
import torch

# safetensors dtype tag -> (torch dtype, numpy dtype used to carry the raw bytes)
_DTYPES = {
    "F64": (torch.float64, np.float64),
    "F32": (torch.float32, np.float32),
    "F16": (torch.float16, np.float16),
    "BF16": (torch.bfloat16, np.int16),  # numpy has no bfloat16: carried as its bit pattern
    "I64": (torch.int64, np.int64),
    "I32": (torch.int32, np.int32),
    "U8": (torch.uint8, np.uint8),
}
_TAG_OF = {torch_dtype: tag for tag, (torch_dtype, _) in _DTYPES.items()}


def _tensor_bytes(t):
    t = t.detach().contiguous().cpu()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().astype("<i2").tobytes()
    return t.numpy().astype(t.numpy().dtype.newbyteorder("<")).tobytes()


def save_file(tensors, path, metadata=None):
    """Writes {name: tensor} to `path`; names are written in sorted order."""
    header = {}
    blobs = []
    offset = 0
    for name in sorted(tensors):
        t = tensors[name]
        if t.dtype not in _TAG_OF:
            raise ValueError(f"{path}: tensor {name} has dtype {t.dtype}, which safetensors_io cannot write")
        data = _tensor_bytes(t)
        header[name] = {"dtype": _TAG_OF[t.dtype], "shape": list(t.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for data in blobs:
            f.write(data)


def load_file(path):
    """Returns ({name: tensor}, metadata dict) read from `path`."""
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 8:
        raise ValueError(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", raw[:8])
    if 8 + n > len(raw):
        raise ValueError(f"{path}: header length {n} runs past the end of the file ({len(raw)} bytes)")
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    base = 8 + n
    tensors = {}
    for name, info in header.items():
        torch_dtype, np_dtype = _DTYPES[info["dtype"]]
        begin, end = info["data_offsets"]
        arr = np.frombuffer(raw[base + begin:base + end], dtype=np.dtype(np_dtype).newbyteorder("<"))
        t = torch.from_numpy(arr.astype(np_dtype).reshape(info["shape"]).copy())
        tensors[name] = t.view(torch.bfloat16) if torch_dtype == torch.bfloat16 else t
    return tensors, metadata
