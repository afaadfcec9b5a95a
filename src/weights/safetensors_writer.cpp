#include "weights/safetensors_writer.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/fs.hpp"
#include "weights/tensor_info.hpp"

namespace emb {

namespace {

constexpr int64_t kStagingElements = 1 << 20;  // float32 values converted per write call

}  // namespace

SafetensorsWriter::SafetensorsWriter(const std::string& path, std::vector<TensorSpec> tensors,
                                     const std::map<std::string, std::string>& metadata)
    : path_(path), tmp_(path + ".tmp"), tensors_(std::move(tensors)) {
  std::sort(tensors_.begin(), tensors_.end(), [](const TensorSpec& a, const TensorSpec& b) {
    const size_t sa = weight_dtype_size(a.dtype), sb = weight_dtype_size(b.dtype);
    return sa != sb ? sa > sb : a.name < b.name;
  });
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (size_t i = 0; i < tensors_.size(); ++i) {
    const TensorSpec& t = tensors_[i];
    EMB_CHECK(t.name != "__metadata__" && !header.contains(t.name), path, ": tensor ", emb::quoted_name(t.name),
              (t.name == "__metadata__" ? ": a reserved name" : ": given twice"));
    for (int64_t d : t.shape) EMB_CHECK(d >= 0, path, ": tensor ", emb::quoted_name(t.name), ": shape ", shape_string(t.shape));
    header[t.name] = {{"dtype", weight_dtype_name(t.dtype)}, {"shape", t.shape},
                      {"data_offsets", {offset, offset + t.bytes()}}};
    offset += t.bytes();
  }
  std::string text = header.dump();
  text.resize((text.size() + 7) / 8 * 8, ' ');  // data start 8-byte aligned
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>(uint64_t(text.size()) >> (8 * i));

  fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EMB_CHECK(fd_ >= 0, tmp_, ": cannot create: ", std::strerror(errno));
  append(length, 8);
  append(text.data(), text.size());
  while (current_ < tensors_.size() && tensors_[current_].numel() == 0) ++current_;
}

SafetensorsWriter::~SafetensorsWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!published_) ::unlink(tmp_.c_str());
}

void SafetensorsWriter::append(const void* bytes, uint64_t size) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::write(fd_, p, size);
    if (n < 0 && errno == EINTR) continue;
    EMB_CHECK(n > 0, path_, ": ",
              current_ < tensors_.size() ? str("tensor ", emb::quoted_name(tensors_[current_].name), ": ") : std::string(),
              "write failed: ", n < 0 ? std::strerror(errno) : "no progress");
    p += n;
    size -= uint64_t(n);
  }
}

const TensorSpec& SafetensorsWriter::take(int64_t count) {
  EMB_CHECK(current_ < tensors_.size(), path_, ": ", count, " elements written after the last tensor");
  const TensorSpec& t = tensors_[current_];
  EMB_CHECK(count >= 0 && written_ + count <= t.numel(), path_, ": tensor ", emb::quoted_name(t.name), ": ", count,
            " more elements after ", written_, " overrun its ", t.numel());
  return t;
}

void SafetensorsWriter::write(const float* values, int64_t count) {
  const TensorSpec& t = take(count);
  EMB_CHECK(converts_to_float(t.dtype), path_, ": tensor ", emb::quoted_name(t.name), ": dtype ", weight_dtype_name(t.dtype),
            " is not written from float32 (F32, BF16 and F16 are); write it raw");
  const size_t element = weight_dtype_size(t.dtype);
  for (int64_t done = 0; done < count;) {
    const int64_t n = std::min(kStagingElements, count - done);
    staging_.resize(size_t(n) * element);
    encode_from_float(t.dtype, values + done, n, staging_.data());
    write_raw(staging_.data(), n);
    done += n;
  }
}

void SafetensorsWriter::write_raw(const void* bytes, int64_t count) {
  const TensorSpec& t = take(count);
  append(bytes, uint64_t(count) * weight_dtype_size(t.dtype));
  written_ += count;
  while (current_ < tensors_.size() && written_ == tensors_[current_].numel()) {  // next, skipping empty ones
    ++current_;
    written_ = 0;
  }
}

void SafetensorsWriter::complete() {
  if (current_ < tensors_.size())
    throw Error(str(path_, ": tensor ", emb::quoted_name(tensors_[current_].name), ": only ", written_, " of its ",
                    tensors_[current_].numel(), " elements written"));
  EMB_CHECK(::fsync(fd_) == 0, path_, ": fsync failed: ", std::strerror(errno));
  const int rc = ::close(fd_);
  fd_ = -1;
  EMB_CHECK(rc == 0, path_, ": close failed: ", std::strerror(errno));
}

void SafetensorsWriter::publish() {
  EMB_CHECK(fd_ < 0 && current_ == tensors_.size(), path_, ": published before it was complete");
  // The temporary was fsynced by complete(); publish_durably syncs it again (cheap, nothing
  // is dirty) and then the directory entry.
  publish_durably(tmp_, path_);
  published_ = true;
}

void SafetensorsWriter::finish() {
  complete();
  publish();
}

}  // namespace emb
