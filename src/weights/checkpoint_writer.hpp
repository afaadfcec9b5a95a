// Writes a checkpoint folder the way HF's save_pretrained does, so that upstream code
// (from_pretrained, GR00T and DreamZero inference) loads it: one model.safetensors when the
// tensors fit in one shard, else model-00001-of-0000N.safetensors shards plus
// model.safetensors.index.json ({"metadata": {"total_size"}, "weight_map"}). Tensors go to
// shards in name order, a new shard starting when the next tensor would pass the maximum
// shard size (a tensor larger than the maximum gets a shard of its own), as HF splits them.
//
// Nothing appears before everything is written: all shards are completed as temporary files
// first; then a previous index or model.safetensors in the folder is removed (a crash during
// the renames then leaves no index, so a half-replaced checkpoint is never loaded as whole),
// the shards are renamed into place and the index is written last.
#pragma once
#include <memory>

#include "weights/safetensors_writer.hpp"

namespace emb {

class CheckpointWriter {
 public:
  // Creates `folder` when missing.
  CheckpointWriter(const std::string& folder, const std::vector<TensorSpec>& tensors, uint64_t max_shard_bytes,
                   const std::map<std::string, std::string>& metadata);
  // The tensors grouped into shards as given (one group: model.safetensors): an export that
  // keeps the source checkpoint's shard assignment.
  CheckpointWriter(const std::string& folder, const std::vector<std::vector<TensorSpec>>& shards,
                   const std::map<std::string, std::string>& metadata);

  // The tensors in the order their data must be written (shard by shard).
  const std::vector<TensorSpec>& order() const { return order_; }
  // As SafetensorsWriter::write / write_raw, into the shard of the current tensor.
  void write(const float* values, int64_t count);
  void write_raw(const void* bytes, int64_t count);
  // Publishes the checkpoint (see above); before this, nothing is visible in the folder.
  void finish();

 private:
  // The shard taking the next elements, past the completed ones.
  SafetensorsWriter& current();
  void open_shards(const std::vector<std::vector<TensorSpec>>& plan, const std::map<std::string, std::string>& metadata);

  std::string folder_;
  std::vector<std::unique_ptr<SafetensorsWriter>> shards_;
  std::vector<TensorSpec> order_;
  std::string index_text_;  // "" for a single model.safetensors
  size_t current_ = 0;
};

}  // namespace emb
