// One launch syntax for nvcc and the emulation (emu/README in kernels/cuda/README.md):
//   EMB_LAUNCH(kernel, grid, block, shared_bytes, stream)(args...);
// is kernel<<<grid, block, shared_bytes, stream>>>(args...) under nvcc. A kernel name with
// template arguments goes in parentheses, EMB_LAUNCH((kernel<T, HD>), ...), since the macro
// would split it at the comma. Dynamic shared memory is declared with
// EMB_DYNAMIC_SHARED(type, name) in place of `extern __shared__ type name[]`.
#pragma once
#ifdef EMB_CUDA_EMULATE
#include "kernels/cuda/emu/launch.hpp"
#define EMB_LAUNCH(kernel, grid, block, shared_bytes, stream) EMB_EMU_LAUNCH(kernel, grid, block, shared_bytes, stream)
#else
#define EMB_LAUNCH(kernel, grid, block, shared_bytes, stream) kernel<<<grid, block, shared_bytes, stream>>>
#define EMB_DYNAMIC_SHARED(type, name) extern __shared__ type name[]
#endif
