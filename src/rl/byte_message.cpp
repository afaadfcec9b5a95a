#include "rl/byte_message.hpp"

#include "core/error.hpp"

namespace emb {

void ByteWriter::put_string(const std::string& text) {
  put(int64_t(text.size()));
  append(text.data(), text.size());
}

std::vector<uint8_t> ByteWriter::take() {
  std::vector<uint8_t> message;
  message.swap(bytes_);
  return message;
}

void ByteWriter::append(const void* data, size_t size) {
  if (size == 0) return;  // data may be null for an empty vector
  const auto* bytes = static_cast<const uint8_t*>(data);
  bytes_.insert(bytes_.end(), bytes, bytes + size);
}

std::string ByteReader::get_string(const char* what) {
  const size_t count = get_count(1, what);
  const char* text = reinterpret_cast<const char*>(take(count, what));
  return std::string(text, count);
}

size_t ByteReader::get_count(size_t element_size, const char* what) {
  const int64_t count = get<int64_t>(what);
  // Compared as a division so that a corrupt count near 2^63 cannot overflow count × size.
  EMB_CHECK(count >= 0 && uint64_t(count) <= remaining() / element_size, "rl message too short reading '",
            what, "': ", count, " elements of ", element_size, " bytes announced at offset ", offset_ - 8,
            ", ", remaining(), " bytes left");
  return size_t(count);
}

const uint8_t* ByteReader::take(size_t size, const char* what) {
  EMB_CHECK(size <= remaining(), "rl message too short reading '", what, "': needs ", size, " bytes at offset ",
            offset_, ", ", remaining(), " left of ", size_);
  const uint8_t* at = data_ + offset_;
  offset_ += size;
  return at;
}

}  // namespace emb
