// The parts of Parquet's Thrift structs (parquet.thrift) this reader uses: the footer's
// FileMetaData (schema, row groups, column chunks) and the page headers. Field ids follow
// parquet.thrift; every other field is skipped.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "thrift_compact.hpp"

namespace emb::parquet {

enum class PhysicalType : int32_t {
  boolean = 0, int32 = 1, int64 = 2, int96 = 3, float32 = 4, float64 = 5, byte_array = 6, fixed_len_byte_array = 7,
};
enum class Repetition : int32_t { required = 0, optional = 1, repeated = 2 };
enum class Codec : int32_t { uncompressed = 0, snappy = 1, gzip = 2, lzo = 3, brotli = 4, lz4 = 5, zstd = 6, lz4_raw = 7 };
enum class Encoding : int32_t {
  plain = 0, plain_dictionary = 2, rle = 3, bit_packed = 4, delta_binary_packed = 5,
  delta_length_byte_array = 6, delta_byte_array = 7, rle_dictionary = 8, byte_stream_split = 9,
};
enum class PageType : int32_t { data_page = 0, index_page = 1, dictionary_page = 2, data_page_v2 = 3 };

const char* type_name(PhysicalType t);
const char* codec_name(Codec c);
const char* encoding_name(Encoding e);

struct SchemaElement {
  int32_t type = -1;  // PhysicalType for leaves, -1 for groups
  Repetition repetition = Repetition::required;
  std::string name;
  int32_t num_children = 0;
};

struct ColumnChunkMeta {
  PhysicalType type = PhysicalType::int32;
  std::vector<std::string> path;
  Codec codec = Codec::uncompressed;
  int64_t num_values = 0;  // level entries, nulls included
  int64_t total_compressed_size = 0;
  int64_t data_page_offset = -1, dictionary_page_offset = -1;
  // Where the chunk's first page starts (its dictionary page when it has one).
  int64_t first_page_offset() const {
    return dictionary_page_offset > 0 && dictionary_page_offset < data_page_offset ? dictionary_page_offset : data_page_offset;
  }
};

struct RowGroupMeta {
  int64_t num_rows = 0;
  std::vector<ColumnChunkMeta> columns;  // one per leaf, in schema order
};

struct FileMetaData {
  std::vector<SchemaElement> schema;  // depth-first, root first
  int64_t num_rows = 0;
  std::vector<RowGroupMeta> row_groups;
  std::string created_by;
};

struct PageHeader {
  PageType type = PageType::data_page;
  int32_t uncompressed_size = 0, compressed_size = 0;
  int32_t num_values = 0;
  Encoding encoding = Encoding::plain;
  // data page v2 only: the level bytes lead the page, uncompressed.
  int32_t def_levels_bytes = 0, rep_levels_bytes = 0;
  bool is_compressed = true;
};

FileMetaData read_file_metadata(CompactReader& r);
PageHeader read_page_header(CompactReader& r);

}  // namespace emb::parquet
