// umT5's tokenizer as DreamZero/Wan call it (issue 34): a SentencePiece model trained here with
// spm_train (umT5's own cannot be downloaded) encodes like python3-sentencepiece, with Wan's
// cleaning, </s>, truncation to 511 + </s>, padding to 512 and the mask equal to a Python
// reference for texts of 0, 1 and more than 512 tokens; DreamZero's per-robot templates; the
// implemented part of ftfy by hand; html.unescape on every HTML5 entity; a bad model file.
#define BOOST_TEST_MODULE test_umt5_tokenizer
#include <boost/test/unit_test.hpp>
#include <nlohmann/json.hpp>

#include "encoders/tokenizers/dreamzero_prompt.hpp"
#include "encoders/tokenizers/html_unescape.hpp"
#include "encoders/tokenizers/umt5_tokenizer.hpp"
#include "encoders/tokenizers/unicode_text.hpp"
#include "encoders/tokenizers/wan_text_clean.hpp"
#include "error_of.hpp"
#include "python_reference.hpp"

using emb::test::error_of;
using emb::test::make_temp_dir;
using emb::test::write_file;
using emb::tokenizers::DreamZeroRobot;
using emb::tokenizers::Umt5Tokenizer;
using nlohmann::json;

namespace {

const std::vector<std::string> kInstructions = {
    "Pick up the yellow bottle on the table.",
    "pick the pear from the counter and place it in the plate",
    "Put the marker in the cup, then close the drawer!",
    "Move the red block 3 cm to the left; don't knock over the tower.",
    "Open the caf\u00e9's fridge & take out the cr\u00e8me br\u00fbl\u00e9e.",
    "Place the \u00bd-litre jug next to the na\u00efve robot (\u00c5ngstr\u00f6m \u00d7 2, \u00a35, \u00a7 3).",
    "\u00bfQu\u00e9? \u00a1Hola! Stack the plates: 1, 2 & 3.",
};

// A corpus of the kind of text the model will see, for spm_train.
std::string training_corpus() {
  std::string corpus;
  const std::vector<std::string> objects = {"cup", "bowl", "plate", "marker", "bottle", "drawer", "block", "towel",
                                            "sponge", "apple", "pear", "banana", "lid", "pot", "knife", "spoon"};
  const std::vector<std::string> verbs = {"pick up", "put", "place", "move", "open", "close", "push", "wipe",
                                          "stack", "pour", "turn", "fold"};
  for (size_t i = 0; i < 600; ++i) {
    corpus += "A multi-view video shows that a robot " + verbs[i % verbs.size()] + " the " +
              objects[(i * 7) % objects.size()] + " next to the " + objects[(i * 3 + 1) % objects.size()] +
              ". The robot's wrist camera shows the left and right exterior views.\n";
  }
  for (const std::string& s : kInstructions) corpus += s + "\n";
  return corpus;
}

struct Model {
  std::string dir, path;
};

const Model& model() {
  static const Model m = [] {
    Model out;
    out.dir = make_temp_dir("umt5");
    write_file(out.dir + "/corpus.txt", training_corpus());
    // T5's id layout: <pad> 0, </s> 1, <unk> 2, no <s>.
    const std::string command = "spm_train --input=" + out.dir + "/corpus.txt --model_prefix=" + out.dir +
                                "/spiece --vocab_size=300 --model_type=unigram --character_coverage=1.0 "
                                "--pad_id=0 --eos_id=1 --unk_id=2 --bos_id=-1 --hard_vocab_limit=false "
                                "--minloglevel=2 > " + out.dir + "/spm_train.log 2>&1";
    BOOST_REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "failed: " << command);
    out.path = out.dir + "/spiece.model";
    return out;
  }();
  return m;
}

}  // namespace

