#include "encoders/tokenizers/hf_tokenizer_folder.hpp"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace emb::tokenizers {

namespace {

using nlohmann::json;

// The split pattern Qwen2Tokenizer uses and Qwen2's tokenizer.json carries; qwen2_pretokenizer
// implements exactly this one, so a tokenizer.json with another pattern is refused.
constexpr const char* kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EMB_CHECK(in, path, ": cannot read");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json read_json(const std::string& path) {
  try {
    return json::parse(read_text(path));
  } catch (const json::parse_error& e) {
    // nlohmann's message carries "line L, column C"; drop its "[json.exception...]" prefix.
    std::string what = e.what();
    const size_t bracket = what.find("] ");
    throw Error(str(path, ": invalid JSON: ", bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

// A token given as "text" or as {"content": "text", ...}, as special_tokens_map.json and
// tokenizer_config.json write them; "" for null.
std::string token_content(const json& value, const std::string& where) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  EMB_CHECK(value.is_object() && value.contains("content") && value["content"].is_string(), where,
            ": expected a token string or an object with \"content\"");
  return value["content"].get<std::string>();
}

bool flag(const json& entry, const char* name, const std::string& where) {
  if (!entry.contains(name) || entry[name].is_null()) return false;
  EMB_CHECK(entry[name].is_boolean(), where, ": \"", name, "\" must be true or false");
  return entry[name].get<bool>();
}

AddedToken added_token_from(const json& entry, int32_t id, const std::string& where) {
  EMB_CHECK(entry.is_object() && entry.contains("content") && entry["content"].is_string(), where,
            ": expected an object with \"content\"");
  AddedToken t;
  t.content = entry["content"].get<std::string>();
  t.id = id;
  t.special = flag(entry, "special", where);
  t.normalized = flag(entry, "normalized", where);
  t.lstrip = flag(entry, "lstrip", where);
  t.rstrip = flag(entry, "rstrip", where);
  EMB_CHECK(!t.content.empty(), where, ": empty added token");
  EMB_CHECK(!flag(entry, "single_word", where), where, ": added token ", emb::quoted(t.content),
            " has single_word = true, which this tokenizer does not implement");
  return t;
}

int32_t id_from(const json& value, const std::string& where) {
  EMB_CHECK(value.is_number_integer() && value.get<int64_t>() >= 0 && value.get<int64_t>() <= INT32_MAX, where,
            ": id must be a non-negative integer, got ", value.dump());
  return int32_t(value.get<int64_t>());
}

// Adds `t` unless the same token is already there; the same text under two ids is an error.
void add_token(std::vector<AddedToken>& tokens, const AddedToken& t, const std::string& where) {
  for (const AddedToken& known : tokens) {
    if (known.content == t.content) {
      EMB_CHECK(known.id == t.id, where, ": added token ", emb::quoted(t.content), " has id ", t.id,
                " here but ", known.id, " in another file of the folder");
      return;
    }
    EMB_CHECK(known.id != t.id, where, ": id ", t.id, " is given to both ", emb::quoted(known.content), " and ",
              emb::quoted(t.content));
  }
  tokens.push_back(t);
}

void read_vocab_json(Qwen2TokenizerFiles& files, const std::string& path) {
  const json vocab = read_json(path);
  EMB_CHECK(vocab.is_object(), path, ": expected an object of token -> id");
  for (const auto& [token, id] : vocab.items()) files.vocab.emplace(token, id_from(id, path + ": token " + emb::quoted(token)));
  files.vocab_where = path;
}

void read_merges_txt(Qwen2TokenizerFiles& files, const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    // As Qwen2Tokenizer reads it: stripped lines, the first skipped when it is the
    // "#version:" header, blank lines skipped. Other lines starting with '#' ("# #") are merges.
    const size_t first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos) continue;
    line = line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (number == 1 && line.rfind("#version:", 0) == 0) continue;
    const size_t space = line.find(' ');
    const bool two_parts = space != std::string::npos && space > 0 && line.find(' ', space + 1) == std::string::npos &&
                           space + 1 < line.size();
    const std::string where = str(path, ":", number);
    EMB_CHECK(two_parts, where, ": expected two tokens separated by one space, got ", emb::quoted(line));
    files.merges.push_back({line.substr(0, space), line.substr(space + 1), where});
  }
}

// tokenizer.json: the model, and a check that its pipeline is Qwen2's (NFC, the split
// pattern, byte level, plain BPE), the only one the encoder implements.
void read_tokenizer_json(Qwen2TokenizerFiles& files, const std::string& path) {
  const json tj = read_json(path);
  EMB_CHECK(tj.is_object() && tj.contains("model") && tj["model"].is_object(), path, ": no \"model\" object");
  const json& model = tj["model"];
  EMB_CHECK(model.value("type", "") == "BPE", path, ": model.type is ", model.value("type", json()).dump(),
            ", expected \"BPE\"");
  const auto is_unset = [&](const char* key) {
    return !model.contains(key) || model[key].is_null() || model[key] == false || model[key] == "";
  };
  for (const char* key : {"ignore_merges", "continuing_subword_prefix", "end_of_word_suffix", "byte_fallback", "dropout"}) {
    EMB_CHECK(is_unset(key), path, ": model.", key, " = ", model[key].dump(),
              " is not Qwen2's byte-level BPE (this tokenizer implements only that)");
  }
  const std::string pre = tj.value("pre_tokenizer", json()).dump();
  EMB_CHECK(pre.find(json(kQwen2SplitPattern).dump()) != std::string::npos && pre.find("\"ByteLevel\"") != std::string::npos,
            path, ": pre_tokenizer is not Qwen2's split pattern + ByteLevel (this tokenizer implements only that)");
  const json normalizer = tj.value("normalizer", json());
  EMB_CHECK(normalizer.is_object() && normalizer.value("type", "") == "NFC", path, ": normalizer is ",
            normalizer.dump(), ", expected {\"type\": \"NFC\"} as in Qwen2");
  EMB_CHECK(model.contains("vocab") && model["vocab"].is_object(), path, ": model.vocab must be an object");
  for (const auto& [token, id] : model["vocab"].items()) {
    files.vocab.emplace(token, id_from(id, path + ": model.vocab " + emb::quoted(token)));
  }
  files.vocab_where = path;
  EMB_CHECK(model.contains("merges") && model["merges"].is_array(), path, ": model.merges must be an array");
  const json& merges = model["merges"];
  for (size_t i = 0; i < merges.size(); ++i) {
    // Merges are "a b" strings, or [a, b] pairs since tokenizers 0.20.
    const std::string where = str(path, ": model.merges[", i, "]");
    const json& m = merges[i];
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      files.merges.push_back({m[0].get<std::string>(), m[1].get<std::string>(), where});
      continue;
    }
    EMB_CHECK(m.is_string(), where, ": expected \"a b\" or [\"a\", \"b\"], got ", m.dump());
    const std::string s = m.get<std::string>();
    const size_t space = s.find(' ');
    EMB_CHECK(space != std::string::npos && space > 0 && space + 1 < s.size() && s.find(' ', space + 1) == std::string::npos,
              where, ": expected two tokens separated by one space, got ", emb::quoted(s));
    files.merges.push_back({s.substr(0, space), s.substr(space + 1), where});
  }
  for (const json& entry : tj.value("added_tokens", json::array())) {
    const std::string where = path + ": added_tokens";
    EMB_CHECK(entry.is_object() && entry.contains("id"), where, ": entry without \"id\"");
    add_token(files.added_tokens, added_token_from(entry, id_from(entry["id"], where), where), where);
  }
}

}  // namespace

