#include "kernels/cuda/cuda_check.hpp"
#include "kernels/cuda/launch.cuh"
#include "kernels/cuda/mixed_storage.cuh"
#include "kernels/cuda/op_entry.hpp"
#include "kernels/cuda/rows.hpp"
#include "kernels/cuda/storage.cuh"

namespace emb::cuda {

namespace {

constexpr int kThreads = 256;

__device__ __forceinline__ int64_t row_of(const int32_t* rows, int64_t r) { return rows ? rows[r] : r; }

// Grid-stride over the n·C elements of a row map; Op(dst_element, src_value).
template <class T, class Op>
__global__ void map_rows_kernel(const T* src, int64_t ld_src, const int32_t* src_rows, T* dst, int64_t ld_dst,
                                const int32_t* dst_rows, int64_t n, int64_t C, Op op) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / C, c = e % C;
    op(dst[row_of(dst_rows, r) * ld_dst + c], src ? to_f32(src[row_of(src_rows, r) * ld_src + c]) : 0.0f);
  }
}

struct Assign {
  template <class T>
  __device__ void operator()(T& d, float s) const {
    d = from_f32<T>(s);
  }
};

// One thread per column walks the rows in order (a destination row may repeat).
template <class T, class R>
__global__ void add_rows_kernel(const T* src, int64_t ld_src, const int32_t* src_rows, R* dst, int64_t ld_dst,
                                const int32_t* dst_rows, int64_t n, int64_t C) {
  const int64_t c = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (c >= C) return;
  for (int64_t r = 0; r < n; ++r)
    add_to(dst + row_of(dst_rows, r) * ld_dst + c, to_f32(src[row_of(src_rows, r) * ld_src + c]));
}

template <class T>
__global__ void add_kernel(const T* a, int64_t ld_a, const T* b, int64_t ld_b, T* y, int64_t ld_y, int64_t N,
                           int64_t C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / C, c = e % C;
    y[r * ld_y + c] = from_f32<T>(to_f32(a[r * ld_a + c]) + to_f32(b[r * ld_b + c]));
  }
}

template <class T>
__global__ void add_bias_kernel(T* y, int64_t ld_y, const T* b, int64_t N, int64_t C) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < N * C; e += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = e / C, c = e % C;
    add_to(y + r * ld_y + c, to_f32(b[c]));
  }
}

}  // namespace

template <class T>
void copy_rows(const T* src, int64_t ld_src, const int32_t* src_rows, T* dst, int64_t ld_dst, const int32_t* dst_rows,
               int64_t n, int64_t C, cudaStream_t stream) {
  if (n * C == 0) return;
  EMB_LAUNCH(map_rows_kernel, grid_for(n * C, kThreads), kThreads, 0, stream)(src, ld_src, src_rows, dst, ld_dst, dst_rows, n,
                                                                       C, Assign{});
  check_launch("copy_rows");
}

template <class T, class R>
void add_rows(const T* src, int64_t ld_src, const int32_t* src_rows, R* dst, int64_t ld_dst, const int32_t* dst_rows,
              int64_t n, int64_t C, cudaStream_t stream) {
  if (n * C == 0) return;
  EMB_LAUNCH(add_rows_kernel, unsigned((C + kThreads - 1) / kThreads), kThreads, 0, stream)(src, ld_src, src_rows, dst, ld_dst,
                                                                                     dst_rows, n, C);
  check_launch("add_rows");
}

template <class T>
void add(const T* a, int64_t ld_a, const T* b, int64_t ld_b, T* y, int64_t ld_y, int64_t N, int64_t C,
         cudaStream_t stream) {
  if (N * C == 0) return;
  EMB_LAUNCH(add_kernel, grid_for(N * C, kThreads), kThreads, 0, stream)(a, ld_a, b, ld_b, y, ld_y, N, C);
  check_launch("add");
}

template <class T>
void add_bias(T* y, int64_t ld_y, const T* b, int64_t N, int64_t C, cudaStream_t stream) {
  if (N * C == 0) return;
  EMB_LAUNCH(add_bias_kernel, grid_for(N * C, kThreads), kThreads, 0, stream)(y, ld_y, b, N, C);
  check_launch("add_bias");
}

template <class T>
void zero_rows(T* y, int64_t ld_y, int64_t N, int64_t C, cudaStream_t stream) {
  if (N * C == 0) return;
  EMB_LAUNCH(map_rows_kernel, grid_for(N * C, kThreads), kThreads, 0, stream)(static_cast<const T*>(nullptr), 0, nullptr, y,
                                                                       ld_y, nullptr, N, C, Assign{});
  check_launch("zero_rows");
}

template <class S, class D>
__global__ void convert_kernel(const S* x, D* y, int64_t n) {
  for (int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; e < n; e += int64_t(gridDim.x) * blockDim.x)
    y[e] = from_f32<D>(to_f32(x[e]));
}

