// Where one tensor's elements lie inside a mapped file. Both formats reduce to this: a
// safetensors tensor is a row-major block at an offset; a torch.save tensor is a strided view
// of a storage (a transpose, a row of a matrix, two tensors over one storage).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weights/tensor_info.hpp"

namespace emb {

struct StoredTensor {
  TensorInfo info;
  uint64_t byte_offset = 0;      // of logical element 0 in the file
  std::vector<int64_t> strides;  // in elements, one per dimension of info.shape
};

// Everything a format parser finds in one file; tensors in file order.
struct TensorTable {
  std::vector<StoredTensor> tensors;
  std::map<std::string, std::string> metadata;  // safetensors "__metadata__"; empty for .pth
};

// Row-major strides of `shape`.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);

}  // namespace emb
