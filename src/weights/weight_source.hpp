// A checkpoint as released weights come: a folder with model.safetensors.index.json and the
// shards it names (HF's sharded layout: GR00T-N1.5, the DreamZero DiT), a folder with one
// model.safetensors, or one file given directly, safetensors or torch.save .pth (the Wan VAE,
// umT5, CLIP). Callers see one list of tensors and read any element range of any of them:
// a ZeRO-3 rank reads only its shard of each parameter, and only those pages are read.
//
// Every shard is opened and validated at open, not lazily: a missing or corrupt shard, or an
// index that disagrees with its shards, fails at start-up with one line instead of after
// minutes of training; it is cheap (headers only, the data stay unread in the mappings); and
// a tensor present in a shard but absent from the index can only be found by opening all.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "weights/hf_folder.hpp"
#include "weights/tensor_file.hpp"

namespace emb {

class WeightSource {
 public:
  // Throws emb::Error in one line naming the file, shard and tensor at fault.
  explicit WeightSource(const std::string& path);

  const std::string& path() const { return path_; }
  const std::vector<TensorInfo>& tensors() const { return infos_; }  // sorted by name
  const TensorInfo* find(const std::string& name) const;             // nullptr when absent
  const TensorInfo& info(const std::string& name) const;             // throws when absent
  // The files holding the tensors: the shards in the index's (name) order, or the one file.
  std::vector<std::string> files() const;
  // The "__metadata__" of the first file (safetensors; empty for .pth).
  const std::map<std::string, std::string>& metadata() const { return files_.front()->metadata(); }

  // As TensorFile::read / read_raw, from whichever file holds the tensor.
  void read(const std::string& name, int64_t begin, int64_t end, float* out) const;
  void read_raw(const std::string& name, int64_t begin, int64_t end, void* out) const;
  // Bytes read out of all files so far (TensorFile::bytes_copied).
  uint64_t bytes_copied() const;

 private:
  void open_index(const std::string& index_path);
  void add_file(const std::string& file_path);
  const TensorFile& file_of(const std::string& name) const;

  std::string path_;
  std::vector<std::unique_ptr<TensorFile>> files_;
  std::vector<TensorInfo> infos_;
  std::unordered_map<std::string, size_t> file_index_;  // tensor name -> files_ entry
};

}  // namespace emb
