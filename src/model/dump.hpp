// The parity dump of one training step (MODEL.md "Dump"): the hyperparameters, the parameters,
// the step's gradients (summed over its micro-batches and ranks), its loss and loss
// denominators, and every micro-batch of every rank with the draws the model made for it and,
// where dropout is on, its keep-masks: enough for an independent implementation to recompute
// the step's loss and every gradient. Written in parts, by several processes in turn when the
// step ran on several ranks: begin_dump creates "<path>.tmp" (header, parameters, gradients),
// append_dump adds micro-batches, finish_dump renames it to `path`, so no half-written dump is
// ever left under `path` (abandon_dump removes the temporary after a failure).
#pragma once
#include <string>
#include <vector>

#include "batch/packed_batch.hpp"
#include "model/flow_matching.hpp"
#include "model/model.hpp"
#include "model/token_layout.hpp"

namespace emb {

struct DumpStep {
  double loss = 0;
  std::vector<double> denominators;  // the step's global loss denominators (loss_counts summed)
  uint64_t seed = 0;                 // run.seed: the draws' and the dropout masks' key
  int64_t step = 0;
  int ranks = 1;
  int micro_batches = 0;  // over all ranks
};

// One micro-batch as the model ran it. With model.backbone = online, batch.context holds the rows
// the step's backbone computed, and `frames` the backbone's input frames uint8 [Σ views,
// frame_size, frame_size, 3] (after GR00T's transforms, sample after sample).
struct DumpMicroBatch {
  int rank = 0;
  PackedBatch batch;
  FlowDraws draws;
  TokenLayout layout;
  std::vector<uint8_t> frames;
  int64_t frame_size = 0;
};

// The record of `model`'s last forward on `batch` (its draws and token layout).
DumpMicroBatch dumped_micro_batch(const Model& model, const PackedBatch& batch, int rank);

// params, grads: host memory, the model's flat buffers.
void begin_dump(const std::string& path, const Model& model, const float* params, const float* grads,
                const DumpStep& step);
// Appends `mbs` as micro-batches first, first + 1, ... of the step.
void append_dump(const std::string& path, const Model& model, const DumpStep& step, int first,
                 const std::vector<DumpMicroBatch>& mbs);
void finish_dump(const std::string& path);
void abandon_dump(const std::string& path);

}  // namespace emb
