// The frozen encoders that must have made the features a run trains on, by the digest of their
// weights, which `embpack features` records in the packed files; the loader refuses files whose
// features other encoders (or the stand-in encoder) made.
//   data.vl_backbone (gr00t): the GR00T-N1.5 checkpoint whose Eagle backbone made /features/vl
//     (encoders/eagle eagle_weights_digest). When train.init_from lands, it is the default.
//   data.dreamzero_encoders (wan, DreamZero layout): the folder of DreamZero's VAE, umT5 and CLIP
//     that made /latents/<view>, /features/txt and /features/clip (encoders/dreamzero
//     dreamzero_encoders_digest).
#pragma once
#include <mpi.h>

#include "config/run_config.hpp"

namespace emb {

// Fills cfg.data.vl_backbone_digest and cfg.data.dreamzero_encoders_digest from their keys
// (nothing for an empty key): rank 0 of `comm` reads the weights (MPI_COMM_NULL: this process)
// and broadcasts the digest. A missing or unreadable checkpoint is one line naming the deck key
// (exit 2) on rank 0, an empty error on the others (main's agreement prints rank 0's).
void resolve_feature_encoders(RunConfig& cfg, MPI_Comm comm);

}  // namespace emb
