// A whole file mapped read-only. Checkpoints are read through mappings so that a rank that
// reads a slice of a tensor faults in only the pages of that slice: 1024 ranks each reading
// 1/1024 of a 16 GB checkpoint read 16 GB in total, not 16 GB each, and ranks of one node
// share the page cache.
#pragma once
#include <cstdint>
#include <string>

namespace emb {

class MappedFile {
 public:
  // Throws emb::Error naming the path when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::string& path() const { return path_; }
  uint64_t size() const { return size_; }
  const unsigned char* data() const { return data_; }
  // Starts reading [offset, offset + length) ahead (madvise WILLNEED): the faults of a large
  // slice then find their pages in flight instead of waiting one read-around at a time.
  void prefetch(uint64_t offset, uint64_t length) const;

 private:
  std::string path_;
  const unsigned char* data_ = nullptr;
  uint64_t size_ = 0;
};

}  // namespace emb
