// Frozen linears on the CPU (kernels/ops.hpp pack_linear / packed_linear_forward): the frozen
// encoders' weights are packed once into the panels an AVX-512 GEMM micro-kernel streams, so a
// forward multiplies without repacking W (OpenBLAS repacks B on every call) and with 512-bit
// FMAs whatever core type OpenBLAS runs (this environment sets OPENBLAS_CORETYPE=Haswell,
// MACHINE.md: AVX2 kernels at about half of this machine's AVX-512 rate).
//
// Layout: W [K, N] as panels of 32 columns (zero-padded past N) in blocks of kKc rows:
// block kb, panel j is [kc][32] contiguous. y = x·W by panels of 12 rows × 32 columns of y held
// in 24 zmm accumulators over a K block (x packed per call into [12][kc] row panels), summed
// over the K blocks in order; OpenMP over the panels. Without AVX-512 the packed form is W itself
// and the product is cblas_sgemm. fp32; results agree with cblas_sgemm to fp32 summation order.
#pragma once
#include <cstdint>

namespace emb::cpu {

// True when this CPU runs the AVX-512 kernel (the layout above); false: W as it is, cblas.
bool packed_linear_avx512();
int64_t packed_linear_elements(int64_t K, int64_t N);
// packed[packed_linear_elements(K, N)] = W [K, N] in the layout.
void pack_linear(const float* W, int64_t K, int64_t N, float* packed);
// y [M, N] = x [M, K] · W (its packed form); x and y contiguous.
void packed_linear_forward(const float* x, int64_t M, int64_t K, int64_t N, const float* packed, float* y);

}  // namespace emb::cpu
