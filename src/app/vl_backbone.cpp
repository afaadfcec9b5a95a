#include "app/vl_backbone.hpp"

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "encoders/eagle/eagle_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb {

void resolve_vl_backbone(RunConfig& cfg, MPI_Comm comm) {
  DataConfig& dc = cfg.data;
  if (dc.vl_backbone.empty()) return;
  const bool alone = comm == MPI_COMM_NULL;
  const int rank = alone ? 0 : rank_in(comm);
  // Rank 0 reads the checkpoint's backbone tensors once; every rank gets the digest or the error.
  std::string digest, error;
  if (rank == 0) {
    try {
      digest = encoders::eagle_weights_digest(WeightSource(dc.vl_backbone));
    } catch (const Error& e) {
      error = e.what();
    }
  }
  if (!alone) broadcast_string(comm, digest), broadcast_string(comm, error);
  if (!error.empty())
    throw Error(rank == 0 ? str(cfg.origins.where("data.vl_backbone"), ": data.vl_backbone: ", error) : "", kExitInput);
  dc.vl_backbone_digest = digest;
}

}  // namespace emb
