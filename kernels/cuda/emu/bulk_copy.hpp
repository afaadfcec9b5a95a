// mbarrier and the bulk tensor copy (TMA, cp.async.bulk.tensor) under the emulation
// (kernels/cuda/tma.cuh). An mbarrier lives in its 8 bytes of shared memory (pending arrivals,
// the phase's arrival count, its parity, the transaction bytes still expected) and completes a
// phase when every arrival is in and every expected byte has landed. A bulk copy reads its box
// (zeros outside the tensor, as TMA fills out-of-bound elements) at issue and lands when the
// schedule says: under Order::forward at the first wait on its mbarrier, the latest moment a
// GPU may deliver it (a read of the destination before that wait sees the old bytes), under the
// other orders at once, the earliest (a copy into a buffer still being read overwrites it).
// The two test schedules therefore disagree, or the wgmma checks fault, when the barriers that
// order copies and readers are wrong. A copy landing after the phase it was issued in completed
// faults: that phase's expect_tx announced too few bytes. The tensor map is this emulation's own encoding inside
// CUtensorMap's 128 bytes (tile mode, no interleave, no swizzle).
#pragma once
#include <cuda.h>

#include <cstdint>

namespace emb::emu {

void mbarrier_init(void* barrier, unsigned count);
void mbarrier_arrive(void* barrier);
void mbarrier_arrive_expect_tx(void* barrier, unsigned bytes);
bool mbarrier_try_wait_parity(void* barrier, unsigned parity);  // lands the copies waiting on it first

// The box of map at coords (rank of them, innermost first) into dst (dynamic shared memory,
// 128-byte aligned), completing its bytes on the mbarrier.
void bulk_tensor_load(void* dst, const CUtensorMap* map, const int32_t* coords, int rank, void* barrier);

// The emulation's tensor map: rank ≤ 5 dims (innermost first), byte strides of dims 1.. (dim 0
// is contiguous), box sizes; checked as cuTensorMapEncodeTiled checks them.
void encode_tensor_map(CUtensorMap* map, const void* global, int rank, const uint64_t* dims,
                       const uint64_t* strides_bytes, const uint32_t* box, int element_bytes);

}  // namespace emb::emu
