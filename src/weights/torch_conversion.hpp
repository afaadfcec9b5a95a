// The one command a user runs to turn a .pth we refuse (a pickled module, a nested dict, a
// legacy non-zip file) into safetensors, which every reader here accepts.
#pragma once
#include <string>

namespace emb {

// `select` is applied to what torch.load returns to reach the dict of tensors:
// "" (it is one already), ".state_dict()" (a module), "['model']" (a nested dict).
std::string safetensors_conversion_command(const std::string& path, const std::string& select);

}  // namespace emb
