// Qwen2 byte-level BPE and GR00T's Eagle prompt (issue 33) on the real Eagle 2.5 tokenizer
// files: ids equal a Python reference of the published algorithm on a corpus (fixture task
// strings, LIBERO-style sentences, Unicode, digits, white space, contractions, special tokens
// in text, empty, a text of thousands of characters) and on rendered prompts; a few ids are
// checked by hand against vocab.json; tokenizer.json folders, added-token flags and bad input.
#define BOOST_TEST_MODULE test_qwen2_tokenizer
#include <boost/test/unit_test.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "encoders/tokenizers/eagle_prompt.hpp"
#include "encoders/tokenizers/qwen2_tokenizer.hpp"
#include "encoders/tokenizers/unicode_text.hpp"
#include "error_of.hpp"
#include "python_reference.hpp"

using emb::test::error_of;
using emb::test::make_temp_dir;
using emb::test::read_file;
using emb::test::write_file;
using emb::tokenizers::Qwen2Tokenizer;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

const std::string kFixtures = std::string(PROJECT_SOURCE_DIR) + "/../shared/fixtures";
const std::string kEagle = kFixtures + "/eagle2_5_tokenizer";

const Qwen2Tokenizer& eagle() {
  static const Qwen2Tokenizer tokenizer(kEagle);
  return tokenizer;
}

std::vector<std::string> task_strings(const std::string& tasks_jsonl) {
  std::vector<std::string> tasks;
  std::istringstream in(read_file(tasks_jsonl));
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) tasks.push_back(json::parse(line).at("task").get<std::string>());
  }
  BOOST_REQUIRE(!tasks.empty());
  return tasks;
}

std::vector<std::string> corpus() {
  std::vector<std::string> texts = task_strings(kFixtures + "/gr00t_demo_pick_n_place/meta/tasks.jsonl");
  for (const std::string& t : task_strings(kFixtures + "/lerobot/g1_v21/meta/tasks.jsonl")) texts.push_back(t);
  const std::vector<std::string> more = {
      // LIBERO-style instructions
      "put both the alphabet soup and the tomato sauce in the basket",
      "open the top drawer and put the bowl inside",
      "turn on the stove and put the moka pot on it",
      "pick up the black bowl between the plate and the ramekin and place it on the plate",
      "Put the cream cheese in the bowl.",
      // Unicode: accents in NFC and NFD, CJK, emoji (with ZWJ and skin tone), Arabic, Greek
      "Caf\u00e9 cr\u00e8me br\u00fbl\u00e9e, na\u00efve \u00c5ngstr\u00f6m",
      "Cafe\u0301 cre\u0300me bru\u0302le\u0301e, nai\u0308ve A\u030angstro\u0308m",
      "\u628a\u7ea2\u8272\u7684\u676f\u5b50\u653e\u5728\u684c\u5b50\u4e0a\u3002\u673a\u5668\u4eba\u6293\u53d6\u82f9\u679c",
      "\u30ed\u30dc\u30c3\u30c8\u304c\u30b3\u30c3\u30d7\u3092\u6301\u3061\u4e0a\u3052\u308b \ud55c\uad6d\uc5b4 \ubb38\uc7a5",
      "pick \U0001F34E then \U0001F468\u200D\U0001F469\u200D\U0001F467 \U0001F44D\U0001F3FD done \u2764\ufe0f",
      "\u0636\u0639 \u0627\u0644\u0643\u0648\u0628 \u0639\u0644\u0649 \u0627\u0644\u0637\u0627\u0648\u0644\u0629 123",
      "\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3 \u03c0\u03b9\u03ac\u03c3\u03b5 \u03c4\u03bf \u03c0\u03bf\u03c4\u03ae\u03c1\u03b9",
      // the Unicode categories at the edges of the pattern: Lm, Mn, No, Nl, White_Space
      "\u02b0x \u00b2\u00b3 \u2166 \u0663\u0664 x\u0301y \u00a0a\u3000b\u2003c \u0085d \u2028e \u001cf \u000bg",
      "long s: it'\u017f and IT'S",
      // digits: each is its own piece
      "move 3 cm then 12345 mm, rotate 90.5 degrees at t=0.0001s; 1,000,000",
      // white-space runs and line breaks
      "  leading and trailing  ",
      "tabs\tand\t\ttabs\n\nnew   lines\r\n\r\nend\n",
      "   \n   x",
      " \t \n",
      "a  b   c    d",
      "\n\n\n",
      // contractions, upper case and mixed
      "I'M SURE IT'S FINE, WE'LL SEE; YOU'VE DONE IT, THEY'RE HERE, HE'D GO, DON'T",
      "it's we're I've she'll they'd I'm 'sa 'S 'Ll",
      // punctuation and code
      "(pick) [place] {rotate} <grip>!? ... --- ___ @#$%^&*() \"quoted\" 'single'",
      "def f(x):\n    return x ** 2  # square\n",
      // special tokens inside text, some adjacent, some partial
      "<|im_start|>user\nhello<|im_end|>\n<|im_start|>assistant\n",
      "<IMG_CONTEXT><IMG_CONTEXT>text<img></img><|endoftext|>",
      "<tool_call>{\"a\": 1}</tool_call><think>hmm</think>",
      "<|im_start <IMG_CONTEXT <img >img> <|im_end|x",
      "<image 1><img>",
      // NFC composes across what would be an added token's end in NFD
      "<img>\u0338 and =\u0338 and <\u0338",
      "",
      " ",
      "x",
  };
  texts.insert(texts.end(), more.begin(), more.end());
  // Longer than any sample: every text above, many times, then a CJK run without spaces (one
  // pre-tokenised piece of hundreds of characters) and a digit run.
  std::string long_text;
  for (int r = 0; long_text.size() < 12000; ++r) {
    for (const std::string& t : texts) long_text += t + (r % 2 ? "\n" : " ");
  }
  for (int r = 0; r < 40; ++r) long_text += "\u673a\u5668\u4eba\u6293\u53d6\u7ea2\u8272\u7684\u82f9\u679c";
  for (int r = 0; r < 300; ++r) long_text += char('0' + r % 10);
  texts.push_back(long_text);
  return texts;
}

}  // namespace

