#include "decompress.hpp"

#include <snappy-c.h>
#include <zstd.h>

#include "core/error.hpp"

namespace emb::parquet {

std::vector<uint8_t> decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                                const std::string& where) {
  std::vector<uint8_t> out(uncompressed_size);
  switch (codec) {
    case Codec::uncompressed:
      EMB_CHECK(size == uncompressed_size, where, ": uncompressed page of ", size, " bytes, header says ", uncompressed_size);
      std::copy(data, data + size, out.begin());
      return out;
    case Codec::snappy: {
      size_t n = out.size();
      snappy_status s = snappy_uncompress(reinterpret_cast<const char*>(data), size, reinterpret_cast<char*>(out.data()), &n);
      EMB_CHECK(s == SNAPPY_OK && n == uncompressed_size, where, ": corrupt Snappy page (expected ", uncompressed_size, " bytes)");
      return out;
    }
    case Codec::zstd: {
      size_t n = ZSTD_decompress(out.data(), out.size(), data, size);
      EMB_CHECK(!ZSTD_isError(n) && n == uncompressed_size, where, ": corrupt Zstd page (",
                ZSTD_isError(n) ? ZSTD_getErrorName(n) : "wrong size", ")");
      return out;
    }
    default:
      throw Error(str(where, ": unsupported compression codec ", codec_name(codec), " (supported: UNCOMPRESSED, SNAPPY, ZSTD)"));
  }
}

}  // namespace emb::parquet