template <class S, class D>
void convert(const S* x, D* y, int64_t n, cudaStream_t stream) {
  if (n == 0) return;
  EMB_LAUNCH((convert_kernel<S, D>), grid_for(n, kThreads), kThreads, 0, stream)(x, y, n);
  check_launch("convert");
}
template void convert<float, __nv_bfloat16>(const float*, __nv_bfloat16*, int64_t, cudaStream_t);
template void convert<__nv_bfloat16, float>(const __nv_bfloat16*, float*, int64_t, cudaStream_t);

#define EMB_INSTANTIATE_ADD_ROWS(T, R)                                                                             \
  template void add_rows<T, R>(const T*, int64_t, const int32_t*, R*, int64_t, const int32_t*, int64_t, int64_t,   \
                               cudaStream_t);
EMB_CUDA_FOR_STORAGE_AND_WIDE(EMB_INSTANTIATE_ADD_ROWS)
#undef EMB_INSTANTIATE_ADD_ROWS

#define EMB_INSTANTIATE(T)                                                                                         \
  template void copy_rows<T>(const T*, int64_t, const int32_t*, T*, int64_t, const int32_t*, int64_t, int64_t,     \
                             cudaStream_t);                                                                        \
  template void add<T>(const T*, int64_t, const T*, int64_t, T*, int64_t, int64_t, int64_t, cudaStream_t);        \
  template void add_bias<T>(T*, int64_t, const T*, int64_t, int64_t, cudaStream_t);                                \
  template void zero_rows<T>(T*, int64_t, int64_t, int64_t, cudaStream_t);
EMB_CUDA_FOR_STORAGE(EMB_INSTANTIATE)
#undef EMB_INSTANTIATE

}  // namespace emb::cuda

// ---- CudaOps entries (kernels/ops.hpp) ----

namespace emb {

void CudaOps::zero(const View& y) {
  const OpCheck c = check_zero(y);
  if (y.absent()) return;
  dispatch(storage(c, {&y}), [&](auto t) {
    using T = decltype(t);
    cuda::zero_rows(ptr<T>(y), y.ld, y.rows, y.cols, stream_);
  });
}

void CudaOps::copy(const View& x, const View& y) {
  const OpCheck c = check_elementwise("copy", {{"x", &x}, {"y", &y}});
  dispatch(storage(c, {&x, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::copy_rows(ptr<const T>(x), x.ld, nullptr, ptr<T>(y), y.ld, nullptr, x.rows, x.cols, stream_);
  });
}

void CudaOps::convert(const View& x, const View& y) {
  check_convert(x, y);
  if (x.dtype == y.dtype)
    check_cuda(cudaMemcpyAsync(y.data, x.data, size_t(x.size()) * dtype_size(x.dtype), cudaMemcpyDeviceToDevice,
                               stream_),
               "CudaOps::convert");
  else if (x.dtype == DType::f32)
    cuda::convert(ptr<const float>(x), ptr<bf16_t>(y), x.size(), stream_);
  else
    cuda::convert(ptr<const bf16_t>(x), ptr<float>(y), x.size(), stream_);
}

void CudaOps::add(const View& a, const View& b, const View& y) {
  const OpCheck c = check_elementwise("add", {{"a", &a}, {"b", &b}, {"y", &y}});
  dispatch(storage(c, {&a, &b, &y}), [&](auto t) {
    using T = decltype(t);
    cuda::add(ptr<const T>(a), a.ld, ptr<const T>(b), b.ld, ptr<T>(y), y.ld, y.rows, y.cols, stream_);
  });
}

void CudaOps::add_bias(const View& y, const View& b) {
  const OpCheck c = check_add_bias(y, b);
  dispatch(storage(c, {&y, &b}), [&](auto t) {
    using T = decltype(t);
    cuda::add_bias(ptr<T>(y), y.ld, ptr<const T>(b), y.rows, y.cols, stream_);
  });
}

void CudaOps::copy_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  const OpCheck c = check_rows("copy_rows", src, src_rows, dst, dst_rows);
  dispatch(storage(c, {&src, &dst}), [&](auto t) {
    using T = decltype(t);
    cuda::copy_rows(ptr<const T>(src), src.ld, src_rows.data, ptr<T>(dst), dst.ld, dst_rows.data,
                    row_count(src, src_rows, dst_rows), src.cols, stream_);
  });
}

// dst may be wider than src (residual_storage: fp32 beside bf16): the blocks' bf16 gradients of
// the conditioning and the context summed into the fp32 ones outside the blocks.
void CudaOps::add_rows(const View& src, const RowIndex& src_rows, const View& dst, const RowIndex& dst_rows) {
  const OpCheck c = check_rows("add_rows", src, src_rows, dst, dst_rows);
  const DType data = storage(c, {&src});
  dispatch_mixed(data, residual_storage(c, data, {&dst}), data, [&](auto t, auto r, auto) {
    using T = decltype(t);
    using R = decltype(r);
    cuda::add_rows(ptr<const T>(src), src.ld, src_rows.data, ptr<R>(dst), dst.ld, dst_rows.data,
                   row_count(src, src_rows, dst_rows), src.cols, stream_);
  });
}

}  // namespace emb
