#include "thrift_compact.hpp"

#include "core/error.hpp"

namespace emb::parquet {

CompactReader::CompactReader(const uint8_t* begin, const uint8_t* end, std::string where)
    : begin_(begin), pos_(begin), end_(end), where_(std::move(where)) {}

void CompactReader::truncated() const {
  throw Error(str(where_, ": truncated Thrift data at byte ", pos_ - begin_, " of ", end_ - begin_));
}

uint8_t CompactReader::byte() {
  if (pos_ >= end_) truncated();
  return *pos_++;
}

uint64_t CompactReader::varint() {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    uint8_t b = byte();
    v |= uint64_t(b & 0x7f) << shift;
    if (!(b & 0x80)) return v;
  }
  throw Error(str(where_, ": malformed Thrift varint at byte ", pos_ - begin_));
}

int64_t CompactReader::zigzag() {
  uint64_t v = varint();
  return int64_t(v >> 1) ^ -int64_t(v & 1);
}

std::string CompactReader::binary() {
  uint64_t n = varint();
  if (n > uint64_t(end_ - pos_)) truncated();
  std::string s(reinterpret_cast<const char*>(pos_), size_t(n));
  pos_ += n;
  return s;
}

void CompactReader::skip(uint8_t type) {
  EMB_CHECK(++depth_ < 64, where_, ": Thrift data nested too deeply (corrupt)");
  switch (type) {
    case kTrue: case kFalse: break;
    case kByte: byte(); break;
    case kI16: case kI32: case kI64: varint(); break;
    case kDouble:
      if (end_ - pos_ < 8) truncated();
      pos_ += 8;
      break;
    case kBinary: binary(); break;
    case kList: case kSet: read_list([&](uint8_t t) { t == kTrue || t == kFalse ? void(byte()) : skip(t); }); break;
    case kMap: {
      uint64_t n = varint();
      if (n == 0) break;
      uint8_t kv = byte();
      for (uint64_t i = 0; i < n; ++i) skip(kv >> 4), skip(kv & 0x0f);
      break;
    }
    case kStruct: read_struct([&](int16_t, uint8_t t) { skip(t); }); break;
    default: throw Error(str(where_, ": unknown Thrift type ", int(type), " at byte ", pos_ - begin_, " (corrupt)"));
  }
  --depth_;
}

}  // namespace emb::parquet
