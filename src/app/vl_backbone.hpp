// data.vl_backbone: the GR00T-N1.5 checkpoint whose Eagle backbone must have made the vl
// features a gr00t run trains on. Its digest (encoders/eagle eagle_weights_digest) is what
// `embpack features` recorded on /features/vl; the loader refuses files whose features another
// backbone (or the stand-in encoder) made. When train.init_from lands, it is the default.
#pragma once
#include <mpi.h>

#include "config/run_config.hpp"

namespace emb {

// Fills cfg.data.vl_backbone_digest from cfg.data.vl_backbone (nothing when empty): rank 0 of
// `comm` reads the checkpoint (MPI_COMM_NULL: this process) and broadcasts the digest. A missing
// or unreadable checkpoint is one line naming the deck key (exit 2) on rank 0, an empty error on
// the others (main's agreement prints rank 0's).
void resolve_vl_backbone(RunConfig& cfg, MPI_Comm comm);

}  // namespace emb