BOOST_AUTO_TEST_CASE(ids_checked_by_hand_against_vocab_json) {
  // vocab.json: "Pick" 36953, "Ġup" 705, "Ġthe" 279, "Ġyellow" 13753, "Ġbottle" 16486, "Ġon" 389,
  // "Ġtable" 1965, "." 13, "<" 27, "image" 1805, "Ġ" 220, "1" 16, "2" 17, "3" 18, ">" 29,
  // "pick" 29245, "Ġpick" 3735, "Ċ" 198, "ĊĊ" 271; added tokens 151644.. from tokenizer_config.json.
  const std::vector<int32_t> bottle = {36953, 705, 279, 13753, 16486, 389, 279, 1965, 13};
  BOOST_TEST(eagle().encode("Pick up the yellow bottle on the table.") == bottle, boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("<image 1>") == (std::vector<int32_t>{27, 1805, 220, 16, 29}), boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("123") == (std::vector<int32_t>{16, 17, 18}), boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("pick pick") == (std::vector<int32_t>{29245, 3735}), boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("\n\n") == (std::vector<int32_t>{271}), boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("<|im_start|>\n<IMG_CONTEXT></img>") ==
                 (std::vector<int32_t>{151644, 198, 151669, 151671}),
             boost::test_tools::per_element());
  BOOST_TEST(eagle().encode("").empty());
  BOOST_TEST(eagle().token_id("<IMG_CONTEXT>") == 151669);
  BOOST_TEST(eagle().eos_id() == 151645);
  BOOST_TEST(eagle().pad_id() == 151643);
}

