// The resolved deck (DESIGN.md "src/config"): every schema key read once, typed (enums, not
// strings), grouped by section, with where each key was set so that a check anywhere names the
// deck line to change. src/app resolves it from the Deck (app/run_config_from_deck.hpp);
// everything below the application takes it, or the section it needs, never the Deck.
// Each field names its key; config/schema.cpp documents the keys.
#pragma once
#include <cstdint>
#include <string>

#include "config/backend_config.hpp"
#include "config/comm_config.hpp"
#include "config/data_config.hpp"
#include "config/key_origins.hpp"
#include "config/model_config.hpp"
#include "config/train_config.hpp"
#include "core/injected_failure.hpp"

namespace emb {

struct RunSettings {
  std::string name;        // run.name; "" = <deck stem>-<timestamp>
  std::string output_dir;  // run.output_dir
  uint64_t seed = 0;       // run.seed
  int64_t log_every = 10;  // run.log_every, steps
  bool profile_ops = false;  // run.profile_ops: time every op (train/op_profile.hpp)
};

// What --plan predicts for.
struct PlanConfig {
  std::string hardware;         // plan.hardware, or the machine run.device runs on (cpu_dev, h100_sxm)
  int64_t dataset_samples = 0;  // plan.dataset_samples; 0 = count data.paths when they exist
  std::string json;             // plan.json, or <run.output_dir>/plan/<deck stem>.json
  int ranks = 0;                // train.ranks; 0 = the world size
  int64_t micro_batch = 0;      // train.micro_batch, samples with packing off; 0 = as many as fit
  int backbone_views = 1;          // plan.backbone_views: gr00t's backbone cost is given for these views
  int64_t instruction_tokens = 12;  // plan.instruction_tokens: ... and this instruction length (umT5's too)
  // plan.video_height / plan.video_width: the pixels of the clip wan's VAE encodes per sample
  // (the encoders' cost); 0 = the latent's size times the VAE's spatial factor.
  int video_height = 0, video_width = 0;
};

// Closed-loop evaluation of a gr00t checkpoint (embsim eval).
struct SimConfig {
  int flow_steps = 4;    // sim.flow_steps: Euler steps from noise to a chunk
  int exec_steps = 4;    // sim.exec_steps: actions of a chunk executed
  double sde_noise = 0;  // sim.sde_noise: 0 = the ODE
};

// Fault injection for the failure-handling tests, and the parity dump's random parameters.
struct DebugConfig {
  int64_t inject_nan_step = 0;    // debug.inject_nan_step; 0 = never
  int64_t fail_rank = -1;         // debug.fail_rank; -1 = none
  int64_t fail_step = 1;          // debug.fail_step
  InjectedFailure fail_how = InjectedFailure::error;  // debug.fail_how
  int64_t ckpt_fail_step = 0;     // debug.ckpt_fail_step; 0 = never
  double slow_micro_batch_s = 0;  // debug.slow_step_ms, in seconds, slept per micro-batch
  int64_t slow_rank = -1;         // debug.slow_rank: the rank it slows; -1 = every rank
  bool random_params = false;     // debug.random_params: --dump at random trained-scale parameters
};

struct RunConfig {
  std::string deck_path;  // the deck file given on the command line
  std::string deck_stem;  // its base name without extension
  std::string deck_text;  // the resolved deck (deck.resolved, every checkpoint)
  std::string run_id;     // checkpoint/run_identity.hpp: the fingerprint of what the deck trains
  KeyOrigins origins;     // where each key was set

  RunSettings run;
  BackendConfig backend;
  ModelConfig model;
  DataConfig data;
  TrainConfig train;
  CommConfig comm;
  PlanConfig plan;
  SimConfig sim;
  DebugConfig debug;
};

}  // namespace emb
