#include "weights/tensor_file.hpp"

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "weights/safetensors_format.hpp"
#include "weights/torch_conversion.hpp"
#include "weights/torch_format.hpp"

namespace emb {

namespace {

TensorTable parse_any(const MappedFile& file) {
  if (is_zip_file(file)) return parse_torch_zip(file);
  EMB_CHECK(!is_legacy_torch_file(file), file.path(),
            ": a legacy torch.save file (PyTorch < 1.6 or _use_new_zipfile_serialization=False), not the zip format; "
            "convert it to safetensors: ", safetensors_conversion_command(file.path(), ""));
  return parse_safetensors(file);
}

// Row-major, ignoring dimensions of size 1 (PyTorch gives those arbitrary strides).
bool is_contiguous(const StoredTensor& t) {
  int64_t expected = 1;
  for (size_t d = t.info.shape.size(); d-- > 0;) {
    if (t.info.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.info.shape[d];
  }
  return true;
}

// Calls copy(storage_element, count, out_element) for each run of elements [begin, end)
// that is consecutive in storage too: one run for a contiguous tensor, one per row of a
// view with unit inner stride, one per element otherwise (a transpose).
template <class Copy>
void for_each_run(const StoredTensor& t, int64_t begin, int64_t end, Copy copy) {
  if (begin == end) return;
  if (is_contiguous(t)) {
    copy(begin, end - begin, 0);
    return;
  }
  const std::vector<int64_t>& shape = t.info.shape;
  const std::vector<int64_t>& strides = t.strides;
  const size_t inner = shape.size() - 1;
  std::vector<int64_t> index(shape.size());
  int64_t offset = 0;
  for (size_t d = shape.size(), rest = size_t(begin); d-- > 0;) {
    index[d] = int64_t(rest % size_t(shape[d]));
    rest /= size_t(shape[d]);
    offset += index[d] * strides[d];
  }
  for (int64_t done = 0; done < end - begin;) {
    const int64_t n = std::min(end - begin - done, shape[inner] - index[inner]);
    if (strides[inner] == 1) {
      copy(offset, n, done);
    } else {
      for (int64_t k = 0; k < n; ++k) copy(offset + k * strides[inner], 1, done + k);
    }
    done += n;
    index[inner] += n;
    offset += n * strides[inner];
    for (size_t d = inner; d > 0 && index[d] == shape[d]; --d) {  // carry into outer dimensions
      offset += strides[d - 1] - shape[d] * strides[d];
      index[d] = 0;
      ++index[d - 1];
    }
  }
}

}  // namespace

TensorFile::TensorFile(const std::string& path) : file_(path) {
  TensorTable table = parse_any(file_);
  tensors_ = std::move(table.tensors);
  metadata_ = std::move(table.metadata);
  for (size_t i = 0; i < tensors_.size(); ++i) {
    infos_.push_back(tensors_[i].info);
    index_[tensors_[i].info.name] = i;
  }
}

const TensorInfo* TensorFile::find(const std::string& name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &infos_[it->second];
}

const StoredTensor& TensorFile::slice_of(const std::string& name, int64_t begin, int64_t end) const {
  auto it = index_.find(name);
  EMB_CHECK(it != index_.end(), path(), ": no tensor ", emb::quoted_name(name));
  const StoredTensor& t = tensors_[it->second];
  EMB_CHECK(0 <= begin && begin <= end && end <= t.info.numel(), path(), ": tensor ", emb::quoted_name(name), ": slice [", begin,
            ", ", end, ") is outside its ", t.info.numel(), " elements");
  if (is_contiguous(t)) {
    const uint64_t element = weight_dtype_size(t.info.dtype);
    file_.prefetch(t.byte_offset + uint64_t(begin) * element, uint64_t(end - begin) * element);
  }
  bytes_copied_.fetch_add(uint64_t(end - begin) * weight_dtype_size(t.info.dtype), std::memory_order_relaxed);
  return t;
}

void TensorFile::read(const std::string& name, int64_t begin, int64_t end, float* out) const {
  const StoredTensor& t = slice_of(name, begin, end);
  const WeightDType dtype = t.info.dtype;
  EMB_CHECK(converts_to_float(dtype), path(), ": tensor ", emb::quoted_name(name), ": dtype ", weight_dtype_name(dtype),
            " is not read as float32 (F32, BF16 and F16 are); read it raw");
  const size_t element = weight_dtype_size(dtype);
  const unsigned char* base = file_.data() + t.byte_offset;
  for_each_run(t, begin, end, [&](int64_t at, int64_t count, int64_t out_at) {
    decode_to_float(dtype, base + at * int64_t(element), count, out + out_at);
  });
}

void TensorFile::read_raw(const std::string& name, int64_t begin, int64_t end, void* out) const {
  const StoredTensor& t = slice_of(name, begin, end);
  const int64_t element = int64_t(weight_dtype_size(t.info.dtype));
  const unsigned char* base = file_.data() + t.byte_offset;
  auto* bytes = static_cast<unsigned char*>(out);
  for_each_run(t, begin, end, [&](int64_t at, int64_t count, int64_t out_at) {
    std::memcpy(bytes + out_at * element, base + at * element, size_t(count * element));
  });
}

}  // namespace emb
