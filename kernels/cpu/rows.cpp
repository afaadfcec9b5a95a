#include "kernels/cpu/rows.hpp"

#include <cstring>

#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/linear.hpp"
#include "kernels/cpu/op_entry.hpp"
#include "kernels/cpu/parallel_for.hpp"

namespace emb::cpu {

void copy_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
               const int32_t* dst_rows, int64_t n, int64_t C) {
  parallel_for(n, n * C >= (1 << 15), [=](int64_t r) {
    const int64_t s = src_rows ? src_rows[r] : r, d = dst_rows ? dst_rows[r] : r;
    std::memcpy(dst + d * ld_dst, src + s * ld_src, size_t(C) * sizeof(float));
  });
}

void add_rows(const float* src, int64_t ld_src, const int32_t* src_rows, float* dst, int64_t ld_dst,
              const int32_t* dst_rows, int64_t n, int64_t C) {
  for (int64_t r = 0; r < n; ++r) {
    const float* s = src + (src_rows ? src_rows[r] : r) * ld_src;
    float* d = dst + (dst_rows ? dst_rows[r] : r) * ld_dst;
    for (int64_t c = 0; c < C; ++c) d[c] += s[c];
  }
}

void add(const float* a, int64_t ld_a, const float* b, int64_t ld_b, float* y, int64_t ld_y, int64_t N, int64_t C) {
  parallel_for(N, N * C >= (1 << 15), [=](int64_t i) {
    for (int64_t c = 0; c < C; ++c) y[i * ld_y + c] = a[i * ld_a + c] + b[i * ld_b + c];
  });
}

void zero_rows(float* y, int64_t ld_y, int64_t N, int64_t C) {
  if (ld_y == C) {
    std::memset(y, 0, size_t(N * C) * sizeof(float));
    return;
  }
  for (int64_t i = 0; i < N; ++i) std::memset(y + i * ld_y, 0, size_t(C) * sizeof(float));
}

}  // namespace emb::cpu

// ---- CpuOps entries (kernels/ops.hpp) ----

namespace emb {

void CpuOps::zero(const View& y) {
  const OpCheck c = check_zero(y);
  fp32(c);
  if (!y.absent()) cpu::zero_rows(f(y), y.ld, y.rows, y.cols);
}

void CpuOps::copy(const View& x, const View& y) {
  fp32(check_elementwise("copy", {{"x", &x}, {"y", &y}}));
  cpu::copy_rows(cf(x), x.ld, nullptr, f(y), y.ld, nullptr, x.rows, x.cols);
}

void CpuOps::convert(const View& x, const View& y) {
  check_convert(x, y);
  const int64_t n = x.size();
  if (x.dtype == y.dtype) {
    std::memcpy(y.data, x.data, size_t(n) * dtype_size(x.dtype));
  } else if (x.dtype == DType::f32) {
    const float* src = cf(x);
    bf16* dst = static_cast<bf16*>(y.data);
    for (int64_t i = 0; i < n; ++i) dst[i] = to_bf16(src[i]);
  } else {
    const bf16* src = static_cast<const bf16*>(x.data);
    float* dst = f(y);
    for (int64_t i = 0; i < n; ++i) dst[i] = to_float(src[i]);
  }
}

void CpuOps::add(const View& a, const View& b, const View& y) {
  fp32(check_elementwise("add", {{"a", &a}, {"b", &b}, {"y", &y}}));
  cpu::add(cf(a), a.ld, cf(b), b.ld, f(y), y.ld, y.rows, y.cols);
}

void CpuOps::add_bias(const View& y, const View& b) {
  fp32_contiguous(check_add_bias(y, b));
  cpu::add_bias(f(y), cf(b), y.rows, y.cols);
}

void CpuOps::copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  fp32(check_rows("copy_rows", src, src_rows, dst, dst_rows));
  cpu::copy_rows(cf(src), src.ld, src_rows.data, f(dst), dst.ld, dst_rows.data, row_count(src, src_rows, dst_rows),
                 src.cols);
}

void CpuOps::add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  fp32(check_rows("add_rows", src, src_rows, dst, dst_rows));
  cpu::add_rows(cf(src), src.ld, src_rows.data, f(dst), dst.ld, dst_rows.data, row_count(src, src_rows, dst_rows),
                src.cols);
}

}  // namespace emb
