// The weights layer on its own: float16/bfloat16 conversions, the writer's layout, sharding,
// determinism and atomicity, and writer -> reader round trips.
#define BOOST_TEST_MODULE weights_formats
#include <boost/test/unit_test.hpp>

#include <signal.h>
#include <sys/resource.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/dtype.hpp"
#include "error_of.hpp"
#include "weights/checkpoint_writer.hpp"
#include "weights/safetensors_writer.hpp"
#include "weights/tensor_file.hpp"
#include "weights/weight_source.hpp"
#include "weights_test_util.hpp"

using namespace emb;
using emb::test::error_of;
using emb::test::file_bytes;
namespace fs = std::filesystem;

namespace {

const test::ScratchDir kDir("weights_formats");

float from_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t encoded16(WeightDType t, float f) {
  uint16_t h;
  encode_from_float(t, &f, 1, &h);
  return h;
}

// Element i of tensor t: varies with both, exact in every dtype (8 significant bits).
float value(size_t t, int64_t i) { return float((int64_t(t) * 37 + i) % 255 - 127) * 0.5f; }

// Writes `specs` (values from value()) through `writer` in pieces of `piece` elements.
template <class Writer>
void write_all(Writer& writer, const std::vector<TensorSpec>& specs, int64_t piece) {
  for (const TensorSpec& t : writer.order()) {
    const size_t k = size_t(std::find_if(specs.begin(), specs.end(), [&](auto& s) { return s.name == t.name; }) -
                            specs.begin());
    std::vector<float> buffer;
    for (int64_t done = 0; done < t.numel(); done += piece) {
      const int64_t n = std::min(piece, t.numel() - done);
      buffer.resize(size_t(n));
      for (int64_t i = 0; i < n; ++i) buffer[size_t(i)] = value(k, done + i);
      writer.write(buffer.data(), n);
    }
  }
  writer.finish();
}

template <class Reader>
void check_values(const Reader& reader, const std::vector<TensorSpec>& specs) {
  BOOST_TEST(reader.tensors().size() == specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    BOOST_REQUIRE(reader.find(specs[k].name));
    const TensorInfo& info = *reader.find(specs[k].name);
    BOOST_TEST(std::string(weight_dtype_name(info.dtype)) == weight_dtype_name(specs[k].dtype));
    BOOST_TEST(info.shape == specs[k].shape);
    std::vector<float> got(size_t(info.numel()));
    reader.read(info.name, 0, info.numel(), got.data());
    for (int64_t i = 0; i < info.numel(); ++i)
      if (got[size_t(i)] != value(k, i)) BOOST_FAIL(info.name << "[" << i << "] = " << got[size_t(i)]);
  }
}

const std::vector<TensorSpec> kSpecs = {{"blocks.0.w", WeightDType::BF16, {33, 7}},
                                        {"blocks.0.b", WeightDType::F32, {7}},
                                        {"blocks.1.w", WeightDType::F16, {5, 3, 2}},
                                        {"blocks.1.b", WeightDType::BF16, {3}},
                                        {"empty", WeightDType::F32, {0, 4}},
                                        {"scalar", WeightDType::F16, {}},
                                        {"head", WeightDType::F32, {1000}}};

}  // namespace

BOOST_AUTO_TEST_CASE(half_and_bfloat16_convert_exactly_and_round_to_nearest_even) {
  // Every 16-bit pattern decodes to a float32 that encodes back to the same pattern.
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const uint16_t h = uint16_t(bits);
    for (WeightDType t : {WeightDType::F16, WeightDType::BF16}) {
      float f, back_f;
      decode_to_float(t, &h, 1, &f);
      const uint16_t back = encoded16(t, f);
      decode_to_float(t, &back, 1, &back_f);
      if (std::isnan(f) ? !std::isnan(back_f) : back != h)
        BOOST_FAIL(weight_dtype_name(t) << " pattern " << bits << " does not round-trip");
    }
  }
  BOOST_TEST(to_float(bf16{0x3F80}) == 1.0f);
  // Ties go to the even neighbour; just above a tie goes up.
  BOOST_TEST(encoded16(WeightDType::BF16, from_bits(0x3F808000)) == 0x3F80);
  BOOST_TEST(encoded16(WeightDType::BF16, from_bits(0x3F818000)) == 0x3F82);
  BOOST_TEST(encoded16(WeightDType::BF16, from_bits(0x3F808001)) == 0x3F81);
  BOOST_TEST(encoded16(WeightDType::F16, 1.0f + std::ldexp(1.0f, -11)) == 0x3C00);
  BOOST_TEST(encoded16(WeightDType::F16, 1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3C02);
  // F16 overflow (65520 rounds up to infinity), the subnormal range and its ties.
  BOOST_TEST(encoded16(WeightDType::F16, 65519.0f) == 0x7BFF);
  BOOST_TEST(encoded16(WeightDType::F16, 65520.0f) == 0x7C00);
  BOOST_TEST(encoded16(WeightDType::F16, -1e30f) == 0xFC00);
  BOOST_TEST(encoded16(WeightDType::F16, std::ldexp(1.0f, -24)) == 0x0001);
  BOOST_TEST(encoded16(WeightDType::F16, std::ldexp(1.0f, -25)) == 0x0000);
  BOOST_TEST(encoded16(WeightDType::F16, 3 * std::ldexp(1.0f, -25)) == 0x0002);
  BOOST_TEST(encoded16(WeightDType::F16, from_bits(0x387FE000)) == 0x0400);  // rounds up to the smallest normal
  BOOST_TEST(encoded16(WeightDType::F16, -0.0f) == 0x8000);
}

