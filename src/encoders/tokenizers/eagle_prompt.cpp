#include "encoders/tokenizers/eagle_prompt.hpp"

#include <cctype>

#include "core/error.hpp"

namespace emb::tokenizers {

namespace {

constexpr const char* kImageToken = "<IMG_CONTEXT>";

// FNV-1a of the chat template this file renders by hand (Isaac-GR00T 4af2b622892f,
// eagle2_hg_model/chat_template.json): a folder with another template fails instead of getting
// a prompt its model was not trained on. The test renders the template with Jinja to check.
constexpr uint64_t kEagleChatTemplateHash = 0x144a8627209008a5ull;

uint64_t fnv1a(const std::string& text) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  return h;
}

// The processor's placeholder pattern <(image|video)-(\d+)> anywhere in the text.
bool has_media_placeholder(const std::string& text) {
  for (const char* kind : {"<image-", "<video-"}) {
    for (size_t at = text.find(kind); at != std::string::npos; at = text.find(kind, at + 1)) {
      size_t k = at + std::char_traits<char>::length(kind);
      const size_t digits = k;
      while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
      if (k > digits && k < text.size() && text[k] == '>') return true;
    }
  }
  return false;
}

}  // namespace

std::string gr00t_prompt_text(int num_views, const std::string& instruction, int tokens_per_view) {
  EMB_CHECK(num_views >= 1, "GR00T prompt: num_views must be at least 1, got ", num_views);
  EMB_CHECK(tokens_per_view >= 1, "GR00T prompt: tokens_per_view must be at least 1, got ", tokens_per_view);
  EMB_CHECK(!has_media_placeholder(instruction) && instruction.find(kImageToken) == std::string::npos,
            "GR00T prompt: instruction ", emb::quoted(instruction),
            " holds an image placeholder (<image-N>, <video-N> or <IMG_CONTEXT>) that Eagle's processor would "
            "turn into image slots");
  std::string text = "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\n";
  std::string slots;
  for (int t = 0; t < tokens_per_view; ++t) slots += kImageToken;
  for (int v = 1; v <= num_views; ++v) text += str("<image ", v, "><img>", slots, "</img>");
  text += instruction;
  text += "<|im_end|>\n<|im_start|>assistant\n";
  return text;
}

EaglePrompt gr00t_prompt(const Qwen2Tokenizer& tokenizer, int num_views, const std::string& instruction,
                         int tokens_per_view) {
  EMB_CHECK(!tokenizer.chat_template().empty(), tokenizer.folder(),
            "/chat_template.json: missing; GR00T's Eagle processor renders the prompt with it");
  const uint64_t hash = fnv1a(tokenizer.chat_template());
  EMB_CHECK(hash == kEagleChatTemplateHash, tokenizer.folder(), "/chat_template.json: template (FNV-1a ",
            std::hex, hash, ") is not the Eagle 2.5 one of GR00T-N1.5 that embtrain renders");
  EaglePrompt prompt;
  prompt.ids = tokenizer.encode(gr00t_prompt_text(num_views, instruction, tokens_per_view));
  const int32_t image_id = tokenizer.token_id(kImageToken);
  for (size_t i = 0; i < prompt.ids.size(); ++i) {
    if (prompt.ids[i] == image_id) prompt.image_positions.push_back(int64_t(i));
  }
  EMB_ASSERT(prompt.image_positions.size() == size_t(num_views) * size_t(tokens_per_view));
  return prompt;
}

}  // namespace emb::tokenizers
