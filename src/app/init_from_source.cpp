#include "app/init_from_source.hpp"

#include "core/error.hpp"
#include "model/model.hpp"
#include "train/tuned_backbone.hpp"

namespace emb {

std::unique_ptr<InitFrom> open_init_from(const RunConfig& cfg) {
  if (cfg.train.init_from.empty()) return nullptr;
  const auto described = make_model(with_tuned_backbone(cfg.model), nullptr);  // the registry only, no parameters
  return std::make_unique<InitFrom>(cfg.train.init_from, upstream_map_of(cfg.model), described->params(),
                                    str("the model (", cfg.model.preset, ")"));
}

}  // namespace emb
