#include "arithmetic_ops.hpp"

#include "core/error.hpp"

namespace emb::probe {

bool row_statistic_op(const std::string& op) {
  return op == "layernorm_forward" || op == "layernorm_backward" || op == "rmsnorm_forward" ||
         op == "rmsnorm_backward" || op == "norm_modulate_forward" || op == "norm_modulate_backward" ||
         op == "residual_norm_modulate_forward";
}

ArithmeticOpTensors::ArithmeticOpTensors(int64_t rows, int cols)
    : rows_(rows), cols_(cols), weight_(size_t(cols), 1.0f), bias_(size_t(cols), 0.0f), dweight_(size_t(cols)),
      dbias_(size_t(cols)), mean_(size_t(rows)), rstd_(size_t(rows), 1.0f), timesteps_(size_t(rows)),
      positions_(size_t(rows) * 3) {
  EMB_CHECK(rows > 0 && cols > 0, "ArithmeticOpTensors: ", rows, " rows of ", cols, " columns");
  const size_t n = size_t(rows) * size_t(cols);
  x_.resize(n), y_.resize(n), dx_.resize(n), normed_.resize(n), x_in_.resize(n), dscale_.resize(n), dshift_.resize(n);
  dy_.assign(n, 0.25f), scale_.assign(n, 0.1f), shift_.assign(n, 0.05f), residual_.assign(n, 0.01f);
  gate_.assign(n, 1e-3f);  // residual_norm_modulate_forward adds gate·r to x at every call
  for (size_t i = 0; i < n; ++i) x_[i] = float(int(i % 97) - 48) / 16.0f;
  for (int64_t i = 0; i < rows; ++i) {
    timesteps_[size_t(i)] = float(i % 1000);
    for (int axis = 0; axis < 3; ++axis) positions_[size_t(3 * i + axis)] = int32_t((i >> (2 * axis)) % 16);
  }
}

void ArithmeticOpTensors::run(Ops& ops, const std::string& op) {
  const RopeConfig rope{RopeMode::d3, cols_ / 64, 64};
  const float eps = 1e-6f;
  if (op.rfind("rope_", 0) == 0)
    EMB_CHECK(cols_ % 64 == 0, "ArithmeticOpTensors: rope on ", cols_, " columns (heads of 64)");
  if (op == "rope_forward") {
    ops.rope_forward(all(x_), positions_.data(), rope);
  } else if (op == "rope_backward") {
    ops.rope_backward(all(x_), positions_.data(), rope);
  } else if (op == "sinus_embedding") {
    ops.sinus_embedding(column(timesteps_), all(y_), SinusConfig{});
  } else if (op == "layernorm_forward") {
    ops.layernorm_forward(all(x_), row(weight_), row(bias_), all(y_), column(mean_), column(rstd_), eps);
  } else if (op == "layernorm_backward") {
    ops.layernorm_backward(all(x_), row(weight_), column(mean_), column(rstd_), all(dy_), all(dx_), row(dweight_),
                           row(dbias_));
  } else if (op == "rmsnorm_forward") {
    ops.rmsnorm_forward(all(x_), row(weight_), all(y_), column(rstd_));
  } else if (op == "rmsnorm_backward") {
    ops.rmsnorm_backward(all(x_), row(weight_), column(rstd_), all(dy_), all(dx_), row(dweight_));
  } else if (op == "norm_modulate_forward") {
    ops.norm_modulate_forward(all(x_), all(scale_), all(shift_), all(normed_), all(y_), column(mean_), column(rstd_),
                              eps);
  } else if (op == "norm_modulate_backward") {
    ops.norm_modulate_backward(all(x_), all(normed_), all(scale_), column(mean_), column(rstd_), all(dy_), all(dx_),
                               all(dscale_), all(dshift_));
  } else if (op == "residual_norm_modulate_forward") {
    ops.residual_norm_modulate_forward(all(x_), all(gate_), all(residual_), all(x_in_), all(scale_), all(shift_),
                                       all(normed_), all(y_), column(mean_), column(rstd_), eps);
  } else {
    throw Error(str("hwprobe: no tensors for the elementwise op \"", op, "\""));
  }
}

}  // namespace emb::probe
