// time_enc of MODEL.md, the same in both families but for its sinusoid's layout: temb =
// time_enc.fc2(silu(time_enc.fc1(sinusoid(t, 256)))) and stemb = silu(temb), once per distinct
// timestep (time_rows.hpp). gr00t's sinusoid is diffusers' Timesteps(256, flip_sin_to_cos=True,
// downscale_freq_shift=1), wan's Wan's sinusoidal_embedding_1d (kernels/op_types.hpp
// SinusConfig). What the families build on it differs: gr00t conditions its blocks and
// proj_out_1 on stemb; wan projects stemb through time_proj for its blocks and adds temb to its
// head's modulation.
#pragma once
#include <cstdint>

#include "kernels/ops.hpp"
#include "model/activation_plan.hpp"
#include "model/param_registry.hpp"
#include "model/time_rows.hpp"
#include "model/unit_hooks.hpp"

namespace emb {

class TimeEncoder {
 public:
  // Registers time_enc.fc1 [256, D] and time_enc.fc2 [D, D] in the registry's open unit; the
  // sinusoid has the family's layout.
  void add_params(ParamRegistry& reg, int D, const SinusConfig& sinusoid);
  // rows: the most distinct timesteps the micro-batch can have (ActivationRows::time_rows).
  void plan(ActivationPlan& plan, int64_t rows);

  // t [Tu, 1]: the distinct timesteps, in the backend's memory.
  void forward(Ops& ops, const ParamAccess& P, const View& t);
  // Zeroes dtemb and dstemb before the rest of the model's backward adds to them.
  void zero_grads(Ops& ops, int64_t Tu);
  // From dstemb and dtemb (which already holds what reached temb directly) to the parameters.
  void backward(Ops& ops, const ParamAccess& P, int64_t Tu);

  // [rows, D]; d* are gradients.
  float *temb = nullptr, *stemb = nullptr, *dtemb = nullptr, *dstemb = nullptr;

 private:
  int D_ = 0;
  SinusConfig sinusoid_;
  LinearRef fc1_, fc2_;
  float *sin_ = nullptr, *fc1_out_ = nullptr, *fc1_silu_ = nullptr;
  float* dfc1_silu_ = nullptr;
};

}  // namespace emb
