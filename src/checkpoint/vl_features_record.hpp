// Which encoder made the vl features a gr00t run trained on, as its checkpoints record it (root
// attributes vl_features, vl_backbone_dir, vl_backbone_digest), so that an evaluation (embsim's
// checkpoint_vl.hpp) computes its observations with that encoder even when the training files
// are gone, and refuses when it cannot instead of falling back to another encoder.
#pragma once
#include <mpi.h>

#include "checkpoint/checkpoint_file.hpp"
#include "data/vl_features_source.hpp"

namespace emb {

// Writes the record's attributes (nothing when it records no encoder); collective like f's writes.
void write_vl_features(CheckpointFile& f, const VlFeaturesRecord& record);
// The record of an open checkpoint (encoder "" when it has none).
VlFeaturesRecord read_vl_features(const CheckpointFile& f);
// Rank 0's record to every rank of comm.
void broadcast_vl_features(MPI_Comm comm, VlFeaturesRecord& record);

}  // namespace emb
