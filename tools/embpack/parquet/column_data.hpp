// One column of a Parquet file read into memory, all row groups back to back. Flat columns
// have one value per row; list<...> columns have row_offsets[r]..row_offsets[r+1] values
// in row r. Values live in the vector of their physical type.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "parquet_metadata.hpp"

namespace emb::parquet {

struct ColumnData {
  std::string name;
  PhysicalType type = PhysicalType::int32;
  bool list = false;
  std::vector<int64_t> row_offsets{0};  // [rows+1]
  std::vector<int64_t> ints;            // BOOLEAN (0/1), INT32, INT64
  std::vector<double> reals;            // FLOAT, DOUBLE
  std::vector<std::string> strings;     // BYTE_ARRAY

  int64_t rows() const { return int64_t(row_offsets.size()) - 1; }
  int64_t size() const;  // values over all rows
  int64_t row_size(int64_t r) const { return row_offsets[size_t(r) + 1] - row_offsets[size_t(r)]; }
  bool is_real() const { return type == PhysicalType::float32 || type == PhysicalType::float64; }
  bool is_string() const { return type == PhysicalType::byte_array; }
  // Value i of a numeric column as a double.
  double number(int64_t i) const { return is_real() ? reals[size_t(i)] : double(ints[size_t(i)]); }
  // Appends value i of `from` (same type) to this column's values.
  void append_value_of(const ColumnData& from, int64_t i);
};

}  // namespace emb::parquet
