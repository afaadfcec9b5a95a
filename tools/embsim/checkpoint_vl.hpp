// Which encoder made the vl features a gr00t checkpoint was trained on, so that its evaluation
// computes its observations' vl rows with that encoder and no other (vl_encoder.hpp). The
// checkpoint records it (vl_features_record.hpp, from train/trained_vl_features.hpp): the
// stand-in encoder, or an Eagle backbone's folder and weights digest; the backbone is read from
// that folder (or the one --set data.vl_backbone / model.backbone_dir names now) only when it
// holds the recorded digest, otherwise one line refuses. A checkpoint without the record (older)
// is decided as before, with one warning line, from its deck and the training files still there
// (/features/vl's backbone_digest and checkpoint attributes, written by `embpack features
// --backbone`, tools/embpack/backbone_features.hpp):
//   train.tune_visual = on    the Eagle backbone of model.backbone_dir, vision tower and mlp1 the
//                             checkpoint's own
//   model.backbone = online   the Eagle backbone of model.backbone_dir
//   data.vl_backbone = DIR    the Eagle backbone of DIR
//   files of embpack features the Eagle backbone folder they record, if it still holds that
//                             backbone (its weights' digest)
//   otherwise                 the stand-in encoder (embsim collect, embpack video/libero/lerobot)
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "config/run_config.hpp"
#include "data/vl_features_source.hpp"
#include "kernels/ops.hpp"
#include "observation.hpp"

namespace emb {

struct CheckpointVl {
  enum class Kind { stand_in, eagle, tuned_eagle };
  Kind kind = Kind::stand_in;
  std::string backbone_dir;  // the Eagle kinds: the GR00T checkpoint folder of the backbone
  std::string evidence;      // what decided it (a deck key or a data file), for messages
  // The Eagle kinds: the camera views in the order the backbone saw them in training (offline:
  // as embpack features recorded them; online: the loader's, /video's sorted names); empty when
  // the training files are gone (then the rendered order).
  std::vector<std::string> views;
};

// `record`: the checkpoint's (read_vl_features). Throws emb::Error in one line naming the
// checkpoint, what was recorded and the key to --set when the recorded (or, without a record,
// the training files') Eagle backbone's folder is gone or now holds another backbone, or when
// the training files hold Eagle features and the stand-in encoder's.
CheckpointVl checkpoint_vl(const std::string& checkpoint, const RunConfig& run, const VlFeaturesRecord& record);

// "stand-in encoder", or "Eagle backbone DIR" (with the tuned vision tower) and the evidence.
std::string describe(const CheckpointVl& source);

// mc with model.backbone_dir the folder of source's Eagle backbone (online_backbone.hpp reads it).
ModelConfig with_backbone_of(const CheckpointVl& source, const ModelConfig& mc);

// The encoder `source` names: the stand-in sized by o (--d-vl, --vl-grid; ops may be null), or
// the Eagle backbone of source.backbone_dir on ops (mc: the checkpoint's model, whose d_ctx it
// must match), with tuned_params (the checkpoint's trained_context tensors in ops' memory) for
// tuned_eagle.
std::unique_ptr<VlEncoder> make_vl_encoder(const CheckpointVl& source, const ModelConfig& mc,
                                           const ObservationOptions& o, Ops* ops, const float* tuned_params);

}  // namespace emb
