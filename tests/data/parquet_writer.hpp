// A minimal Parquet writer for the tests (the reader under test is tools/embpack/parquet):
// a Thrift compact-protocol encoder, hand-made pages in every encoding and level layout the
// reader supports (PLAIN / dictionary values, v1 / v2 data pages, RLE or bit-packed
// levels, UNCOMPRESSED / SNAPPY / ZSTD), and a copier that lays the row groups of real
// files into one new file byte for byte (the LeRobot v3.0 layout test).
#pragma once
#include <snappy-c.h>
#include <zstd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "parquet/parquet_file.hpp"

namespace emb::test {

using namespace emb::parquet;

class CompactWriter {
 public:
  std::vector<uint8_t> bytes;
  void field(int16_t id, uint8_t type) {
    int16_t delta = int16_t(id - last_.back());
    if (delta > 0 && delta <= 15) {
      put(uint8_t(delta << 4 | type));
    } else {
      put(type);
      varint(zig(id));
    }
    last_.back() = id;
  }
  void i32(int16_t id, int64_t v) { field(id, kI32), varint(zig(v)); }
  void i64(int16_t id, int64_t v) { field(id, kI64), varint(zig(v)); }
  void boolean(int16_t id, bool v) { field(id, v ? kTrue : kFalse); }
  void binary(int16_t id, const std::string& s) { field(id, kBinary), raw_binary(s); }
  void raw_binary(const std::string& s) {
    varint(s.size());
    bytes.insert(bytes.end(), s.begin(), s.end());
  }
  void begin_struct(int16_t id) { field(id, kStruct), last_.push_back(0); }
  void begin_list_element() { last_.push_back(0); }  // a struct inside a list
  void end_struct() { put(kStop), last_.pop_back(); }
  void list(int16_t id, uint8_t element_type, size_t n) {
    field(id, kList);
    if (n < 15) {
      put(uint8_t(n << 4 | element_type));
    } else {
      put(uint8_t(0xf0 | element_type));
      varint(n);
    }
  }
  void raw_i32(int64_t v) { varint(zig(v)); }
  void stop() { put(kStop); }

 private:
  static uint64_t zig(int64_t v) { return (uint64_t(v) << 1) ^ uint64_t(v >> 63); }
  void put(uint8_t b) { bytes.push_back(b); }
  void varint(uint64_t v) {
    while (v >= 0x80) put(uint8_t(v | 0x80)), v >>= 7;
    put(uint8_t(v));
  }
  std::vector<int16_t> last_{0};
};

// RLE / bit-packed hybrid: `runs` writes RLE runs of equal values, else bit-packed groups.
inline std::vector<uint8_t> encode_hybrid(const std::vector<uint32_t>& v, int width, bool runs) {
  std::vector<uint8_t> out;
  auto varint = [&](uint64_t x) {
    while (x >= 0x80) out.push_back(uint8_t(x | 0x80)), x >>= 7;
    out.push_back(uint8_t(x));
  };
  if (runs) {
    for (size_t i = 0; i < v.size();) {
      size_t j = i;
      while (j < v.size() && v[j] == v[i]) ++j;
      varint(uint64_t(j - i) << 1);
      for (int b = 0; b < (width + 7) / 8; ++b) out.push_back(uint8_t(v[i] >> (8 * b)));
      i = j;
    }
    return out;
  }
  size_t groups = (v.size() + 7) / 8;
  varint(uint64_t(groups) << 1 | 1);
  std::vector<uint8_t> packed(groups * size_t(width), 0);
  for (size_t i = 0; i < v.size(); ++i)
    for (int b = 0; b < width; ++b)
      if (v[i] >> b & 1) packed[(i * size_t(width) + size_t(b)) / 8] |= uint8_t(1 << ((i * size_t(width) + size_t(b)) % 8));
  out.insert(out.end(), packed.begin(), packed.end());
  return out;
}

// One column to write: flat (one value per row) or list<...> (rows of values).
struct TestColumn {
  std::string name;
  PhysicalType type = PhysicalType::int64;
  bool list = false, optional = false;  // flat columns: REQUIRED or OPTIONAL
  std::vector<std::vector<double>> rows;           // numeric values per row
  std::vector<std::vector<std::string>> text_rows;  // BYTE_ARRAY values per row
};

struct PageOptions {
  bool v2 = false, dictionary = false, level_runs = true;
  Codec codec = Codec::uncompressed;
  int64_t rows_per_page = 1 << 30;
  int64_t row_group_rows = 1 << 30;
  int32_t encoding_label = -1;  // >= 0: written into the data page headers instead of the real one
};

inline std::vector<uint8_t> compress(Codec c, const std::vector<uint8_t>& in) {
  if (c == Codec::snappy) {
    size_t n = snappy_max_compressed_length(in.size());
    std::vector<uint8_t> out(n);
    snappy_compress(reinterpret_cast<const char*>(in.data()), in.size(), reinterpret_cast<char*>(out.data()), &n);
    out.resize(n);
    return out;
  }
  if (c == Codec::zstd) {
    std::vector<uint8_t> out(ZSTD_compressBound(in.size()));
    out.resize(ZSTD_compress(out.data(), out.size(), in.data(), in.size(), 3));
    return out;
  }
  return in;  // UNCOMPRESSED, or a codec the test labels but never compresses with
}

class ParquetTestWriter {
 public:
  explicit ParquetTestWriter(std::vector<TestColumn> columns, PageOptions o = {}) : cols_(std::move(columns)), o_(o) {}

