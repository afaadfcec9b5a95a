// Tensor-core and async-copy instructions as thin wrappers, so that kernels use them the same
// way under nvcc (inline PTX, sm_80+) and under the emulation (emu/tensor_core.hpp,
// emu/async_copy.hpp), which gathers the 32 lanes' fragments at a warp barrier and computes
// with the fragment layouts of the PTX ISA (mma.m16n8k16 for .bf16, ldmatrix .m8n8 .b16):
//   lane = 4·g + t (g = lane / 4, t = lane % 4); a 32-bit register holds two bf16, the lower
//   index in the low half.
//   A 16×16 (row-major): a[0] = A[g][2t..2t+1], a[1] = A[g+8][2t..], a[2] = A[g][2t+8..],
//                        a[3] = A[g+8][2t+8..]
//   B 16×8 (k × n):      b[0] = B[2t..2t+1][g], b[1] = B[2t+8..2t+9][g]
//   C, D 16×8 (fp32):    c[0..1] = C[g][2t..2t+1], c[2..3] = C[g+8][2t..2t+1]
//   ldmatrix .x4/.x2:    lanes 8i..8i+7 give the 16-byte rows of 8×8 matrix i; register i of
//                        lane gets row g, columns 2t..2t+1 of matrix i (.trans: rows 2t..2t+1,
//                        column g, i.e. the transposed matrix).
// cp_async_16 copies 16 bytes from global to shared memory asynchronously; copies become
// visible to the issuing thread at cp_async_wait<N>() (all but the N newest committed groups)
// and to the block after a following __syncthreads.
#pragma once
#include <cstdint>

#ifdef EMB_CUDA_EMULATE
#include "kernels/cuda/emu/async_copy.hpp"
#include "kernels/cuda/emu/tensor_core.hpp"
#else
namespace emb::cuda {

// D = A·B + C (fp32 accumulate), one m16n8k16 tile per warp.
__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                                  const float (&c)[4]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%10, %11, %12, %13};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Four 8×8 b16 matrices from shared memory; `row` is this lane's row address (16-byte aligned).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(row)));
}

__device__ __forceinline__ void ldmatrix_x2_trans(uint32_t (&r)[2], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(row)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const void* row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row)));
}

__device__ __forceinline__ void cp_async_16(void* shared_dst, const void* global_src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(shared_address(shared_dst)), "l"(global_src));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

}  // namespace emb::cuda
#endif
