// A Parquet file as LeRobot's pyarrow writes it (DATA.md "Sources"): "PAR1" magic at both
// ends, a Thrift compact footer, row groups of column chunks with data pages v1/v2 and
// dictionary pages; PLAIN, PLAIN_DICTIONARY/RLE_DICTIONARY and RLE (booleans) values;
// flat columns and one level of list<...>; BOOLEAN, INT32, INT64, FLOAT, DOUBLE and
// BYTE_ARRAY; UNCOMPRESSED, SNAPPY and ZSTD pages. Everything else, and every corrupt or
// truncated byte, is one emb::Error "FILE: column NAME: what was found".
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "column_data.hpp"
#include "parquet_metadata.hpp"

namespace emb::parquet {

// A leaf of the schema with the levels its values carry.
struct LeafColumn {
  std::string path;   // dotted leaf path, "observation.state.list.element"
  std::string field;  // its top-level field, "observation.state"
  PhysicalType type = PhysicalType::int32;
  int max_def = 0, max_rep = 0;
  int list_def = 0;  // definition level of a present (possibly empty) list's repeated node
  size_t index = 0;  // position among the leaves = in each row group's columns
};

class ParquetFile {
 public:
  // Reads the footer; a missing file, bad magic or corrupt footer is an emb::Error.
  static ParquetFile open(const std::string& path);

  const std::string& path() const { return path_; }
  int64_t rows() const { return meta_.num_rows; }
  const FileMetaData& metadata() const { return meta_; }
  const std::vector<LeafColumn>& leaves() const { return leaves_; }
  // `name` is a top-level field with one leaf ("action") or a dotted leaf path.
  bool has(const std::string& name) const;
  const LeafColumn& leaf(const std::string& name) const;
  // Reads every row group of one column.
  ColumnData read(const std::string& name) const;

 private:
  std::string path_;
  int64_t file_size_ = 0;
  FileMetaData meta_;
  std::vector<LeafColumn> leaves_;
};

}  // namespace emb::parquet
