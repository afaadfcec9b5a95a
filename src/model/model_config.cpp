#include "model/model_config.hpp"

namespace emb {

const char* family_name(Family f) { return f == Family::gr00t ? "gr00t" : "wan"; }

}  // namespace emb
