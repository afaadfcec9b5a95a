// JSON parsing that refuses a repeated key. nlohmann (like Python's json) keeps the last of
// two equal keys silently; in a safetensors header or an index that would hide a second
// tensor of the same name, so a checkpoint could load different weights than it shows.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace emb {

// Throws emb::Error "<where>: ..." in one line when `text` is not JSON or an object repeats a
// key ("<where>: key 'dtype' appears twice in 'w'").
nlohmann::json parse_json_strict(const std::string& text, const std::string& where);

}  // namespace emb
