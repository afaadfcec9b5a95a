// data.vl_backbone: the GR00T-N1.5 checkpoint whose Eagle backbone must have made the vl
// features a gr00t run trains on. Its digest (encoders/eagle eagle_weights_digest) is what
// `embpack features` recorded on /features/vl; the loader refuses files whose features another
// backbone (or the stand-in encoder) made. When train.init_from lands, it is the default.
#pragma once
#include <mpi.h>

#include "data/data_config.hpp"

namespace emb {

class Deck;

// Fills dc.vl_backbone_digest from dc.vl_backbone (nothing when empty): rank 0 of `comm` reads the
// checkpoint (MPI_COMM_NULL: this process) and broadcasts the digest. A missing or unreadable
// checkpoint is one line naming the deck key (exit 2), on every rank.
void resolve_vl_backbone(const Deck& deck, DataConfig& dc, MPI_Comm comm);

}  // namespace emb
