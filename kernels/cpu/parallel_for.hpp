// OpenMP across a kernel's loop, without entering the OpenMP runtime when one thread would run it.
// libgomp's GOMP_parallel costs a futex system call per region even with one thread, and
// `#pragma omp parallel if (false)` still enters it: 1175 a step on tiny_gr00t at one rank,
// 0.3-3.7 µs each as the machine's load goes (regression/plan_validation.md, rounds 15b and 16).
// Here a loop that one thread would run (below the kernel's own threshold, or one OpenMP thread)
// is a plain loop; otherwise the region is the one the kernel's pragma opened: the same team, the
// same schedule, each index the same work, so the results are bit-identical either way.
#pragma once
#include <omp.h>

#include <cstdint>

namespace emb::cpu {

enum class Schedule { static_blocks, dynamic };

// The most threads a region would get: 1 when the work is below the kernel's threshold
// (worth_threads false), else nthreads-var. omp_get_max_threads only reads the calling task's
// settings (no lock, no system call) and follows omp_set_num_threads, as a cached copy would not.
inline int max_team(bool worth_threads) { return worth_threads ? omp_get_max_threads() : 1; }

// Each loop below runs a copy of the body that is local to it: the loop's stores cannot alias
// that copy's captured values, which then stay in registers and let an elementwise body vectorise
// (called through the caller's closure, adamw_step's loop reloaded its float captures every
// element and ran scalar). Capture by value what the loop reads every element.

// body(i) for i in [0, n): `#pragma omp parallel for schedule(...)` when more than one thread
// would run it, else a plain loop.
template <Schedule schedule = Schedule::static_blocks, class Body>
void parallel_for(int64_t n, bool worth_threads, const Body& body) {
  if (max_team(worth_threads) == 1) {
    const Body local = body;
    for (int64_t i = 0; i < n; ++i) local(i);
    return;
  }
#pragma omp parallel
  {
    const Body local = body;
    if constexpr (schedule == Schedule::dynamic) {
#pragma omp for schedule(dynamic)
      for (int64_t i = 0; i < n; ++i) local(i);
    } else {
#pragma omp for
      for (int64_t i = 0; i < n; ++i) local(i);
    }
  }
}

// parallel_for with per-thread scratch: each thread that runs indices makes
// `decltype(auto) scratch = make_scratch()` once (a value, or a reference to its thread_local
// buffers), then calls body(scratch, i) for its indices.
template <Schedule schedule = Schedule::static_blocks, class MakeScratch, class Body>
void parallel_for_scratch(int64_t n, bool worth_threads, const MakeScratch& make_scratch, const Body& body) {
  if (max_team(worth_threads) == 1) {
    decltype(auto) scratch = make_scratch();
    const Body local = body;
    for (int64_t i = 0; i < n; ++i) local(scratch, i);
    return;
  }
#pragma omp parallel
  {
    decltype(auto) scratch = make_scratch();
    const Body local = body;
    if constexpr (schedule == Schedule::dynamic) {
#pragma omp for schedule(dynamic)
      for (int64_t i = 0; i < n; ++i) local(scratch, i);
    } else {
#pragma omp for
      for (int64_t i = 0; i < n; ++i) local(scratch, i);
    }
  }
}

// body(t, threads) once on each thread t of a team of at most `team` threads (the caller splits
// the work by t), or body(0, 1) without a region when team is 1. Returns the team's size.
template <class Body>
int for_each_thread(int team, const Body& body) {
  if (team == 1) {
    body(0, 1);
    return 1;
  }
  int threads = 1;
#pragma omp parallel num_threads(team)
  {
    const int t = omp_get_thread_num();
    if (t == 0) threads = omp_get_num_threads();
    body(t, omp_get_num_threads());
  }
  return threads;
}

}  // namespace emb::cpu
