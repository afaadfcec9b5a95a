#include "train/start_checks.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "config/deck.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"
#include "data/data_config.hpp"
#include "data/packed_dataset.hpp"
#include "model/presets.hpp"
#include "train/train_config.hpp"

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
  const DataConfig dc = data_config_from_deck(deck);
  if (dc.paths.empty()) deck_error(deck, "data.paths", "no files given: name the packed HDF5 files to train on (embpack writes them)");
  std::vector<std::string> files;
  try {
    files = expand_paths(dc.paths);
  } catch (const Error& e) {
    throw Error(str(where_set(deck, "data.paths"), ": ", e.what()), kExitInput);
  }
  // Opening checks every file against the format and the model (packed_dataset.hpp).
  const PackedDataset data(MPI_COMM_NULL, dc.mpio_transfer, files, model_config_from_deck(deck), dc.view);
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

}  // namespace

void check_before_training(const Deck& deck) {
  check_writable_dir(deck, train_config_from_deck(deck).ckpt_dir);
  check_data(deck);
}

}  // namespace emb