BOOST_AUTO_TEST_CASE(writer_round_trips_through_the_reader_in_any_piece_size) {
  for (int64_t piece : {1, 5, 64, 1 << 20}) {
    BOOST_TEST_CONTEXT("pieces of " << piece) {
      const std::string path = kDir.path() + "/roundtrip.safetensors";
      SafetensorsWriter writer(path, kSpecs, {{"format", "pt"}});
      write_all(writer, kSpecs, piece);
      TensorFile file(path);
      check_values(file, kSpecs);
      BOOST_TEST((file.metadata() == std::map<std::string, std::string>{{"format", "pt"}}));
    }
  }
}

BOOST_AUTO_TEST_CASE(layout_is_aligned_deterministic_and_as_the_reference_orders_it) {
  const std::string a = kDir.path() + "/a.safetensors", b = kDir.path() + "/b.safetensors";
  SafetensorsWriter first(a, kSpecs, {{"format", "pt"}});
  std::vector<std::string> order;
  for (const TensorSpec& t : first.order()) order.push_back(t.name);
  // Largest elements first, then by name: every tensor starts aligned to its element size.
  BOOST_TEST((order == std::vector<std::string>{"blocks.0.b", "empty", "head", "blocks.0.w", "blocks.1.b",
                                                "blocks.1.w", "scalar"}));
  write_all(first, kSpecs, 7);
  std::vector<TensorSpec> reversed(kSpecs.rbegin(), kSpecs.rend());
  SafetensorsWriter second(b, reversed, {{"format", "pt"}});
  write_all(second, kSpecs, 1000);
  const std::string bytes = file_bytes(a);
  BOOST_TEST((bytes == file_bytes(b)));  // the same tensors give the same file
  uint64_t header = 0;
  std::memcpy(&header, bytes.data(), 8);
  BOOST_TEST((8 + header) % 8 == 0);
  BOOST_TEST(bytes.substr(8, 30) == R"({"__metadata__":{"format":"pt")");
}

BOOST_AUTO_TEST_CASE(raw_tensors_of_any_dtype_copy_through) {
  const std::string path = kDir.path() + "/raw.safetensors";
  const int64_t ints[] = {-5, 0, 1LL << 40};
  const uint16_t bf16_bits[] = {0x3F80, 0xFFC1, 0x0001};
  SafetensorsWriter writer(path, {{"ids", WeightDType::I64, {3}}, {"b", WeightDType::BF16, {3}}}, {});
  BOOST_TEST(error_of([&] { writer.write(nullptr, 3); }) ==
             path + ": tensor 'ids': dtype I64 is not written from float32 (F32, BF16 and F16 are); write it raw");
  writer.write_raw(ints, 3);
  writer.write_raw(bf16_bits, 3);
  writer.finish();
  WeightSource source(path);
  int64_t ids[3];
  uint16_t b[3];
  source.read_raw("ids", 0, 3, ids);
  source.read_raw("b", 0, 3, b);
  BOOST_TEST(std::memcmp(ids, ints, sizeof ids) == 0);
  BOOST_TEST(std::memcmp(b, bf16_bits, sizeof b) == 0);
}

