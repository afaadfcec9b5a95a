// The safetensors layout: an 8-byte little-endian header length N, N bytes of JSON
// {name: {"dtype", "shape", "data_offsets": [begin, end]}, "__metadata__": {str: str}}, then
// the data region the offsets index. Parsing validates the whole header against the file
// size, so a file that opens reads without surprises, and touches no data page.
#pragma once
#include <cstdint>

#include "weights/mapped_file.hpp"
#include "weights/stored_tensor.hpp"

namespace emb {

// Header lengths above this are refused as corrupt (the reference loader's limit too).
constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

// Throws emb::Error in one line naming the file (and the tensor where one is at fault).
// Accepts exactly the files the reference implementation accepts: tensors tile the data
// region in offset order without gaps, overlaps or trailing bytes.
TensorTable parse_safetensors(const MappedFile& file);

}  // namespace emb
