#include "rle_hybrid.hpp"

#include "core/error.hpp"

namespace emb::parquet {

int bit_width_of(uint64_t max_value) {
  int w = 0;
  while (max_value >> w) ++w;
  return w;
}

std::vector<uint32_t> decode_rle_hybrid(const uint8_t* begin, const uint8_t* end, int bit_width, int64_t count,
                                        const std::string& where) {
  EMB_CHECK(bit_width >= 0 && bit_width <= 32, where, ": RLE bit width ", bit_width, " out of range (corrupt)");
  std::vector<uint32_t> out;
  out.reserve(size_t(count));
  const uint8_t* p = begin;
  auto truncated = [&]() { return Error(str(where, ": RLE data ends after ", out.size(), " of ", count, " values")); };
  while (int64_t(out.size()) < count) {
    uint64_t header = 0;
    for (int shift = 0;; shift += 7) {
      if (p >= end || shift > 63) throw truncated();
      header |= uint64_t(*p & 0x7f) << shift;
      if (!(*p++ & 0x80)) break;
    }
    if (header & 1) {  // bit-packed: (header >> 1) groups of 8
      uint64_t values = (header >> 1) * 8;
      uint64_t bytes = (header >> 1) * uint64_t(bit_width);
      if (bytes > uint64_t(end - p)) throw truncated();
      for (uint64_t i = 0; i < values && int64_t(out.size()) < count; ++i) {
        uint64_t bit = i * uint64_t(bit_width), v = 0;
        for (int b = 0; b < bit_width; ++b, ++bit) v |= uint64_t((p[bit / 8] >> (bit % 8)) & 1) << b;
        out.push_back(uint32_t(v));
      }
      p += bytes;
    } else {  // run: one value in ceil(bit_width / 8) little-endian bytes
      uint64_t run = header >> 1;
      int bytes = (bit_width + 7) / 8;
      if (bytes > end - p) throw truncated();
      uint32_t v = 0;
      for (int b = 0; b < bytes; ++b) v |= uint32_t(p[b]) << (8 * b);
      p += bytes;
      EMB_CHECK(run > 0, where, ": empty RLE run (corrupt)");
      for (uint64_t i = 0; i < run && int64_t(out.size()) < count; ++i) out.push_back(v);
    }
  }
  return out;
}

}  // namespace emb::parquet
