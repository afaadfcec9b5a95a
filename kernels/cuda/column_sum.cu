// column_sums (kernels/ops.hpp) on column_sum.cuh's two passes.
#include "kernels/cuda/blas.hpp"
#include "kernels/cuda/column_sum.cuh"
#include "kernels/cuda/op_entry.hpp"

namespace emb {

void CudaOps::column_sums(const View& x, const View& out) {
  const OpCheck c = check_column_sums(x, out);
  const DType data = storage(c, {&x});
  dispatch_mixed(data, data, gradient_storage(c, data, {&out}), [&](auto t, auto, auto g) {
    using T = decltype(t);
    using G = decltype(g);
    cuda::column_sum(x.rows, int(x.cols), ptr<G>(out), cuda::MatrixEntry<T>{ptr<const T>(x), x.ld},
                     blas_->column_sum_scratch(stream_), stream_);
  });
}

}  // namespace emb
