#include "kernels/cuda/emu/async_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/runtime.hpp"

namespace emb::emu {

void cp_async_16(void* shared_dst, const void* global_src) {
  if (reinterpret_cast<uintptr_t>(shared_dst) % 16 || reinterpret_cast<uintptr_t>(global_src) % 16)
    device_fault("cp_async_16 with an address not 16-byte aligned");
  if (!is_device_memory(global_src)) device_fault("cp_async_16 from an address outside global memory");
  if (is_device_memory(shared_dst)) device_fault("cp_async_16 into global memory (the destination must be shared)");
  t_thread->async_copies.push_back(AsyncCopy{shared_dst, global_src, -1});
}

void cp_async_commit() {
  ThreadState& t = *t_thread;
  for (AsyncCopy& c : t.async_copies)
    if (c.group < 0) c.group = t.groups_committed;
  ++t.groups_committed;
}

void cp_async_wait(int newest_pending) {
  ThreadState& t = *t_thread;
  const int oldest_kept = t.groups_committed - newest_pending;
  auto done = [&](const AsyncCopy& c) { return c.group >= 0 && c.group < oldest_kept; };
  for (const AsyncCopy& c : t.async_copies)
    if (done(c)) std::memcpy(c.dst, c.src, 16);
  t.async_copies.erase(std::remove_if(t.async_copies.begin(), t.async_copies.end(), done), t.async_copies.end());
  yield_thread();  // other threads may run before this one reads what it copied
}

}  // namespace emb::emu
