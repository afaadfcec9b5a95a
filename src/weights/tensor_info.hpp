// What a checkpoint says about one tensor, whatever its format: enough for a caller to plan
// reads (a ZeRO-3 rank picks its element range from numel) without touching the data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights/weight_dtype.hpp"

namespace emb {

struct TensorInfo {
  std::string name;
  WeightDType dtype = WeightDType::F32;  // as stored; reads convert F32/BF16/F16 to float32
  std::vector<int64_t> shape;            // row-major logical shape; {} is a scalar
  std::string file;                      // the file holding the data (a shard of a folder)

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
};

// "[3, 4]" for messages.
std::string shape_string(const std::vector<int64_t>& shape);

}  // namespace emb
