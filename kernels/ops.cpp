#include "kernels/ops.hpp"

#include "core/error.hpp"
#include "kernels/input_slots.hpp"
#include "kernels/ops_check.hpp"

namespace emb {

std::unique_ptr<InputSlots> Ops::make_input_slots() { return std::make_unique<OpsInputSlots>(*this); }

// The packed form of a backend without a layout of its own: W itself.
void Ops::pack_linear(const View& W, const View& packed) {
  check_pack_linear(*this, W, packed);
  copy(W, View{packed.data, packed.dtype, W.rows, W.cols, W.cols});
}

void Ops::packed_linear_forward(const View& x, const View& packed, const View& b, Activation act, const View& pre,
                                const View& y) {
  check_packed_linear(*this, x, packed, b, act, pre, y);
  linear_forward(x, View{packed.data, packed.dtype, x.cols, y.cols, y.cols}, b, act, pre, y);
}

void Ops::pack_conv3d(const View& weight, int kt, const View& packed) {
  check_pack_conv3d(*this, weight, kt, packed);
  const int64_t spatial = weight.rows / kt, tap = packed_linear_elements(spatial, weight.cols);
  for (int dt = 0; dt < kt; ++dt)
    pack_linear(weight.rows_range(dt * spatial, spatial),
                View{static_cast<char*>(packed.data) + size_t(dt * tap) * dtype_size(packed.dtype), packed.dtype, 1,
                     tap, tap});
}

void Ops::packed_conv3d_forward(const View& x, const View& packed, const View& bias, const View& y,
                                const ConvConfig& cfg) {
  check_packed_conv3d(*this, x, packed, bias, y, cfg);
  conv3d_forward(x, View{packed.data, packed.dtype, cfg.taps() * x.cols, y.cols, y.cols}, bias, y, cfg);
}

View View::rows_range(int64_t begin, int64_t n) const {
  EMB_CHECK(begin >= 0 && n >= 0 && begin + n <= rows, "view rows [", begin, ", ", begin + n, ") of ", shape());
  View v = *this;
  if (data) v.data = static_cast<char*>(data) + size_t(begin * ld) * dtype_size(dtype);
  v.rows = n;
  return v;
}

View View::cols_range(int64_t begin, int64_t n) const {
  EMB_CHECK(begin >= 0 && n >= 0 && begin + n <= cols, "view cols [", begin, ", ", begin + n, ") of ", shape());
  View v = *this;
  if (data) v.data = static_cast<char*>(data) + size_t(begin) * dtype_size(dtype);
  v.cols = n;
  return v;
}

View View::flat() const {
  EMB_CHECK(contiguous(), "view ", shape(), " is strided: it has no flat form");
  View v = *this;
  v.cols = v.ld = rows * cols;
  v.rows = 1;
  return v;
}

std::string View::shape() const {
  if (!data) return "absent";
  std::string s = str("[", rows, ", ", cols);
  if (ld != cols) s += str("; ld ", ld);
  if (dtype != DType::f32) s += str(" ", dtype_name(dtype));
  return s + "]";
}

View view(const float* p, int64_t rows, int64_t cols, int64_t ld) {
  View v;
  v.data = const_cast<float*>(p);
  v.dtype = DType::f32;
  v.rows = rows, v.cols = cols, v.ld = ld ? ld : cols;
  return v;
}

EmbGrouping group_rows_by_embodiment(const int32_t* ids, int64_t n, int n_emb) {
  EmbGrouping g;
  g.offsets.assign(size_t(n_emb) + 1, 0);
  for (int64_t i = 0; i < n; ++i) {
    EMB_CHECK(ids[i] >= 0 && ids[i] < n_emb, "per-embodiment rows: row ", i, " has embodiment ", ids[i],
              ", expected [0, ", n_emb, ")");
    ++g.offsets[size_t(ids[i]) + 1];
  }
  for (int e = 0; e < n_emb; ++e) g.offsets[size_t(e) + 1] += g.offsets[size_t(e)];
  g.perm.resize(size_t(n));
  std::vector<int64_t> next(g.offsets.begin(), g.offsets.end() - 1);
  for (int64_t i = 0; i < n; ++i) g.perm[size_t(next[size_t(ids[i])]++)] = int32_t(i);
  return g;
}

}  // namespace emb
