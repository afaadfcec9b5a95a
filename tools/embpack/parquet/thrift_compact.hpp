// A reader of Thrift's compact protocol, the encoding of Parquet's footer (FileMetaData)
// and page headers. Structs are walked field by field: the caller handles the field ids it
// needs and skip()s the rest, so unknown or newer fields never break reading. Any read
// past the end is an emb::Error "WHERE: truncated Thrift data ...".
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace emb::parquet {

// Compact-protocol type ids (the low nibble of a field header).
enum CompactType : uint8_t {
  kStop = 0, kTrue = 1, kFalse = 2, kByte = 3, kI16 = 4, kI32 = 5, kI64 = 6, kDouble = 7,
  kBinary = 8, kList = 9, kSet = 10, kMap = 11, kStruct = 12,
};

class CompactReader {
 public:
  // `where` names the bytes in errors ("data.parquet: footer").
  CompactReader(const uint8_t* begin, const uint8_t* end, std::string where);
  size_t consumed() const { return size_t(pos_ - begin_); }

  int32_t i32() { return int32_t(zigzag()); }
  int64_t i64() { return zigzag(); }
  std::string binary();
  // A struct field's boolean lives in its type nibble.
  static bool field_bool(uint8_t type) { return type == kTrue; }

  // Calls on_field(id, type) for every field of one struct; on_field must consume the
  // value (read it or skip(type)).
  template <class OnField>
  void read_struct(OnField&& on_field) {
    int16_t last = 0;
    while (true) {
      uint8_t header = byte();
      uint8_t type = header & 0x0f;
      if (type == kStop) return;
      int16_t delta = int16_t(header >> 4);
      int16_t id = delta ? int16_t(last + delta) : int16_t(zigzag());
      last = id;
      on_field(id, type);
    }
  }
  // Calls on_element(element_type) once per element of a list or set.
  template <class OnElement>
  void read_list(OnElement&& on_element) {
    uint8_t header = byte();
    uint64_t n = header >> 4;
    if (n == 15) n = varint();
    uint8_t type = header & 0x0f;
    for (uint64_t i = 0; i < n; ++i) on_element(type);
  }
  void skip(uint8_t type);

 private:
  uint8_t byte();
  uint64_t varint();
  int64_t zigzag();
  [[noreturn]] void truncated() const;

  const uint8_t *begin_, *pos_, *end_;
  std::string where_;
  int depth_ = 0;  // nesting of skip(), bounded against corrupt input
};

}  // namespace emb::parquet
