#include "weights/weight_source.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "weights/strict_json.hpp"

namespace emb {

namespace fs = std::filesystem;

WeightSource::WeightSource(const std::string& path) : path_(path) {
  EMB_CHECK(fs::exists(path), path, ": no such file or folder");
  if (!fs::is_directory(path)) {
    add_file(path);
  } else if (fs::exists(fs::path(path) / kSafetensorsIndexName)) {
    open_index((fs::path(path) / kSafetensorsIndexName).string());
  } else {
    EMB_CHECK(fs::exists(fs::path(path) / kSingleSafetensorsName), path, ": neither ", kSafetensorsIndexName,
              " nor ", kSingleSafetensorsName, " in this folder: not a safetensors checkpoint");
    add_file((fs::path(path) / kSingleSafetensorsName).string());
  }
  std::sort(infos_.begin(), infos_.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.name < b.name; });
}

void WeightSource::add_file(const std::string& file_path) {
  files_.push_back(std::make_unique<TensorFile>(file_path));
  for (const TensorInfo& t : files_.back()->tensors()) {
    infos_.push_back(t);
    file_index_[t.name] = files_.size() - 1;
  }
}

// {"metadata": {...}, "weight_map": {tensor: shard file}}; the shards must hold exactly the
// tensors the map gives them.
void WeightSource::open_index(const std::string& index_path) {
  std::ifstream in(index_path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  EMB_CHECK(in.good() || in.eof(), index_path, ": cannot read");
  const nlohmann::json index = parse_json_strict(text.str(), index_path);
  EMB_CHECK(index.is_object() && index.contains("weight_map") && index["weight_map"].is_object(), index_path,
            ": no \"weight_map\" object of tensor -> shard file");

  std::map<std::string, std::string> shard_of;  // tensor -> shard, as the index says
  std::map<std::string, std::string> first_tensor_of;  // shard -> a tensor listed in it, for messages
  for (const auto& [name, shard] : index["weight_map"].items()) {
    EMB_CHECK(shard.is_string(), index_path, ": tensor ", emb::quoted_name(name), ": shard is a JSON ", shard.type_name(),
              ", not a file name");
    const std::string file = shard.get<std::string>();
    EMB_CHECK(!file.empty() && file.find('/') == std::string::npos && file != "." && file != "..", index_path,
              ": tensor ", emb::quoted_name(name), ": shard ", emb::quoted_name(file), " is not a file name in the index's folder");
    shard_of[name] = file;
    first_tensor_of.emplace(file, name);
  }

  const fs::path folder = fs::path(index_path).parent_path();
  for (const auto& [shard, listed] : first_tensor_of) {
    const std::string shard_path = (folder / shard).string();
    EMB_CHECK(fs::exists(shard_path), index_path, ": shard ", emb::quoted_name(shard), ": tensor ", emb::quoted_name(listed),
              ": the shard file does not exist");
    add_file(shard_path);
    for (const TensorInfo& t : files_.back()->tensors()) {
      auto it = shard_of.find(t.name);
      EMB_CHECK(it != shard_of.end(), index_path, ": shard ", emb::quoted_name(shard), ": tensor ", emb::quoted_name(t.name),
                ": in the shard but not in the index");
      EMB_CHECK(it->second == shard, index_path, ": shard ", emb::quoted_name(shard), ": tensor ", emb::quoted_name(t.name),
                ": in this shard but the index lists it in ", emb::quoted_name(it->second));
    }
  }
  // A shard of the same series that the index never names holds tensors it does not list.
  std::set<size_t> series;  // shard counts checked
  for (const auto& [shard, listed] : first_tensor_of) {
    size_t k = 0, count = 0;
    if (std::sscanf(shard.c_str(), "model-%5zu-of-%5zu.safetensors", &k, &count) != 2 ||
        shard != hf_shard_name(k, count) || !series.insert(count).second)
      continue;
    for (size_t sibling = 1; sibling <= count; ++sibling) {
      const std::string name = hf_shard_name(sibling, count);
      if (first_tensor_of.count(name) || !fs::exists(folder / name)) continue;
      const TensorFile stray((folder / name).string());
      EMB_CHECK(stray.tensors().empty(), index_path, ": shard ", emb::quoted_name(name), ": tensor ",
                emb::quoted_name(stray.tensors()[0].name), ": in the shard but not in the index");
    }
  }
  // Every shard tensor is where the index says, so a listed tensor no shard added is missing
  // from the shard the index names.
  for (const auto& [name, shard] : shard_of)
    EMB_CHECK(file_index_.count(name), index_path,
              ": shard ", emb::quoted_name(shard), ": tensor ", emb::quoted_name(name), ": in the index but not in the shard");
}

std::vector<std::string> WeightSource::files() const {
  std::vector<std::string> paths;
  for (const auto& f : files_) paths.push_back(f->path());
  return paths;
}

const TensorInfo* WeightSource::find(const std::string& name) const {
  auto it = file_index_.find(name);
  return it == file_index_.end() ? nullptr : files_[it->second]->find(name);
}

const TensorInfo& WeightSource::info(const std::string& name) const {
  const TensorInfo* t = find(name);
  EMB_CHECK(t, path_, ": no tensor ", emb::quoted_name(name));
  return *t;
}

const TensorFile& WeightSource::file_of(const std::string& name) const {
  auto it = file_index_.find(name);
  EMB_CHECK(it != file_index_.end(), path_, ": no tensor ", emb::quoted_name(name));
  return *files_[it->second];
}

void WeightSource::read(const std::string& name, int64_t begin, int64_t end, float* out) const {
  file_of(name).read(name, begin, end, out);
}

uint64_t WeightSource::bytes_copied() const {
  uint64_t bytes = 0;
  for (const auto& f : files_) bytes += f->bytes_copied();
  return bytes;
}

void WeightSource::read_raw(const std::string& name, int64_t begin, int64_t end, void* out) const {
  file_of(name).read_raw(name, begin, end, out);
}

}  // namespace emb
