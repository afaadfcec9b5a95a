// cp.async under the emulation (kernels/cuda/mma.cuh): a copy is only recorded when issued and
// performed at the issuing thread's cp_async_wait, the latest moment a GPU may complete it, so
// a read before the wait (or by another thread before the barrier after it) sees stale data.
#pragma once

namespace emb::emu {

void cp_async_16(void* shared_dst, const void* global_src);
void cp_async_commit();
void cp_async_wait(int newest_pending);  // performs all committed groups but the newest N

}  // namespace emb::emu

namespace emb::cuda {

inline void cp_async_16(void* shared_dst, const void* global_src) { emu::cp_async_16(shared_dst, global_src); }
inline void cp_async_commit() { emu::cp_async_commit(); }
template <int N>
inline void cp_async_wait() {
  emu::cp_async_wait(N);
}

}  // namespace emb::cuda
