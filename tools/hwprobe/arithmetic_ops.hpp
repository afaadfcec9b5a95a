// The tensors hwprobe times the elementwise ops whose time is their arithmetic on
// (kArithmeticElementwiseOps, kernels/op_types.hpp), and one call of such an op through Ops.
// hwprobe's elementwise_element_seconds times rope and the sinusoids on one shape, per element;
// the norms on two widths, per element and per row (a row's statistics and set-up).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/ops.hpp"

namespace emb::probe {

// Whether `op` is one of the norms among kArithmeticElementwiseOps: their time per element falls
// with the rows' width (layernorm_backward 5.4-11 GB/s at widths 64-256 in steps here,
// regression/plan_validation.md session 32), so hwprobe gives each a cost per row beside its
// cost per element.
bool row_statistic_op(const std::string& op);

// Host tensors of `rows` rows of `cols` columns (for rope a multiple of 64: heads of 64, wan's
// 3-axis positions) for any of kArithmeticElementwiseOps, filled with values the norms and
// rotations keep finite over many calls.
class ArithmeticOpTensors {
 public:
  ArithmeticOpTensors(int64_t rows, int cols);

  // One call of `op` (a kArithmeticElementwiseOps name) through `ops` on the tensors; an op of
  // no other name throws Error.
  void run(Ops& ops, const std::string& op);
  int64_t elements() const { return rows_ * cols_; }

 private:
  View all(std::vector<float>& t) { return view(t.data(), rows_, cols_); }
  View row(std::vector<float>& t) { return view(t.data(), 1, cols_); }
  View column(std::vector<float>& t) { return view(t.data(), rows_, 1); }

  int64_t rows_;
  int cols_;
  std::vector<float> x_, y_, dy_, dx_, normed_, scale_, shift_, dscale_, dshift_, gate_, residual_, x_in_;  // [rows, cols]
  std::vector<float> weight_, bias_, dweight_, dbias_;  // [1, cols]
  std::vector<float> mean_, rstd_, timesteps_;         // [rows, 1]
  std::vector<int32_t> positions_;                     // [rows, 3]
};

}  // namespace emb::probe