Qwen2TokenizerFiles read_qwen2_tokenizer_folder(const std::string& folder) {
  Qwen2TokenizerFiles files;
  files.folder = folder;
  const auto file = [&](const char* name) { return folder + "/" + name; };
  const bool has_vocab = path_exists(file("vocab.json")), has_tokenizer_json = path_exists(file("tokenizer.json"));
  EMB_CHECK(has_vocab || has_tokenizer_json, folder,
            ": no tokenizer here (expected vocab.json + merges.txt, or tokenizer.json)");
  if (has_vocab) {
    // vocab.json + merges.txt is what Qwen2Tokenizer (and the fast tokenizer converted from
    // it when, as in GR00T's Eagle folder, there is no tokenizer.json) reads.
    EMB_CHECK(path_exists(file("merges.txt")), file("merges.txt"), ": missing (vocab.json needs it)");
    read_vocab_json(files, file("vocab.json"));
    read_merges_txt(files, file("merges.txt"));
  } else {
    read_tokenizer_json(files, file("tokenizer.json"));
  }

  std::vector<std::string> special_names;  // tokens the special-token maps name
  if (path_exists(file("tokenizer_config.json"))) {
    const std::string path = file("tokenizer_config.json");
    const json config = read_json(path);
    EMB_CHECK(config.is_object(), path, ": expected an object");
    const json decoder = config.value("added_tokens_decoder", json::object());
    for (const auto& [id, entry] : decoder.items()) {
      const std::string where = path + ": added_tokens_decoder \"" + id + "\"";
      char* end = nullptr;
      const long value = std::strtol(id.c_str(), &end, 10);
      EMB_CHECK(!id.empty() && *end == '\0' && value >= 0 && value <= INT32_MAX, where, ": key must be a token id");
      add_token(files.added_tokens, added_token_from(entry, int32_t(value), where), where);
    }
    files.eos_token = token_content(config.value("eos_token", json()), path + ": eos_token");
    files.pad_token = token_content(config.value("pad_token", json()), path + ": pad_token");
  }
  if (path_exists(file("special_tokens_map.json"))) {
    const std::string path = file("special_tokens_map.json");
    const json map = read_json(path);
    EMB_CHECK(map.is_object(), path, ": expected an object");
    for (const auto& [key, value] : map.items()) {
      if (value.is_array()) {
        for (const json& v : value) special_names.push_back(token_content(v, path + ": " + key));
      } else {
        special_names.push_back(token_content(value, path + ": " + key));
      }
    }
    if (files.eos_token.empty()) files.eos_token = token_content(map.value("eos_token", json()), path + ": eos_token");
    if (files.pad_token.empty()) files.pad_token = token_content(map.value("pad_token", json()), path + ": pad_token");
  }
  if (path_exists(file("added_tokens.json"))) {
    // Tokens known only from added_tokens.json get the flags transformers gives them:
    // special (and not normalized) when a special-token map names them.
    const std::string path = file("added_tokens.json");
    const json added = read_json(path);
    EMB_CHECK(added.is_object(), path, ": expected an object of token -> id");
    for (const auto& [content, id] : added.items()) {
      AddedToken t;
      t.content = content;
      t.id = id_from(id, path + ": token " + emb::quoted(content));
      t.special = std::find(special_names.begin(), special_names.end(), content) != special_names.end();
      t.normalized = !t.special;
      EMB_CHECK(!content.empty(), path, ": empty added token");
      add_token(files.added_tokens, t, path);
    }
  }
  for (AddedToken& t : files.added_tokens) {
    if (std::find(special_names.begin(), special_names.end(), t.content) != special_names.end()) t.special = true;
  }
  if (path_exists(file("chat_template.json"))) {
    const std::string path = file("chat_template.json");
    const json tmpl = read_json(path);
    EMB_CHECK(tmpl.is_object() && tmpl.contains("chat_template") && tmpl["chat_template"].is_string(), path,
              ": expected {\"chat_template\": \"...\"}");
    files.chat_template = tmpl["chat_template"].get<std::string>();
  }
  return files;
}

}  // namespace emb::tokenizers
