#include "weights/safetensors_format.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "weights/strict_json.hpp"

namespace emb {

namespace {

using nlohmann::json;

// One header entry, checked on its own (offsets against the others come after).
StoredTensor parse_entry(const std::string& where, const std::string& name, const json& entry,
                         const std::string& path) {
  EMB_CHECK(entry.is_object(), where, "header entry is a JSON ", entry.type_name(), ", not an object");
  for (const auto& [key, value] : entry.items())
    EMB_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", where, "unexpected key ", emb::quoted_name(key),
              " (an entry holds dtype, shape and data_offsets)");
  for (const char* key : {"dtype", "shape", "data_offsets"})
    EMB_CHECK(entry.contains(key), where, "no \"", key, "\" in its header entry");

  const json& dtype = entry["dtype"];
  EMB_CHECK(dtype.is_string(), where, "dtype is a JSON ", dtype.type_name(), ", not a string");
  const auto type = parse_weight_dtype(dtype.get<std::string>());
  EMB_CHECK(type, where, "unknown dtype ", emb::quoted(dtype.get<std::string>()));

  StoredTensor t;
  t.info.name = name;
  t.info.dtype = *type;
  t.info.file = path;
  const json& shape = entry["shape"];
  EMB_CHECK(shape.is_array(), where, "shape is a JSON ", shape.type_name(), ", not an array");
  // Sizes stay below 2^62 bytes so that no product or offset below overflows.
  constexpr uint64_t kMaxBytes = uint64_t(1) << 62;
  uint64_t bytes = weight_dtype_size(*type);
  for (const json& d : shape) {
    EMB_CHECK(d.is_number_unsigned(), where, "shape ", clipped(shape.dump()), " holds ", clipped(d.dump()),
              ", not a size");
    const uint64_t size = d.get<uint64_t>();
    EMB_CHECK(size == 0 || bytes <= kMaxBytes / size, where, "shape ", clipped(shape.dump()), " is absurdly large");
    bytes *= size;
    t.info.shape.push_back(int64_t(size));
  }
  t.strides = contiguous_strides(t.info.shape);

  const json& offsets = entry["data_offsets"];
  EMB_CHECK(offsets.is_array() && offsets.size() == 2 && offsets[0].is_number_unsigned() &&
                offsets[1].is_number_unsigned(),
            where, "data_offsets ", clipped(offsets.dump()), " is not a pair [begin, end] of byte offsets");
  const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
  EMB_CHECK(begin <= end, where, "data_offsets [", begin, ", ", end, "] end before they begin");
  EMB_CHECK(end - begin == bytes, where, "data_offsets [", begin, ", ", end, "] hold ", end - begin,
            " bytes but shape ", shape_string(t.info.shape), " of ", dtype.get<std::string>(), " needs ", bytes);
  t.byte_offset = begin;  // relative to the data region until the caller adds its start
  return t;
}

// Strings only, as the format asks ("format": "pt").
std::map<std::string, std::string> parse_metadata(const std::string& path, const json& metadata) {
  EMB_CHECK(metadata.is_object(), path, ": __metadata__ is a JSON ", metadata.type_name(), ", not an object");
  std::map<std::string, std::string> out;
  for (const auto& [key, value] : metadata.items()) {
    EMB_CHECK(value.is_string(), path, ": __metadata__ value of ", emb::quoted_name(key), " is a JSON ", value.type_name(),
              ", not a string");
    out[key] = value.get<std::string>();
  }
  return out;
}

uint64_t end_of(const StoredTensor& t) {
  return t.byte_offset + uint64_t(t.info.numel()) * weight_dtype_size(t.info.dtype);
}

std::string offsets_text(const StoredTensor& t) { return str("[", t.byte_offset, ", ", end_of(t), "]"); }

// Tensors must tile [0, data_size): sorted by offset, each starting where the previous ends.
void check_tiling(const std::string& path, std::vector<StoredTensor>& tensors, uint64_t data_size) {
  std::stable_sort(tensors.begin(), tensors.end(), [](const StoredTensor& a, const StoredTensor& b) {
    return a.byte_offset != b.byte_offset ? a.byte_offset < b.byte_offset : end_of(a) < end_of(b);
  });
  uint64_t covered = 0;
  const StoredTensor* previous = nullptr;
  for (const StoredTensor& t : tensors) {
    const std::string where = str(path, ": tensor ", emb::quoted_name(t.info.name), ": data_offsets ", offsets_text(t));
    if (t.byte_offset != covered) {
      // A tensor that does not continue the tiling and reaches past the data is misplaced;
      // one that continues it but ends past the data is cut off (the file is truncated).
      EMB_CHECK(end_of(t) <= data_size, where, " are out of the data region (", data_size, " bytes)");
      EMB_CHECK(t.byte_offset >= covered, where, " overlap tensor ", emb::quoted_name(previous->info.name), " ",
                offsets_text(*previous));
      throw Error(str(where, " leave a gap of ", t.byte_offset - covered, " bytes after ",
                      previous ? str("tensor ", emb::quoted_name(previous->info.name)) : std::string("the header")));
    }
    covered = end_of(t);
    previous = &t;
  }
  for (const StoredTensor& t : tensors)
    EMB_CHECK(end_of(t) <= data_size, path, ": file is truncated: tensor ", emb::quoted_name(t.info.name), " ends at byte ",
              end_of(t), " of the data region but the file holds only ", data_size, " data bytes");
  EMB_CHECK(covered == data_size, path, ": ", data_size - covered, " bytes after the last tensor's data (",
            data_size, " data bytes, tensors end at ", covered, ")");
}

}  // namespace

TensorTable parse_safetensors(const MappedFile& file) {
  const std::string& path = file.path();
  EMB_CHECK(file.size() >= 8, path, ": ", file.size(), " bytes, shorter than the 8-byte safetensors header length");
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = header_size << 8 | file.data()[i];
  EMB_CHECK(header_size <= kMaxSafetensorsHeader, path, ": header length ", header_size,
            " bytes is absurd (at most ", kMaxSafetensorsHeader, "): not a safetensors file?");
  EMB_CHECK(header_size <= file.size() - 8, path, ": header length ", header_size,
            " bytes is past the end of the file (", file.size(), " bytes): truncated?");

  const json header = parse_json_strict(
      std::string(reinterpret_cast<const char*>(file.data()) + 8, header_size), path + ": header");
  EMB_CHECK(header.is_object(), path, ": header is a JSON ", header.type_name(), ", not an object");
  TensorTable table;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__")
      table.metadata = parse_metadata(path, entry);
    else
      table.tensors.push_back(parse_entry(str(path, ": tensor ", emb::quoted_name(name), ": "), name, entry, path));
  }
  const uint64_t data_start = 8 + header_size;
  check_tiling(path, table.tensors, file.size() - data_start);
  for (StoredTensor& t : table.tensors) t.byte_offset += data_start;
  return table;
}

}  // namespace emb
