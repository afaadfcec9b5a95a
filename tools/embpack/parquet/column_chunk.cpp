#include "column_chunk.hpp"

#include <cstring>

#include "core/error.hpp"
#include "decompress.hpp"
#include "parquet_file.hpp"
#include "rle_hybrid.hpp"

namespace emb::parquet {

namespace {

uint32_t load_u32(const uint8_t* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Appends `n` PLAIN values of `type` from [p, end) to `out`.
void decode_plain(PhysicalType type, const uint8_t* p, const uint8_t* end, int64_t n, ColumnData& out,
                  const std::string& where) {
  auto need = [&](int64_t bytes) {
    EMB_CHECK(bytes <= end - p, where, ": PLAIN values end early (", n, " values expected)");
  };
  switch (type) {
    case PhysicalType::boolean:
      need((n + 7) / 8);
      for (int64_t i = 0; i < n; ++i) out.ints.push_back((p[i / 8] >> (i % 8)) & 1);
      return;
    case PhysicalType::int32:
      need(4 * n);
      for (int64_t i = 0; i < n; ++i) out.ints.push_back(int32_t(load_u32(p + 4 * i)));
      return;
    case PhysicalType::int64:
      need(8 * n);
      for (int64_t i = 0; i < n; ++i) {
        int64_t v;
        std::memcpy(&v, p + 8 * i, 8);
        out.ints.push_back(v);
      }
      return;
    case PhysicalType::float32:
      need(4 * n);
      for (int64_t i = 0; i < n; ++i) {
        float v;
        std::memcpy(&v, p + 4 * i, 4);
        out.reals.push_back(v);
      }
      return;
    case PhysicalType::float64:
      need(8 * n);
      for (int64_t i = 0; i < n; ++i) {
        double v;
        std::memcpy(&v, p + 8 * i, 8);
        out.reals.push_back(v);
      }
      return;
    case PhysicalType::byte_array:
      for (int64_t i = 0; i < n; ++i) {
        need(4);
        uint32_t len = load_u32(p);
        p += 4;
        need(len);
        out.strings.emplace_back(reinterpret_cast<const char*>(p), len);
        p += len;
      }
      return;
    default:
      throw Error(str(where, ": unsupported physical type ", type_name(type)));
  }
}

// Levels of a v1 page: a 4-byte length, then the RLE hybrid; advances p past them.
std::vector<uint32_t> levels_v1(const uint8_t*& p, const uint8_t* end, int max_level, int64_t n, const std::string& where) {
  if (max_level == 0) return std::vector<uint32_t>(size_t(n), 0);
  EMB_CHECK(end - p >= 4, where, ": page ends inside its levels");
  uint32_t len = load_u32(p);
  p += 4;
  EMB_CHECK(len <= uint32_t(end - p), where, ": levels of ", len, " bytes overrun the page");
  std::vector<uint32_t> levels = decode_rle_hybrid(p, p + len, bit_width_of(uint64_t(max_level)), n, where + " levels");
  p += len;
  return levels;
}

std::vector<uint32_t> levels_v2(const uint8_t* p, int32_t len, int max_level, int64_t n, const std::string& where) {
  if (max_level == 0) return std::vector<uint32_t>(size_t(n), 0);
  return decode_rle_hybrid(p, p + len, bit_width_of(uint64_t(max_level)), n, where + " levels");
}

// Decodes a data page's `present` values in `encoding` and appends them to `out`.
void decode_values(Encoding encoding, const uint8_t* p, const uint8_t* end, int64_t present, const ColumnData* dictionary,
                   ColumnData& out, const std::string& where) {
  switch (encoding) {
    case Encoding::plain:
      decode_plain(out.type, p, end, present, out, where);
      return;
    case Encoding::plain_dictionary:
    case Encoding::rle_dictionary: {
      EMB_CHECK(dictionary, where, ": dictionary-encoded page without a dictionary page");
      if (present == 0) return;
      EMB_CHECK(p < end, where, ": dictionary page indices missing");
      int width = *p++;
      std::vector<uint32_t> ids = decode_rle_hybrid(p, end, width, present, where + " dictionary indices");
      for (uint32_t id : ids) {
        EMB_CHECK(int64_t(id) < dictionary->size(), where, ": dictionary index ", id, " out of range (",
                  dictionary->size(), " entries)");
        out.append_value_of(*dictionary, id);
      }
      return;
    }
    case Encoding::rle: {
      EMB_CHECK(out.type == PhysicalType::boolean, where, ": RLE encoding of ", type_name(out.type), " values (only BOOLEAN)");
      EMB_CHECK(end - p >= 4, where, ": RLE booleans missing their length");
      uint32_t len = load_u32(p);
      EMB_CHECK(len <= uint32_t(end - p - 4), where, ": RLE booleans overrun the page");
      for (uint32_t v : decode_rle_hybrid(p + 4, p + 4 + len, 1, present, where)) out.ints.push_back(v);
      return;
    }
    default:
      throw Error(str(where, ": unsupported encoding ", encoding_name(encoding),
                      " (supported: PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE)"));
  }
}

// Turns one page's levels into rows: rep 0 opens a row; def == max_def is a value;
// def == list_def - 1 an empty list; anything lower or between is a null, which LeRobot
// never writes and the reader rejects.
void assemble_rows(const std::vector<uint32_t>& rep, const std::vector<uint32_t>& def, const LeafColumn& leaf,
                   int64_t first_value, ColumnData& out, const std::string& where) {
  int64_t values = first_value;
  for (size_t i = 0; i < def.size(); ++i) {
    if (leaf.max_rep == 0 || rep[i] == 0)
      out.row_offsets.push_back(values);  // a new row, empty so far
    else
      EMB_CHECK(out.rows() > 0, where, ": data starts inside a list (repetition level ", rep[i], ")");
    if (int(def[i]) == leaf.max_def) {
      out.row_offsets.back() = ++values;
    } else if (leaf.max_rep == 0 || int(def[i]) != leaf.list_def - 1) {  // list_def - 1: an empty list
      throw Error(str(where, ": null ", leaf.max_rep > 0 && int(def[i]) < leaf.list_def ? "list" : "value",
                      " in row ", out.rows() - 1, " (nulls are not supported)"));
    }
  }
}

}  // namespace

void decode_column_chunk(const uint8_t* bytes, size_t size, const ColumnChunkMeta& meta, const LeafColumn& leaf,
                         const std::string& where, ColumnData& out) {
  ColumnData dictionary;
  dictionary.type = out.type;
  bool has_dictionary = false;
  int64_t levels_seen = 0;
  size_t pos = 0;
  while (levels_seen < meta.num_values) {
    std::string at = str(where, ", page at byte ", pos);
    EMB_CHECK(pos < size, where, ": column chunk ends after ", levels_seen, " of ", meta.num_values, " values (truncated)");
    CompactReader r(bytes + pos, bytes + size, at + " header");
    PageHeader h = read_page_header(r);
    pos += r.consumed();
    EMB_CHECK(h.compressed_size >= 0 && size_t(h.compressed_size) <= size - pos, at, ": page of ", h.compressed_size,
              " bytes overruns the column chunk (truncated file)");
    EMB_CHECK(h.uncompressed_size >= 0, at, ": negative page size (corrupt)");
    const uint8_t* body = bytes + pos;
    pos += size_t(h.compressed_size);
    switch (h.type) {
      case PageType::dictionary_page: {
        std::vector<uint8_t> page = decompress(meta.codec, body, size_t(h.compressed_size), size_t(h.uncompressed_size), at);
        EMB_CHECK(h.encoding == Encoding::plain || h.encoding == Encoding::plain_dictionary, at,
                  ": unsupported dictionary encoding ", encoding_name(h.encoding));
        dictionary = ColumnData();
        dictionary.type = out.type;
        decode_plain(out.type, page.data(), page.data() + page.size(), h.num_values, dictionary, at);
        has_dictionary = true;
        break;
      }
      case PageType::data_page: {
        std::vector<uint8_t> page = decompress(meta.codec, body, size_t(h.compressed_size), size_t(h.uncompressed_size), at);
        const uint8_t *p = page.data(), *end = p + page.size();
        std::vector<uint32_t> rep = levels_v1(p, end, leaf.max_rep, h.num_values, at + " repetition");
        std::vector<uint32_t> def = levels_v1(p, end, leaf.max_def, h.num_values, at + " definition");
        int64_t present = 0;
        for (uint32_t d : def) present += int(d) == leaf.max_def;
        int64_t first = out.size();
        decode_values(h.encoding, p, end, present, has_dictionary ? &dictionary : nullptr, out, at);
        assemble_rows(rep, def, leaf, first, out, at);
        levels_seen += h.num_values;
        break;
      }
      case PageType::data_page_v2: {
        int64_t levels = int64_t(h.rep_levels_bytes) + h.def_levels_bytes;
        EMB_CHECK(h.rep_levels_bytes >= 0 && h.def_levels_bytes >= 0 && levels <= h.compressed_size &&
                      levels <= h.uncompressed_size,
                  at, ": level bytes overrun the page (corrupt)");
        std::vector<uint32_t> rep = levels_v2(body, h.rep_levels_bytes, leaf.max_rep, h.num_values, at + " repetition");
        std::vector<uint32_t> def = levels_v2(body + h.rep_levels_bytes, h.def_levels_bytes, leaf.max_def, h.num_values,
                                              at + " definition");
        const uint8_t* values = body + levels;
        size_t stored = size_t(h.compressed_size - levels), full = size_t(h.uncompressed_size - levels);
        std::vector<uint8_t> page = h.is_compressed ? decompress(meta.codec, values, stored, full, at)
                                                    : std::vector<uint8_t>(values, values + stored);
        int64_t present = 0;
        for (uint32_t d : def) present += int(d) == leaf.max_def;
        int64_t first = out.size();
        decode_values(h.encoding, page.data(), page.data() + page.size(), present, has_dictionary ? &dictionary : nullptr,
                      out, at);
        assemble_rows(rep, def, leaf, first, out, at);
        levels_seen += h.num_values;
        break;
      }
      case PageType::index_page:
        break;
      default:
        throw Error(str(at, ": unknown page type ", int(h.type), " (corrupt)"));
    }
  }
}

}  // namespace emb::parquet
