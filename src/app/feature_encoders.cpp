#include "app/feature_encoders.hpp"

#include <functional>

#include "comm/agreement.hpp"
#include "comm/host_collectives.hpp"
#include "core/error.hpp"
#include "encoders/dreamzero/encoder_folder.hpp"
#include "encoders/eagle/eagle_weights.hpp"
#include "weights/weight_source.hpp"

namespace emb {

namespace {

// The digest of `path` by `digest_of`, read on rank 0 and broadcast; "" when path is.
std::string resolve_digest(const RunConfig& cfg, MPI_Comm comm, const char* key, const std::string& path,
                           const std::function<std::string(const std::string&)>& digest_of) {
  if (path.empty()) return "";
  const bool alone = comm == MPI_COMM_NULL;
  const int rank = alone ? 0 : rank_in(comm);
  std::string digest, error;
  if (rank == 0) {
    try {
      digest = digest_of(path);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  if (!alone) broadcast_string(comm, digest), broadcast_string(comm, error);
  if (!error.empty()) throw Error(rank == 0 ? str(cfg.origins.where(key), ": ", key, ": ", error) : "", kExitInput);
  return digest;
}

}  // namespace

void resolve_feature_encoders(RunConfig& cfg, MPI_Comm comm) {
  DataConfig& dc = cfg.data;
  dc.vl_backbone_digest = resolve_digest(cfg, comm, "data.vl_backbone", dc.vl_backbone, [](const std::string& path) {
    return encoders::eagle_weights_digest(WeightSource(path));
  });
  dc.dreamzero_encoders_digest =
      resolve_digest(cfg, comm, "data.dreamzero_encoders", dc.dreamzero_encoders, [](const std::string& path) {
        return encoders::dreamzero_encoders_digest(encoders::dreamzero_encoder_files(path));
      });
}

}  // namespace emb
