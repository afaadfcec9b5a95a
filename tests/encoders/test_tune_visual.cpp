// train.tune_visual = on (issue 33): the step trains the Eagle backbone's SigLIP vision tower and
// mlp1 with the head, the gradient reaching them through the frozen Qwen3 layers. On the
// fixtures' file and the tiny upstream-format backbone (augmentation off), 10 steps of 4 samples:
//  - step 1 gives the loss of the frozen online run (the same parameters, the trained path's ops);
//    later steps differ from it: the vision tower and mlp1 were updated;
//  - 1 and 2 ranks (ZeRO-3 over the vision tensors too) give the same losses within 1e-5;
//  - a run resumed from the step-5 checkpoint gives the uninterrupted run's losses: bit for bit on
//    1 rank, within 1e-5 on 2 ranks (the checkpoint resharded);
//  - tune_visual without model.backbone = online is refused in one line, exit 2.
#define BOOST_TEST_MODULE test_tune_visual
#include <boost/test/unit_test.hpp>

#include <cmath>

#include "eagle_fixtures.hpp"

using namespace emb;
using namespace emb::test;

namespace {

constexpr int64_t kH = 48, kW = 64;
constexpr int kSteps = 10;

double relative(double a, double b) { return std::fabs(a - b) / std::max(1e-12, std::fabs(b)); }

std::string tuned_flags() { return online_flags(false) + " --set train.tune_visual=on"; }

}  // namespace

BOOST_AUTO_TEST_CASE(tune_visual_trains_the_vision_tower_on_any_rank_count_and_resumes_exactly) {
  const std::string dir = make_temp_dir("tune_visual");
  const std::string data = dir + "/in.h5";
  write_packed(dataset(kH, kW), data, "test");
  const std::string every5 = " --set train.ckpt_every=5";
  auto train = [&](const std::string& name, const std::string& extra, int ranks, int steps) {
    const std::string mpi = ranks > 1 ? str("mpirun -np ", ranks, " --oversubscribe ") : "";
    const ToolResult r = run_tool(mpi + train_command(dir, name, data, extra, steps), dir);
    BOOST_TEST_REQUIRE(r.code == 0, name << ": " << r.out << r.err);
    return losses(dir + "/" + name);
  };
  const std::vector<double> frozen = train("frozen", online_flags(false), 1, kSteps);
  const std::vector<double> one = train("one", tuned_flags() + every5, 1, kSteps);
  const std::vector<double> two = train("two", tuned_flags(), 2, kSteps);
  BOOST_TEST_REQUIRE(frozen.size() == size_t(kSteps));
  BOOST_TEST_REQUIRE(one.size() == size_t(kSteps));
  BOOST_TEST_REQUIRE(two.size() == size_t(kSteps));
  BOOST_TEST(relative(one[0], frozen[0]) <= 1e-5, "step 1: tuned " << one[0] << ", frozen " << frozen[0]);
  double moved = 0;
  for (int s = 1; s < kSteps; ++s) moved = std::max(moved, relative(one[size_t(s)], frozen[size_t(s)]));
  BOOST_TEST(moved >= 1e-4, "the tuned run's losses stay within " << moved << " of the frozen run's");
  for (int s = 0; s < kSteps; ++s)
    BOOST_TEST(relative(two[size_t(s)], one[size_t(s)]) <= 1e-5,
               "step " << s + 1 << ": 2 ranks " << two[size_t(s)] << ", 1 rank " << one[size_t(s)]);
  const std::string from5 = str(" --set train.resume=", dir, "/ckpt_one/step_00000005.h5");
  const std::vector<double> resumed = train("resumed", tuned_flags() + from5, 1, kSteps);
  const std::vector<double> resharded = train("resharded", tuned_flags() + from5, 2, kSteps);
  BOOST_TEST_REQUIRE(resumed.size() == size_t(kSteps - 5));
  BOOST_TEST_REQUIRE(resharded.size() == size_t(kSteps - 5));
  for (int s = 5; s < kSteps; ++s) {
    BOOST_TEST(resumed[size_t(s - 5)] == one[size_t(s)], "step " << s + 1);
    BOOST_TEST(relative(resharded[size_t(s - 5)], one[size_t(s)]) <= 1e-5, "step " << s + 1);
  }
}

BOOST_AUTO_TEST_CASE(tune_visual_needs_online_features) {
  const std::string dir = make_temp_dir("tune_visual_refused");
  const ToolResult r = run_tool(train_command(dir, "refused", dir + "/none.h5", "--set train.tune_visual=on"), dir);
  BOOST_TEST(r.code == 2);
  BOOST_TEST(r.err.find("train.tune_visual = on needs model.backbone = online") != std::string::npos, r.err);
}
