#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/dropout.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"
#include "kernels/dropout_keep.hpp"

namespace emb::cuda {

namespace {

// The Philox blocks a row of C columns can touch: its element indices token·C .. token·C + C − 1
// start anywhere within a block of four.
__host__ __device__ inline int blocks_per_row(int C) { return C / 4 + 2; }

// Thread q handles block j = q % G of row r = q / G: the four elements of Philox block
// (token·C >> 2) + j that fall inside the row. accumulate: out += in·m, else out = in·m, with m
// the dropout factor (1/(1 − p) kept, 0 dropped, 1 on padding rows).
template <class T, bool accumulate>
__global__ void dropout_kernel(const T* in, T* out, int64_t N, int C, DropoutConfig cfg, uint32_t threshold,
                               float scale, DropoutRows rows) {
  const int G = blocks_per_row(C);
  for (int64_t q = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; q < N * G; q += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = q / G;
    const int32_t s = rows.seq[r];
    const uint64_t first = s < 0 ? 0 : uint64_t(rows.token[r]) * uint64_t(C);
    const uint64_t block_start = ((first >> 2) + uint64_t(q % G)) << 2;
    if (block_start >= first + uint64_t(C)) continue;
    const philox::Block words = s < 0 ? philox::Block{} : dropout_block(cfg, rows.sample_id[s], block_start);
#pragma unroll
    for (int w = 0; w < 4; ++w) {
      const uint64_t e = block_start + uint64_t(w);
      if (e < first || e >= first + uint64_t(C)) continue;
      const int64_t at = r * C + int64_t(e - first);
      const float m = s < 0 ? 1.0f : words.w[w] >= threshold ? scale : 0.0f;
      const float v = to_f32(in[at]) * m;
      out[at] = from_f32<T>(accumulate ? to_f32(out[at]) + v : v);
    }
  }
}

template <class T, bool accumulate>
void launch_dropout(const T* in, T* out, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows,
                    cudaStream_t stream, const char* what) {
  if (N == 0 || C == 0) return;
  EMB_LAUNCH((dropout_kernel<T, accumulate>), grid_for(N * blocks_per_row(C), 256), 256, 0, stream)(
      in, out, N, C, cfg, dropout_threshold(cfg.p), dropout_scale(cfg.p), rows);
  check_launch(what);
}

}  // namespace

template <class T>
void dropout_forward(const T* x, T* y, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows,
                     cudaStream_t stream) {
  launch_dropout<T, false>(x, y, N, C, cfg, rows, stream, "dropout_forward");
}

template <class T>
void dropout_backward(const T* dy, T* dx, int64_t N, int C, const DropoutConfig& cfg, const DropoutRows& rows,
                      cudaStream_t stream) {
  launch_dropout<T, true>(dy, dx, N, C, cfg, rows, stream, "dropout_backward");
}

#define EMB_INSTANTIATE(T)                                                                                       \
  template void dropout_forward<T>(const T*, T*, int64_t, int, const DropoutConfig&, const DropoutRows&,       \
                                   cudaStream_t);                                                              \
  template void dropout_backward<T>(const T*, T*, int64_t, int, const DropoutConfig&, const DropoutRows&,      \
                                    cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::dropout_forward(const View& x, const View& y, const DropoutConfig& cfg, const DropoutRows& rows) {
  const OpCheck c = check_dropout("dropout_forward", x, y, cfg, rows);
  c.contiguous();
  dispatch(storage(c, {&x, &y}), [&](auto tag) {
    using T = decltype(tag);
    cuda::dropout_forward(ptr<const T>(x), ptr<T>(y), x.rows, int(x.cols), cfg, rows, stream_);
  });
}

void CudaOps::dropout_backward(const View& dy, const View& dx, const DropoutConfig& cfg, const DropoutRows& rows) {
  const OpCheck c = check_dropout("dropout_backward", dy, dx, cfg, rows);
  c.contiguous();
  dispatch(storage(c, {&dy, &dx}), [&](auto tag) {
    using T = decltype(tag);
    cuda::dropout_backward(ptr<const T>(dy), ptr<T>(dx), dy.rows, int(dy.cols), cfg, rows, stream_);
  });
}

}  // namespace emb
