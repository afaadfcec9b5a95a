// The trainer's small pieces: LR schedule, progress line, shard layout, run directories.
#define BOOST_TEST_MODULE train_units
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <filesystem>

#include "core/error.hpp"
#include "kernels/cpu/cpu_ops.hpp"
#include "model/model.hpp"
#include "model/presets.hpp"
#include "app/fail_run.hpp"
#include "train/lr_schedule.hpp"
#include "app/progress.hpp"
#include "app/run_dir.hpp"
#include "parallel/shard_layout.hpp"

namespace {
emb::CpuOps cpu_ops;  // the backend the models compute on
}  // namespace

using namespace emb;
namespace tt = boost::test_tools;

// A std::bad_alloc from any allocation becomes one line saying what ran out and what to change.
BOOST_AUTO_TEST_CASE(failure_message_explains_out_of_memory) {
  const std::string oom = failure_message(std::bad_alloc());
  BOOST_TEST(oom.rfind("out of memory (std::bad_alloc) allocating the model's parameters", 0) == 0, oom);
  BOOST_TEST(oom.find("lower data.tokens_per_mb") != std::string::npos, oom);
  BOOST_TEST(oom.find('\n') == std::string::npos);
  BOOST_TEST(failure_message(Error("data.h5:/steps/state: x")) == "data.h5:/steps/state: x");
}

BOOST_AUTO_TEST_CASE(lr_warmup_then_cosine_to_min) {
  LrSchedule s{LrShape::cosine, 1e-3, 1e-4, 10, 110};
  BOOST_TEST(s.at(1) == 1e-4, tt::tolerance(1e-12));
  BOOST_TEST(s.at(10) == 1e-3, tt::tolerance(1e-12));
  BOOST_TEST(s.at(60) == 5.5e-4, tt::tolerance(1e-12));  // half way: the mean of lr and min_lr
  BOOST_TEST(s.at(110) == 1e-4, tt::tolerance(1e-12));
  BOOST_TEST(s.at(500) == 1e-4, tt::tolerance(1e-12));
  LrSchedule lin{LrShape::linear, 1e-3, 0.0, 0, 100};
  BOOST_TEST(lin.at(25) == 7.5e-4, tt::tolerance(1e-12));
  LrSchedule flat{LrShape::constant, 2e-4, 0.0, 4, 100};
  BOOST_TEST(flat.at(2) == 1e-4, tt::tolerance(1e-12));
  BOOST_TEST(flat.at(90) == 2e-4, tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(progress_line_has_rates_and_eta) {
  ProgressWindow w{800, 40000, 2.0, 10};
  std::string line = format_progress(40, 200, 0.81234, 2.98e-4, w);
  BOOST_TEST(line == "step  40/200 | loss 0.8123 | lr 2.98e-04 | 400.0 samples/s | 20.0k tok/s | 0.200 s/step | ETA 00:00:32");
  BOOST_TEST(format_duration(3 * 86400 + 3661) == "3d 01:01:01");
  BOOST_TEST(format_duration(NAN) == "--:--:--");
}

BOOST_AUTO_TEST_CASE(shard_layout_covers_every_parameter_once) {
  auto model = make_model(preset_config("tiny_wan"), &cpu_ops);
  const ParamRegistry& reg = model->params();
  for (int64_t bucket_bytes : {int64_t(0), int64_t(64) << 10, int64_t(1) << 30})
    for (ShardMode mode : {ShardMode::none, ShardMode::grads, ShardMode::full})
      for (int size : {1, 3, 4}) {
        std::vector<int> owners(size_t(reg.total()), 0);
        int64_t decayed = 0, owned_sum = 0;
        for (int rank = 0; rank < size; ++rank) {
          ShardLayout layout(reg, mode, rank, size, bucket_bytes);
          owned_sum += layout.owned_total();
          for (int b = 0; b < layout.n_buckets(); ++b) {
            const Bucket& k = layout.bucket(b);
            for (int64_t i = 0; i < k.owned_count; ++i) owners[size_t(k.offset + k.begin + i)] += 1;
          }
          int64_t seg_total = 0;
          for (const DecaySegment& s : layout.decay_segments()) {
            seg_total += s.count;
            if (s.decay_mult > 0) decayed += s.count;
          }
          BOOST_TEST(seg_total == layout.owned_total());
        }
        const int expect = mode == ShardMode::none ? size : 1;
        BOOST_TEST(owned_sum == reg.total() * expect);
        BOOST_TEST(std::count(owners.begin(), owners.end(), expect) == reg.total());
        int64_t want_decayed = 0;
        for (const ParamInfo& t : reg.all()) want_decayed += t.decay ? t.numel : 0;
        BOOST_TEST(decayed == want_decayed * expect);
      }
}

BOOST_AUTO_TEST_CASE(buckets_merge_consecutive_units_up_to_the_size) {
  auto model = make_model(preset_config("tiny_gr00t"), &cpu_ops);
  const ParamRegistry& reg = model->params();
  ShardLayout per_unit(reg, ShardMode::full, 0, 2, 0);
  BOOST_TEST(per_unit.n_buckets() == reg.n_units());
  ShardLayout one(reg, ShardMode::full, 0, 2, int64_t(1) << 30);
  BOOST_TEST(one.n_buckets() == 1);
  BOOST_TEST(one.bucket(0).count == reg.total());
  const int64_t limit = 3 * reg.max_unit_count() / 2 * int64_t(sizeof(float));
  ShardLayout mid(reg, ShardMode::full, 0, 2, limit);
  int64_t covered = 0;
  for (int b = 0; b < mid.n_buckets(); ++b) {
    const Bucket& k = mid.bucket(b);
    BOOST_TEST(k.offset == covered);  // contiguous, in unit order
    covered += k.count;
    BOOST_TEST((k.count * int64_t(sizeof(float)) <= limit || k.first_unit == k.last_unit));
    for (int u = k.first_unit; u <= k.last_unit; ++u) BOOST_TEST(mid.bucket_of_unit(u) == b);
  }
  BOOST_TEST(covered == reg.total());
  BOOST_TEST(mid.n_buckets() < reg.n_units());
}

BOOST_AUTO_TEST_CASE(run_directories_are_never_reused) {
  namespace fs = std::filesystem;
  fs::path base = fs::temp_directory_path() / "embtrain_test_runs" / "tiny-20260101-000000";
  fs::remove_all(base.parent_path());
  BOOST_TEST(create_fresh_dir(base.string()) == base.string());
  BOOST_TEST(create_fresh_dir(base.string()) == base.string() + "-2");
  BOOST_TEST(create_fresh_dir(base.string()) == base.string() + "-3");
  fs::remove_all(base.parent_path());
}