BOOST_AUTO_TEST_CASE(corpus_and_prompts_equal_the_python_reference) {
  const std::vector<std::string> texts = corpus();
  const std::vector<std::tuple<int, std::string, int>> prompts = {
      {1, "pick the pear from the counter and place it in the plate", 256},
      {2, "Pick up the yellow bottle on the table.", 256},
      {3, "put both the alphabet soup and the tomato sauce in the basket", 256},
      {1, "", 4},
      {2, "  Caf\u00e9 \u2014 it's <|im_end|> 42\n", 3},
  };
  json request = {{"folder", kEagle}, {"texts", texts}, {"prompts", json::array()}};
  for (const auto& [views, instruction, per_view] : prompts) {
    request["prompts"].push_back({{"views", views}, {"instruction", instruction}, {"tokens_per_view", per_view}});
  }
  const std::string dir = make_temp_dir("qwen2");
  const json result = emb::test::run_python_reference("qwen2_reference.py", request, dir);
  size_t total = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::vector<int32_t> expected = result["ids"][i].get<std::vector<int32_t>>();
    const std::vector<int32_t> ids = eagle().encode(texts[i]);
    BOOST_TEST_CONTEXT("text " << i << ": " << emb::quoted(texts[i])) {
      BOOST_TEST(ids == expected, boost::test_tools::per_element());
      // Decoding gives back the text up to NFC (byte-level BPE loses nothing else; NFC is
      // applied between added tokens, so compare in NFC).
      BOOST_TEST(emb::tokenizers::nfc(eagle().decode(ids)) == emb::tokenizers::nfc(texts[i]));
    }
    total += ids.size();
  }
  BOOST_TEST(total > 3000u);  // the long text alone is thousands of tokens
  for (size_t p = 0; p < prompts.size(); ++p) {
    const auto& [views, instruction, per_view] = prompts[p];
    BOOST_TEST_CONTEXT("prompt " << p) {
      BOOST_TEST(emb::tokenizers::gr00t_prompt_text(views, instruction, per_view) ==
                 result["prompt_texts"][p].get<std::string>());
      const auto prompt = emb::tokenizers::gr00t_prompt(eagle(), views, instruction, per_view);
      BOOST_TEST(prompt.ids == result["prompt_ids"][p].get<std::vector<int32_t>>(), boost::test_tools::per_element());
      // Each view is <img>, tokens_per_view image slots, </img>, in order.
      BOOST_REQUIRE(prompt.image_positions.size() == size_t(views * per_view));
      for (int v = 0; v < views; ++v) {
        const int64_t first = prompt.image_positions[size_t(v * per_view)];
        BOOST_TEST(prompt.ids[size_t(first - 1)] == 151670);
        BOOST_TEST(prompt.ids[size_t(first + per_view)] == 151671);
        for (int t = 0; t < per_view; ++t) BOOST_TEST(prompt.image_positions[size_t(v * per_view + t)] == first + t);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(prompt_of_two_views_by_hand) {
  // <|im_start|> system Ċ You  are  a  helpful  assistant . <|im_end|> Ċ <|im_start|> user Ċ
  // then per view < image Ġ N > <img> 256 x <IMG_CONTEXT> </img>; the instruction; <|im_end|> Ċ
  // <|im_start|> assistant Ċ.
  const auto prompt = emb::tokenizers::gr00t_prompt(eagle(), 2, "Pick up the yellow bottle on the table.");
  const std::vector<int32_t> head = {151644, eagle().encode("system")[0], 198};
  BOOST_TEST(std::vector<int32_t>(prompt.ids.begin(), prompt.ids.begin() + 3) == head, boost::test_tools::per_element());
  const std::vector<int32_t> tail = {151645, 198, 151644, eagle().encode("assistant")[0], 198};
  BOOST_TEST(std::vector<int32_t>(prompt.ids.end() - 5, prompt.ids.end()) == tail, boost::test_tools::per_element());
  BOOST_TEST(prompt.image_positions.size() == 512u);
  const size_t view2 = size_t(prompt.image_positions[256]);
  BOOST_TEST(std::vector<int32_t>(prompt.ids.begin() + long(view2) - 7, prompt.ids.begin() + long(view2)) ==
                 (std::vector<int32_t>{151671, 27, 1805, 220, 17, 29, 151670}),
             boost::test_tools::per_element());
}

namespace {

// A copy of the Eagle folder whose files can be edited.
std::string eagle_copy(const std::string& tag) {
  const std::string dir = make_temp_dir(tag);
  for (const auto& entry : fs::directory_iterator(kEagle)) {
    fs::copy_file(entry.path(), dir + "/" + entry.path().filename().string());
    fs::permissions(dir + "/" + entry.path().filename().string(), fs::perms::owner_write, fs::perm_options::add);
  }
  return dir;
}

// The folder as a tokenizer.json (what HF writes for Qwen2), merges as strings or as pairs.
std::string as_tokenizer_json_folder(bool merges_as_pairs) {
  const std::string dir = make_temp_dir("qwen2_tokjson");
  json merges = json::array();
  std::istringstream in(read_file(kEagle + "/merges.txt"));
  std::string line;
  std::getline(in, line);  // #version header
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const size_t space = line.find(' ');
    if (merges_as_pairs) {
      merges.push_back({line.substr(0, space), line.substr(space + 1)});
    } else {
      merges.push_back(line);
    }
  }
  const json config = json::parse(read_file(kEagle + "/tokenizer_config.json"));
  json added = json::array();
  for (const auto& [id, entry] : config["added_tokens_decoder"].items()) {
    json e = entry;
    e["id"] = std::stoi(id);
    added.push_back(e);
  }
  const json split = {{"type", "Split"},
                      {"pattern", {{"Regex", R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"}}},
                      {"behavior", "Isolated"},
                      {"invert", false}};
  const json tj = {
      {"version", "1.0"},
      {"added_tokens", added},
      {"normalizer", {{"type", "NFC"}}},
      {"pre_tokenizer",
       {{"type", "Sequence"},
        {"pretokenizers", {split, {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
        {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false}, {"ignore_merges", false},
        {"vocab", json::parse(read_file(kEagle + "/vocab.json"))}, {"merges", merges}}}};
  write_file(dir + "/tokenizer.json", tj.dump());
  return dir;
}

}  // namespace

BOOST_AUTO_TEST_CASE(tokenizer_json_folders_encode_the_same) {
  for (const bool pairs : {false, true}) {
    const Qwen2Tokenizer from_json(as_tokenizer_json_folder(pairs));
    for (const std::string& text : corpus()) {
      BOOST_TEST(from_json.encode(text) == eagle().encode(text), boost::test_tools::per_element());
    }
    BOOST_TEST(from_json.token_id("<IMG_CONTEXT>") == 151669);
  }
}

BOOST_AUTO_TEST_CASE(added_token_flags) {
  // lstrip/rstrip swallow the white space beside the token; normalized tokens are matched after
  // NFC (so an NFD spelling matches), the others on the raw text; special only affects decode.
  const std::string dir = eagle_copy("qwen2_flags");
  json config = json::parse(read_file(dir + "/tokenizer_config.json"));
  config["added_tokens_decoder"]["151657"]["lstrip"] = true;   // <tool_call>
  config["added_tokens_decoder"]["151658"]["rstrip"] = true;   // </tool_call>
  config["added_tokens_decoder"]["151680"] = {{"content", "caf\u00e9!"}, {"lstrip", false}, {"normalized", true},
                                              {"rstrip", false}, {"single_word", false}, {"special", false}};
  config["added_tokens_decoder"]["151681"] = {{"content", "na\u00efve!"}, {"lstrip", false}, {"normalized", false},
                                              {"rstrip", false}, {"single_word", false}, {"special", false}};
  write_file(dir + "/tokenizer_config.json", config.dump());
  const Qwen2Tokenizer t(dir);
  auto expect = eagle().encode("x");
  expect.push_back(151657);
  for (const int32_t id : eagle().encode("y")) expect.push_back(id);
  expect.push_back(151658);
  for (const int32_t id : eagle().encode("z")) expect.push_back(id);
  BOOST_TEST(t.encode("x \t<tool_call>y</tool_call> \n z") == expect, boost::test_tools::per_element());
  BOOST_TEST(t.encode("cafe\u0301!") == (std::vector<int32_t>{151680}), boost::test_tools::per_element());
  BOOST_TEST(t.encode("nai\u0308ve!") == eagle().encode("nai\u0308ve!"), boost::test_tools::per_element());
  BOOST_TEST(t.encode("na\u00efve!") == (std::vector<int32_t>{151681}), boost::test_tools::per_element());
  // <|im_end|> is special, <think> is not.
  const auto ids = eagle().encode("a<|im_end|><think>b");
  BOOST_TEST(eagle().decode(ids, true) == "a<think>b");
  BOOST_TEST(eagle().decode(ids, false) == "a<|im_end|><think>b");
  // A lone lead byte of a multi-byte character decodes to U+FFFD, as HF's errors="replace":
  // vocab.json's "â" (158) is byte 0xE2, "a" (64) is 'a', "Ģ" (222) is byte 0x80 (a lone continuation).
  BOOST_TEST(eagle().decode({158, 64}) == "\ufffda");
  BOOST_TEST(eagle().decode({64, 222}) == "a\ufffd");
}

BOOST_AUTO_TEST_CASE(bad_input_is_one_line_naming_file_line_or_token) {
  const auto one_line = [](const std::string& message, const std::string& part) {
    BOOST_TEST_CONTEXT(message) {
      BOOST_TEST(message.find('\n') == std::string::npos);
      BOOST_TEST(message.find(part) != std::string::npos);
    }
  };
  const std::string empty = make_temp_dir("qwen2_empty");
  one_line(error_of([&] { Qwen2Tokenizer t(empty); }), empty + ": no tokenizer here");

  std::string dir = eagle_copy("qwen2_nomerges");
  fs::remove(dir + "/merges.txt");
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), dir + "/merges.txt: missing");

  dir = eagle_copy("qwen2_badmerge");
  std::string merges = read_file(kEagle + "/merges.txt");
  size_t at = 0;
  for (int line = 0; line < 4; ++line) at = merges.find('\n', at) + 1;  // start of line 5
  merges.insert(at, "three part line\n");
  write_file(dir + "/merges.txt", merges);
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), dir + "/merges.txt:5: expected two tokens");

  merges = read_file(kEagle + "/merges.txt");
  merges.insert(at, "Ġ zzzzq\n");
  write_file(dir + "/merges.txt", merges);
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), dir + "/merges.txt:5: merge part 'zzzzq' is not in the vocabulary");

  dir = eagle_copy("qwen2_badvocab");
  std::string vocab = read_file(kEagle + "/vocab.json");
  vocab.insert(vocab.find('\n', 2) + 1, "  \"!\": ,\n");
  write_file(dir + "/vocab.json", vocab);
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), dir + "/vocab.json: invalid JSON: parse error at line 3");
  write_file(dir + "/vocab.json", "{\"a\": \"one\"}");
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), dir + "/vocab.json: token 'a': id must be a non-negative integer");

  dir = eagle_copy("qwen2_badconfig");
  json config = json::parse(read_file(dir + "/tokenizer_config.json"));
  config["added_tokens_decoder"]["151669"]["single_word"] = true;
  write_file(dir + "/tokenizer_config.json", config.dump());
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), "'<IMG_CONTEXT>' has single_word = true");
  config["added_tokens_decoder"]["151669"]["single_word"] = false;
  config["added_tokens_decoder"]["151669"]["content"] = "<IMAGE_CONTEXT>";
  write_file(dir + "/tokenizer_config.json", config.dump());
  one_line(error_of([&] { Qwen2Tokenizer t(dir); }), "added_tokens.json: id 151669 is given to both");

  one_line(error_of([&] { eagle().token_id("<NO_SUCH_TOKEN>"); }),
           kEagle + ": the tokenizer has no added token '<NO_SUCH_TOKEN>'");
  one_line(error_of([&] { eagle().encode("bad \xff byte"); }), "text to encode: invalid UTF-8 at byte 4");
  one_line(error_of([&] { eagle().decode({200000}); }), "cannot decode token id 200000");
  one_line(error_of([&] { emb::tokenizers::gr00t_prompt(eagle(), 1, "look at <image-1> now"); }),
           "holds an image placeholder");

  dir = eagle_copy("qwen2_template");
  write_file(dir + "/chat_template.json", "{\"chat_template\": \"{{ messages }}\"}");
  one_line(error_of([&] { emb::tokenizers::gr00t_prompt(Qwen2Tokenizer(dir), 1, "x"); }),
           dir + "/chat_template.json: template (FNV-1a");
}
