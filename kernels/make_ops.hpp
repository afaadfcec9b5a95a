// The one place that makes a backend (BACKENDS.md): CpuOps for run.device = cpu, CudaOps on
// the rank's GPU for cuda, and the Comm that serves those Ops (made from them: their memory
// decides MPI or NCCL, their GPU and stream are NCCL's). No other file names CpuOps or CudaOps
// or chooses a GPU. A build has the CUDA backend when kernels/cuda was built, by nvcc or
// against the CUDA emulation (EMBTRAIN_CUDA=EMULATE: CudaOps runs on the host, whose memory
// MPI carries, which is how CI runs run.device = cuda without a GPU).
#pragma once
#include <memory>
#include <string>

#include "comm/comm.hpp"
#include "comm/world.hpp"
#include "config/backend_config.hpp"
#include "config/comm_config.hpp"
#include "kernels/ops.hpp"

namespace emb {

// True when this build has the CUDA backend (nvcc or the emulation).
bool cuda_backend_built();

// The GPUs this process sees (cudaGetDeviceCount: CUDA_VISIBLE_DEVICES and the node's
// devices); 0 without the CUDA backend or on a node without GPUs.
int visible_gpu_count();

// Whether the backend of `device` has attention kernels for `head_dim` (the CPU has every
// one), and the head dims CUDA's are built for ("8, 16, 32, 48, 64, 72, 128").
bool attention_head_dim_built(Device device, int head_dim);
std::string cuda_attention_head_dims_text();

// The Ops of `cfg.device` for the rank with `local_rank` on its node (cuda: the node's GPUs
// round-robin, device_for_local_rank). Throws emb::Error when the build has no CUDA backend or
// no GPU is visible.
std::unique_ptr<Ops> make_ops(const BackendConfig& cfg, int local_rank);

// The compute capability's major version of the GPU `ops` run on; -1 when they do not run on
// a GPU (the CPU, the CUDA emulation).
int gpu_compute_capability(const Ops& ops);

// The Comm of a run whose step buffers `ops` hold (comm/comm_factory.hpp): MPI over host
// memory (the CPU, the CUDA emulation), NCCL on the Ops' GPU, ordered after their stream.
std::unique_ptr<Comm> make_comm(const World& world, const CommConfig& cfg, const Ops& ops);

}  // namespace emb
