// The critic of PPO: V(s), an MLP on the state vector (tanh hidden layers, one linear output),
// fp32 on the host with explicit forward and backward in the llm.c manner (no autograd). The
// parameters, gradients and AdamW moments are flat vectors, so trainers can MPI_Allreduce the
// gradients and a checkpoint can save and restore all three as they are.
//   layout of params(): per layer l (input → hidden[0] → ... → 1): W_l [out, in] row-major, then b_l [out]
//   init: W uniform in ±1/sqrt(in) (PyTorch's nn.Linear default), b = 0; keyed by the seed only
//   AdamW: beta1 0.9, beta2 0.999, eps 1e-8, bias-corrected; weight decay on W only (not on b)
#pragma once
#include <cstdint>
#include <vector>

namespace emb {

class ValueHead {
 public:
  // Throws emb::Error when input_dim or a hidden width is < 1.
  ValueHead(int input_dim, std::vector<int> hidden, uint64_t seed);

  int input_dim() const { return widths_.front(); }
  const std::vector<int>& widths() const { return widths_; }  // input, hidden..., 1

  // v[r] = V(x[r]) for the n rows of x ([n, input_dim]); keeps the activations for backward.
  void forward(const float* x, int n, float* v);
  // Adds d(loss)/d(params) to grads() given dv = d(loss)/dv of the last forward's n rows.
  void backward(const float* dv, int n);
  void zero_grads();
  // One AdamW update from grads() at 1-based `step`; grads() are left as they are.
  void adamw_step(double lr, double weight_decay, int64_t step);

  // ½·mean_r (v[r] − target[r])²; writes its gradient (v − target)/n into dv.
  static double mse_loss_grad(const float* v, const float* target, int n, float* dv);

  std::vector<float>& params() { return params_; }
  std::vector<float>& grads() { return grads_; }
  std::vector<float>& moment1() { return m_; }
  std::vector<float>& moment2() { return v_; }

 private:
  int layers() const { return int(widths_.size()) - 1; }

  std::vector<int> widths_;
  std::vector<int64_t> weight_offset_, bias_offset_;  // per layer, into params_
  std::vector<float> params_, grads_, m_, v_;
  int batch_ = 0;                         // rows of the last forward
  std::vector<std::vector<float>> acts_;  // per layer's input: x, then each tanh output [batch, width]
  std::vector<float> delta_, delta_prev_;  // backward scratch: d(loss)/d(pre-activation) of a layer
};

}  // namespace emb
