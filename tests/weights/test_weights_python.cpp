// The weights readers against files PyTorch and an independent Python safetensors writer
// produce (tests/weights/weights_fixtures.py), every corruption they must refuse with one
// line, and the C++ writer's output read back by that Python code.
#define BOOST_TEST_MODULE weights_python
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "error_of.hpp"
#include "weights/checkpoint_writer.hpp"
#include "weights/safetensors_writer.hpp"
#include "weights/tensor_file.hpp"
#include "weights/weight_source.hpp"
#include "weights_test_util.hpp"

using namespace emb;
using emb::test::error_of;
using emb::test::file_bytes;

namespace {

const std::string kScript = "/usr/bin/python3 tests/weights/weights_fixtures.py";

// The fixtures, made once per process.
const std::string& fixtures() {
  static test::ScratchDir dir("weights");
  static const bool made = [] {
    if (std::system((kScript + " make " + dir.path()).c_str()) != 0)
      throw std::runtime_error("weights_fixtures.py make failed");
    return true;
  }();
  (void)made;
  return dir.path();
}

std::string at(const std::string& name) { return fixtures() + "/" + name; }

// Every tensor of `<label>.expected/manifest.json` in `reader` (a TensorFile or WeightSource):
// dtype, shape, stored bytes, float32 values bit for bit, and the same through slices.
template <class Reader>
void check_against_expected(const Reader& reader, const std::string& label) {
  const std::string dir = at(label + ".expected");
  const auto manifest = nlohmann::json::parse(file_bytes(dir + "/manifest.json"));
  BOOST_TEST(reader.tensors().size() == manifest.size());
  for (const auto& entry : manifest) {
    const std::string name = entry["name"];
    BOOST_TEST_CONTEXT(label << ": " << name) {
      const TensorInfo* info = reader.find(name);
      BOOST_REQUIRE(info);
      BOOST_TEST(weight_dtype_name(info->dtype) == entry["dtype"].get<std::string>());
      BOOST_TEST(info->shape == entry["shape"].get<std::vector<int64_t>>());
      const int64_t n = info->numel();
      const std::string raw = file_bytes(dir + "/" + name + ".raw");
      std::string got_raw(raw.size(), '\0');
      reader.read_raw(name, 0, n, got_raw.data());
      BOOST_TEST((got_raw == raw));
      if (!converts_to_float(info->dtype)) continue;
      const std::string expected = file_bytes(dir + "/" + name + ".f32");
      BOOST_REQUIRE(expected.size() == size_t(n) * 4);
      std::vector<float> values(size_t(n) + 1);
      reader.read(name, 0, n, values.data());
      BOOST_TEST(std::memcmp(values.data(), expected.data(), expected.size()) == 0);
      // Slices: the tail from the middle, an interior range, single elements at both ends.
      for (auto [begin, end] : {std::pair<int64_t, int64_t>{n / 2, n}, {n / 3, n - n / 4}, {0, std::min<int64_t>(n, 1)},
                                {std::max<int64_t>(n - 1, 0), n}, {n, n}}) {
        std::fill(values.begin(), values.end(), -1.0f);
        reader.read(name, begin, end, values.data());
        BOOST_TEST(std::memcmp(values.data(), expected.data() + 4 * begin, size_t(end - begin) * 4) == 0);
        BOOST_TEST(values[size_t(end - begin)] == -1.0f);  // nothing written past the slice
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(safetensors_file_reads_every_dtype_exactly) {
  TensorFile file(at("single.safetensors"));
  check_against_expected(file, "single");
  BOOST_TEST((file.metadata() == std::map<std::string, std::string>{{"format", "pt"}, {"note", "fixture"}}));
  std::vector<std::string> names;  // file order: by data offset
  for (const TensorInfo& t : file.tensors()) names.push_back(t.name);
  BOOST_TEST((names == std::vector<std::string>{"a.f32", "b.bf16", "c.f16", "scalar", "empty", "ints", "doubles"}));
  BOOST_TEST(file.tensors()[0].file == at("single.safetensors"));
}

BOOST_AUTO_TEST_CASE(weight_source_opens_a_file_a_folder_and_a_sharded_folder_alike) {
  for (const char* path : {"single.safetensors", "single_folder", "sharded"}) {
    BOOST_TEST_CONTEXT(path) {
      WeightSource source(at(path));
      check_against_expected(source, "sharded");
      std::vector<std::string> names;
      for (const TensorInfo& t : source.tensors()) names.push_back(t.name);
      BOOST_TEST(std::is_sorted(names.begin(), names.end()));
    }
  }
  WeightSource sharded(at("sharded"));
  BOOST_TEST(sharded.info("a.f32").file == at("sharded/model-00001-of-00003.safetensors"));
  BOOST_TEST(sharded.info("scalar").file == at("sharded/model-00002-of-00003.safetensors"));
  BOOST_TEST(sharded.info("doubles").file == at("sharded/model-00003-of-00003.safetensors"));
  BOOST_TEST(error_of([&] { sharded.info("nope"); }) == at("sharded") + ": no tensor 'nope'");
  float v;
  BOOST_TEST(error_of([&] { sharded.read("a.f32", 5, 13, &v); }) ==
             at("sharded/model-00001-of-00003.safetensors") + ": tensor 'a.f32': slice [5, 13) is outside its 12 elements");
}

BOOST_AUTO_TEST_CASE(other_dtypes_are_listed_and_read_raw_but_not_as_float) {
  WeightSource source(at("single.safetensors"));
  std::vector<float> out(6);
  BOOST_TEST(error_of([&] { source.read("ints", 0, 6, out.data()); }) ==
             at("single.safetensors") + ": tensor 'ints': dtype I64 is not read as float32 (F32, BF16 and F16 are); read it raw");
  BOOST_TEST(error_of([&] { source.read("doubles", 0, 2, out.data()); }) ==
             at("single.safetensors") + ": tensor 'doubles': dtype F64 is not read as float32 (F32, BF16 and F16 are); read it raw");
  int64_t ints[6];
  source.read_raw("ints", 0, 6, ints);
  BOOST_TEST((std::vector<int64_t>(ints, ints + 6) == std::vector<int64_t>{-3, -2, -1, 0, 1, 2}));
}

BOOST_AUTO_TEST_CASE(corrupt_safetensors_fail_with_one_line_naming_file_and_tensor) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"header_past_end", ": header length 4096 bytes is past the end of the file (112 bytes): truncated?"},
      {"header_absurd", ": header length 1099511627776 bytes is absurd (at most 100000000): not a safetensors file?"},
      {"json", ": header: JSON does not parse: parse error at line 1, column 65: syntax error while parsing object - "
               "unexpected end of input; expected '}'"},
      {"duplicate", ": header: key 'w' appears twice"},
      {"duplicate_field", ": header: key 'dtype' appears twice in 'w'"},
      {"dtype", ": tensor 'w': unknown dtype 'F128'"},
      {"out_of_region", ": tensor 'v': data_offsets [1000000, 1000016] are out of the data region (32 bytes)"},
      {"overlap", ": tensor 'v': data_offsets [8, 24] overlap tensor 'w' [0, 16]"},
      {"length", ": tensor 'w': data_offsets [0, 12] hold 12 bytes but shape [2, 2] of F32 needs 16"},
      {"gap", ": tensor 'v': data_offsets [20, 36] leave a gap of 4 bytes after tensor 'w'"},
      {"truncated", ": file is truncated: tensor 'v' ends at byte 32 of the data region but the file holds only 27 "
                    "data bytes"},
      {"metadata", ": __metadata__ value of 'format' is a JSON number, not a string"},
  };
  for (const auto& [label, message] : cases) {
    const std::string path = at("bad_" + label + ".safetensors");
    BOOST_TEST(error_of([&] { TensorFile{path}; }) == path + message);
    BOOST_TEST(error_of([&] { WeightSource{path}; }) == path + message);
  }
}

BOOST_AUTO_TEST_CASE(index_and_shards_that_disagree_fail_naming_index_shard_and_tensor) {
  auto index = [](const std::string& folder) { return at(folder + "/model.safetensors.index.json"); };
  BOOST_TEST(error_of([&] { WeightSource{at("shard_missing")}; }) ==
             index("shard_missing") + ": shard 'model-00002-of-00003.safetensors': tensor 'v': the shard file does not exist");
  BOOST_TEST(error_of([&] { WeightSource{at("index_extra")}; }) ==
             index("index_extra") + ": shard 'model-00001-of-00002.safetensors': tensor 'ghost': in the index but not in the shard");
  BOOST_TEST(error_of([&] { WeightSource{at("shard_extra")}; }) ==
             index("shard_extra") + ": shard 'model-00002-of-00002.safetensors': tensor 'v': in the shard but not in the index");
  BOOST_TEST(error_of([&] { WeightSource{at("shard_unlisted")}; }) ==
             index("shard_unlisted") + ": shard 'model-00002-of-00002.safetensors': tensor 'v': in the shard but not in the index");
  BOOST_TEST(error_of([&] { WeightSource{at("index_duplicate")}; }) ==
             index("index_duplicate") + ": key 'v' appears twice in 'weight_map'");
  BOOST_TEST(error_of([&] { WeightSource{at("single.expected")}; }) ==
             at("single.expected") + ": neither model.safetensors.index.json nor model.safetensors in this folder: not a "
                                     "safetensors checkpoint");
  BOOST_TEST(error_of([&] { WeightSource{at("absent")}; }) == at("absent") + ": no such file or folder");
}

BOOST_AUTO_TEST_CASE(torch_state_dicts_read_like_safetensors) {
  // An OrderedDict from state_dict() with views: a transpose, a row at a storage offset, a
  // column slice, an expand (stride 0), all over one storage with the base tensor.
  TensorFile state(at("state.pth"));
  check_against_expected(state, "state");
  BOOST_TEST(state.tensors().front().name == "weight");  // the dict's order
  BOOST_TEST(state.metadata().empty());
  check_against_expected(TensorFile(at("state_zip64.pth")), "state");
  check_against_expected(TensorFile(at("param.pth")), "param");  // a dict holding an nn.Parameter
  check_against_expected(WeightSource(at("state.pth")), "state");
}

BOOST_AUTO_TEST_CASE(torch_files_that_are_not_tensor_dicts_are_refused_with_the_conversion) {
  auto convert = [](const std::string& file, const std::string& select) {
    return "python3 -c \"import torch, safetensors.torch as st; st.save_file({k: v.contiguous().clone() for k, v in "
           "torch.load('" + at(file) + "', map_location='cpu', weights_only=False)" + select + ".items()}, '" +
           at(file.substr(0, file.size() - 4)) + ".safetensors')\"";
  };
  BOOST_TEST(error_of([&] { TensorFile{at("legacy.pth")}; }) ==
             at("legacy.pth") + ": a legacy torch.save file (PyTorch < 1.6 or _use_new_zipfile_serialization=False), "
                                "not the zip format; convert it to safetensors: " + convert("legacy.pth", ""));
  BOOST_TEST(error_of([&] { TensorFile{at("module.pth")}; }) ==
             at("module.pth") + ": data.pkl holds a torch.nn.modules.linear.Linear object, not a dict of tensors (a "
                                "pickled module?); convert it to safetensors: " + convert("module.pth", ".state_dict()"));
  BOOST_TEST(error_of([&] { TensorFile{at("nested.pth")}; }) ==
             at("nested.pth") + ": data.pkl holds a dict under key 'model', not a tensor (a nested checkpoint?); "
                                "convert it to safetensors: " + convert("nested.pth", "['model']"));
  BOOST_TEST(error_of([&] { TensorFile{at("number.pth")}; }) ==
             at("number.pth") + ": data.pkl holds an int under key 'step', not a tensor; convert it to safetensors: " +
                 convert("number.pth", ""));
  BOOST_TEST(error_of([&] { TensorFile{at("protocol4.pth")}; }) ==
             at("protocol4.pth") + ": data.pkl holds pickle opcode 0x95 at byte 2 (this reader knows the protocol-2 "
                                   "opcodes torch.save writes by default); convert it to safetensors: " +
                 convert("protocol4.pth", ""));
  BOOST_TEST(error_of([&] { TensorFile{at("compressed.pth")}; }) ==
             at("compressed.pth") + ": zip entry 'state/data.pkl': compressed (method 8); torch.save stores entries "
                                    "uncompressed, so this file was re-zipped by another tool: re-save it with torch.save");
  BOOST_TEST(error_of([&] { TensorFile{at("missing_storage.pth")}; }) ==
             at("missing_storage.pth") + ": tensor 'weight': storage '0': no entry 'state/data/0' in the archive");
  BOOST_TEST(error_of([&] { TensorFile{at("truncated.pth")}; }) ==
             at("truncated.pth") + ": no zip end-of-directory record (truncated, or not a torch.save zip file)");
}

BOOST_AUTO_TEST_CASE(random_corruptions_fail_with_one_line_or_read_in_bounds) {
  // Bytes overwritten and files cut at random: every outcome is a one-line emb::Error or a
  // file whose tensors read (no crash, no other exception; ASan builds check the bounds).
  std::mt19937 rng(11);
  int refused = 0, opened = 0;
  for (const char* name : {"single.safetensors", "state.pth"}) {
    const std::string original = file_bytes(at(name));
    const std::string mutated_path = at(std::string("mutated_") + name);
    for (int round = 0; round < 400; ++round) {
      std::string bytes = original;
      if (round % 4 == 3) {
        bytes.resize(rng() % bytes.size());
      } else {
        for (int k = 0; k <= round % 3; ++k) bytes[rng() % bytes.size()] = char(rng());
      }
      test::write_bytes(mutated_path, bytes.data(), bytes.size());
      try {
        const TensorFile file(mutated_path);
        ++opened;
        std::vector<unsigned char> out(64 * 8);
        for (const TensorInfo& t : file.tensors()) {
          const int64_t n = t.numel(), head = std::min<int64_t>(n, 64);
          file.read_raw(t.name, 0, head, out.data());
          file.read_raw(t.name, n - head, n, out.data());
        }
      } catch (const Error& e) {
        ++refused;
        BOOST_TEST(std::string(e.what()).find('\n') == std::string::npos);
      }
    }
  }
  BOOST_TEST_MESSAGE("random corruptions: " << refused << " refused, " << opened << " opened and read");
  BOOST_TEST(refused > 400);
}

BOOST_AUTO_TEST_CASE(a_slice_of_a_big_file_reads_only_its_pages) {
  // 2 GiB sparse file, one F32 tensor of 2^29 elements; 1/512 of it is read (4 MiB).
  WeightSource source(at("big.safetensors"));
  const int64_t n = int64_t(1) << 29, begin = int64_t(3) << 26, count = n / 512;
  std::vector<float> out(size_t(count), -1.0f);  // touched before measuring
  const int64_t before = test::resident_bytes();
  source.read("big", begin, begin + count, out.data());
  const int64_t grown = test::resident_bytes() - before;
  BOOST_TEST_MESSAGE("slice of " << count * 4 / (1 << 20) << " MiB from a 2048 MiB file: resident memory grew "
                                 << grown / (1 << 20) << " MiB");
  BOOST_TEST(grown >= count * 4 / 2);             // the measure sees the slice's pages...
  BOOST_TEST(grown <= count * 4 + (64 << 20));    // ...and not the other 2 GiB
  for (int64_t i = 0; i < count; ++i)
    if (out[size_t(i)] != (i < 4096 ? float(i) : 0.0f)) BOOST_FAIL("element " << begin + i << " = " << out[size_t(i)]);
}

BOOST_AUTO_TEST_CASE(python_reads_what_the_writer_wrote_bit_for_bit) {
  // Inputs where rounding matters: ties to even for BF16 and F16, F16 overflow and
  // subnormals, signed zeros, infinities, NaN, then random normals.
  const uint32_t special_bits[] = {0x3F808000, 0x3F818000, 0xBF808000, 0x3F801000, 0x3F803000, 0x477FEFFF,
                                   0x477FF000, 0x33000000, 0x33C00000, 0x80000000, 0x7F800000, 0xFF800000,
                                   0x7FC00000, 0x7F7FFFFF, 0x00000001, 0x387FE000};
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  auto values = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      if (size_t(i) < std::size(special_bits))
        std::memcpy(&v[size_t(i)], &special_bits[i], 4);
      else
        v[size_t(i)] = normal(rng);
    }
    return v;
  };
  const std::vector<TensorSpec> specs = {{"w.f32", WeightDType::F32, {3, 17}}, {"w.bf16", WeightDType::BF16, {64}},
                                         {"w.f16", WeightDType::F16, {8, 8}},  {"odd.bf16", WeightDType::BF16, {3}},
                                         {"empty", WeightDType::BF16, {0}},     {"scalar", WeightDType::F16, {}},
                                         {"x.f32", WeightDType::F32, {40}}};
  test::ScratchDir out("weights_written");
  std::filesystem::create_directories(out.path() + "/inputs");
  std::map<std::string, std::vector<float>> inputs;
  for (const TensorSpec& t : specs) {
    inputs[t.name] = values(t.numel());
    test::write_bytes(out.path() + "/inputs/" + t.name + ".f32", inputs[t.name].data(), inputs[t.name].size() * 4);
  }
  // In pieces of 5 elements: tensors stream in, never whole.
  auto stream = [&](auto& writer) {
    for (const TensorSpec& t : writer.order())
      for (int64_t done = 0; done < t.numel(); done += 5)
        writer.write(inputs[t.name].data() + done, std::min<int64_t>(5, t.numel() - done));
    writer.finish();
  };
  SafetensorsWriter single(out.path() + "/written.safetensors", specs, {{"format", "pt"}});
  stream(single);
  CheckpointWriter sharded(out.path() + "/sharded", specs, 200, {{"format", "pt"}});
  stream(sharded);
  BOOST_TEST(std::system((kScript + " check " + out.path()).c_str()) == 0);
}
