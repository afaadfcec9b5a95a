#include "encoders/dreamzero/encoder_folder.hpp"

#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "encoders/common/checkpoint_reader.hpp"
#include "weights/weight_source.hpp"

namespace emb::encoders {

namespace {

// The first of `stems` × (.pth, .safetensors) present in dir; "" when none.
std::string first_present(const std::string& dir, const std::vector<std::string>& names) {
  for (const std::string& name : names)
    if (std::filesystem::exists(dir + "/" + name)) return dir + "/" + name;
  return "";
}

std::string find_file(const std::string& dir, const std::string& given, const std::vector<std::string>& names,
                      const char* what) {
  if (!given.empty()) return given;
  const std::string found = first_present(dir, names);
  if (found.empty()) {
    std::string tried;
    for (const std::string& name : names) tried += (tried.empty() ? "" : ", ") + name;
    throw Error(str(dir, ": no ", what, " (looked for ", tried, ")"), kExitInput);
  }
  return found;
}

std::vector<std::string> weight_names(const std::string& stem) { return {stem + ".pth", stem + ".safetensors"}; }

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

DreamZeroEncoderFiles dreamzero_encoder_files(const std::string& dir, const DreamZeroEncoderFiles& given) {
  DreamZeroEncoderFiles f;
  f.vae = find_file(dir, given.vae, weight_names("Wan2.1_VAE"), "VAE weights");
  f.t5 = find_file(dir, given.t5, weight_names("models_t5_umt5-xxl-enc-bf16"), "umT5 weights");
  f.clip = find_file(dir, given.clip, weight_names("models_clip_open-clip-xlm-roberta-large-vit-huge-14"),
                     "CLIP weights");
  f.tokenizer = find_file(dir, given.tokenizer, {"google/umt5-xxl/spiece.model", "spiece.model"},
                          "umT5 tokenizer model");
  return f;
}

std::string dreamzero_encoders_digest(const DreamZeroEncoderFiles& files) {
  const std::string vae = tensors_digest(WeightSource(files.vae), [](const std::string& name) {
    return starts_with(name, "encoder.") || starts_with(name, "conv1.");
  });
  const std::string t5 = tensors_digest(WeightSource(files.t5), [](const std::string&) { return true; });
  const std::string clip =
      tensors_digest(WeightSource(files.clip), [](const std::string& name) { return starts_with(name, "visual."); });
  return str("vae ", vae, ", t5 ", t5, ", clip ", clip);
}

}  // namespace emb::encoders
