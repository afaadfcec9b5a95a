// Decodes the pages of one column chunk (the bytes of one column in one row group) and
// appends its rows to a ColumnData: page headers, decompression, repetition/definition
// levels, PLAIN / dictionary / RLE values and the assembly of list rows from the levels.
#pragma once
#include <cstdint>
#include <string>

#include "column_data.hpp"
#include "parquet_metadata.hpp"

namespace emb::parquet {

struct LeafColumn;

// `bytes` are the chunk's bytes from its first page; `where` prefixes every error
// ("file.parquet: column action, row group 0").
void decode_column_chunk(const uint8_t* bytes, size_t size, const ColumnChunkMeta& meta, const LeafColumn& leaf,
                         const std::string& where, ColumnData& out);

}  // namespace emb::parquet