BOOST_AUTO_TEST_CASE(encoding_equals_python_sentencepiece_and_wan_cleaning) {
  const Umt5Tokenizer tokenizer(model().dir);  // a folder holding spiece.model
  BOOST_TEST(tokenizer.pad_id() == 0);
  BOOST_TEST(tokenizer.eos_id() == 1);
  // A text of one piece: the first word the model keeps whole.
  std::string one_piece;
  for (const std::string word : {"the", "robot", "a", "cup", "x"}) {
    if (one_piece.empty() && tokenizer.encode_pieces(word).size() == 1) one_piece = word;
  }
  BOOST_REQUIRE(!one_piece.empty());
  std::string long_text;
  while (long_text.size() < 6000) {
    for (const std::string& s : kInstructions) long_text += s + "  \n\t";
  }
  std::vector<std::string> texts = {"", "   \t\n ", one_piece, long_text,
                                    // entities, one and two levels deep, and white-space runs
                                    "  Put the cup &amp; the bowl &lt;here&gt;  ",
                                    "fish &amp;amp; chips &#39;n&#x27; caf&eacute; &eacute &copy 2024",
                                    "line one\nline two\r\n\r\n\tline three   end"};
  texts.insert(texts.end(), kInstructions.begin(), kInstructions.end());
  const std::vector<std::tuple<std::string, std::string, int>> prompts = {
      {"oxe_droid", "Pick up the Cup and put it in the BOWL.", 3}, {"agibot", "Fold the Towel", 3},
      {"gr1_unified", "Pour WATER", 1},  {"mecka_hands", "Open the Lid", 1},
      {"xdof", "Wipe the TABLE", 3},     {"yam", "Stack the BLOCKS", 3},
      {"oxe_droid", long_text, 3}};
  const std::vector<std::string> lower = {"\u0130STANBUL", "\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3",
                                          "\u03a3. \u03a3\u0391 \u0391\u03a3\u0301 \u0391\u03a3'\u0391",
                                          "\u01c5 \u1e9e \u00c0\u00c9\u00ce\u00d5\u00dc \u0410\u0411\u0412 \u2160"};
  json request = {{"model", model().path}, {"seq_len", 512}, {"texts", texts}, {"prompts", json::array()},
                  {"lower", lower}};
  for (const auto& [robot, instruction, views] : prompts) {
    request["prompts"].push_back({{"robot", robot}, {"instruction", instruction}, {"num_views", views}});
  }
  const json result = emb::test::run_python_reference("umt5_reference.py", request, model().dir);

  std::vector<int> lengths;
  for (size_t i = 0; i < texts.size(); ++i) {
    BOOST_TEST_CONTEXT("text " << i << ": " << emb::quoted(texts[i])) {
      BOOST_TEST(emb::tokenizers::wan_clean_text(texts[i]) == result["cleaned"][i].get<std::string>());
      const auto tokens = tokenizer.encode(texts[i]);
      const json& expected = result["encoded"][i];
      BOOST_TEST(tokens.ids == expected["ids"].get<std::vector<int32_t>>(), boost::test_tools::per_element());
      BOOST_TEST(tokens.mask == expected["mask"].get<std::vector<uint8_t>>(), boost::test_tools::per_element());
      BOOST_TEST(tokens.length == expected["length"].get<int>());
      lengths.push_back(tokens.length);
    }
  }
  // 0 text tokens (only </s>), 1 token, and truncated to 511 + </s>.
  BOOST_TEST(lengths[0] == 1);
  BOOST_TEST(lengths[1] == 1);
  BOOST_TEST(lengths[2] == 2);
  BOOST_TEST(lengths[3] == 512);
  BOOST_TEST(tokenizer.encode_pieces(emb::tokenizers::wan_clean_text(long_text)).size() > 1000u);
  BOOST_TEST(tokenizer.encode(long_text).ids[511] == 1);

  for (size_t p = 0; p < prompts.size(); ++p) {
    const auto& [robot, instruction, views] = prompts[p];
    BOOST_TEST_CONTEXT("prompt " << p << " " << robot) {
      const std::string text = emb::tokenizers::dreamzero_prompt(emb::tokenizers::dreamzero_robot_from_name(robot),
                                                                 instruction, views);
      BOOST_TEST(text == result["prompts"][p].get<std::string>());
      BOOST_TEST(tokenizer.encode(text).ids == result["prompt_encoded"][p]["ids"].get<std::vector<int32_t>>(),
                 boost::test_tools::per_element());
    }
  }
  for (size_t i = 0; i < lower.size(); ++i) {
    const auto lowered = emb::tokenizers::python_lower(emb::tokenizers::decode_utf8(lower[i], "test"));
    BOOST_TEST(emb::tokenizers::encode_utf8(lowered) == result["lower"][i].get<std::string>());
  }
  size_t checked = 0;
  for (const json& c : result["html"]) {
    const std::string in = c[0].get<std::string>(), out = c[1].get<std::string>();
    BOOST_TEST_CONTEXT("html.unescape(" << emb::quoted(in) << ")") { BOOST_TEST(emb::tokenizers::html_unescape(in) == out); }
    ++checked;
  }
  BOOST_TEST(checked > 6000u);  // every HTML5 name three ways, and the numeric cases
}

