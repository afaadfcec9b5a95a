#include "weights/mapped_tensor.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace emb {
namespace {

// Our element order as upstream indices. Ours is upstream permuted by perm: our axis i is
// upstream axis perm[i]. Every layout either keeps the order or ends with upstream axis 0
// (ours = [..., rows]: a transpose of upstream [rows, columns]), which is what the readers
// rely on.
struct OrderMap {
  bool identity = true;
  int64_t rows = 1;     // upstream's first axis, our last (when not identity)
  int64_t columns = 1;  // upstream elements per row
  std::vector<int64_t> our_dims;     // our leading axes (all but the last), permuted upstream axes
  std::vector<int64_t> upstream_strides;  // stride of each of those axes upstream

  explicit OrderMap(const UpstreamTensor& t) {
    const std::vector<int> perm = upstream_permutation(t);
    const size_t r = t.shape.size();
    for (size_t i = 0; i < perm.size(); ++i) identity = identity && perm[i] == int(i);
    if (identity) return;
    EMB_ASSERT(perm.size() == r && perm.back() == 0);
    std::vector<int64_t> strides(r, 1);
    for (size_t d = r - 1; d-- > 0;) strides[d] = strides[d + 1] * t.shape[d + 1];
    rows = t.shape[0];
    columns = r > 0 ? strides[0] : 1;
    for (size_t i = 0; i + 1 < r; ++i) {
      our_dims.push_back(t.shape[size_t(perm[i])]);
      upstream_strides.push_back(strides[size_t(perm[i])]);
    }
  }

  // The upstream column of our leading index m (our flat index / rows).
  int64_t column(int64_t m) const {
    int64_t c = 0;
    for (size_t i = our_dims.size(); i-- > 0;) {
      c += (m % our_dims[i]) * upstream_strides[i];
      m /= our_dims[i];
    }
    return c;
  }
  // Our flat index f as an upstream flat index.
  int64_t upstream_index(int64_t f) const { return identity ? f : (f % rows) * columns + column(f / rows); }
};

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

}  // namespace

void read_in_our_order(const WeightSource& source, const UpstreamTensor& t, int64_t begin, int64_t end, float* out) {
  EMB_ASSERT(0 <= begin && begin <= end && end <= numel_of(t.shape));
  if (begin == end) return;
  const OrderMap order(t);
  if (order.identity) {
    source.read(t.name, begin, end, out);
    return;
  }
  // Our rows [m0, m1] are upstream columns; read, from each upstream row the range touches,
  // the run of columns spanning them.
  const int64_t R = order.rows, m0 = begin / R, m1 = (end - 1) / R;
  int64_t c_lo = order.column(m0), c_hi = c_lo;
  for (int64_t m = m0 + 1; m <= m1; ++m) {
    const int64_t c = order.column(m);
    c_lo = std::min(c_lo, c), c_hi = std::max(c_hi, c);
  }
  const int64_t r_lo = m0 == m1 ? begin % R : 0, r_hi = m0 == m1 ? (end - 1) % R : R - 1;
  const int64_t span = c_hi - c_lo + 1;
  std::vector<float> runs(size_t((r_hi - r_lo + 1) * span));
  for (int64_t r = r_lo; r <= r_hi; ++r) {
    const int64_t at = r * order.columns + c_lo;
    source.read(t.name, at, at + span, runs.data() + (r - r_lo) * span);
  }
  for (int64_t f = begin; f < end; ++f)
    out[f - begin] = runs[size_t((f % R - r_lo) * span + order.column(f / R) - c_lo)];
}

void to_upstream_order(const UpstreamTensor& t, const float* ours, float* upstream) {
  const OrderMap order(t);
  const int64_t n = numel_of(t.shape);
  if (order.identity) {
    std::copy(ours, ours + n, upstream);
    return;
  }
  for (int64_t f = 0; f < n; ++f) upstream[order.upstream_index(f)] = ours[f];
}

}  // namespace emb
