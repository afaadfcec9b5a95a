// Decompresses one Parquet page body: UNCOMPRESSED, SNAPPY (libsnappy) and ZSTD (libzstd).
// Other codecs and sizes that disagree with the page header are emb::Error naming `where`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "parquet_metadata.hpp"

namespace emb::parquet {

std::vector<uint8_t> decompress(Codec codec, const uint8_t* data, size_t size, size_t uncompressed_size,
                                const std::string& where);

}  // namespace emb::parquet
