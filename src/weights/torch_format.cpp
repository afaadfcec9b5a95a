#include "weights/torch_format.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/error.hpp"
#include "weights/torch_conversion.hpp"
#include "weights/torch_pickle.hpp"
#include "weights/zip_directory.hpp"

namespace emb {

namespace {

// Newest serialization version PyTorch writes (caffe2 kMaxSupportedFileFormatVersion's
// counterpart for torch.save archives); a newer one may lay storages out differently.
constexpr int kMaxTorchArchiveVersion = 3;

std::string entry_text(const MappedFile& file, const ZipEntry& e) {
  return std::string(reinterpret_cast<const char*>(file.data()) + e.data_offset, e.size);
}

// The storage elements a view reaches (its last element's index + 1; 0 when it is empty),
// in 128 bits: the shape and strides come from the file, and a corrupt one must fail the
// check below rather than overflow.
__int128 view_extent(const PickledTensor& t) {
  __int128 last = t.storage_offset;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 0) return 0;
    last += __int128(t.shape[d] - 1) * t.strides[d];
  }
  return last + 1;
}

}  // namespace

bool is_zip_file(const MappedFile& file) {
  return file.size() >= 4 && std::memcmp(file.data(), "PK\x03\x04", 4) == 0;
}

bool is_legacy_torch_file(const MappedFile& file) {
  return file.size() >= 2 && file.data()[0] == 0x80 && file.data()[1] >= 2 && file.data()[1] <= 5;
}

TensorTable parse_torch_zip(const MappedFile& file) {
  const std::string& path = file.path();
  std::map<std::string, ZipEntry> entries;
  std::string archive;  // the one top folder ("archive", or the file's stem in older PyTorch)
  for (ZipEntry& e : read_zip_directory(file)) {
    const size_t slash = e.name.find('/');
    if (slash != std::string::npos && e.name.substr(slash) == "/data.pkl") archive = e.name.substr(0, slash);
    entries[e.name] = std::move(e);
  }
  EMB_CHECK(!archive.empty(), path, ": a zip file without <archive>/data.pkl: not written by torch.save");
  auto entry = [&](const std::string& name) -> const ZipEntry* {
    auto it = entries.find(archive + "/" + name);
    return it == entries.end() ? nullptr : &it->second;
  };

  const ZipEntry* version = entry("version");
  EMB_CHECK(version, path, ": no entry ", emb::quoted_name(archive + "/version"), ": not written by torch.save");
  const std::string version_text = entry_text(file, *version);
  const int version_number = std::atoi(version_text.c_str());
  EMB_CHECK(version_number >= 1 && version_number <= kMaxTorchArchiveVersion, path, ": torch.save archive version ",
            emb::quoted(version_text), " (this reader knows 1 to ", kMaxTorchArchiveVersion, ")");
  if (const ZipEntry* order = entry("byteorder"))
    EMB_CHECK(entry_text(file, *order) == "little", path, ": storages are ", emb::quoted(entry_text(file, *order)),
              "-endian; re-save the file on a little-endian machine");

  const ZipEntry& pickle = *entry("data.pkl");
  TensorTable table;
  for (PickledTensor& t : unpickle_tensor_dict(file.data() + pickle.data_offset, pickle.size, path)) {
    const std::string where = str(path, ": tensor ", emb::quoted_name(t.name), ": storage ", emb::quoted_name(t.storage_key), ": ");
    const ZipEntry* storage = entry("data/" + t.storage_key);
    EMB_CHECK(storage, where, "no entry ", emb::quoted_name(archive + "/data/" + t.storage_key), " in the archive");
    const uint64_t element = weight_dtype_size(t.dtype);
    // Compared by division: a corrupt element count times the element size could wrap around.
    EMB_CHECK(storage->size % element == 0 && storage->size / element == uint64_t(t.storage_numel), where, "entry holds ", storage->size,
              " bytes but the pickle says ", t.storage_numel, " elements of ", weight_dtype_name(t.dtype));
    __int128 numel = 1;
    for (int64_t d : t.shape) numel = std::min<__int128>(numel * d, __int128(1) << 62);
    EMB_CHECK(numel < (__int128(1) << 62), where, "shape ", shape_string(t.shape), " is absurdly large");
    EMB_CHECK(view_extent(t) <= t.storage_numel, where, "view of shape ", shape_string(t.shape), ", strides ",
              shape_string(t.strides), " at offset ", t.storage_offset, " reaches past its ", t.storage_numel,
              " elements");
    StoredTensor s;
    s.info = {t.name, t.dtype, t.shape, path};
    s.byte_offset = storage->data_offset + uint64_t(t.storage_offset) * element;
    s.strides = t.strides;
    table.tensors.push_back(std::move(s));
  }
  return table;
}

}  // namespace emb
