// column_sums (kernels/ops.hpp) on column_sum.hpp's kernel.
#include "kernels/cpu/column_sum.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "kernels/cpu/op_entry.hpp"

namespace emb {

void CpuOps::column_sums(const View& x, const View& out) {
  fp32(check_column_sums(x, out));
  const float* p = cf(x);
  const int64_t ld = x.ld;
  cpu::accumulate_column_sums(x.rows, int(x.cols), f(out), [&](int64_t i, int c) { return double(p[i * ld + c]); });
}

}  // namespace emb
