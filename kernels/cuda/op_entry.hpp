// What the CudaOps entries share. Each op's entry (its CudaOps member function) sits in that op's
// file of this folder, after the op's kernels and launchers (ggml's layout): it runs the op's
// shape rule (kernels/ops_check.hpp), this backend's own rules below (storage types, fp32
// statistics, contiguity), unpacks the views into pointers and launches on the Ops' stream.
// Only the files of entries include this header, and its helpers are theirs unqualified (the
// using-directive below). Host code only.
#pragma once
#include <cuda_bf16.h>

#include <initializer_list>
#include <utility>

#include "kernels/cuda/activation.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/cuda_ops.hpp"
#include "kernels/ops_check.hpp"

namespace emb::cuda::entry {

using bf16_t = __nv_bfloat16;
using cuda::check_cuda;

template <class T>
T* ptr(const View& v) {
  return static_cast<T*>(v.data);
}
inline const float* fp(const View& v) { return static_cast<const float*>(v.data); }
inline float* f(const View& v) { return static_cast<float*>(v.data); }

// The storage type the present data views of a call share (fp32 or bf16); throws the op's
// one-line error otherwise.
DType storage(const OpCheck& c, std::initializer_list<const View*> data);
// The storage type of a call's views that may be wider than its data (parameter gradients:
// linear dW and db, norm weight and bias gradients, column sums; the residual stream: a norm's x
// and dx, a gated residual's x and dx): the data's type, or fp32 beside bf16 data (bf16
// activations accumulate into fp32 parameter gradients and keep an fp32 residual stream); the
// present ones share it.
DType gradient_storage(const OpCheck& c, DType data, std::initializer_list<const View*> gradients);
DType residual_storage(const OpCheck& c, DType data, std::initializer_list<const View*> residual);
// Statistics views (mean, rstd, lse, timesteps, AdamW state) are fp32.
void fp32_views(const OpCheck& c, std::initializer_list<std::pair<const char*, const View*>> views);

// Calls body(T{}) with T = float or __nv_bfloat16.
template <class Body>
void dispatch(DType t, Body body) {
  if (t == DType::f32)
    body(float{});
  else
    body(bf16_t{});
}

// Calls body(T{}, R{}, G{}) with the data's storage type T, the residual stream's R and the
// parameter gradients' G (each T, or fp32 beside bf16).
template <class Body>
void dispatch_mixed(DType data, DType residual, DType gradient, Body body) {
  auto with_gradient = [&](auto t, auto r) {
    if (gradient == DType::f32)
      body(t, r, float{});
    else
      body(t, r, decltype(t){});
  };
  if (data == DType::f32)
    body(float{}, float{}, float{});
  else if (residual == DType::f32)
    with_gradient(bf16_t{}, float{});
  else
    with_gradient(bf16_t{}, bf16_t{});
}

// ---- the linears' frames (linear.cu, fp8_linear.cu) ----

// A linear forward's operands in the storage type T; out is where the GEMM writes: y without an
// activation, else pre (the activation then reads it).
template <class T>
struct LinearOperands {
  const T *x, *W, *b;
  T* out;
};
// A linear backward's operands: dpre is the gradient at the activation's input (dy itself
// without an activation); the parameter gradients are of type G (T, or fp32 beside bf16).
template <class T, class G>
struct LinearGradients {
  const T *x, *W, *dpre;
  T* dx;
  G *dW, *db;
};

}  // namespace emb::cuda::entry

namespace emb {
using namespace cuda::entry;

template <class T>
const T* CudaOps::activation_input_gradient(Activation act, const View& pre, const View& dy) {
  if (act == Activation::none) return ptr<const T>(dy);
  T* dpre = static_cast<T*>(zeroed_gradient(dy.size(), sizeof(T)));
  cuda::activation_backward(act, ptr<const T>(pre), ptr<const T>(dy), dpre, dy.size(), stream_);
  return dpre;
}

// Contiguous operands of one storage type; gemm(o) returns whether it applied the activation
// itself (an epilogue of the GEMM), else y = act(pre) follows.
template <class Gemm>
void CudaOps::linear_forward_frame(const OpCheck& c, const View& x, const View& W, const View& b, Activation act,
                                   const View& pre, const View& y, Gemm&& gemm) {
  c.contiguous();
  dispatch(storage(c, {&x, &W, &b, &pre, &y}), [&](auto t) {
    using T = decltype(t);
    T* out = ptr<T>(act == Activation::none ? y : pre);
    const bool activated = gemm(LinearOperands<T>{ptr<const T>(x), ptr<const T>(W), ptr<const T>(b), out});
    if (!activated && act != Activation::none)
      cuda::activation_forward(act, ptr<const T>(pre), ptr<T>(y), y.size(), stream_);
  });
}

// Contiguous operands, one storage type for the data and one for the weight and bias gradients
// (fp32 beside bf16 data), and dy taken through the activation's derivative first.
template <class Gemms>
void CudaOps::linear_backward_frame(const OpCheck& c, const View& x, const View& W, Activation act, const View& pre,
                                    const View& dy, const View& dx, const View& dW, const View& db, Gemms&& gemms) {
  c.contiguous({{"x", &x}, {"W", &W}, {"pre", &pre}, {"dy", &dy}, {"dx", &dx}, {"dW", &dW}, {"db", &db}});
  const DType data = storage(c, {&x, &W, &pre, &dy, &dx});
  dispatch_mixed(data, data, gradient_storage(c, data, {&dW, &db}), [&](auto t, auto, auto gt) {
    using T = decltype(t);
    using G = decltype(gt);
    const T* dpre = activation_input_gradient<T>(act, pre, dy);
    gemms(LinearGradients<T, G>{ptr<const T>(x), ptr<const T>(W), dpre, ptr<T>(dx), ptr<G>(dW), ptr<G>(db)});
  });
}

}  // namespace emb