BOOST_AUTO_TEST_CASE(sharded_checkpoints_split_as_hf_does_and_read_back) {
  const std::string folder = kDir.path() + "/sharded";
  // 500-byte shards, tensors by name: 28 + 462 + 6 bytes | 60 + 0 | 4000 (more than the
  // maximum: a shard of its own) | 2.
  CheckpointWriter writer(folder, kSpecs, 500, {{"format", "pt"}});
  std::vector<std::string> order;
  for (const TensorSpec& t : writer.order()) order.push_back(t.name);
  BOOST_TEST((order == std::vector<std::string>{"blocks.0.b", "blocks.0.w", "blocks.1.b", "empty", "blocks.1.w",
                                                "head", "scalar"}));
  BOOST_TEST(!fs::exists(folder + "/model.safetensors.index.json"));  // nothing visible before finish()
  write_all(writer, kSpecs, 100);
  const std::string index = file_bytes(folder + "/model.safetensors.index.json");
  BOOST_TEST(index == R"({
  "metadata": {
    "total_size": 4558
  },
  "weight_map": {
    "blocks.0.b": "model-00001-of-00004.safetensors",
    "blocks.0.w": "model-00001-of-00004.safetensors",
    "blocks.1.b": "model-00001-of-00004.safetensors",
    "blocks.1.w": "model-00002-of-00004.safetensors",
    "empty": "model-00002-of-00004.safetensors",
    "head": "model-00003-of-00004.safetensors",
    "scalar": "model-00004-of-00004.safetensors"
  }
}
)");
  WeightSource source(folder);
  check_values(source, kSpecs);
  BOOST_TEST(source.info("head").file == folder + "/model-00003-of-00004.safetensors");
  for (const auto& entry : fs::directory_iterator(folder))  // no temporaries left
    BOOST_TEST(entry.path().extension() != ".tmp");

  // Rewritten as one file, the stale index goes: the folder then reads as the new checkpoint.
  CheckpointWriter single(folder, kSpecs, uint64_t(1) << 40, {});
  write_all(single, kSpecs, 100);
  BOOST_TEST(!fs::exists(folder + "/model.safetensors.index.json"));
  BOOST_TEST(WeightSource(folder).info("head").file == folder + "/model.safetensors");
}

BOOST_AUTO_TEST_CASE(misuse_names_file_and_tensor) {
  const std::string path = kDir.path() + "/misuse.safetensors";
  const float values[8] = {};
  SafetensorsWriter writer(path, {{"a", WeightDType::F32, {4}}, {"b", WeightDType::F32, {2}}}, {});
  BOOST_TEST(error_of([&] { writer.write(values, 5); }) == path + ": tensor 'a': 5 more elements after 0 overrun its 4");
  writer.write(values, 4);
  writer.write(values, 1);
  BOOST_TEST(error_of([&] { writer.finish(); }) == path + ": tensor 'b': only 1 of its 2 elements written");
  BOOST_TEST(error_of([&] { SafetensorsWriter(path, {{"a", WeightDType::F32, {1}}, {"a", WeightDType::F16, {1}}}, {}); }) ==
             path + ": tensor 'a': given twice");
  const std::string folder = kDir.path() + "/twice";
  BOOST_TEST(error_of([&] { CheckpointWriter(folder, {{"a", WeightDType::F32, {4}}, {"a", WeightDType::F32, {4}}}, 16, {}); }) ==
             folder + ": tensor 'a': given twice");
}

BOOST_AUTO_TEST_CASE(a_failed_or_unfinished_write_leaves_no_partial_file) {
  const std::string path = kDir.path() + "/atomic.safetensors";
  {  // abandoned: nothing appears
    SafetensorsWriter writer(path, kSpecs, {});
    BOOST_TEST(fs::exists(path + ".tmp"));
  }
  BOOST_TEST(!fs::exists(path));
  BOOST_TEST(!fs::exists(path + ".tmp"));

  // An earlier file stays intact when a rewrite fails for lack of space (a 1 MiB file size
  // limit stands in for a full disk: write() fails with EFBIG).
  const std::vector<TensorSpec> small = {{"a", WeightDType::F32, {2}}};
  SafetensorsWriter earlier(path, small, {});
  const float two[2] = {1.5f, -2.0f};
  earlier.write(two, 2);
  earlier.finish();
  const std::string before = file_bytes(path);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit limited = saved;
  limited.rlim_cur = 1 << 20;
  const auto previous_handler = signal(SIGXFSZ, SIG_IGN);
  BOOST_REQUIRE(setrlimit(RLIMIT_FSIZE, &limited) == 0);
  const std::string message = error_of([&] {
    SafetensorsWriter writer(path, {{"big", WeightDType::F32, {1 << 20}}}, {});
    std::vector<float> big(1 << 20, 1.0f);
    writer.write(big.data(), 1 << 20);
    writer.finish();
  });
  setrlimit(RLIMIT_FSIZE, &saved);
  signal(SIGXFSZ, previous_handler);
  BOOST_TEST(message == path + ": tensor 'big': write failed: File too large");
  BOOST_TEST((file_bytes(path) == before));
  BOOST_TEST(!fs::exists(path + ".tmp"));

  // A checkpoint abandoned after its first shard was complete: the folder stays empty.
  const std::string folder = kDir.path() + "/unfinished";
  {
    CheckpointWriter writer(folder, kSpecs, 500, {});
    const std::vector<float> zeros(1000);
    writer.write(zeros.data(), 7);    // blocks.0.b
    writer.write(zeros.data(), 231);  // blocks.0.w
    writer.write(zeros.data(), 3);    // blocks.1.b: shard 1 complete
    writer.write(zeros.data(), 1);    // into shard 2
  }
  BOOST_TEST(fs::is_empty(folder));
}
