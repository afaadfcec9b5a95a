// Parquet's RLE / bit-packed hybrid encoding (definition and repetition levels,
// dictionary indices, RLE booleans): runs of `header >> 1` repeated values when the
// header's low bit is 0, else `header >> 1` groups of 8 values bit-packed LSB first.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace emb::parquet {

// Decodes `count` values of `bit_width` bits from [begin, end); errors name `where`.
std::vector<uint32_t> decode_rle_hybrid(const uint8_t* begin, const uint8_t* end, int bit_width, int64_t count,
                                        const std::string& where);

// Bits needed for values 0..max_value.
int bit_width_of(uint64_t max_value);

}  // namespace emb::parquet
