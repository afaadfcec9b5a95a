// wgmma under the emulation (kernels/cuda/wgmma.cuh): wgmma.mma_async is a warpgroup collective
// that gathers the 128 threads' operands, reads the shared-memory operands through their matrix
// descriptors (PTX ISA "Matrix Descriptor Format", no-swizzle canonical layouts only; the
// descriptor's start address must lie in the block's dynamic shared memory, every 16-byte row it
// reads too) and computes D = A·B (+ D) with the wgmma fragment layouts written in wgmma.cuh.
// The result is held back until the issuing thread's wgmma wait that retires its group, the
// latest moment a GPU may deliver it: reading the accumulator before the wait sees the old
// values. The wait faults if the accumulator registers were written, or the shared memory the
// instruction read was changed, while it was in flight; an mma_async without a wgmma.fence since
// the thread last took its registers back (kernel start, a wait) faults too.
#pragma once
#include <cstdint>

namespace emb::emu {

// An encoded matrix descriptor for the shared memory at p (byte offsets lbo, sbo; no swizzle).
uint64_t wgmma_descriptor(const void* p, uint32_t lbo, uint32_t sbo);

// D [64][n] (+)= A [64][16] · B [16][n], bf16 in, fp32 accumulate. A from a_regs (4 registers per
// thread) when not null, else through desc_a (K-major, or M-major with trans_a); B through
// desc_b (K-major, or N-major with trans_b). d holds this thread's n / 2 accumulator registers.
void wgmma_bf16(float* d, int n, const uint32_t* a_regs, uint64_t desc_a, uint64_t desc_b, bool scale_d, bool trans_a,
                bool trans_b, const char* file, int line);
void wgmma_fence(const char* file, int line);
void wgmma_commit();
void wgmma_wait(int newest_pending, const char* file, int line);  // retires all committed groups but the newest N

}  // namespace emb::emu
