#include "kernels/cuda/attention_passes.cuh"

#include <cuda_bf16.h>

#include <cmath>

#include "kernels/cuda/attention.hpp"
#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/reduce.cuh"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

namespace {

__global__ void summarize_tiles_kernel(Side side, TileSummary* out, int64_t n_tiles) {
  const int64_t tile = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (tile >= n_tiles) return;
  TileSummary s = empty_tile();
  for (int r = 0; r < kAttnTile; ++r) add_token(s, side.at(tile * kAttnTile + r));
  out[tile] = s;
}

// A keyless row as one word, ordered by row: row (30 bits) | seq (31 bits) | mask (3 bits), so
// atomicMin keeps the lowest row over every call since the word was reset.
__host__ __device__ unsigned long long pack_keyless(int64_t row, int32_t seq, AttnMask mask) {
  return (static_cast<unsigned long long>(row) << 34) | (static_cast<unsigned long long>(seq) << 3) |
         static_cast<unsigned long long>(mask);
}

// The lowest real query row (seq ≥ 0) whose head-0 lse is −inf (no allowed key: the mask is
// the same for every head) into *row (pack_keyless), which starts at kNoKeylessRow.
__global__ void keyless_row_kernel(const float* lse, Side q_side, int H, AttnMask mask, unsigned long long* row) {
  const int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i >= q_side.T) return;
  if (q_side.seq[i] >= 0 && lse[i * H] == -INFINITY) atomicMin(row, pack_keyless(i, q_side.seq[i], mask));
}

// D[i, h] = Σ_d dout·out, one warp per (row, head).
template <class T>
__global__ void attention_dot_kernel(const T* out, const T* dout, float* D, int64_t Tq, int H, int hd) {
  const int64_t w = (blockIdx.x * int64_t(blockDim.x) + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (w >= Tq * H) return;  // whole warps leave together
  float s = 0.0f;
  for (int d = lane; d < hd; d += 32) s += to_f32(out[w * hd + d]) * to_f32(dout[w * hd + d]);
  s = warp_sum(s);
  if (lane == 0) D[w] = s;
}

}  // namespace

size_t attention_workspace_bytes(int64_t Tq, int64_t Tk, int H) {
  return align256(sizeof(unsigned long long)) + align256(size_t(tiles_of(Tq)) * sizeof(TileSummary)) +
         align256(size_t(tiles_of(Tk)) * sizeof(TileSummary)) + size_t(Tq) * H * sizeof(float);
}

Workspace carve_workspace(void* base, int64_t Tq, int64_t Tk) {
  char* p = static_cast<char*>(base);
  Workspace w;
  w.keyless_row = reinterpret_cast<unsigned long long*>(p);
  p += align256(sizeof(unsigned long long));
  w.q_tiles = reinterpret_cast<TileSummary*>(p);
  p += align256(size_t(tiles_of(Tq)) * sizeof(TileSummary));
  w.k_tiles = reinterpret_cast<TileSummary*>(p);
  p += align256(size_t(tiles_of(Tk)) * sizeof(TileSummary));
  w.d = reinterpret_cast<float*>(p);
  return w;
}

std::string keyless_row_error(unsigned long long recorded) {
  if (recorded == kNoKeylessRow) return "";
  const auto row = recorded >> 34, seq = (recorded >> 3) & 0x7fffffffull;
  return str("attention: query token ", row, " (seq ", seq, ") has no allowed key under mask ",
             attn_mask_name(AttnMask(recorded & 7)));
}

Params summarize(const AttnIndex& idx, int64_t Tq, int64_t Tk, int H, int hd, const Workspace& w,
                 cudaStream_t stream) {
  EMB_CHECK(Tq < (int64_t(1) << 30), "attention (cuda): ", Tq, " query tokens in one call (at most 2^30 - 1)");
  Params p;
  p.Tq = Tq;
  p.Tk = Tk;
  p.H = H;
  p.mask = MaskRule(idx.mask, idx.tf);
  p.q_side = Side{idx.q_seq, idx.q_blk, idx.q_grp, Tq};
  p.k_side = Side{idx.k_seq, idx.k_blk, idx.k_grp, Tk};
  p.q_tiles = w.q_tiles;
  p.k_tiles = w.k_tiles;
  p.scale = float(1.0 / std::sqrt(double(hd)));
  for (const auto& [side, tiles] : {std::pair{p.q_side, w.q_tiles}, std::pair{p.k_side, w.k_tiles}}) {
    const int64_t n = tiles_of(side.T);
    if (n == 0) continue;  // an empty context: no tiles (a zero-sized grid is a launch error)
    EMB_LAUNCH(summarize_tiles_kernel, unsigned((n + 127) / 128), 128, 0, stream)(side, tiles, n);
  }
  check_launch("attention summaries");
  return p;
}

void check_keyless_rows(const float* lse, const Params& p, const Workspace& w, cudaStream_t stream,
                        unsigned long long* keyless) {
  // A real row without an allowed key is a bug (MODEL.md): the same error as the CPU's.
  unsigned long long* record = keyless ? keyless : w.keyless_row;
  if (!keyless)
    check_cuda(cudaMemsetAsync(record, 0xff, sizeof(unsigned long long), stream), "attention keyless row");
  EMB_LAUNCH(keyless_row_kernel, unsigned((p.Tq + 255) / 256), 256, 0, stream)(lse, p.q_side, p.H, p.mask.kind, record);
  check_launch("attention keyless rows");
  if (keyless) return;
  unsigned long long row = kNoKeylessRow;
  check_cuda(cudaMemcpyAsync(&row, record, sizeof row, cudaMemcpyDeviceToHost, stream), "attention keyless row");
  check_cuda(cudaStreamSynchronize(stream), "attention_forward");
  if (row != kNoKeylessRow) throw Error(keyless_row_error(row));
}

template <class T>
void launch_attention_dot(const T* out, const T* dout, float* D, int64_t Tq, int H, int hd, cudaStream_t stream) {
  EMB_LAUNCH(attention_dot_kernel<T>, unsigned((Tq * H * 32 + 255) / 256), 256, 0, stream)(out, dout, D, Tq, H, hd);
  check_launch("attention_dot");
}

#define EMB_INSTANTIATE(T) \
  template void launch_attention_dot<T>(const T*, const T*, float*, int64_t, int, int, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda
