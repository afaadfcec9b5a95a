#include "weights/tensor_info.hpp"

#include "core/error.hpp"

namespace emb {

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += str(i ? ", " : "", shape[i]);
  return out + "]";
}

}  // namespace emb
