#include "checkpoint/vl_features_record.hpp"

#include "comm/agreement.hpp"

namespace emb {

void write_vl_features(CheckpointFile& f, const VlFeaturesRecord& record) {
  if (record.encoder.empty()) return;
  f.set_attr("vl_features", record.encoder);
  f.set_attr("vl_backbone_dir", record.backbone_dir);
  f.set_attr("vl_backbone_digest", record.digest);
}

VlFeaturesRecord read_vl_features(const CheckpointFile& f) {
  if (!f.has_attr("vl_features")) return {};
  return {f.attr_string("vl_features"), f.attr_string("vl_backbone_dir"), f.attr_string("vl_backbone_digest")};
}

void broadcast_vl_features(MPI_Comm comm, VlFeaturesRecord& record) {
  broadcast_string(comm, record.encoder);
  broadcast_string(comm, record.backbone_dir);
  broadcast_string(comm, record.digest);
}

}  // namespace emb
