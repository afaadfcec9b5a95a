// cuDNN's 3D convolution (the legacy cudnnConvolutionForward API, present in cuDNN 9 as
// libcudnn_cnn), bf16 NDHWC activations and a KTRSC filter, fp32 accumulation on tensor cores,
// the fastest algorithm cudnnFindConvolutionForwardAlgorithm measures: the reference the conv
// benchmark measures conv3d.cu against on the same GPU (bench_kernels.cu; not used by the model).
// Header-only and included only by the benchmark, which links libcudnn; never built under the
// emulation. NEVER RUN on a GPU: written without one.
#pragma once
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>
#include <vector>

#include "kernels/cuda/cuda_check.hpp"
#include "kernels/op_types.hpp"

namespace emb::cuda {

inline void check_cudnn_conv(cudnnStatus_t status, const char* what) {
  EMB_CHECK(status == CUDNN_STATUS_SUCCESS, "cuDNN conv: ", what, ": ", cudnnGetErrorString(status));
}

// One convolution of ConvConfig's form (batch, T, H, W; kernel, strides; symmetric padding is
// all cuDNN takes, so the benchmark's shapes pad only as cuDNN can: pad_front = pad_back, ...).
class CudnnConv {
 public:
  CudnnConv(const ConvConfig& c, int Ci, int Co) {
    check_cudnn_conv(cudnnCreate(&handle_), "create");
    check_cudnn_conv(cudnnCreateTensorDescriptor(&x_), "x descriptor");
    check_cudnn_conv(cudnnCreateTensorDescriptor(&y_), "y descriptor");
    check_cudnn_conv(cudnnCreateFilterDescriptor(&w_), "w descriptor");
    check_cudnn_conv(cudnnCreateConvolutionDescriptor(&conv_), "conv descriptor");
    const int xd[5] = {c.batch, Ci, c.frames, c.height, c.width};
    check_cudnn_conv(cudnnSetTensorNdDescriptorEx(x_, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, xd), "x");
    const int wd[5] = {Co, Ci, c.kt, c.kh, c.kw};
    check_cudnn_conv(cudnnSetFilterNdDescriptor(w_, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_NHWC, 5, wd), "w");
    const int pad[3] = {c.pad_front, c.pad_top, c.pad_left}, stride[3] = {c.st, c.sh, c.sw}, dil[3] = {1, 1, 1};
    check_cudnn_conv(cudnnSetConvolutionNdDescriptor(conv_, 3, pad, stride, dil, CUDNN_CROSS_CORRELATION,
                                                     CUDNN_DATA_FLOAT),
                     "convolution");
    check_cudnn_conv(cudnnSetConvolutionMathType(conv_, CUDNN_TENSOR_OP_MATH), "math type");
    int yd[5];
    check_cudnn_conv(cudnnGetConvolutionNdForwardOutputDim(conv_, x_, w_, 5, yd), "output dims");
    check_cudnn_conv(cudnnSetTensorNdDescriptorEx(y_, CUDNN_TENSOR_NHWC, CUDNN_DATA_BFLOAT16, 5, yd), "y");
    out_rows_ = int64_t(yd[0]) * yd[2] * yd[3] * yd[4];
  }
  ~CudnnConv() {
    if (workspace_) cudaFree(workspace_);
    cudnnDestroyConvolutionDescriptor(conv_);
    cudnnDestroyFilterDescriptor(w_);
    cudnnDestroyTensorDescriptor(y_);
    cudnnDestroyTensorDescriptor(x_);
    cudnnDestroy(handle_);
  }
  CudnnConv(const CudnnConv&) = delete;
  CudnnConv& operator=(const CudnnConv&) = delete;

  int64_t out_rows() const { return out_rows_; }
  // Measures every algorithm once on these buffers and keeps the fastest (and its workspace).
  std::string choose(const void* x, const void* w, void* y) {
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int found = 0;
    size_t limit = size_t(4) << 30;
    check_cuda(cudaMalloc(&workspace_, limit), "cuDNN conv workspace");
    check_cudnn_conv(cudnnFindConvolutionForwardAlgorithmEx(handle_, x_, x, w_, w, conv_, y_, y,
                                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf,
                                                            workspace_, limit),
                     "find algorithm");
    EMB_CHECK(found > 0 && perf[0].status == CUDNN_STATUS_SUCCESS, "cuDNN conv: no algorithm runs this shape");
    algo_ = perf[0].algo, workspace_bytes_ = perf[0].memory;
    return "algo " + std::to_string(int(algo_)) + ", workspace " + std::to_string(workspace_bytes_ >> 20) + " MiB";
  }
  void forward(const void* x, const void* w, void* y) {
    const float one = 1.0f, zero = 0.0f;
    check_cudnn_conv(cudnnConvolutionForward(handle_, &one, x_, x, w_, w, conv_, algo_, workspace_, workspace_bytes_,
                                             &zero, y_, y),
                     "forward");
  }

 private:
  cudnnHandle_t handle_ = nullptr;
  cudnnTensorDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnFilterDescriptor_t w_ = nullptr;
  cudnnConvolutionDescriptor_t conv_ = nullptr;
  cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
  void* workspace_ = nullptr;
  size_t workspace_bytes_ = 0;
  int64_t out_rows_ = 0;
};

}  // namespace emb::cuda
