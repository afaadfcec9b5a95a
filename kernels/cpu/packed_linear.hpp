// Frozen linears on the CPU (kernels/ops.hpp pack_linear / packed_linear_forward): the frozen
// encoders' weights are packed once into the panels an AVX-512 GEMM micro-kernel streams, so a
// forward multiplies without repacking W (OpenBLAS repacks B on every call) and with 512-bit
// FMAs whatever core type OpenBLAS runs (this environment sets OPENBLAS_CORETYPE=Haswell,
// MACHINE.md: AVX2 kernels at about half of this machine's AVX-512 rate).
//
// Layout: kernels/cpu/packed_tile.hpp's panels. y = x·W by micro-tiles of 12 rows × 32 columns
// (x's rows copied per call into row panels), summed over the K blocks in order; OpenMP over
// the column panels. Without AVX-512 (packed::avx512()) the packed form is W itself and the
// product is cblas_sgemm. fp32; results agree with cblas_sgemm to fp32 summation order.
#pragma once
#include <cstdint>

namespace emb::cpu {

int64_t packed_linear_elements(int64_t K, int64_t N);
// packed[packed_linear_elements(K, N)] = W [K, N] in the layout.
void pack_linear(const float* W, int64_t K, int64_t N, float* packed);
// y [M, N] = x [M, K] · W (its packed form); x and y contiguous.
void packed_linear_forward(const float* x, int64_t M, int64_t K, int64_t N, const float* packed, float* y);

}  // namespace emb::cpu
