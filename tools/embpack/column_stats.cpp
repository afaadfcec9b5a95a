#include "column_stats.hpp"

#include <algorithm>
#include <cmath>

namespace emb {

namespace {

// Linear interpolation between order statistics (numpy's default quantile).
float quantile(std::vector<float>& v, double q) {
  double at = q * double(v.size() - 1);
  size_t lo = size_t(at);
  std::nth_element(v.begin(), v.begin() + lo, v.end());
  float a = v[lo];
  if (lo + 1 >= v.size()) return a;
  float b = *std::min_element(v.begin() + lo + 1, v.end());
  return float(a + (at - double(lo)) * (b - a));
}

}  // namespace

ColumnStats column_stats(const std::vector<float>& rows, int64_t dim) {
  ColumnStats s;
  int64_t n = dim > 0 ? int64_t(rows.size()) / dim : 0;
  std::vector<float> column(static_cast<size_t>(n));
  for (int64_t c = 0; c < dim; ++c) {
    double sum = 0, sq = 0;
    for (int64_t r = 0; r < n; ++r) column[r] = rows[r * dim + c], sum += column[r];
    double mean = n ? sum / double(n) : 0;
    for (float x : column) sq += (x - mean) * (x - mean);
    s.mean.push_back(float(mean));
    s.std.push_back(float(n ? std::sqrt(sq / double(n)) : 0));
    s.min.push_back(n ? *std::min_element(column.begin(), column.end()) : 0.f);
    s.max.push_back(n ? *std::max_element(column.begin(), column.end()) : 0.f);
    s.q01.push_back(n ? quantile(column, 0.01) : 0.f);
    s.q99.push_back(n ? quantile(column, 0.99) : 0.f);
  }
  return s;
}

}  // namespace emb
