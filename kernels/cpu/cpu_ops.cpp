// CpuOps' memory: host allocations, copies and the scratch of fused entries. The ops themselves
// are defined in their files (cpu_ops.hpp).
#include "kernels/cpu/cpu_ops.hpp"

#include <cstdlib>
#include <cstring>

#include "core/error.hpp"

namespace emb {

void* CpuOps::allocate(size_t bytes) {
  void* p = std::aligned_alloc(64, (bytes + 63) & ~size_t(63));
  EMB_CHECK(p || bytes == 0, "out of memory: ", (bytes + 999999) / 1000000,
            " MB asked of the host for the model's parameters, gradients, optimizer state or activations; lower "
            "data.tokens_per_mb, set model.recompute = full or train.shard = full, or use more ranks (embtrain DECK "
            "--plan estimates the memory per rank)");
  return p;
}
void CpuOps::deallocate(void* p) { std::free(p); }
void CpuOps::upload(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuOps::download(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

float* CpuOps::scratch(int64_t n) {
  if (scratch_.size() < size_t(n)) scratch_.resize(size_t(n));
  std::memset(scratch_.data(), 0, size_t(n) * sizeof(float));
  return scratch_.data();
}

}  // namespace emb
