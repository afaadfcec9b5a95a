// One step's parity dump (MODEL.md "Dump"): hyperparameters, parameters, gradients, the packed
// batch and the flow-matching draws, enough for an independent implementation to recompute
// the loss and every gradient. Written to "<path>.tmp" and renamed, so no half-written dump
// is ever left under `path`.
#pragma once
#include <string>

#include "batch/packed_batch.hpp"
#include "model/model.hpp"

namespace emb {

// `model` must have just run forward_backward on `batch` (its draws and layout are written).
void write_dump(const std::string& path, const Model& model, const float* params, const float* grads,
                const PackedBatch& batch, double loss);

}  // namespace emb
