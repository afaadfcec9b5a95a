// The file names of a checkpoint folder as HF's save_pretrained writes it (and
// from_pretrained looks for them): an index naming the shards, or one file.
#pragma once
#include <cstdio>
#include <string>

namespace emb {

constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";
constexpr const char* kSingleSafetensorsName = "model.safetensors";

// Shard k (from 1) of n: "model-00002-of-00003.safetensors".
inline std::string hf_shard_name(size_t k, size_t n) {
  char name[64];
  std::snprintf(name, sizeof name, "model-%05zu-of-%05zu.safetensors", k, n);
  return name;
}

}  // namespace emb
