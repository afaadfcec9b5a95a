// run.profile_ops (train/op_profile.hpp) over the CPU backend: each op timed in the part of the
// step it runs in, only the steps after start_after's, its kind, the CSV's rows and the phases'
// time outside ops.
#define BOOST_TEST_MODULE op_profile
#include <boost/test/unit_test.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cpu/cpu_ops.hpp"
#include "train/op_profile.hpp"

using namespace emb;

BOOST_AUTO_TEST_CASE(ops_are_kinds_as_the_planner_costs_them) {
  for (const char* op : {"linear_forward", "linear_backward", "linear_emb_forward", "linear_emb_backward",
                         "packed_linear_forward", "fp8_linear_forward", "fp8_linear_backward", "conv3d_forward",
                         "packed_conv3d_forward"})
    BOOST_TEST(std::string(op_kind(op)) == "gemm", op);
  for (const char* op : {"attention_forward", "attention_backward", "encoder_attention_forward"})
    BOOST_TEST(std::string(op_kind(op)) == "attention", op);
  for (const char* op : {"dropout_forward", "dropout_backward"}) BOOST_TEST(std::string(op_kind(op)) == "dropout", op);
  for (const char* op : {"pack_linear", "zero", "add", "layernorm_backward", "activation_forward", "adamw_step"})
    BOOST_TEST(std::string(op_kind(op)) == "elementwise", op);
}

BOOST_AUTO_TEST_CASE(ops_are_timed_in_the_part_of_the_step_they_run_in) {
  CpuOps cpu;
  PhaseTimers timers;
  OpProfile profile(cpu, timers);
  const int64_t N = 64, C = 64;
  std::vector<float> x(size_t(N * C), 0.5f), w(size_t(C * C), 0.01f), y(x.size()), dx(x.size()), dw(w.size());
  const View vx = view(x.data(), N, C), vw = view(w.data(), C, C), vy = view(y.data(), N, C);
  const auto step = [&](int64_t s) {
    timers.start(Phase::step);
    {
      ScopedPhase fwd(timers, Phase::fwd);
      for (int i = 0; i < 3; ++i) profile.linear_forward(vx, vw, View{}, Activation::none, View{}, vy);
    }
    {
      ScopedPhase bwd(timers, Phase::bwd);
      profile.linear_backward(vx, vw, Activation::none, View{}, vy, view(dx.data(), N, C), view(dw.data(), C, C),
                              View{});
      profile.zero(vy);
    }
    profile.add(vx, vx, vy);  // between the parts: `other`
    timers.stop(Phase::step);
    timers.end_step(s);
  };
  step(1);
  profile.start_after(1);  // the first step forgotten
  for (int64_t s = 2; s <= 5; ++s) step(s);

  BOOST_TEST(profile.total(Phase::fwd, "linear_forward").calls == 12);
  BOOST_TEST(profile.total(Phase::fwd, "linear_forward").seconds > 0);
  BOOST_TEST(profile.total(Phase::bwd, "linear_backward").calls == 4);
  BOOST_TEST(profile.total(Phase::bwd, "zero").calls == 4);
  BOOST_TEST(profile.total(Phase::other, "add").calls == 4);
  BOOST_TEST(profile.total(Phase::fwd, "zero").calls == 0);
  // The bytes of the views each call was given: x, W and y of a linear (the absent bias and
  // pre-activation none), y of a zero, a, b and y of an add (a and b the same view, read twice).
  const double tensor = 4.0 * N * C;
  BOOST_TEST(profile.total(Phase::fwd, "linear_forward").bytes == 12 * 3 * tensor);
  BOOST_TEST(profile.total(Phase::bwd, "linear_backward").bytes == 4 * 5 * tensor);
  BOOST_TEST(profile.total(Phase::bwd, "zero").bytes == 4 * tensor);
  BOOST_TEST(profile.total(Phase::other, "add").bytes == 4 * 3 * tensor);

  // Per step over steps 2-5: each op's calls and ms, the phase's ms and what no op took of it.
  std::istringstream csv(profile.csv(timers.records()));
  std::string line;
  std::getline(csv, line);
  BOOST_TEST(line == "phase,kind,op,calls_per_step,ms_per_step,mb_per_step,gb_per_s");
  double fwd_phase = 0, fwd_outside = -1, fwd_ops = 0;
  while (std::getline(csv, line)) {
    std::vector<std::string> cell;
    std::istringstream row(line);
    for (std::string c; std::getline(row, c, ',');) cell.push_back(c);
    BOOST_TEST_REQUIRE(cell.size() == 7u, line);
    if (cell[0] != "fwd") continue;
    if (cell[1] == "phase") fwd_phase = std::stod(cell[4]);
    else if (cell[1] == "outside ops") fwd_outside = std::stod(cell[4]);
    else {
      BOOST_TEST(cell[1] == "gemm");
      BOOST_TEST(cell[2] == "linear_forward");
      BOOST_TEST(std::stod(cell[3]) == 3.0);
      fwd_ops = std::stod(cell[4]);
      BOOST_TEST(std::stod(cell[5]) == 3 * 3 * tensor * 1e-6, boost::test_tools::tolerance(1e-5));
      BOOST_TEST(std::stod(cell[6]) == 3 * 3 * tensor * 1e-6 / fwd_ops, boost::test_tools::tolerance(1e-4));
    }
  }
  double mean_fwd = 0;
  for (const StepTimes& r : timers.records())
    if (r.step >= 2) mean_fwd += r.seconds[size_t(Phase::fwd)] * 1e3 / 4;
  BOOST_TEST(fwd_phase == mean_fwd, boost::test_tools::tolerance(1e-4));
  BOOST_TEST(fwd_outside >= 0);
  BOOST_TEST(fwd_ops + fwd_outside == fwd_phase, boost::test_tools::tolerance(1e-4));
  const std::string summary = profile.summary(timers.records());
  BOOST_TEST(summary.find("over steps 2-5: fwd ") != std::string::npos, summary);
  BOOST_TEST(summary.find("bwd ") != std::string::npos, summary);

  profile.start_after(5);  // nothing after it: no profile
  BOOST_TEST(profile.csv(timers.records()).empty());
}
