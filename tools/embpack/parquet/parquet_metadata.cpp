#include "parquet_metadata.hpp"

namespace emb::parquet {

const char* type_name(PhysicalType t) {
  constexpr const char* names[] = {"BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"};
  int i = int(t);
  return i >= 0 && i < 8 ? names[i] : "unknown type";
}

const char* codec_name(Codec c) {
  constexpr const char* names[] = {"UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW"};
  int i = int(c);
  return i >= 0 && i < 8 ? names[i] : "unknown codec";
}

const char* encoding_name(Encoding e) {
  constexpr const char* names[] = {"PLAIN", "GROUP_VAR_INT", "PLAIN_DICTIONARY", "RLE", "BIT_PACKED",
                                   "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
                                   "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};
  int i = int(e);
  return i >= 0 && i < 10 ? names[i] : "unknown encoding";
}

namespace {

SchemaElement read_schema_element(CompactReader& r) {
  SchemaElement s;
  r.read_struct([&](int16_t id, uint8_t type) {
    switch (id) {
      case 1: s.type = r.i32(); break;
      case 3: s.repetition = Repetition(r.i32()); break;
      case 4: s.name = r.binary(); break;
      case 5: s.num_children = r.i32(); break;
      default: r.skip(type);
    }
  });
  return s;
}

void read_column_meta(CompactReader& r, ColumnChunkMeta& c) {
  r.read_struct([&](int16_t id, uint8_t type) {
    switch (id) {
      case 1: c.type = PhysicalType(r.i32()); break;
      case 3: r.read_list([&](uint8_t) { c.path.push_back(r.binary()); }); break;
      case 4: c.codec = Codec(r.i32()); break;
      case 5: c.num_values = r.i64(); break;
      case 7: c.total_compressed_size = r.i64(); break;
      case 9: c.data_page_offset = r.i64(); break;
      case 11: c.dictionary_page_offset = r.i64(); break;
      default: r.skip(type);
    }
  });
}

RowGroupMeta read_row_group(CompactReader& r) {
  RowGroupMeta g;
  r.read_struct([&](int16_t id, uint8_t type) {
    switch (id) {
      case 1:
        r.read_list([&](uint8_t) {
          ColumnChunkMeta c;
          r.read_struct([&](int16_t cid, uint8_t ctype) { cid == 3 ? read_column_meta(r, c) : r.skip(ctype); });
          g.columns.push_back(std::move(c));
        });
        break;
      case 3: g.num_rows = r.i64(); break;
      default: r.skip(type);
    }
  });
  return g;
}

}  // namespace

FileMetaData read_file_metadata(CompactReader& r) {
  FileMetaData m;
  r.read_struct([&](int16_t id, uint8_t type) {
    switch (id) {
      case 2: r.read_list([&](uint8_t) { m.schema.push_back(read_schema_element(r)); }); break;
      case 3: m.num_rows = r.i64(); break;
      case 4: r.read_list([&](uint8_t) { m.row_groups.push_back(read_row_group(r)); }); break;
      case 6: m.created_by = r.binary(); break;
      default: r.skip(type);
    }
  });
  return m;
}

PageHeader read_page_header(CompactReader& r) {
  PageHeader h;
  auto data_header = [&](bool v2) {
    r.read_struct([&](int16_t id, uint8_t type) {
      if (id == 1) h.num_values = r.i32();
      else if (id == (v2 ? 4 : 2)) h.encoding = Encoding(r.i32());
      else if (v2 && id == 5) h.def_levels_bytes = r.i32();
      else if (v2 && id == 6) h.rep_levels_bytes = r.i32();
      else if (v2 && id == 7) h.is_compressed = CompactReader::field_bool(type);
      else r.skip(type);
    });
  };
  r.read_struct([&](int16_t id, uint8_t type) {
    switch (id) {
      case 1: h.type = PageType(r.i32()); break;
      case 2: h.uncompressed_size = r.i32(); break;
      case 3: h.compressed_size = r.i32(); break;
      case 5: data_header(false); break;
      case 7: data_header(false); break;  // DictionaryPageHeader: 1 num_values, 2 encoding
      case 8: data_header(true); break;
      default: r.skip(type);
    }
  });
  return h;
}

}  // namespace emb::parquet
