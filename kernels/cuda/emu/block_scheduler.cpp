#include "kernels/cuda/emu/block_scheduler.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <numeric>
#include <random>
#include <sstream>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/common_interface_defs.h>
#endif

namespace emb::emu {

thread_local ThreadState* t_thread = nullptr;
thread_local const BlockState* t_block = nullptr;

namespace {

namespace ctx = boost::context;

Schedule g_schedule;

// Fiber stacks: mapped once, with a guard page below each, and reused by every block. The
// memory is reserved lazily (MAP_NORESERVE): a thread touches only the few pages it uses.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t kStackBytes = size_t(1) << 20;  // ASan frames are larger
#else
constexpr size_t kStackBytes = size_t(256) << 10;
#endif

class StackPool {
 public:
  ctx::stack_context allocate() {
    const size_t page = size_t(sysconf(_SC_PAGESIZE));
    char* base;
    if (free_.empty()) {
      void* p =
          mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      if (p == MAP_FAILED) throw std::bad_alloc();
      mprotect(p, page, PROT_NONE);
      base = static_cast<char*>(p);
    } else {
      base = free_.back();
      free_.pop_back();
    }
    ctx::stack_context sc;
    sc.size = kStackBytes;
    sc.sp = base + page + kStackBytes;
    return sc;
  }
  void deallocate(ctx::stack_context& sc) {
    free_.push_back(static_cast<char*>(sc.sp) - kStackBytes - size_t(sysconf(_SC_PAGESIZE)));
  }

