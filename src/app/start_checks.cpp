#include "app/start_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "app/data_read_locks.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/host_name.hpp"
#include "data/data_verify.hpp"
#include "data/normalization_statistics.hpp"
#include "data/packed_dataset.hpp"
#include "data/packed_verify.hpp"
#include "data/upstream_data_config.hpp"
#include "kernels/make_ops.hpp"
#include "model/model.hpp"
#include "plan/model_cost.hpp"
#include "train/trainer.hpp"

namespace emb {
namespace {

[[noreturn]] void deck_error(const RunConfig& cfg, const std::string& key, const std::string& message) {
  throw Error(str(cfg.origins.where(key), ": ", key, ": ", message), kExitInput);
}

// model.fp8 = on with no linear on the FP8 path would train exactly as off: refused, so the run
// does not silently measure something else.
void check_fp8_linears(const RunConfig& cfg) {
  if (make_model(cfg.model, nullptr)->fp8_linear_count() > 0) return;
  throw Error(str(cfg.origins.where("model.fp8"), ": model.fp8 = on, but no linear is eligible for FP8 (the blocks' "
                  "q, k, v, o, fc1 and fc2 need in and out multiples of 128; d_model is ", cfg.model.d_model,
                  "); set model.d_model (and model.d_ff) to multiples of 128, or model.fp8 = off"),
              kExitInput);
}

// Creates the directory and a probe file in it: a read-only or foreign directory is found
// now, not at the first checkpoint. What it created it removes again (the run's lock makes
// the directory), so a run refused later at start-up leaves nothing.
void check_writable_dir(const RunConfig& cfg, const std::string& dir) {
  std::string created;
  try {
    created = make_dirs(dir);
  } catch (const Error& e) {
    deck_error(cfg, "train.ckpt_dir", str("checkpoint directory ", clipped_path(dir), " cannot be created (", e.what(), ")"));
  }
  const std::string probe = str(dir, "/.write-test-", ::getpid());
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) {
    const int err = errno;
    remove_empty_dirs(dir, created);
    deck_error(cfg, "train.ckpt_dir",
               str("checkpoint directory ", clipped_path(dir), " is not writable: ", system_reason(err)));
  }
  std::fclose(f);
  std::remove(probe.c_str());
  remove_empty_dirs(dir, created);
}

// The files, checked as the loader opens them (and before, what embpack verify checks short of
// the bulk rows). model.backbone or model.encoders = online: also the encoders' dimensions against
// the model's, their tokenizer, every task's prompt and the files' frames; the files are then the
// encoders' input, and what they refuse is input to fix (exit 2, as `embpack features` refuses it).
PackedDataset open_checked(const RunConfig& cfg, const std::vector<std::string>& files) {
  const DataConfig& dc = cfg.data;
  try {
    for (const std::string& file : files) {
      const FileLock reading = lock_for_reading(file);  // not while embpack replaces it
      const H5File f = H5File::open(file);
      if (dc.normalize)  // data.normalize = upstream: the statistics it needs, as an input error
        for (const char* field : {"state", "action"}) read_field_statistics(f, field);
      verify_small_values(f);
    }
    const VlPrompt prompt = online_inputs_prompt(cfg);
    return PackedDataset(MPI_COMM_NULL, dc.mpio_transfer, files, cfg.model, dc.view,
                         VlFeatureChoice{dc.vl_backbone_digest, dc.vl_augment, prompt, dc.dreamzero_encoders_digest,
                                         dc.frame_stride, dc.dreamzero_repeat_end});
  } catch (const Error& e) {
    if (!cfg.model.online_backbone && !cfg.model.online_encoders) throw;
    throw Error(e.what(), kExitInput);
  }
}

void check_data(const RunConfig& cfg) {
  const DataConfig& dc = cfg.data;
  if (dc.paths.empty()) deck_error(cfg, "data.paths", "no files given: name the packed HDF5 files to train on (embpack writes them)");
  std::vector<std::string> files;
  try {
    files = expand_paths(dc.paths);
  } catch (const Error& e) {
    throw Error(str(cfg.origins.where("data.paths"), ": ", e.what()), kExitInput);
  }
  // What embpack verify checks short of the bulk rows (read here once, not by every rank's
  // loader), then the files against the model (opening them: packed_dataset.hpp).
  const PackedDataset data = open_checked(cfg, files);
  if (dc.normalize) check_embodiment_key_widths(data, {dc.state_sin_cos, dc.upstream_config});
  const int64_t largest = data.query_tokens() + data.max_context_tokens();
  if (largest > dc.tokens_per_mb)
    deck_error(cfg, "data.tokens_per_mb",
               str(dc.tokens_per_mb, " tokens is less than the largest sample of data.paths needs (", largest, ": ",
                   data.query_tokens(), " query + ", data.max_context_tokens(), " context); raise it to at least ",
                   largest));
  if (dc.global_batch > data.samples())
    deck_error(cfg, "train.global_batch",
               str(dc.global_batch, " samples per step is more than data.paths holds (", data.samples(),
                   "); lower it or add data"));
}

double gib(double bytes) { return std::round(bytes / double(1ull << 30) * 10) / 10; }

// The plan's memory per rank (state under the deck's sharding and one micro-batch's
// activations) against this node's physical memory: a model that cannot fit is refused here
// with what to change, instead of a std::bad_alloc (or the kernel's OOM killer) mid set-up.
void check_memory(const RunConfig& cfg, int ranks, int ranks_on_node) {
  if (cfg.backend.device != Device::cpu) return;  // device memory is the plan's business
  const PlanReport plan =
      make_plan(cfg.model, ranks, cfg.data.tokens_per_mb, {}, DType::f32, PlanSharding{cfg.train.bucket_bytes, {}});
  const double state = plan.state(cfg.train.shard);
  // model.encoders = online: the frozen encoders' fp32 weights on every rank
  const double encoders = cfg.model.online_encoders ? double(online_encoders_weight_bytes(cfg, DType::f32)) : 0.0;
  const double per_rank = state + plan.activation_bytes + encoders;
  const double node = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  if (node <= 0 || per_rank * ranks_on_node <= node) return;
  const std::string where = cfg.origins.where_first({"model.d_model", "model.d_ff", "model.n_layers", "model.d_ctx",
                                                   "model.n_layers_vl", "data.tokens_per_mb", "model.preset"});
  throw Error(str(where, ": out of memory: the model needs ", gib(per_rank), " GiB per rank (", plan.n_params,
                  " parameters: ", gib(state), " GiB of parameters, gradients and AdamW moments with train.shard = ",
                  shard_mode_name(cfg.train.shard), ", ", gib(plan.activation_bytes),
                  " GiB of activations per micro-batch", encoders > 0 ? str(", ", gib(encoders), " GiB of frozen encoders") : "",
                  "), ", ranks_on_node, " rank(s) on this node have ", gib(node),
                  " GiB; make the model smaller, lower data.tokens_per_mb, or spread it over more nodes with train.shard "
                  "= full (embtrain DECK --plan)"),
              kExitInput);
}

}  // namespace

