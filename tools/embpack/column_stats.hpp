// Normalisation statistics of a row-major table (mean, std, min, max and the 1% / 99%
// quantiles per column), stored under /stats/<field>/ for the loader and for users.
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

struct ColumnStats {
  std::vector<float> mean, std, min, max, q01, q99;
};

ColumnStats column_stats(const std::vector<float>& rows, int64_t dim);

}  // namespace emb
