// The data path of one rank (DATA.md): packed files → sampler → shuffle buffers read by all
// ranks together through MPI-IO → sample assembly → packer → prefetch queue → the step loop.
//   Loader loader(dp_comm, data_config, model_config);
//   for (...) { double wait; auto mbs = loader.next_step(&wait); ... }
//   checkpoint: loader.state() (SamplerState), later loader.restore(state) on any rank count.
// Every rank returns the same number of micro-batches per step (the largest count over the
// data-parallel ranks; the extra ones are empty, n_samples == 0) so per-micro-batch
// collectives of the trainer stay matched. The communicator is duplicated and split by node
// (MPI_COMM_TYPE_SHARED: the shuffle buffers' feature rows live in node-shared memory); MPI must be
// initialised with MPI_THREAD_MULTIPLE when prefetch > 0 (the prefetch thread does MPI-IO).
// One Loader per process at a time, and no other HDF5 use while its reader thread runs
// (HDF5 is not thread-safe): call quiesce() before writing a checkpoint.
// data.normalize = upstream: every sample's state and actions are normalised (data/
// state_action_normalization.hpp) with the statistics of its embodiment: `recorded` (a resumed
// checkpoint's) or else the files' (data/normalization_statistics.hpp); normalization() gives them
// to the checkpoint. With data.relative_action_keys the block actions of those sub-keys are first
// made relative to their block's anchor state (data/relative_actions.hpp).
#pragma once
#include <mpi.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "config/data_config.hpp"
#include "data/node_layout.hpp"
#include "data/normalization_statistics.hpp"
#include "data/state_action_normalization.hpp"
#include "data/packed_dataset.hpp"
#include "data/packer.hpp"
#include "data/prefetcher.hpp"
#include "data/sampler.hpp"
#include "data/shuffle_buffer.hpp"

namespace emb {

struct LoaderStats {
  int64_t steps = 0, samples = 0;
  int64_t bytes_read = 0;    // by this rank's reads (its share of the file traffic)
  int64_t buffer_bytes = 0;  // file bytes of the shuffle buffers loaded (all ranks' reads together)
  double read_seconds = 0;   // in shuffle-buffer loads: reads and the feature exchange
  double produce_seconds = 0;  // in making the steps (the reads included): the prefetch thread's work
  int64_t real_tokens = 0, computed_tokens = 0;  // packing efficiency = real / computed
};

class Loader {
 public:
  Loader(MPI_Comm dp_comm, const DataConfig& data, const TokenConfig& model,
         const NormalizationStatistics* recorded = nullptr);
  ~Loader();
  Loader(const Loader&) = delete;
  Loader& operator=(const Loader&) = delete;

  // This rank's micro-batches of the next optimizer step; *waited = seconds blocked.
  std::vector<PackedBatch> next_step(double* waited = nullptr);
  SamplerState state() const { return consumed_; }
  void restore(const SamplerState& s);  // collective over the data-parallel ranks
  void quiesce();                        // see Prefetcher::quiesce
  LoaderStats stats() const;
  int64_t samples_per_epoch() const { return sampler_->size(); }
  const PackedDataset& dataset() const { return *data_; }
  // The statistics the samples are normalised with; nullptr with data.normalize = none.
  const NormalizationStatistics* normalization() const { return dc_.normalize ? &normalization_ : nullptr; }

 private:
  LoadedStep produce();
  using BufferKey = std::pair<int64_t, int64_t>;  // (epoch, buffer index)
  const ShuffleBuffer& buffer(const BufferKey& key, const std::vector<BufferKey>& keep);
  int owner(int64_t epoch, int64_t pos) const;  // the rank that assembles a position (< 0: none)
  void normalize(Sample& s) const;

  MPI_Comm comm_ = MPI_COMM_NULL, node_comm_ = MPI_COMM_NULL;
  NodeLayout nodes_;
  int rank_ = 0, ranks_ = 1;
  DataConfig dc_;
  TokenConfig mc_;
  PackerConfig pack_;
  std::unique_ptr<PackedDataset> data_;
  NormalizationStatistics normalization_;  // data.normalize = upstream
  NormalizationBoundsMap bounds_;          // of normalization_, built once (not per sample)
  std::vector<Chunk> chunks_;
  std::vector<std::string> file_names_;
  std::unique_ptr<Sampler> sampler_;
  // Owned by the producer (prefetch thread).
  SamplerState next_;
  int64_t origin_ = 0;  // absolute position (epoch·size + cursor) where the steps started
  struct BufferSlot {
    BufferKey key{-1, -1};
    std::unique_ptr<ShuffleBuffer> buffer;
  };
  std::vector<BufferSlot> buffers_;  // storage reused across buffers
  std::vector<Sample> samples_;
  std::atomic<int64_t> bytes_read_{0}, buffer_bytes_{0}, read_ns_{0}, produce_ns_{0};
  // Owned by the consumer.
  SamplerState consumed_;
  LoaderStats stats_;
  std::unique_ptr<Prefetcher> prefetcher_;
};

}  // namespace emb