BOOST_AUTO_TEST_CASE(ftfy_steps_that_are_implemented) {
  using emb::tokenizers::fix_text_subset;
  BOOST_TEST(fix_text_subset("\u201cHello\u201d \u2018world\u2019 \u201b\u201f") == "\"Hello\" 'world' '\"");
  BOOST_TEST(fix_text_subset("\ufb01nd the \ufb02ask, \u0132ssel") == "find the flask, IJssel");
  BOOST_TEST(fix_text_subset("\uff2c\uff2f\uff35\uff24\u3000\uff2e\uff2f\uff29\uff33\uff25\uff33\uff01") ==
             "LOUD NOISES!");
  BOOST_TEST(fix_text_subset("\x1b[36;44mblue\x1b[0m text") == "blue text");
  BOOST_TEST(fix_text_subset(std::string("a\0b\x07" "c\ufeffd\u206a\U000E0041e", 17) + "\x7f") == "abcde");
  BOOST_TEST(fix_text_subset("a\r\nb\rc\u2028d\u0085e") == "a\nb\nc\nd\ne");
  BOOST_TEST(fix_text_subset("cafe\u0301") == "caf\u00e9");
  // Ordinary ASCII and Latin-1 instructions are left exactly as they are.
  for (const std::string& s : kInstructions) BOOST_TEST(fix_text_subset(s) == s);
  for (char32_t c = 0x20; c < 0x100; ++c) {
    if (c >= 0x7F && c < 0xA0) continue;  // DEL and the C1 controls are not text
    const std::string s = emb::tokenizers::encode_utf8(std::u32string(1, c));
    BOOST_TEST(fix_text_subset(s) == s);
  }
}

BOOST_AUTO_TEST_CASE(bad_model_file_is_one_line) {
  const std::string dir = make_temp_dir("umt5_bad");
  write_file(dir + "/spiece.model", "this is not a sentencepiece model");
  const std::string missing = error_of([&] { Umt5Tokenizer t(dir + "/nothing"); });
  BOOST_TEST(missing == dir + "/nothing: missing (umT5's SentencePiece model)");
  const std::string bad = error_of([&] { Umt5Tokenizer t(dir); });
  BOOST_TEST(bad.rfind(dir + "/spiece.model: not a SentencePiece model", 0) == 0u);
  BOOST_TEST(bad.find('\n') == std::string::npos);
  BOOST_TEST(error_of([] { emb::tokenizers::dreamzero_robot_from_name("gr1"); }) ==
             "DreamZero prompt: no text template for embodiment 'gr1' (known: agibot, oxe_droid, gr1_unified, "
             "mecka_hands, xdof, yam)");
  BOOST_TEST(error_of([] { emb::tokenizers::dreamzero_prompt(DreamZeroRobot::kAgibot, "x", 1); }).find("num_views > 1") !=
             std::string::npos);
}
