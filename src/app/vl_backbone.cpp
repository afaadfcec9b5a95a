#include "app/vl_backbone.hpp"

#include <cstring>

#include "core/error.hpp"
#include "encoders/eagle/eagle_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb {

void resolve_vl_backbone(RunConfig& cfg, MPI_Comm comm) {
  DataConfig& dc = cfg.data;
  if (dc.vl_backbone.empty()) return;
  int rank = 0;
  if (comm != MPI_COMM_NULL) MPI_Comm_rank(comm, &rank);
  std::string error;
  char digest[32] = {};
  if (rank == 0) {
    try {
      const std::string d = encoders::eagle_weights_digest(WeightSource(dc.vl_backbone));
      std::strncpy(digest, d.c_str(), sizeof digest - 1);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  int failed = error.empty() ? 0 : 1;
  if (comm != MPI_COMM_NULL) {
    MPI_Bcast(&failed, 1, MPI_INT, 0, comm);
    MPI_Bcast(digest, sizeof digest, MPI_CHAR, 0, comm);
  }
  if (failed)
    throw Error(rank == 0 ? str(cfg.origins.where("data.vl_backbone"), ": data.vl_backbone: ", error) : "", kExitInput);
  dc.vl_backbone_digest = digest;
}

}  // namespace emb
