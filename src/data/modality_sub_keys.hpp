// The state/action sub-keys of a packed file, from its `modality` attribute (embpack lerobot:
// GR00T's meta/modality.json, or --state-keys/--action-keys' selection and order; packed_format.hpp):
// their columns and what upstream's metadata says of them (gr00t/data/schema.py:54-80,199-203:
// absolute, rotation_type, continuous = a floating-point dtype).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/h5_file.hpp"

namespace emb {

struct ModalitySubKey {
  std::string name;
  int64_t start = 0, end = 0;  // [start, end) in /steps/state or /steps/action
  bool absolute = true, continuous = true;
  std::string rotation_type;  // "" = none declared
};

// The sub-keys of `part` ("state" or "action") in column order; one sub-key named `part` of the
// whole vector where the file has no modality attribute or it lists none. Throws emb::Error
// (exit 2) naming the file when the attribute is not JSON or its sub-keys do not tile the columns.
std::vector<ModalitySubKey> modality_sub_keys(const H5File& f, const char* part);

// "a, b, c": the names of `keys`, for messages.
std::string sub_key_names(const std::vector<ModalitySubKey>& keys);

}  // namespace emb
