// The trainer's small pieces: LR schedule, progress line, shard layout, run directories.
#define BOOST_TEST_MODULE train_units
#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
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
          for (int p = 0; p < layout.n_pieces(); ++p) {
            const Piece& k = layout.piece(p);
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

// A registry whose units mix frozen and trained tensors of awkward sizes (a frozen tensor
// between trained ones, a frozen tail, a unit frozen whole), in buckets of one unit and merged: ZeRO cuts each
// bucket into pieces of trained or frozen tensors and shards each piece 1/N, so every rank owns
// its share of the trained elements (the AdamW moments): the ranks' counts differ by at most
// one element per trained piece (shard_range's remainders), and every element is owned once.
BOOST_AUTO_TEST_CASE(trained_elements_are_balanced_where_buckets_mix_frozen_tensors) {
  ParamRegistry reg;
  std::vector<bool> frozen;
  auto add = [&](const std::string& name, int64_t n, bool is_frozen) {
    reg.add(name, {n}, ParamInit::normal, true);
    frozen.push_back(is_frozen);
  };
  reg.begin_unit("mixed");
  add("a", 1001, false), add("b", 50003, true), add("c", 7, false), add("d", 1999, false);
  reg.begin_unit("frozen_tail");
  add("f", 13, false), add("g", 9000, true);
  reg.begin_unit("frozen");
  add("e", 3001, true);
  int64_t trained = 0;
  for (size_t i = 0; i < frozen.size(); ++i) trained += frozen[i] ? 0 : reg[int(i)].numel;
  for (int64_t bucket_bytes : {int64_t(0), int64_t(1) << 30})
    for (int size : {2, 3, 4, 8}) {
      BOOST_TEST_CONTEXT("bucket bytes " << bucket_bytes << ", " << size << " ranks") {
        std::vector<int64_t> per_rank;
        std::vector<int> owners(size_t(reg.total()), 0);
        int trained_pieces = 0;
        for (int rank = 0; rank < size; ++rank) {
          const ShardLayout layout(reg, ShardMode::full, rank, size, bucket_bytes, frozen);
          per_rank.push_back(layout.trainable_owned_total());
          trained_pieces = 0;
          for (int p = 0; p < layout.n_pieces(); ++p) {
            const Piece& k = layout.piece(p);
            trained_pieces += !k.frozen;
            for (int64_t i = 0; i < k.owned_count; ++i) owners[size_t(k.offset + k.begin + i)] += 1;
          }
          for (int i = 0; i < reg.size(); ++i)  // a piece holds tensors of one kind
            BOOST_TEST(layout.piece_of(reg[i]).frozen == frozen[size_t(i)], reg[i].name);
        }
        BOOST_TEST(trained_pieces == (bucket_bytes == 0 ? 3 : 2));  // a | c d | f, or a | c d f
        BOOST_TEST(std::count(owners.begin(), owners.end(), 1) == reg.total());
        BOOST_TEST(std::accumulate(per_rank.begin(), per_rank.end(), int64_t(0)) == trained);
        const auto [fewest, most] = std::minmax_element(per_rank.begin(), per_rank.end());
        BOOST_TEST(*most - *fewest <= trained_pieces);
      }
    }
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
