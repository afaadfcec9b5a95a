// One checkpoint file of either format, told apart by content (a zip is a torch.save file,
// anything else must be safetensors), so callers never care which one a file is: its
// tensors are listed at open and any element range of any tensor is read from the mapping.
// Reads are const and touch nothing but the mapping: threads may read concurrently.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "weights/mapped_file.hpp"
#include "weights/stored_tensor.hpp"

namespace emb {

class TensorFile {
 public:
  // Validates the whole file layout (not the data); throws emb::Error in one line naming the
  // file and, where one is at fault, the tensor.
  explicit TensorFile(const std::string& path);

  const std::string& path() const { return file_.path(); }
  const std::vector<TensorInfo>& tensors() const { return infos_; }  // in file order
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const TensorInfo* find(const std::string& name) const;  // nullptr when absent

  // Elements [begin, end) of the row-major flattened tensor, converted to float32 into
  // out[0, end - begin). Faults in only the pages of those elements.
  void read(const std::string& name, int64_t begin, int64_t end, float* out) const;
  // The same elements as stored (weight_dtype_size bytes each), for copying unconverted.
  void read_raw(const std::string& name, int64_t begin, int64_t end, void* out) const;
  // Bytes copied out of the mapping by read and read_raw so far: what this process has read
  // of the file (a ZeRO-3 rank: its shards, not the whole file).
  uint64_t bytes_copied() const { return bytes_copied_.load(std::memory_order_relaxed); }

 private:
  // The tensor after checking the range, with the range's pages already being read.
  const StoredTensor& slice_of(const std::string& name, int64_t begin, int64_t end) const;

  MappedFile file_;
  std::vector<StoredTensor> tensors_;
  std::vector<TensorInfo> infos_;
  std::unordered_map<std::string, size_t> index_;
  std::map<std::string, std::string> metadata_;
  mutable std::atomic<uint64_t> bytes_copied_{0};
};

}  // namespace emb