  void write(const std::string& path) {
    std::vector<uint8_t> file{'P', 'A', 'R', '1'};
    int64_t rows = int64_t(std::max(cols_[0].rows.size(), cols_[0].text_rows.size()));
    std::vector<std::vector<ColumnChunkMeta>> groups;
    std::vector<int64_t> group_rows;
    for (int64_t g0 = 0; g0 < rows; g0 += o_.row_group_rows) {
      int64_t g1 = std::min(rows, g0 + o_.row_group_rows);
      std::vector<ColumnChunkMeta> chunks;
      for (const TestColumn& c : cols_) chunks.push_back(write_chunk(c, g0, g1, file));
      groups.push_back(chunks), group_rows.push_back(g1 - g0);
    }
    std::vector<SchemaElement> schema = schema_of();
    std::vector<uint8_t> footer = footer_bytes(schema, rows, groups, group_rows);
    file.insert(file.end(), footer.begin(), footer.end());
    uint32_t n = uint32_t(footer.size());
    file.insert(file.end(), reinterpret_cast<uint8_t*>(&n), reinterpret_cast<uint8_t*>(&n) + 4);
    file.insert(file.end(), {'P', 'A', 'R', '1'});
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
  }

  std::vector<SchemaElement> schema_of() const {
    std::vector<SchemaElement> s{{-1, Repetition::required, "schema", int32_t(cols_.size())}};
    for (const TestColumn& c : cols_) {
      if (c.list) {
        s.push_back({-1, Repetition::optional, c.name, 1});
        s.push_back({-1, Repetition::repeated, "list", 1});
        s.push_back({int32_t(c.type), Repetition::optional, "element", 0});
      } else {
        s.push_back({int32_t(c.type), c.optional ? Repetition::optional : Repetition::required, c.name, 0});
      }
    }
    return s;
  }

  // FileMetaData of `schema` and row groups whose chunks are described by `groups`.
  static std::vector<uint8_t> footer_bytes(const std::vector<SchemaElement>& schema, int64_t rows,
                                           const std::vector<std::vector<ColumnChunkMeta>>& groups,
                                           const std::vector<int64_t>& group_rows) {
    CompactWriter w;
    w.i32(1, 2);
    w.list(2, kStruct, schema.size());
    for (const SchemaElement& e : schema) {
      w.begin_list_element();
      if (e.type >= 0) w.i32(1, e.type);
      if (&e != &schema[0]) w.i32(3, int32_t(e.repetition));
      w.binary(4, e.name);
      if (e.num_children) w.i32(5, e.num_children);
      w.end_struct();
    }
    w.i64(3, rows);
    w.list(4, kStruct, groups.size());
    for (size_t g = 0; g < groups.size(); ++g) {
      w.begin_list_element();
      w.list(1, kStruct, groups[g].size());
      int64_t total = 0;
      for (const ColumnChunkMeta& c : groups[g]) {
        w.begin_list_element();
        w.i64(2, c.first_page_offset());
        w.begin_struct(3);
        w.i32(1, int32_t(c.type));
        w.list(2, kI32, 1);
        w.raw_i32(0);
        w.list(3, kBinary, c.path.size());
        for (const std::string& p : c.path) w.raw_binary(p);
        w.i32(4, int32_t(c.codec));
        w.i64(5, c.num_values);
        w.i64(6, c.total_compressed_size);
        w.i64(7, c.total_compressed_size);
        w.i64(9, c.data_page_offset);
        if (c.dictionary_page_offset > 0) w.i64(11, c.dictionary_page_offset);
        w.end_struct();
        w.end_struct();
        total += c.total_compressed_size;
      }
      w.i64(2, total);
      w.i64(3, group_rows[g]);
      w.end_struct();
    }
    w.binary(6, "embtrain test writer");
    w.stop();
    return w.bytes;
  }

