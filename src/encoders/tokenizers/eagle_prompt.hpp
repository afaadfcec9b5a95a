// The prompt GR00T-N1.5 gives its Eagle 2.5 backbone (gr00t/model/transforms.py builds a user
// turn of V images then the instruction; the processor renders chat_template.json with
// add_generation_prompt and no add_vision_id, then expands each "<image-N>" into
// "<image N><img>" + tokens_per_view x "<IMG_CONTEXT>" + "</img>"):
//   <|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n
//   <image 1><img><IMG_CONTEXT>...</img><image 2><img>...</img>{instruction}<|im_end|>\n
//   <|im_start|>assistant\n
// The instruction goes in raw (GR00TTransform.formalize_language defaults to False).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "encoders/tokenizers/qwen2_tokenizer.hpp"

namespace emb::tokenizers {

struct EaglePrompt {
  std::vector<int32_t> ids;              // [L] input ids of one sample (upstream pads batches on the left)
  std::vector<int64_t> image_positions;  // [V * tokens_per_view] where ids holds <IMG_CONTEXT>, view by view;
                                         // the backbone puts the vision tokens there in this order
};

// The prompt as text, before tokenisation.
std::string gr00t_prompt_text(int num_views, const std::string& instruction, int tokens_per_view = 256);

// The prompt's ids for V views (in the order of the modality config's video keys) and an
// instruction. Throws emb::Error when the tokenizer folder's chat_template.json is not the
// Eagle 2.5 template this renders, or when the instruction holds text the processor would
// turn into image slots ("<image-N>", "<video-N>", "<IMG_CONTEXT>").
EaglePrompt gr00t_prompt(const Qwen2Tokenizer& tokenizer, int num_views, const std::string& instruction,
                         int tokens_per_view = 256);

}  // namespace emb::tokenizers
