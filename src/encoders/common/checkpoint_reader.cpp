#include "encoders/common/checkpoint_reader.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "core/error.hpp"
#include "encoders/common/linear_transpose.hpp"

namespace emb::encoders {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += str(i ? ", " : "", shape[i]);
  return s + "]";
}

std::string tensors_digest(const WeightSource& source, const std::function<bool(const std::string&)>& take) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](const void* data, size_t n) {
    const unsigned char* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  };
  // The bytes in 8-byte words (FNV-1a over words: the same strength for a change anywhere, 8x
  // fewer multiplications), a short tail bytewise.
  auto mix_words = [&](const std::vector<unsigned char>& bytes) {
    const size_t words = bytes.size() / 8;
    for (size_t i = 0; i < words; ++i) {
      uint64_t w;
      std::memcpy(&w, bytes.data() + 8 * i, 8);
      h = (h ^ w) * 0x100000001b3ull;
    }
    mix(bytes.data() + 8 * words, bytes.size() - 8 * words);
  };
  std::vector<unsigned char> buffer;
  for (const TensorInfo& info : source.tensors()) {  // sorted by name
    const std::string& name = info.name;
    if (!take(name)) continue;
    const std::string header = str(name, " ", weight_dtype_name(info.dtype), " ", shape_text(info.shape));
    mix(header.data(), header.size());
    const int64_t size = int64_t(weight_dtype_size(info.dtype));
    const int64_t slice = std::max<int64_t>(1, (int64_t(1) << 24) / size);
    for (int64_t begin = 0; begin < info.numel(); begin += slice) {
      const int64_t end = std::min(info.numel(), begin + slice);
      buffer.resize(size_t((end - begin) * size));
      source.read_raw(name, begin, end, buffer.data());
      mix_words(buffer);
    }
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

CheckpointReader::CheckpointReader(const WeightSource& source, BackendTensors& store, TensorOwner owner,
                                   LinearForm form)
    : source_(source), store_(store), owner_(std::move(owner)), form_(form) {}

void check_tensor(const WeightSource& source, const TensorOwner& owner, const std::string& name,
                  const std::vector<int64_t>& shape) {
  const TensorInfo* info = source.find(name);
  if (!info)
    throw Error(str(source.path(), ": ", owner.kind, " ", name, " is missing (", owner.reader, " reads it; shape ",
                    shape_text(shape), ")"),
                kExitInput);
  if (info->shape != shape)
    throw Error(str(source.path(), ": ", owner.kind, " ", name, " has shape ", shape_text(info->shape), ", expected ",
                    shape_text(shape), " (", owner.shapes_from, ")"),
                kExitInput);
}

void CheckpointReader::check(const std::string& name, const std::vector<int64_t>& shape) const {
  check_tensor(source_, owner_, name, shape);
}

std::vector<float> CheckpointReader::read(const std::string& name, const std::vector<int64_t>& shape) const {
  check(name, shape);
  const int64_t n = source_.info(name).numel();
  std::vector<float> values(static_cast<size_t>(n));
  source_.read(name, 0, n, values.data());
  return values;
}

View CheckpointReader::vector(const std::string& name, int64_t n) const {
  return store_.upload(read(name, {n}).data(), 1, n);
}

View CheckpointReader::vectors(const std::vector<std::string>& names, const std::vector<int64_t>& ns) const {
  std::vector<float> packed;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::vector<float> b = read(names[k], {ns[k]});
    packed.insert(packed.end(), b.begin(), b.end());
  }
  return store_.upload(packed.data(), 1, int64_t(packed.size()));
}

View CheckpointReader::linears(const std::vector<std::string>& names, int64_t in, const std::vector<int64_t>& outs) const {
  int64_t total = 0;
  for (int64_t o : outs) total += o;
  std::vector<float> side_by_side(size_t(in * total));
  int64_t col = 0;
  for (size_t k = 0; k < names.size(); ++k) {
    const std::vector<float> w = read(names[k], {outs[k], in});
    transpose_linear_into(w.data(), outs[k], in, side_by_side.data(), total, col);
    col += outs[k];
  }
  return form_ == LinearForm::packed ? packed(side_by_side, in, total) : upload(side_by_side, in, total);
}

View CheckpointReader::packed(const std::vector<float>& W, int64_t in, int64_t out) const {
  Ops& ops = store_.ops();
  BackendTensors plain(ops, store_.dtype());
  const View packed = store_.make(1, ops.packed_linear_elements(in, out));
  ops.pack_linear(plain.upload(W.data(), in, out), packed);
  ops.synchronize();  // `plain` is released on return
  return packed;
}

View CheckpointReader::packed_conv(const std::vector<float>& weight, int kt, int64_t rows, int64_t cols) const {
  Ops& ops = store_.ops();
  BackendTensors plain(ops, store_.dtype());
  const View packed = store_.make(1, ops.packed_conv3d_elements(kt, rows / kt, cols));
  ops.pack_conv3d(plain.upload(weight.data(), rows, cols), kt, packed);
  ops.synchronize();  // `plain` is released on return
  return packed;
}

View CheckpointReader::table(const std::string& name, int64_t rows, int64_t cols) const {
  check(name, {rows, cols});
  const View v = store_.make(rows, cols);
  const int64_t slice = std::max<int64_t>(1, (int64_t(1) << 22) / std::max<int64_t>(cols, 1));
  std::vector<float> buffer;
  for (int64_t r = 0; r < rows; r += slice) {
    const int64_t n = std::min(slice, rows - r);
    buffer.resize(size_t(n * cols));
    source_.read(name, r * cols, (r + n) * cols, buffer.data());
    store_.upload_rows(v, r, buffer.data(), n);
  }
  return v;
}

View CheckpointReader::upload(const std::vector<float>& values, int64_t rows, int64_t cols) const {
  EMB_ASSERT(int64_t(values.size()) == rows * cols);
  return store_.upload(values.data(), rows, cols);
}

}  // namespace emb::encoders
