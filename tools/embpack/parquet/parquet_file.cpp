#include "parquet_file.hpp"

#include <cstring>
#include <fstream>

#include "column_chunk.hpp"
#include "core/error.hpp"

namespace emb::parquet {

namespace {

constexpr char kMagic[] = "PAR1";

std::vector<uint8_t> read_range(std::ifstream& in, const std::string& path, int64_t offset, int64_t size) {
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(offset);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  EMB_CHECK(in.gcount() == size, path, ": cannot read ", size, " bytes at offset ", offset);
  return bytes;
}

// Depth-first walk of the flattened schema from element i; returns the next element.
size_t collect_leaves(const FileMetaData& m, size_t i, int def, int rep, int list_def, const std::string& prefix,
                      const std::string& field, std::vector<LeafColumn>& leaves, const std::string& path) {
  EMB_CHECK(i < m.schema.size(), path, ": schema ends inside a group (corrupt footer)");
  const SchemaElement& e = m.schema[i];
  if (e.repetition == Repetition::optional) ++def;
  if (e.repetition == Repetition::repeated) ++def, ++rep, list_def = def;
  std::string name = prefix.empty() ? e.name : prefix + "." + e.name;
  std::string top = field.empty() ? e.name : field;
  if (e.num_children == 0) {
    LeafColumn l;
    l.path = name, l.field = top, l.type = PhysicalType(e.type);
    l.max_def = def, l.max_rep = rep, l.list_def = list_def, l.index = leaves.size();
    leaves.push_back(l);
    return i + 1;
  }
  size_t next = i + 1;
  for (int32_t c = 0; c < e.num_children; ++c) next = collect_leaves(m, next, def, rep, list_def, name, top, leaves, path);
  return next;
}

}  // namespace

ParquetFile ParquetFile::open(const std::string& path) {
  ParquetFile f;
  f.path_ = path;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  EMB_CHECK(in, path, ": cannot open Parquet file");
  f.file_size_ = int64_t(in.tellg());
  EMB_CHECK(f.file_size_ >= 12, path, ": not a Parquet file (", f.file_size_, " bytes, too short)");
  std::vector<uint8_t> head = read_range(in, path, 0, 4), tail = read_range(in, path, f.file_size_ - 8, 8);
  EMB_CHECK(std::memcmp(head.data(), kMagic, 4) == 0, path, ": not a Parquet file (bad magic at the start)");
  EMB_CHECK(std::memcmp(tail.data() + 4, kMagic, 4) == 0, path, ": bad magic at the end (truncated Parquet file)");
  uint32_t footer_size;
  std::memcpy(&footer_size, tail.data(), 4);
  EMB_CHECK(int64_t(footer_size) <= f.file_size_ - 12, path, ": footer of ", footer_size, " bytes longer than the file (corrupt)");
  std::vector<uint8_t> footer = read_range(in, path, f.file_size_ - 8 - footer_size, footer_size);
  CompactReader r(footer.data(), footer.data() + footer.size(), path + ": footer");
  f.meta_ = read_file_metadata(r);
  EMB_CHECK(!f.meta_.schema.empty(), path, ": footer has no schema (corrupt)");
  const SchemaElement& root = f.meta_.schema[0];
  size_t next = 1;
  for (int32_t c = 0; c < root.num_children; ++c) next = collect_leaves(f.meta_, next, 0, 0, 0, "", "", f.leaves_, path);
  EMB_CHECK(next == f.meta_.schema.size(), path, ": schema has ", f.meta_.schema.size() - next, " elements outside the root (corrupt footer)");
  int64_t rows = 0;
  for (size_t g = 0; g < f.meta_.row_groups.size(); ++g) {
    EMB_CHECK(f.meta_.row_groups[g].columns.size() == f.leaves_.size(), path, ": row group ", g, " has ",
              f.meta_.row_groups[g].columns.size(), " column chunks for ", f.leaves_.size(), " schema columns (corrupt)");
    rows += f.meta_.row_groups[g].num_rows;
  }
  EMB_CHECK(rows == f.meta_.num_rows, path, ": row groups hold ", rows, " rows, footer says ", f.meta_.num_rows);
  return f;
}

bool ParquetFile::has(const std::string& name) const {
  int matches = 0;
  for (const LeafColumn& l : leaves_) {
    if (l.path == name) return true;
    matches += l.field == name;
  }
  return matches == 1;
}

const LeafColumn& ParquetFile::leaf(const std::string& name) const {
  const LeafColumn* found = nullptr;
  int matches = 0;
  for (const LeafColumn& l : leaves_) {
    if (l.path == name) return l;
    if (l.field == name) found = &l, ++matches;
  }
  EMB_CHECK(matches != 0, path_, ": no column ", name);
  EMB_CHECK(matches == 1, path_, ": column ", name, " is a struct of ", matches, " leaves (name one of them)");
  return *found;
}

ColumnData ParquetFile::read(const std::string& name) const {
  const LeafColumn& l = leaf(name);
  std::string where = str(path_, ": column ", name);
  EMB_CHECK(l.type == PhysicalType::boolean || l.type == PhysicalType::int32 || l.type == PhysicalType::int64 ||
                l.type == PhysicalType::float32 || l.type == PhysicalType::float64 || l.type == PhysicalType::byte_array,
            where, ": unsupported physical type ", type_name(l.type));
  EMB_CHECK(l.max_rep <= 1, where, ": nested lists (repetition level ", l.max_rep, ") are not supported");
  ColumnData out;
  out.name = name, out.type = l.type, out.list = l.max_rep > 0;
  std::ifstream in(path_, std::ios::binary);
  EMB_CHECK(in, path_, ": cannot open Parquet file");
  int64_t data_end = file_size_ - 8;
  for (size_t g = 0; g < meta_.row_groups.size(); ++g) {
    const ColumnChunkMeta& c = meta_.row_groups[g].columns[l.index];
    std::string at = str(where, ", row group ", g);
    EMB_CHECK(c.type == l.type, at, ": chunk type ", type_name(c.type), " differs from the schema's ", type_name(l.type));
    int64_t start = c.first_page_offset(), size = c.total_compressed_size;
    EMB_CHECK(start >= 4 && size >= 0 && start + size <= data_end, at, ": chunk bytes [", start, ", ", start + size,
              ") outside the file's ", file_size_, " bytes (truncated or corrupt)");
    std::vector<uint8_t> bytes = read_range(in, path_, start, size);
    int64_t rows_before = out.rows();
    decode_column_chunk(bytes.data(), bytes.size(), c, l, at, out);
    EMB_CHECK(out.rows() - rows_before == meta_.row_groups[g].num_rows, at, ": decoded ", out.rows() - rows_before,
              " rows, row group has ", meta_.row_groups[g].num_rows);
  }
  return out;
}

}  // namespace emb::parquet