 private:
  std::vector<char*> free_;
};

StackPool& stack_pool() {
  static thread_local StackPool pool;
  return pool;
}

// Hands out pooled stacks and remembers the thread's (for the ASan annotations).
struct PooledStack {
  ctx::stack_context* remember;
  ctx::stack_context allocate() { return *remember = stack_pool().allocate(); }
  void deallocate(ctx::stack_context& sc) noexcept { stack_pool().deallocate(sc); }
};

// AddressSanitizer must be told about every switch between the scheduler's stack and a
// fiber's (its fiber-switch annotations); without ASan these do nothing.
struct StackSwitch {
#if defined(__SANITIZE_ADDRESS__)
  void* fake_stack = nullptr;
  const void* other_bottom = nullptr;  // the stack switched away from (the scheduler's, in a fiber)
  size_t other_size = 0;
  void leave(const void* to_bottom, size_t to_size, bool dying = false) {
    __sanitizer_start_switch_fiber(dying ? nullptr : &fake_stack, to_bottom, to_size);
  }
  void arrive() { __sanitizer_finish_switch_fiber(fake_stack, &other_bottom, &other_size); }
#else
  void leave(const void*, size_t, bool = false) {}
  void arrive() {}
#endif
};

enum class Wait : uint8_t { ready, barrier, warp, done };

struct Site {
  const char* what = nullptr;
  const char* file = nullptr;
  int line = 0;
  bool operator==(const Site& o) const {
    return line == o.line && (what == o.what || std::strcmp(what, o.what) == 0) &&
           (file == o.file || std::strcmp(file, o.file) == 0);
  }
};

std::string describe(const Site& s) {
  std::ostringstream os;
  os << s.what << " at " << s.file << ":" << s.line;
  return os.str();
}

struct Thread {
  ThreadState state;
  ctx::stack_context stack;
  StackSwitch asan;      // seen from the fiber
  ctx::fiber fiber;      // this thread, while suspended
  ctx::fiber scheduler;  // where it returns to, while running
  Wait wait = Wait::ready;
  const void* in = nullptr;
  void* out = nullptr;
  uint64_t spin_progress = ~uint64_t(0);  // the block's progress count at this thread's last spin
};

struct Warp {
  int first = 0, lanes = 0;
  int arrived = 0, exited = 0;
  Site site;
  Combine combine = nullptr;
  std::vector<int> order;  // the block's schedule restricted to this warp
};

// The 4 aligned warps of a warpgroup, for warpgroup collectives (as Warp for warp collectives).
struct Warpgroup {
  int first = 0, arrived = 0;
  Site site;
  Combine combine = nullptr;
  std::vector<int> order;
};
constexpr int kWarpgroupThreads = 128;

struct Block {
  const char* kernel;
  BlockState state;
  std::vector<Thread> threads;
  std::vector<Warp> warps;
  std::vector<Warpgroup> warpgroups;  // complete warpgroups only
  std::vector<int> order;
  std::deque<int> ready;
  int barrier_arrived = 0, done = 0;
  Site barrier_site;
  Thread* running = nullptr;
  std::string fault;
  uint64_t progress = 0;  // suspensions other than spins, and mbarrier arrivals
};

thread_local Block* t_current = nullptr;

std::string where(const Block& b, const Thread* t) {
  std::ostringstream os;
  os << "kernel " << b.kernel << ", block (" << b.state.block_idx.x << "," << b.state.block_idx.y << ","
     << b.state.block_idx.z << ")";
  if (t)
    os << ", thread (" << t->state.thread_idx.x << "," << t->state.thread_idx.y << "," << t->state.thread_idx.z << ")";
  return os.str();
}

std::vector<int> schedule_order(int n, uint64_t block_linear) {
  std::vector<int> order(size_t(n), 0);
  std::iota(order.begin(), order.end(), 0);
  if (g_schedule.order == Order::reverse) std::reverse(order.begin(), order.end());
  if (g_schedule.order == Order::shuffled) {
    std::mt19937_64 rng(g_schedule.seed * 0x9E3779B97F4A7C15ull + block_linear);
    std::shuffle(order.begin(), order.end(), rng);
  }
  return order;
}

// Back to the scheduler until resumed.
void suspend(Thread& t) {
#if defined(__SANITIZE_ADDRESS__)
  t.asan.leave(t.asan.other_bottom, t.asan.other_size);
#endif
  t.scheduler = std::move(t.scheduler).resume();
  t.asan.arrive();
}

void release(Block& b, const std::vector<int>& order, int first) {
  for (int i : order) {
    b.threads[size_t(first + i)].wait = Wait::ready;
    b.ready.push_back(first + i);
  }
}

// The lanes of a warp after its collective: behind the ready threads, or (warps_run_ahead)
// ahead of them, in the warp's order.
void release_warp(Block& b, const std::vector<int>& order, int first) {
  if (!g_schedule.warps_run_ahead) return release(b, order, first);
  for (auto i = order.rbegin(); i != order.rend(); ++i) {
    b.threads[size_t(first + *i)].wait = Wait::ready;
    b.ready.push_front(first + *i);
  }
}

Warpgroup* warpgroup_of(Block& b, const Thread& t) {
  const size_t g = size_t(t.state.linear / kWarpgroupThreads);
  return g < b.warpgroups.size() ? &b.warpgroups[g] : nullptr;
}

void thread_exited(Block& b, Thread& t) {
  t.wait = Wait::done;
  ++b.done;
  Warp& w = b.warps[size_t(t.state.linear / 32)];
  ++w.exited;
  if (!b.fault.empty()) return;
  ++b.progress;
  const Warpgroup* g = warpgroup_of(b, t);
  if (!t.state.async_copies.empty())
    b.fault = where(b, &t) + ": exited with " + std::to_string(t.state.async_copies.size()) +
              " cp.async copies never waited for (cp_async_wait)";
  else if (!t.state.async_mmas.empty())
    b.fault = where(b, &t) + ": exited with " + std::to_string(t.state.async_mmas.size()) +
              " wgmma.mma_async never waited for (wgmma wait_group)";
  else if (g && g->arrived > 0)
    b.fault = where(b, &t) + ": exited while threads of its warpgroup wait at " + describe(g->site);
  else if (b.barrier_arrived > 0)
    b.fault = where(b, &t) + ": exited while " + std::to_string(b.barrier_arrived) + " threads wait at " +
              describe(b.barrier_site) + " (a barrier every thread must reach)";
  else if (w.arrived > 0)
    b.fault = where(b, &t) + ": exited while lanes of its warp wait at " + describe(w.site);
}

void run_block(Block& b, const std::function<void()>& body) {
  const int n = int(b.threads.size());
  for (int i : b.order) {
    b.ready.push_back(i);
    b.warps[size_t(i / 32)].order.push_back(i % 32);
    if (size_t(i / kWarpgroupThreads) < b.warpgroups.size())
      b.warpgroups[size_t(i / kWarpgroupThreads)].order.push_back(i % kWarpgroupThreads);
  }
  for (int i = 0; i < n; ++i)
    b.threads[size_t(i)].fiber = ctx::fiber(std::allocator_arg, PooledStack{&b.threads[size_t(i)].stack},
                                            [&b, i, &body](ctx::fiber&& scheduler) {
                                              Thread& t = b.threads[size_t(i)];
                                              t.asan.arrive();
                                              t.scheduler = std::move(scheduler);
                                              try {
                                                body();
                                              } catch (const Fault& f) {
                                                if (b.fault.empty()) b.fault = f.what();
                                              } catch (const std::exception& e) {
                                                if (b.fault.empty())
                                                  b.fault = where(b, &t) + ": exception: " + e.what();
                                              }
                                              thread_exited(b, t);
#if defined(__SANITIZE_ADDRESS__)
                                              t.asan.leave(t.asan.other_bottom, t.asan.other_size, true);
#endif
                                              return std::move(t.scheduler);
                                            });
  while (!b.ready.empty() && b.fault.empty()) {
    Thread& t = b.threads[size_t(b.ready.front())];
    b.ready.pop_front();
    b.running = &t;
    t_thread = &t.state;
    StackSwitch scheduler;
    scheduler.leave(static_cast<char*>(t.stack.sp) - t.stack.size, t.stack.size);
    t.fiber = std::move(t.fiber).resume();
    scheduler.arrive();
  }
  b.running = nullptr;
  t_thread = nullptr;
  if (b.fault.empty() && !b.state.bulk_copies.empty())
    b.fault = where(b, nullptr) + ": ended with " + std::to_string(b.state.bulk_copies.size()) +
              " bulk copies whose mbarrier no thread waited for";
  if (!b.fault.empty()) throw Fault(b.fault);
  if (b.done != n) {  // cannot happen without a fault above; kept as a last line of defence
    for (const Thread& t : b.threads)
      if (t.wait != Wait::done) throw Fault(where(b, &t) + ": never resumed (deadlock)");
  }
}

}  // namespace

void set_schedule(Schedule s) { g_schedule = s; }
Schedule current_schedule() { return g_schedule; }
const char* schedule_name(Schedule s) {
  switch (s.order) {
    case Order::forward:
      return s.warps_run_ahead ? "forward, warps run ahead" : "forward";
    case Order::reverse:
      return s.warps_run_ahead ? "reverse, warps run ahead" : "reverse";
    default:
      return "shuffled";
  }
}

void run_grid(const char* kernel, dim3 grid, dim3 block, size_t dynamic_shared_bytes,
              const std::function<void()>& body) {
  const int n = int(block.x * block.y * block.z);
  const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  std::vector<int> block_order(blocks);
  std::iota(block_order.begin(), block_order.end(), 0);
  if (g_schedule.order == Order::reverse) std::reverse(block_order.begin(), block_order.end());
  if (g_schedule.order == Order::shuffled)
    std::shuffle(block_order.begin(), block_order.end(), std::mt19937_64(g_schedule.seed));
  for (int linear : block_order) {
    Block b;
    b.kernel = kernel;
    b.state.block_idx = uint3{unsigned(linear % grid.x), unsigned(linear / grid.x % grid.y),
                              unsigned(linear / (uint64_t(grid.x) * grid.y))};
    b.state.block_dim = block;
    b.state.grid_dim = grid;
    // Fresh per block (ASan sees overruns), filled with 0xff bytes (NaN) as unwritten memory,
    // 128-byte aligned as TMA destinations need (a GPU's dynamic shared memory starts aligned).
    b.state.dynamic_shared_bytes = dynamic_shared_bytes;
    b.state.dynamic_shared = nullptr;
    void* dyn_raw = nullptr;
    if (dynamic_shared_bytes && posix_memalign(&dyn_raw, 128, dynamic_shared_bytes) != 0) throw std::bad_alloc();
    char* dyn = static_cast<char*>(dyn_raw);
    if (dyn) std::memset(dyn, 0xff, dynamic_shared_bytes);
    b.state.dynamic_shared = dyn;
    b.threads.resize(size_t(n));
    for (int i = 0; i < n; ++i) {
      ThreadState& s = b.threads[size_t(i)].state;
      s.linear = i;
      s.thread_idx = uint3{unsigned(i % block.x), unsigned(i / block.x % block.y), unsigned(i / (block.x * block.y))};
    }
    b.warpgroups.resize(size_t(n / kWarpgroupThreads));
    for (size_t g = 0; g < b.warpgroups.size(); ++g) b.warpgroups[g].first = int(g) * kWarpgroupThreads;
    b.warps.resize(size_t((n + 31) / 32));
    for (size_t w = 0; w < b.warps.size(); ++w) {
      b.warps[w].first = int(w) * 32;
      b.warps[w].lanes = std::min(32, n - int(w) * 32);
    }
    b.order = schedule_order(n, uint64_t(linear));
    t_current = &b;
    t_block = &b.state;
    try {
      run_block(b, body);
    } catch (...) {
      std::free(dyn);
      t_current = nullptr;
      t_block = nullptr;
      throw;
    }
    std::free(dyn);
  }
  t_current = nullptr;
  t_block = nullptr;
}

void device_fault(const std::string& message) {
  const Block* b = t_current;
  throw Fault(b ? where(*b, b->running) + ": " + message : message);
}

void block_barrier(const char* file, int line) {
  Block& b = *t_current;
  Thread& t = *b.running;
  const Site site{"__syncthreads", file, line};
  if (b.done > 0)
    device_fault(describe(site) + " is not reached by " + std::to_string(b.done) +
                 " threads that already exited (a barrier every thread must reach)");
  const Warp& w = b.warps[size_t(t.state.linear / 32)];
  if (w.arrived > 0) device_fault(describe(site) + " while lanes of its warp wait at " + describe(w.site));
  if (const Warpgroup* g = warpgroup_of(b, t); g && g->arrived > 0)
    device_fault(describe(site) + " while threads of its warpgroup wait at " + describe(g->site));
  ++b.progress;
  if (b.barrier_arrived == 0)
    b.barrier_site = site;
  else if (!(b.barrier_site == site))
    device_fault(describe(site) + " while other threads wait at " + describe(b.barrier_site));
  t.wait = Wait::barrier;
  if (++b.barrier_arrived == int(b.threads.size())) {
    b.barrier_arrived = 0;
    release(b, b.order, 0);
  }
  suspend(t);
}

void warp_collective(const char* what, const char* file, int line, unsigned mask, const void* in, void* out,
                     Combine combine) {
  Block& b = *t_current;
  Thread& t = *b.running;
  Warp& w = b.warps[size_t(t.state.linear / 32)];
  const Site site{what, file, line};
  const unsigned full = w.lanes == 32 ? 0xffffffffu : (1u << w.lanes) - 1u;
  if (mask != full) {
    std::ostringstream os;
    os << describe(site) << " with mask 0x" << std::hex << mask
       << ": the emulation takes only the full mask of the warp (0x" << full << "); partial masks are not emulated";
    device_fault(os.str());
  }
  if (w.exited > 0)
    device_fault(describe(site) + ": " + std::to_string(w.exited) + " lanes of the warp already exited");
  if (b.barrier_arrived > 0)
    for (int l = 0; l < w.lanes; ++l)
      if (b.threads[size_t(w.first + l)].wait == Wait::barrier)
        device_fault(describe(site) + " while lane " + std::to_string(l) + " of its warp waits at " +
                     describe(b.barrier_site) + " (divergent warp)");
  if (const Warpgroup* g = warpgroup_of(b, t); g && g->arrived > 0 && w.arrived == 0)
    for (int l = 0; l < w.lanes; ++l)
      if (b.threads[size_t(w.first + l)].wait == Wait::warp)
        device_fault(describe(site) + " while lane " + std::to_string(l) + " of its warp waits at " +
                     describe(g->site) + " (divergent warp)");
  ++b.progress;
  if (w.arrived == 0) {
    w.site = site;
    w.combine = combine;
  } else if (!(w.site == site)) {
    device_fault(describe(site) + " while other lanes of its warp wait at " + describe(w.site) + " (divergent warp)");
  }
  t.wait = Wait::warp;
  t.in = in;
  t.out = out;
  if (++w.arrived == w.lanes) {
    const void* ins[32] = {};
    void* outs[32] = {};
    for (int l = 0; l < w.lanes; ++l) {
      ins[l] = b.threads[size_t(w.first + l)].in;
      outs[l] = b.threads[size_t(w.first + l)].out;
    }
    w.arrived = 0;
    w.combine(ins, outs);
    release_warp(b, w.order, w.first);
  }
  suspend(t);
}

void warpgroup_collective(const char* what, const char* file, int line, const void* in, void* out, Combine combine) {
  Block& b = *t_current;
  Thread& t = *b.running;
  const Site site{what, file, line};
  Warpgroup* g = warpgroup_of(b, t);
  if (!g)
    device_fault(describe(site) + ": thread " + std::to_string(t.state.linear) +
                 " is not in a complete warpgroup of 128 threads (the block has " + std::to_string(b.threads.size()) +
                 ")");
  for (int l = 0; l < kWarpgroupThreads; ++l) {
    const Thread& other = b.threads[size_t(g->first + l)];
    if (other.wait == Wait::done)
      device_fault(describe(site) + ": thread " + std::to_string(g->first + l) + " of the warpgroup already exited");
    if (other.wait == Wait::barrier)
      device_fault(describe(site) + " while thread " + std::to_string(g->first + l) + " of its warpgroup waits at " +
                   describe(b.barrier_site) + " (divergent warpgroup)");
  }
  if (b.warps[size_t(t.state.linear / 32)].arrived > 0)
    device_fault(describe(site) + " while lanes of its warp wait at " +
                 describe(b.warps[size_t(t.state.linear / 32)].site) + " (divergent warp)");
  if (g->arrived == 0) {
    g->site = site;
    g->combine = combine;
  } else if (!(g->site == site)) {
    device_fault(describe(site) + " while other threads of its warpgroup wait at " + describe(g->site) +
                 " (divergent warpgroup)");
  }
  ++b.progress;
  t.wait = Wait::warp;
  t.in = in;
  t.out = out;
  if (++g->arrived == kWarpgroupThreads) {
    const void* ins[kWarpgroupThreads] = {};
    void* outs[kWarpgroupThreads] = {};
    for (int l = 0; l < kWarpgroupThreads; ++l) {
      ins[l] = b.threads[size_t(g->first + l)].in;
      outs[l] = b.threads[size_t(g->first + l)].out;
    }
    g->arrived = 0;
    g->combine(ins, outs);
    release_warp(b, g->order, g->first);
  }
  suspend(t);
}

void note_progress() { ++t_current->progress; }

void spin_yield(const char* what) {
  Block& b = *t_current;
  Thread& t = *b.running;
  if (t.spin_progress == b.progress)
    device_fault(std::string(what) + " never completes: every ready thread of the block is spinning (deadlock)");
  t.spin_progress = b.progress;
  b.ready.push_back(t.state.linear);
  suspend(t);
}

void yield_thread() {
  Block& b = *t_current;
  Thread& t = *b.running;
  ++b.progress;
  if (g_schedule.warps_run_ahead)
    b.ready.push_front(t.state.linear);
  else
    b.ready.push_back(t.state.linear);
  suspend(t);
}

}  // namespace emb::emu
