#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/embedding.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

template <class T>
__global__ void sinus_embedding_kernel(const float* t, T* out, int64_t rows, int n) {
  const int half = n / 2;
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < rows * half;
       e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = e / half;
    const int k = int(e % half);
    const double angle = double(t[i]) * exp(-log(10000.0) * k / half);
    out[i * n + k] = from_f32<T>(float(cos(angle)));
    out[i * n + half + k] = from_f32<T>(float(sin(angle)));
  }
}

}  // namespace

template <class T>
void sinus_embedding(const float* t, T* out, int64_t rows, int n, cudaStream_t stream) {
  EMB_CHECK(n > 0 && n % 2 == 0, "sinus_embedding: width ", n, " must be positive and even");
  EMB_LAUNCH(sinus_embedding_kernel, grid_for(rows * (n / 2), 256), 256, 0, stream)(t, out, rows, n);
  check_launch("sinus_embedding");
}

#define EMB_INSTANTIATE(T) template void sinus_embedding<T>(const float*, T*, int64_t, int, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::sinus_embedding(const View& t, const View& out) {
  const OpCheck c = check_sinus_embedding(t, out);
  fp32_views(c, {{"t", &t}});
  c.contiguous();
  dispatch(storage(c, {&out}), [&](auto tag) {
    using T = decltype(tag);
    cuda::sinus_embedding(fp(t), ptr<T>(out), out.rows, int(out.cols), stream_);
  });
}

}  // namespace emb