void check_backend(const RunConfig& cfg) {
  if (cfg.model.fp8) check_fp8_linears(cfg);
  const ModelConfig& mc = cfg.model;
  if (mc.online_encoders && !(mc.first_frame_block && mc.cond_channels > 0 && mc.clip_tokens > 0))  // --plan costs any wan deck
    deck_error(cfg, "model.encoders",
               "online computes DreamZero's inputs (I2V y, CLIP context): it needs the DreamZero layout "
               "(model.first_frame_block = on, cond_channels and clip_tokens > 0; e.g. preset tiny_dreamzero)");
  if (cfg.backend.device != Device::cuda) return;
  if (!cuda_backend_built())
    throw Error(str(cfg.origins.where("run.device"),
                    ": run.device = cuda, but this embtrain was built without the CUDA backend (no nvcc when "
                    "CMake configured it); rebuild with nvcc on the PATH (or -DEMBTRAIN_CUDA=ON), or "
                    "-DEMBTRAIN_CUDA=EMULATE to run CUDA on the CPU emulation, or use run.device = cpu"),
                kExitInput);
  if (visible_gpu_count() == 0) {
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    throw Error(str(cfg.origins.where("run.device"), ": run.device = cuda, but this node (", host_name(),
                    ") has no GPU visible (CUDA_VISIBLE_DEVICES ", visible ? str("= '", clipped(visible), "'") : "unset",
                    "); run on GPU nodes (Slurm: --gpus-per-task=1), or use run.device = cpu"),
                kExitInput);
  }
  for (int hd : cfg.model.attention_head_dims())
    if (!attention_head_dim_built(Device::cuda, hd))
      throw Error(str(cfg.origins.where("model.preset"), ": run.device = cuda: attention head dim ", hd,
                      " (a width divided by its heads) is not built on CUDA (", cuda_attention_head_dims_text(),
                      "); change the model's heads or widths, or use run.device = cpu"),
                  kExitInput);
}

void check_ops(const RunConfig& cfg, const Ops& ops) {
  // cuBLASLt's block-scaled FP8 GEMM runs on Hopper (sm_90) and later.
  const int major = gpu_compute_capability(ops);
  if (cfg.model.fp8 && major >= 0 && major < 9)
    throw Error(str(cfg.origins.where("model.fp8"), ": model.fp8 = on needs a GPU of compute capability 9.0 or later "
                    "(the block-scaled FP8 GEMM); this one is ", major, ".x; use model.fp8 = off"),
                kExitInput);
}

// The data (and model.backbone = online's folder) first: input to fix leaves nothing written,
// not even the checkpoint directory the write probe creates.
void check_before_training(const RunConfig& cfg, int ranks, int ranks_on_node) {
  if (cfg.debug.slow_rank >= ranks)
    deck_error(cfg, "debug.slow_rank", str(cfg.debug.slow_rank, " is no rank of this run's ", ranks, " (0 to ", ranks - 1,
                                           "; -1 slows every rank)"));
  check_data(cfg);
  check_writable_dir(cfg, cfg.train.ckpt_dir);
  check_memory(cfg, ranks, ranks_on_node);
}

void verify_data_values(const RunConfig& cfg, MPI_Comm comm) {
  verify_data_files(comm, expand_paths(cfg.data.paths), cfg.data.verify);
}

}  // namespace emb
