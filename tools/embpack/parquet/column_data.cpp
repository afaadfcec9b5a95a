#include "column_data.hpp"

namespace emb::parquet {

int64_t ColumnData::size() const {
  return int64_t(is_real() ? reals.size() : is_string() ? strings.size() : ints.size());
}

void ColumnData::append_value_of(const ColumnData& from, int64_t i) {
  if (is_real()) reals.push_back(from.reals[size_t(i)]);
  else if (is_string()) strings.push_back(from.strings[size_t(i)]);
  else ints.push_back(from.ints[size_t(i)]);
}

}  // namespace emb::parquet
