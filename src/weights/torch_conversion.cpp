#include "weights/torch_conversion.hpp"

#include <filesystem>

#include "core/error.hpp"

namespace emb {

std::string safetensors_conversion_command(const std::string& path, const std::string& select) {
  const std::string target = std::filesystem::path(path).replace_extension(".safetensors").string();
  // contiguous().clone(): safetensors stores dense tensors and refuses shared storage.
  // weights_only=False: torch >= 2.6 otherwise refuses the pickled objects being converted.
  return str("python3 -c \"import torch, safetensors.torch as st; st.save_file({k: v.contiguous().clone() for k, v "
             "in torch.load('", path, "', map_location='cpu', weights_only=False)", select, ".items()}, '", target,
             "')\"");
}

}  // namespace emb