 private:
  // PLAIN bytes of `values` (numbers or strings) in `type`.
  static std::vector<uint8_t> plain(PhysicalType type, const std::vector<double>& nums, const std::vector<std::string>& strs) {
    std::vector<uint8_t> out;
    auto put = [&](const void* p, size_t n) { out.insert(out.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    if (type == PhysicalType::boolean) {
      out.assign((nums.size() + 7) / 8, 0);
      for (size_t i = 0; i < nums.size(); ++i)
        if (nums[i] != 0) out[i / 8] |= uint8_t(1 << (i % 8));
    }
    for (double v : nums) {
      if (type == PhysicalType::int32) { int32_t x = int32_t(v); put(&x, 4); }
      if (type == PhysicalType::int64) { int64_t x = int64_t(v); put(&x, 8); }
      if (type == PhysicalType::float32) { float x = float(v); put(&x, 4); }
      if (type == PhysicalType::float64) put(&v, 8);
    }
    for (const std::string& s : strs) {
      uint32_t n = uint32_t(s.size());
      put(&n, 4), put(s.data(), s.size());
    }
    return out;
  }

  void page(CompactWriter& h, PageType type, const std::vector<uint8_t>& body_raw, const std::vector<uint8_t>& levels,
            int64_t num_values, Encoding enc, std::vector<uint8_t>& file, int32_t rep_bytes, int32_t def_bytes) {
    std::vector<uint8_t> body = compress(o_.codec, body_raw);
    h.i32(1, int32_t(type));
    h.i32(2, int32_t(levels.size() + body_raw.size()));
    h.i32(3, int32_t(levels.size() + body.size()));
    if (type == PageType::dictionary_page) {
      h.begin_struct(7), h.i32(1, num_values), h.i32(2, int32_t(Encoding::plain)), h.end_struct();
    } else if (type == PageType::data_page) {
      h.begin_struct(5), h.i32(1, num_values), h.i32(2, int32_t(enc)), h.i32(3, 3), h.i32(4, 3), h.end_struct();
    } else {
      h.begin_struct(8), h.i32(1, num_values), h.i32(2, 0), h.i32(3, 0), h.i32(4, int32_t(enc));
      h.i32(5, def_bytes), h.i32(6, rep_bytes), h.boolean(7, o_.codec != Codec::uncompressed), h.end_struct();
    }
    h.stop();
    file.insert(file.end(), h.bytes.begin(), h.bytes.end());
    file.insert(file.end(), levels.begin(), levels.end());
    file.insert(file.end(), body.begin(), body.end());
  }

  ColumnChunkMeta write_chunk(const TestColumn& c, int64_t r0, int64_t r1, std::vector<uint8_t>& file) {
    ColumnChunkMeta m;
    m.type = c.type, m.codec = o_.codec;
    m.path = c.list ? std::vector<std::string>{c.name, "list", "element"} : std::vector<std::string>{c.name};
    bool text = c.type == PhysicalType::byte_array;
    // The dictionary: distinct values of the chunk in first-seen order.
    std::vector<double> dict_nums;
    std::vector<std::string> dict_strs;
    std::map<std::string, uint32_t> id_of;
    auto key = [&](int64_t r, size_t i) { return text ? c.text_rows[size_t(r)][i] : std::to_string(c.rows[size_t(r)][i]); };
    auto row_size = [&](int64_t r) { return text ? c.text_rows[size_t(r)].size() : c.rows[size_t(r)].size(); };
    if (o_.dictionary) {
      for (int64_t r = r0; r < r1; ++r)
        for (size_t i = 0; i < row_size(r); ++i)
          if (id_of.emplace(key(r, i), uint32_t(id_of.size())).second) {
            if (text) dict_strs.push_back(c.text_rows[size_t(r)][i]);
            else dict_nums.push_back(c.rows[size_t(r)][i]);
          }
      m.dictionary_page_offset = int64_t(file.size());
      CompactWriter h;
      page(h, PageType::dictionary_page, plain(c.type, dict_nums, dict_strs), {}, int64_t(id_of.size()), Encoding::plain,
           file, 0, 0);
    }
    m.data_page_offset = int64_t(file.size());
    int max_def = c.list ? 3 : c.optional ? 1 : 0, max_rep = c.list ? 1 : 0;
    for (int64_t p0 = r0; p0 < r1; p0 += o_.rows_per_page) {
      int64_t p1 = std::min(r1, p0 + o_.rows_per_page);
      std::vector<uint32_t> rep, def, ids;
      std::vector<double> nums;
      std::vector<std::string> strs;
      for (int64_t r = p0; r < p1; ++r) {
        if (c.list && row_size(r) == 0) rep.push_back(0), def.push_back(1);
        for (size_t i = 0; i < row_size(r); ++i) {
          rep.push_back(i == 0 ? 0 : 1), def.push_back(uint32_t(max_def));
          if (o_.dictionary) ids.push_back(id_of.at(key(r, i)));
          else if (text) strs.push_back(c.text_rows[size_t(r)][i]);
          else nums.push_back(c.rows[size_t(r)][i]);
        }
      }
      std::vector<uint8_t> values;
      if (o_.dictionary) {
        int width = 1;
        while ((size_t(1) << width) < id_of.size()) ++width;
        values.push_back(uint8_t(width));
        std::vector<uint8_t> enc = encode_hybrid(ids, width, !o_.level_runs);
        values.insert(values.end(), enc.begin(), enc.end());
      } else {
        values = plain(c.type, nums, strs);
      }
      std::vector<uint8_t> rep_bytes = max_rep ? encode_hybrid(rep, 1, o_.level_runs) : std::vector<uint8_t>();
      std::vector<uint8_t> def_bytes = max_def ? encode_hybrid(def, max_def == 3 ? 2 : 1, o_.level_runs) : std::vector<uint8_t>();
      Encoding enc = o_.encoding_label >= 0 ? Encoding(o_.encoding_label)
                     : o_.dictionary        ? Encoding::rle_dictionary
                                            : Encoding::plain;
      CompactWriter h;
      if (o_.v2) {
        std::vector<uint8_t> levels = rep_bytes;
        levels.insert(levels.end(), def_bytes.begin(), def_bytes.end());
        page(h, PageType::data_page_v2, values, levels, int64_t(def.size()), enc, file, int32_t(rep_bytes.size()),
             int32_t(def_bytes.size()));
      } else {
        std::vector<uint8_t> body;
        for (const std::vector<uint8_t>* l : {&rep_bytes, &def_bytes}) {
          if (l->empty()) continue;
          uint32_t n = uint32_t(l->size());
          body.insert(body.end(), reinterpret_cast<uint8_t*>(&n), reinterpret_cast<uint8_t*>(&n) + 4);
          body.insert(body.end(), l->begin(), l->end());
        }
        body.insert(body.end(), values.begin(), values.end());
        page(h, PageType::data_page, body, {}, int64_t(def.size()), enc, file, 0, 0);
      }
      m.num_values += int64_t(def.size());
    }
    m.total_compressed_size = int64_t(file.size()) - m.first_page_offset();
    return m;
  }

  std::vector<TestColumn> cols_;
  PageOptions o_;
};

// Lays the row groups of `sources` (Parquet files of one schema) into one file, their
// column chunks copied byte for byte: the v3.0 "many episodes per file" layout of real data.
inline void concat_parquet(const std::vector<std::string>& sources, const std::string& out) {
  std::vector<uint8_t> file{'P', 'A', 'R', '1'};
  std::vector<std::vector<ColumnChunkMeta>> groups;
  std::vector<int64_t> group_rows;
  std::vector<SchemaElement> schema;
  int64_t rows = 0;
  for (const std::string& path : sources) {
    ParquetFile src = ParquetFile::open(path);
    std::ifstream in(path, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    schema = src.metadata().schema;
    for (const RowGroupMeta& g : src.metadata().row_groups) {
      std::vector<ColumnChunkMeta> chunks;
      for (ColumnChunkMeta c : g.columns) {
        int64_t shift = int64_t(file.size()) - c.first_page_offset();
        file.insert(file.end(), bytes.begin() + c.first_page_offset(), bytes.begin() + c.first_page_offset() + c.total_compressed_size);
        c.data_page_offset += shift;
        if (c.dictionary_page_offset > 0) c.dictionary_page_offset += shift;
        chunks.push_back(c);
      }
      groups.push_back(chunks), group_rows.push_back(g.num_rows), rows += g.num_rows;
    }
  }
  std::vector<uint8_t> footer = ParquetTestWriter::footer_bytes(schema, rows, groups, group_rows);
  file.insert(file.end(), footer.begin(), footer.end());
  uint32_t n = uint32_t(footer.size());
  file.insert(file.end(), reinterpret_cast<uint8_t*>(&n), reinterpret_cast<uint8_t*>(&n) + 4);
  file.insert(file.end(), {'P', 'A', 'R', '1'});
  std::ofstream(out, std::ios::binary).write(reinterpret_cast<const char*>(file.data()), std::streamsize(file.size()));
}

}  // namespace emb::test
