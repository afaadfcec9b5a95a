// Core facilities: Philox known answers and stream independence, phase timers (nesting,
// accumulation), the arena, atomic file writes, bf16 rounding, error formatting.
#define BOOST_TEST_MODULE core
#include <boost/test/unit_test.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <thread>
#include <vector>

#include "core/arena.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "core/rng.hpp"
#include "core/timer.hpp"
#include "error_of.hpp"

using namespace emb;

BOOST_AUTO_TEST_CASE(philox_known_answers) {
  // Random123's published known-answer vectors for philox4x32-10.
  BOOST_TEST((philox4x32({0, 0, 0, 0}, 0) == Philox4{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  BOOST_TEST((philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, 0xffffffffffffffffull) ==
              Philox4{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  BOOST_TEST((philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, 0x299f31d0a4093822ull) ==
              Philox4{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

BOOST_AUTO_TEST_CASE(counter_rng_is_a_pure_function_of_its_key) {
  CounterRng a(42, RngStream::flow_noise, 7, 3), b(42, RngStream::flow_noise, 7, 3);
  CounterRng other_sample(42, RngStream::flow_noise, 7, 4), other_stream(42, RngStream::flow_time, 7, 3);
  int same_as_other = 0;
  for (uint64_t i = 0; i < 1000; ++i) {
    BOOST_TEST(a.bits(999 - i) == b.bits(999 - i));  // order of draws does not matter
    same_as_other += a.bits(i) == other_sample.bits(i) || a.bits(i) == other_stream.bits(i);
  }
  BOOST_TEST(same_as_other == 0);
}

// A run of draws (one Philox block per pair) is the draws one by one, bit for bit, whatever the
// parity of its first counter and its length; large counters reach the block counter's high word.
BOOST_AUTO_TEST_CASE(counter_rng_normals_equal_normal_one_by_one) {
  const CounterRng rng(9, RngStream::flow_noise, 12, 345);
  for (uint64_t first : {uint64_t(0), uint64_t(1), uint64_t(6), uint64_t(7), (uint64_t(1) << 33) + 1})
    for (int64_t n : {0, 1, 2, 3, 8, 33}) {
      std::vector<float> run(size_t(n) + 1, -7.0f);
      rng.normals(first, n, run.data());
      for (int64_t k = 0; k < n; ++k) BOOST_TEST(run[size_t(k)] == float(rng.normal(first + uint64_t(k))));
      BOOST_TEST(run[size_t(n)] == -7.0f);  // nothing written past n
    }
}

BOOST_AUTO_TEST_CASE(counter_rng_distributions) {
  CounterRng rng(1, RngStream::test, 0);
  const int n = 200000;
  double sum = 0, sum2 = 0, beta_mean = 0, umin = 1, umax = 0;
  for (int i = 0; i < n; ++i) {
    double z = rng.normal(uint64_t(i));
    sum += z, sum2 += z * z;
    double u = rng.uniform(uint64_t(i));
    umin = std::min(umin, u), umax = std::max(umax, u);
    beta_mean += rng.beta_alpha_1(uint64_t(i), 1.5);
  }
  BOOST_TEST(std::abs(sum / n) < 0.01);
  BOOST_TEST(std::abs(sum2 / n - 1.0) < 0.02);
  BOOST_TEST(umin > 0.0);
  BOOST_TEST(umax < 1.0);
  BOOST_TEST(std::abs(beta_mean / n - 0.6) < 0.005);  // Beta(1.5, 1) has mean 1.5/2.5
}

BOOST_AUTO_TEST_CASE(phase_timers_nest_and_accumulate) {
  PhaseTimers t;
  t.start(Phase::step);
  t.start(Phase::bwd);
  t.start(Phase::bwd);  // re-entering counts the outer span once
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  t.stop(Phase::bwd);
  t.stop(Phase::bwd);
  {
    ScopedPhase optim(t, Phase::optim);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  t.add(Phase::comm_total, 0.5);
  t.stop(Phase::step);
  t.end_step(7);
  BOOST_REQUIRE(t.records().size() == 1u);
  const StepTimes& r = t.records()[0];
  BOOST_TEST(r.step == 7);
  BOOST_TEST(r.seconds[int(Phase::bwd)] >= 0.019);
  BOOST_TEST(r.seconds[int(Phase::bwd)] < 0.2);
  BOOST_TEST(r.seconds[int(Phase::optim)] >= 0.009);
  BOOST_TEST(r.seconds[int(Phase::step)] >= r.seconds[int(Phase::bwd)] + r.seconds[int(Phase::optim)]);
  BOOST_TEST(r.seconds[int(Phase::comm_total)] == 0.5);
  BOOST_TEST(r.seconds[int(Phase::fwd)] == 0.0);
  BOOST_TEST(t.current(Phase::bwd) == 0.0);  // the next step starts from zero
  BOOST_CHECK_THROW(t.stop(Phase::fwd), Error);  // stopping a phase that never started is a bug
  BOOST_TEST(std::string(phase_name(Phase::comm_exposed)) == "comm_exposed");
}

// A wait inside fwd and an upload timed inside it count in their own phases and leave fwd;
// the step's parts (kStepParts, with `other` its remainder) sum to the step.
BOOST_AUTO_TEST_CASE(phase_timers_divide_the_step_into_parts_that_sum_to_it) {
  PhaseTimers t;
  t.start(Phase::step);
  t.start(Phase::fwd);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  t.add_wait(Phase::comm_exposed, 0.01);
  t.stop(Phase::fwd);
  t.move(Phase::fwd, Phase::h2d, 0.005);
  t.add(Phase::comm_total, 0.02);  // the collectives' own time: no part of the step
  t.add_wait(Phase::comm_exposed, 0.004);  // a wait outside fwd and bwd (the last reductions)
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  t.stop(Phase::step);
  t.end_step(1);
  const StepTimes& r = t.records().back();
  const auto at = [&](Phase p) { return r.seconds[size_t(p)]; };
  BOOST_TEST(at(Phase::comm_exposed) == 0.014, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(at(Phase::h2d) == 0.005, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(at(Phase::fwd) >= 0.015);
  BOOST_TEST(at(Phase::other) >= 0.001);  // the 5 ms sleep less the wait outside fwd
  double parts = 0;
  for (Phase p : kStepParts) parts += at(p);
  BOOST_TEST(parts == at(Phase::step), boost::test_tools::tolerance(1e-9));
  BOOST_TEST(std::string(phase_name(Phase::other)) == "other");
}

// A device whose clock advances 1 s per mark (a GPU's events, as the timers see them).
class SteppingClock final : public DeviceClock {
 public:
  int mark() override {
    times.push_back(double(times.size()));
    return int(times.size()) - 1;
  }
  double seconds_between(int from, int to) override { return times[size_t(to)] - times[size_t(from)]; }
  void reset() override { times.clear(), ++resets; }
  std::vector<double> times;
  int resets = 0;
};

BOOST_AUTO_TEST_CASE(phase_timers_take_device_phases_from_the_device_clock) {
  PhaseTimers t;
  SteppingClock clock;
  t.set_device_clock(&clock);
  t.start(Phase::step);
  for (int micro_batch = 0; micro_batch < 2; ++micro_batch) {
    t.start(Phase::fwd);  // marks 0, 2 ...
    t.stop(Phase::fwd);   // ... 1, 3: one device second each
  }
  t.start(Phase::optim);
  t.start(Phase::optim);  // nested: one span
  t.stop(Phase::optim);
  t.stop(Phase::optim);
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  t.stop(Phase::step);
  t.end_step(3);
  const StepTimes& r = t.records().at(0);
  BOOST_TEST(r.seconds[int(Phase::fwd)] == 2.0);    // device seconds, not the host's microseconds
  BOOST_TEST(r.seconds[int(Phase::optim)] == 1.0);
  BOOST_TEST(r.seconds[int(Phase::bwd)] == 0.0);
  BOOST_TEST(r.seconds[int(Phase::step)] >= 0.004);  // a host phase
  BOOST_TEST(r.seconds[int(Phase::step)] < 1.0);
  BOOST_TEST(clock.resets == 1);  // the marks are reused from the next step on
  BOOST_TEST(clock.times.empty());
}

BOOST_AUTO_TEST_CASE(arena_aligns_and_bounds) {
  Arena arena(1 << 20);
  auto* a = arena.alloc<float>(3);
  auto* b = arena.alloc<double>(5);
  BOOST_TEST(reinterpret_cast<uintptr_t>(a) % 64 == 0u);
  BOOST_TEST(reinterpret_cast<uintptr_t>(b) % 64 == 0u);
  BOOST_TEST(reinterpret_cast<char*>(b) - reinterpret_cast<char*>(a) == 64);
  BOOST_CHECK_THROW(arena.alloc_bytes(2 << 20), Error);
  arena.reset();
  BOOST_TEST(arena.alloc<float>(1) == a);  // reuse, no new pages
  BOOST_TEST(arena.high_water() >= 64u + 40u);
  BOOST_TEST(peak_rss_bytes() > 0u);
}

BOOST_AUTO_TEST_CASE(atomic_writes_leave_no_partial_file) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / "embtrain_test_core_fs";
  fs::remove_all(dir);
  make_dirs((dir / "a/b").string());
  std::string path = (dir / "a/b/out.txt").string();
  write_file_atomic(path, "hello\n");
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  BOOST_TEST(line == "hello");
  BOOST_TEST(!path_exists(path + ".tmp"));
  try {
    write_file_atomic((dir / "missing/out.txt").string(), "x");
    BOOST_FAIL("expected an error");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()).find("missing/out.txt: cannot open for writing") != std::string::npos);
  }
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(bf16_rounds_to_nearest_even) {
  BOOST_TEST(to_float(to_bf16(1.0f)) == 1.0f);
  BOOST_TEST(to_float(to_bf16(1.0f + 1.0f / 256)) == 1.0f);          // halfway: to even (down)
  BOOST_TEST(to_float(to_bf16(1.0f + 3.0f / 256)) == 1.0f + 4.0f / 256);  // halfway: to even (up)
  BOOST_TEST(to_float(to_bf16(-3.140625f)) == -3.140625f);
  BOOST_TEST(std::isnan(to_float(to_bf16(std::nanf("")))));
}

BOOST_AUTO_TEST_CASE(errors_carry_message_and_exit_code) {
  try {
    EMB_CHECK(1 + 1 == 3, "data.h5:/steps/state: expected ", 16, " columns");
  } catch (const Error& e) {
    BOOST_TEST(std::string(e.what()) == "data.h5:/steps/state: expected 16 columns");
    BOOST_TEST(e.exit_code() == kExitFailure);
  }
  BOOST_TEST(Error("x", kExitInput).exit_code() == 2);
}

// What the system said reaches the error line: a path that cannot be opened is never reported
// as "no such file" when it exists behind a directory that cannot be entered (EACCES, which
// root does not meet: the message is checked through system_reason), a file taken for a
// directory (ENOTDIR) or a symbolic-link loop (ELOOP); a FIFO or a directory is refused
// without blocking on it.
BOOST_AUTO_TEST_CASE(unreadable_files_report_what_the_system_said) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "embtrain_test_core_readable";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string d = dir.string();
  std::ofstream(d + "/file") << "x";
  fs::create_symlink(d + "/loop_a", d + "/loop_b");
  fs::create_symlink(d + "/loop_b", d + "/loop_a");
  BOOST_REQUIRE(::mkfifo((d + "/fifo").c_str(), 0644) == 0);
  BOOST_TEST(test::error_of([&] { check_readable_file(d + "/file"); }) == "");
  BOOST_TEST(test::error_of([&] { check_readable_file(d + "/absent"); }) ==
             d + "/absent: cannot open: No such file or directory");
  BOOST_TEST(test::error_of([&] { check_readable_file(d + "/file/child", "checkpoint"); }) ==
             "checkpoint " + d + "/file/child: cannot open: Not a directory");
  BOOST_TEST(test::error_of([&] { check_readable_file(d + "/loop_a"); }) ==
             d + "/loop_a: cannot open: Too many levels of symbolic links");
  BOOST_TEST(test::error_of([&] { check_readable_file(d + "/fifo"); }) == d + "/fifo: not a regular file (a FIFO)");
  BOOST_TEST(test::error_of([&] { check_readable_file(d); }) == d + ": not a regular file (a directory)");
  BOOST_TEST(system_reason(EACCES) ==
             "Permission denied (check the permissions of the file and of every directory above it)");
  BOOST_TEST(system_reason(ENOENT) == "No such file or directory");
  fs::remove_all(dir);
}

// A path in a message is whole up to PATH_MAX and cut beyond it: a 10 MB train.ckpt_dir gives
// an error line of a few KB, not 20 MB.
BOOST_AUTO_TEST_CASE(paths_in_errors_are_cut_beyond_path_max) {
  const std::string longest(4096, 'p'), huge(10 << 20, 'x');
  BOOST_TEST(clipped_path(longest) == longest);
  BOOST_TEST(clipped_path(huge) == std::string(4000, 'x') + "... (10485760 bytes, truncated)");
  BOOST_TEST(clipped_path("a\nb") == "a\\x0ab");
  const std::string error = test::error_of([&] { make_dirs(huge); });
  BOOST_TEST(error == clipped_path(huge) + ": cannot create directory: File name too long");
  BOOST_TEST(test::error_of([&] { check_readable_file(huge); }).size() < 4100u);
}

// make_dirs says what it created and remove_empty_dirs takes back exactly that while empty.
BOOST_AUTO_TEST_CASE(remove_empty_dirs_undoes_make_dirs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "embtrain_test_core_undo";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string deep = (dir / "a/b/c").string();
  BOOST_TEST(make_dirs(deep) == (dir / "a").string());
  BOOST_TEST(make_dirs(deep) == "");
  remove_empty_dirs(deep, (dir / "a").string());
  BOOST_TEST(!fs::exists(dir / "a"));
  const std::string top = make_dirs(deep);
  std::ofstream((dir / "a/b/kept").string()) << "x";
  remove_empty_dirs(deep, top);
  BOOST_TEST(!fs::exists(deep));
  BOOST_TEST(fs::exists(dir / "a/b/kept"));
  fs::remove_all(dir);
}

BOOST_AUTO_TEST_CASE(names_in_messages_are_whole_input_is_cut) {
  // A SigLIP tensor of the released GR00T-N1.5 checkpoint: 90 bytes, shown whole.
  const std::string name = "backbone.eagle_model.vision_model.vision_model.encoder.layers.26.self_attn.out_proj.weight";
  BOOST_TEST(quoted_name(name) == "'" + name + "'");
  BOOST_TEST(quoted(name) == "'" + name.substr(0, 60) + "... (90 bytes, truncated)'");
  BOOST_TEST(quoted_name("a\nb") == "'a\\x0ab'");
  const std::string huge(1 << 20, 'x');  // a corrupt header's "name" never floods the log
  BOOST_TEST(quoted_name(huge) == "'" + std::string(1000, 'x') + "... (1048576 bytes, truncated)'");
}
