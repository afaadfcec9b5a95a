// The file names of a checkpoint folder as HF's save_pretrained writes it (and
// from_pretrained looks for them): an index naming the shards, or one file.
#pragma once

namespace emb {

constexpr const char* kSafetensorsIndexName = "model.safetensors.index.json";
constexpr const char* kSingleSafetensorsName = "model.safetensors";

}  // namespace emb
