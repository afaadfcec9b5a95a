#include "weights/checkpoint_writer.hpp"

#include <algorithm>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "weights/hf_folder.hpp"

namespace emb {

namespace fs = std::filesystem;

CheckpointWriter::CheckpointWriter(const std::string& folder, const std::vector<TensorSpec>& tensors,
                                   uint64_t max_shard_bytes, const std::map<std::string, std::string>& metadata)
    : folder_(folder) {
  std::vector<TensorSpec> by_name = tensors;
  std::sort(by_name.begin(), by_name.end(), [](const TensorSpec& a, const TensorSpec& b) { return a.name < b.name; });
  std::vector<std::vector<TensorSpec>> plan(1);
  uint64_t shard_bytes = 0;
  for (const TensorSpec& t : by_name) {
    if (!plan.back().empty() && shard_bytes + t.bytes() > max_shard_bytes) {
      plan.emplace_back();
      shard_bytes = 0;
    }
    plan.back().push_back(t);
    shard_bytes += t.bytes();
  }
  open_shards(plan, metadata);
}

CheckpointWriter::CheckpointWriter(const std::string& folder, const std::vector<std::vector<TensorSpec>>& shards,
                                   const std::map<std::string, std::string>& metadata)
    : folder_(folder) {
  EMB_CHECK(!shards.empty(), folder, ": a checkpoint needs at least one shard");
  open_shards(shards, metadata);
}

void CheckpointWriter::open_shards(const std::vector<std::vector<TensorSpec>>& plan,
                                   const std::map<std::string, std::string>& metadata) {
  const std::string& folder = folder_;
  uint64_t total_bytes = 0;  // the index's total_size
  for (const auto& shard : plan)
    for (const TensorSpec& t : shard) total_bytes += t.bytes();
  make_dirs(folder);
  nlohmann::json weight_map = nlohmann::json::object();
  for (size_t k = 0; k < plan.size(); ++k) {
    const std::string name = plan.size() == 1 ? kSingleSafetensorsName : hf_shard_name(k + 1, plan.size());
    for (const TensorSpec& t : plan[k]) {
      EMB_CHECK(!weight_map.contains(t.name), folder, ": tensor ", emb::quoted_name(t.name), ": given twice");
      weight_map[t.name] = name;
    }
    shards_.push_back(std::make_unique<SafetensorsWriter>((fs::path(folder) / name).string(), plan[k], metadata));
    const auto& shard_order = shards_.back()->order();
    order_.insert(order_.end(), shard_order.begin(), shard_order.end());
  }
  // As HF writes it: json.dumps(index, indent=2, sort_keys=True) plus a newline.
  if (plan.size() > 1)
    index_text_ = nlohmann::json{{"metadata", {{"total_size", total_bytes}}}, {"weight_map", weight_map}}.dump(2) + "\n";
}

SafetensorsWriter& CheckpointWriter::current() {
  while (current_ + 1 < shards_.size() && shards_[current_]->all_written()) shards_[current_++]->complete();
  return *shards_[current_];
}

void CheckpointWriter::write(const float* values, int64_t count) { current().write(values, count); }

void CheckpointWriter::write_raw(const void* bytes, int64_t count) { current().write_raw(bytes, count); }

void CheckpointWriter::finish() {
  for (; current_ < shards_.size(); ++current_) shards_[current_]->complete();
  const fs::path folder(folder_);
  std::error_code ignored;  // absent is fine
  fs::remove(folder / kSafetensorsIndexName, ignored);
  if (shards_.size() > 1) fs::remove(folder / kSingleSafetensorsName, ignored);
  for (auto& shard : shards_) shard->publish();
  if (!index_text_.empty()) write_file_durable((folder / kSafetensorsIndexName).string(), index_text_);
}

}  // namespace emb
