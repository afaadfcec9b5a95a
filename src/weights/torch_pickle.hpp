// A pickle interpreter for exactly what torch.save writes into data.pkl for a dict (or
// OrderedDict, as state_dict() returns) of tensors: protocol 2, _rebuild_tensor_v2 with
// persistent storage ids, nn.Parameter wrappers, the state dict's _metadata. Anything else
// (a pickled module, a nested dict, a number among the tensors, an unknown class) is refused
// by name, since running arbitrary pickles is neither safe nor needed for weights.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "weights/weight_dtype.hpp"

namespace emb {

// One tensor of the dict: a strided view of storage `storage_key` (entry data/<key>).
struct PickledTensor {
  std::string name;
  WeightDType dtype = WeightDType::F32;
  std::string storage_key;
  int64_t storage_numel = 0;   // elements of the whole storage, as pickled
  int64_t storage_offset = 0;  // in elements
  std::vector<int64_t> shape, strides;
};

// `path` names the .pth file in messages. Tensors in the dict's order.
std::vector<PickledTensor> unpickle_tensor_dict(const unsigned char* data, uint64_t size, const std::string& path);

}  // namespace emb
