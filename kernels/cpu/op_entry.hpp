// What the CpuOps entries share. Each op's entry (its CpuOps member function) sits in that op's
// file of this folder, after the op's kernels (ggml's layout): it runs the op's shape rule
// (kernels/ops_check.hpp), then this backend's own rules below, then the kernels. Only the files
// of entries include this header, and its helpers are theirs unqualified (the using-directive
// at its end).
#pragma once
#include "kernels/cpu/activation.hpp"
#include "kernels/ops_check.hpp"

namespace emb::cpu::entry {

inline const float* cf(const View& v) { return static_cast<const float*>(v.data); }
inline float* f(const View& v) { return static_cast<float*>(v.data); }

// Every CpuOps op: fp32 only.
inline void fp32(const OpCheck& c) { c.dtypes({DType::f32}); }
// ... and, for the kernels that take no row stride, contiguous views.
inline void fp32_contiguous(const OpCheck& c) { c.dtypes({DType::f32}), c.contiguous(); }

// Where a linear's GEMM writes: y without an activation, else pre (activation_epilogue reads it).
inline float* gemm_output(Activation act, const View& pre, const View& y) {
  return act == Activation::none ? f(y) : f(pre);
}
// y = act(pre) after the GEMM (nothing without an activation).
inline void activation_epilogue(Activation act, const View& pre, const View& y) {
  if (act != Activation::none) activation_forward(act, cf(pre), f(y), y.size());
}

}  // namespace emb::cpu::entry

namespace emb {
using namespace cpu::entry;
}  // namespace emb
