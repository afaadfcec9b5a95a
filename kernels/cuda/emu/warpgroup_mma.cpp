#include "kernels/cuda/emu/warpgroup_mma.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/cuda/emu/block_scheduler.hpp"
#include "kernels/cuda/emu/tensor_core.hpp"

namespace emb::emu {

namespace {

constexpr int kThreads = 128, kRows = 64, kK = 16;

std::string where(const char* file, int line) { return std::string(file) + ":" + std::to_string(line); }

// A decoded descriptor: byte offsets into the block's dynamic shared memory.
struct Descriptor {
  size_t start, lbo, sbo;
};

Descriptor decode(uint64_t desc, const char* operand, const char* file, int line) {
  if ((desc >> 62) != 0)
    device_fault("wgmma at " + where(file, line) + ": operand " + operand +
                 "'s descriptor asks for a swizzled layout (only the no-swizzle layout is emulated)");
  if (((desc >> 49) & 7u) != 0)
    device_fault("wgmma at " + where(file, line) + ": operand " + operand + "'s descriptor has a base offset");
  return {size_t(desc & 0x3fffu) << 4, size_t((desc >> 16) & 0x3fffu) << 4, size_t((desc >> 32) & 0x3fffu) << 4};
}

// Reads a [mn][16] operand (A: mn = 64 rows; B: mn = n columns) through its descriptor in the
// canonical no-swizzle layouts (8 × 16-byte core matrices; LBO steps along K, SBO along M/N):
// K-major, 16-byte rows hold 8 consecutive k of one m/n; M/N-major (trans), 8 consecutive m/n of
// one k. Every row read is recorded in `read`.
std::vector<float> read_operand(uint64_t desc, int mn, bool trans, const char* operand, const char* file, int line,
                                std::vector<SharedChunk>& read) {
  const Descriptor d = decode(desc, operand, file, line);
  const BlockState& block = *t_block;
  std::vector<float> out(size_t(mn) * kK);
  for (int i = 0; i < mn; ++i)
    for (int k = 0; k < kK; ++k) {
      const size_t row = d.start + size_t(i / 8) * d.sbo + size_t(k / 8) * d.lbo + size_t(trans ? k % 8 : i % 8) * 16;
      if (row + 16 > block.dynamic_shared_bytes)
        device_fault("wgmma at " + where(file, line) + ": operand " + operand + " reads shared bytes " +
                     std::to_string(row) + ".." + std::to_string(row + 15) + ", beyond the block's " +
                     std::to_string(block.dynamic_shared_bytes) + " bytes of dynamic shared memory");
      const char* at = block.dynamic_shared + row;
      if ((trans ? i % 8 : k % 8) == 0) {
        SharedChunk c{at, {}};
        std::memcpy(c.bytes, at, 16);
        read.push_back(c);
      }
      uint16_t bits;
      std::memcpy(&bits, at + 2 * (trans ? i % 8 : k % 8), 2);
      out[size_t(i) * kK + size_t(k)] = bf16_at(bits, 0);
    }
  return out;
}

struct WgmmaIn {
  ThreadState* thread;
  float* d;
  int n;
  bool a_in_registers;
  uint32_t a[4];
  uint64_t desc_a, desc_b;
  bool scale_d, trans_a, trans_b;
  const char* file;
  int line;
};

// The 64 × 16 A operand from the threads' registers: thread 32w + 4g + t holds rows 16w + g and
// 16w + g + 8, columns 2t, 2t + 1, 2t + 8, 2t + 9 (mma.m16n8k16's A layout per warp).
std::vector<float> gather_a(const void* const* in) {
  std::vector<float> A(size_t(kRows) * kK);
  for (int l = 0; l < kThreads; ++l) {
    const auto& f = *static_cast<const WgmmaIn*>(in[l]);
    const int w = l / 32, g = l % 32 / 4, t = l % 4;
    for (int h = 0; h < 2; ++h)
      for (int r = 0; r < 4; ++r) {
        const int row = 16 * w + g + 8 * (r % 2), col = 2 * t + h + 8 * (r / 2);
        A[size_t(row) * kK + size_t(col)] = bf16_at(f.a[r], h);
      }
  }
  return A;
}

void combine_wgmma(const void* const* in, void* const*) {
  const auto& first = *static_cast<const WgmmaIn*>(in[0]);
  const std::string site = "wgmma at " + where(first.file, first.line);
  for (int l = 0; l < kThreads; ++l) {
    const auto& f = *static_cast<const WgmmaIn*>(in[l]);
    if (f.n != first.n || f.a_in_registers != first.a_in_registers || f.desc_b != first.desc_b ||
        (!f.a_in_registers && f.desc_a != first.desc_a) || f.scale_d != first.scale_d || f.trans_a != first.trans_a ||
        f.trans_b != first.trans_b)
      device_fault(site + ": thread " + std::to_string(l) + " disagrees with thread 0 on the shape or descriptors");
    if (!f.thread->mma_fenced)
      device_fault(site + ": thread " + std::to_string(l) +
                   " issues wgmma.mma_async without a wgmma.fence since it last accessed its registers");
  }
  const int n = first.n;
  auto read = std::make_shared<std::vector<SharedChunk>>();
  const std::vector<float> A = first.a_in_registers
                                   ? gather_a(in)
                                   : read_operand(first.desc_a, kRows, first.trans_a, "A", first.file, first.line, *read);
  const std::vector<float> B = read_operand(first.desc_b, n, first.trans_b, "B", first.file, first.line, *read);
  for (int l = 0; l < kThreads; ++l) {
    const auto& f = *static_cast<const WgmmaIn*>(in[l]);
    std::vector<AsyncMma>& pending = f.thread->async_mmas;
    // Chained on an accumulator still in flight: its input is that instruction's result.
    const auto previous = std::find_if(pending.rbegin(), pending.rend(), [&](const AsyncMma& m) { return m.d == f.d; });
    AsyncMma op{f.d, n / 2, -1, {}, std::vector<float>(size_t(n / 2)), read, first.file, first.line};
    op.expected = previous != pending.rend() ? previous->expected : std::vector<float>(f.d, f.d + n / 2);
    const std::vector<float>& acc_in = previous != pending.rend() ? previous->result : op.expected;
    const int w = l / 32, g = l % 32 / 4, t = l % 4;
    for (int i = 0; i < n / 2; ++i) {
      const int row = 16 * w + g + 8 * (i % 4 / 2), col = 8 * (i / 4) + 2 * t + i % 2;
      double s = f.scale_d ? double(acc_in[size_t(i)]) : 0.0;
      for (int k = 0; k < kK; ++k) s += double(A[size_t(row) * kK + size_t(k)]) * B[size_t(col) * kK + size_t(k)];
      op.result[size_t(i)] = float(s);
    }
    pending.push_back(std::move(op));
  }
}

void combine_fence(const void* const* in, void* const*) {
  for (int l = 0; l < 32; ++l) static_cast<ThreadState*>(const_cast<void*>(in[l]))->mma_fenced = true;
}

struct WaitIn {
  ThreadState* thread;
  int newest_pending;
};

// Retires the lanes' groups: each result lands after checking that its registers and the
// shared memory it read are as they were at its issue.
void combine_wait(const void* const* in, void* const*) {
  std::vector<const std::vector<SharedChunk>*> checked;
  for (int l = 0; l < 32; ++l) {
    const auto& w = *static_cast<const WaitIn*>(in[l]);
    ThreadState& t = *w.thread;
    const int oldest_kept = t.mma_groups_committed - w.newest_pending;
    auto& pending = t.async_mmas;
    size_t kept = 0;
    for (size_t i = 0; i < pending.size(); ++i) {
      AsyncMma& op = pending[i];
      if (op.group < 0 || op.group >= oldest_kept) {
        // Moved down over the retired ones; never onto itself (a self-moved vector may be left
        // empty, and a later wgmma chained on this one would read its result out of bounds).
        if (kept != i) pending[kept] = std::move(op);
        ++kept;
        continue;
      }
      const std::string site = "wgmma.mma_async at " + where(op.file, op.line);
      if (std::memcmp(op.d, op.expected.data(), op.expected.size() * sizeof(float)) != 0)
        device_fault(site + ": lane " + std::to_string(l) +
                     "'s accumulator registers were written while it was in flight (before its wgmma wait)");
      if (std::find(checked.begin(), checked.end(), op.read.get()) == checked.end()) {
        for (const SharedChunk& c : *op.read)
          if (std::memcmp(c.at, c.bytes, 16) != 0)
            device_fault(site + ": shared memory it reads was written while it was in flight (before its wgmma wait)");
        checked.push_back(op.read.get());
      }
      std::copy(op.result.begin(), op.result.end(), op.d);
      for (size_t j = i + 1; j < pending.size(); ++j)
        if (pending[j].d == op.d) pending[j].expected = op.result;
    }
    pending.resize(kept);
    t.mma_fenced = false;
  }
}

}  // namespace

uint64_t wgmma_descriptor(const void* p, uint32_t lbo, uint32_t sbo) {
  const BlockState& block = *t_block;
  const char* c = static_cast<const char*>(p);
  if (c < block.dynamic_shared || c >= block.dynamic_shared + block.dynamic_shared_bytes)
    device_fault("wgmma descriptor of an address outside the block's dynamic shared memory");
  const size_t offset = size_t(c - block.dynamic_shared);
  if (offset % 16 || lbo % 16 || sbo % 16 || lbo >= (1u << 18) || sbo >= (1u << 18))
    device_fault("wgmma descriptor: start offset " + std::to_string(offset) + ", LBO " + std::to_string(lbo) +
                 ", SBO " + std::to_string(sbo) + " must be multiples of 16 below 256 KiB");
  return uint64_t(offset >> 4) | uint64_t(lbo >> 4) << 16 | uint64_t(sbo >> 4) << 32;
}

void wgmma_bf16(float* d, int n, const uint32_t* a_regs, uint64_t desc_a, uint64_t desc_b, bool scale_d, bool trans_a,
                bool trans_b, const char* file, int line) {
  if (n % 8 || n < 8 || n > 256) device_fault("wgmma at " + where(file, line) + ": N = " + std::to_string(n));
  WgmmaIn in{t_thread, d, n, a_regs != nullptr, {}, desc_a, desc_b, scale_d, trans_a, trans_b, file, line};
  if (a_regs) std::copy(a_regs, a_regs + 4, in.a);
  warpgroup_collective("wgmma.mma_async", file, line, &in, nullptr, &combine_wgmma);
}

void wgmma_fence(const char* file, int line) {
  warp_collective("wgmma.fence", file, line, 0xffffffffu, t_thread, nullptr, &combine_fence);
}

void wgmma_commit() {
  ThreadState& t = *t_thread;
  for (AsyncMma& m : t.async_mmas)
    if (m.group < 0) m.group = t.mma_groups_committed;
  ++t.mma_groups_committed;
}

void wgmma_wait(int newest_pending, const char* file, int line) {
  const WaitIn in{t_thread, newest_pending};
  warp_collective("wgmma.wait_group", file, line, 0xffffffffu, &in, nullptr, &combine_wait);
}

}  // namespace emb::emu
