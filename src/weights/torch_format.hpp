// The torch.save zip format (PyTorch >= 1.6): <archive>/data.pkl (the pickled dict),
// <archive>/data/<key> (one raw little-endian storage per key), <archive>/version, and from
// PyTorch 2.1 <archive>/byteorder. Tensors are views of storages, read in place.
#pragma once
#include "weights/mapped_file.hpp"
#include "weights/stored_tensor.hpp"

namespace emb {

// True when the file starts like a zip archive (what torch.save has written since 1.6).
bool is_zip_file(const MappedFile& file);
// True when the file starts like a pickle: the legacy (pre-1.6) torch.save format.
bool is_legacy_torch_file(const MappedFile& file);

// Throws emb::Error in one line naming the file (and tensor or storage) for anything other
// than a dict of tensors over well-formed storages, with the conversion command to run.
TensorTable parse_torch_zip(const MappedFile& file);

}  // namespace emb
