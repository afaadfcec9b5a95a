// The central directory of a zip file, as torch.save writes it (PyTorch's
// PyTorchStreamWriter): every entry stored uncompressed and 64-byte aligned, with ZIP64
// records so that archives and entries past 4 GB (umT5-XXL is 11 GB) locate correctly.
// Only locating is needed: the entries are read in place through the file's mapping.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights/mapped_file.hpp"

namespace emb {

struct ZipEntry {
  std::string name;
  uint64_t data_offset = 0;  // of the entry's first byte in the file
  uint64_t size = 0;
};

// Throws emb::Error in one line naming the file (and the entry) when the directory is
// corrupt, an entry lies outside the file, or an entry is compressed or encrypted (torch.save
// never does either; such a file was re-zipped by another tool).
std::vector<ZipEntry> read_zip_directory(const MappedFile& file);

}  // namespace emb
