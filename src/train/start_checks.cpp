#include "train/start_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/data_config.hpp"
#include "data/packed_dataset.hpp"
#include "data/packed_verify.hpp"
#include "model/plan.hpp"
#include "model/presets.hpp"
#include "train/train_config.hpp"
#include "train/vl_backbone.hpp"

namespace emb {
namespace {

[[noreturn]] void deck_error(const Deck& deck, const std::string& key, const std::string& message) {
  throw Error(str(where_set(deck, key), ": ", key, ": ", message), kExitInput);
}

// Creates the directory and a probe file in it: a read-only or foreign directory is found
// now, not at the first checkpoint.
void check_writable_dir(const Deck& deck, const std::string& dir) {
  try {
    make_dirs(dir);
  } catch (const Error& e) {
    deck_error(deck, "train.ckpt_dir", str("checkpoint directory ", dir, " cannot be created (", e.what(), ")"));
  }
  const std::string probe = str(dir, "/.write-test-", ::getpid());
  std::FILE* f = std::fopen(probe.c_str(), "w");
  if (!f) deck_error(deck, "train.ckpt_dir", str("checkpoint directory ", dir, " is not writable: ", std::strerror(errno)));
  std::fclose(f);
  std::remove(probe.c_str());
}

void check_data(const Deck& deck) {
  DataConfig dc = data_config_from_deck(deck);
  resolve_vl_backbone(deck, dc, MPI_COMM_NULL);
  if (dc.paths.empty()) deck_error(deck, "data.paths", "no files given: name the packed HDF5 files to train on (embpack writes them)");
  std::vector<std::string> files;
  try {
    files = expand_paths(dc.paths);
  } catch (const Error& e) {
    throw Error(str(where_set(deck, "data.paths"), ": ", e.what()), kExitInput);
  }
  // What embpack verify checks short of the bulk rows (read here once, not by every rank's
  // loader), then the files against the model (opening them: packed_dataset.hpp).
  for (const std::string& file : files) verify_small_values(H5File::open(file));
  const PackedDataset data(MPI_COMM_NULL, dc.mpio_transfer, files, model_config_from_deck(deck), dc.view,
                           VlFeatureChoice{dc.vl_backbone_digest, dc.vl_augment});
  const int64_t largest = data.query_tokens() + data.max_context_tokens();
  if (largest > dc.tokens_per_mb)
    deck_error(deck, "data.tokens_per_mb",
               str(dc.tokens_per_mb, " tokens is less than the largest sample of data.paths needs (", largest, ": ",
                   data.query_tokens(), " query + ", data.max_context_tokens(), " context); raise it to at least ",
                   largest));
  if (dc.global_batch > data.samples())
    deck_error(deck, "train.global_batch",
               str(dc.global_batch, " samples per step is more than data.paths holds (", data.samples(),
                   "); lower it or add data"));
}

double gib(double bytes) { return std::round(bytes / double(1ull << 30) * 10) / 10; }

// The plan's memory per rank (state under the deck's sharding and one micro-batch's
// activations) against this node's physical memory: a model that cannot fit is refused here
// with what to change, instead of a std::bad_alloc (or the kernel's OOM killer) mid set-up.
void check_memory(const Deck& deck, int ranks, int ranks_on_node) {
  if (deck.get_string("run.device") != "cpu") return;  // device memory is the plan's business
  const PlanReport plan = make_plan(model_config_from_deck(deck), ranks, deck.get_int("data.tokens_per_mb"));
  const ShardMode shard = shard_mode_from_name(deck.get_string("train.shard"));
  const double state = plan.state_bytes[size_t(shard)], per_rank = state + plan.activation_bytes;
  const double node = double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGESIZE));
  if (node <= 0 || per_rank * ranks_on_node <= node) return;
  const std::string where = where_first_set(deck, {"model.d_model", "model.d_ff", "model.n_layers", "model.d_ctx",
                                                   "model.n_layers_vl", "data.tokens_per_mb", "model.preset"});
  throw Error(str(where, ": out of memory: the model needs ", gib(per_rank), " GiB per rank (", plan.n_params,
                  " parameters: ", gib(state), " GiB of parameters, gradients and AdamW moments with train.shard = ",
                  deck.get_string("train.shard"), ", ", gib(plan.activation_bytes),
                  " GiB of activations per micro-batch), ", ranks_on_node, " rank(s) on this node have ", gib(node),
                  " GiB; make the model smaller, lower data.tokens_per_mb, or spread it over more nodes with train.shard "
                  "= full (embtrain DECK --plan)"),
              kExitInput);
}

}  // namespace

void check_before_training(const Deck& deck, int ranks, int ranks_on_node) {
  check_writable_dir(deck, train_config_from_deck(deck).ckpt_dir);
  check_memory(deck, ranks, ranks_on_node);
  check_data(deck);
}

}  // namespace emb
