// Flat byte messages for RL traffic (observations, actions, rollouts) between ranks. Values
// are copied bytewise in the host's layout: every rank of a job runs the same binary on the
// same architecture, so no byte swapping or schema versioning is needed. A vector or string
// is its element count (int64) followed by its elements.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace emb {

class ByteWriter {
 public:
  template <class T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>, "ByteWriter::put copies bytes");
    append(&value, sizeof(T));
  }
  template <class T>
  void put_vector(const std::vector<T>& values) {
    static_assert(std::is_trivially_copyable_v<T>, "ByteWriter::put_vector copies bytes");
    put(int64_t(values.size()));
    append(values.data(), values.size() * sizeof(T));
  }
  void put_string(const std::string& text);
  // The message so far; the writer is empty afterwards.
  std::vector<uint8_t> take();

 private:
  void append(const void* data, size_t size);
  std::vector<uint8_t> bytes_;
};

// Reads a message in the order it was written. `what` names the field for the error a
// short or corrupt message raises ("rl message too short reading 'reward': ...").
class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : data_(bytes.data()), size_(bytes.size()) {}
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  template <class T>
  T get(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>, "ByteReader::get copies bytes");
    T value;
    std::memcpy(&value, take(sizeof(T), what), sizeof(T));
    return value;
  }
  template <class T>
  std::vector<T> get_vector(const char* what) {
    static_assert(std::is_trivially_copyable_v<T>, "ByteReader::get_vector copies bytes");
    const size_t count = get_count(sizeof(T), what);
    std::vector<T> values(count);
    if (count > 0) std::memcpy(values.data(), take(count * sizeof(T), what), count * sizeof(T));
    return values;
  }
  std::string get_string(const char* what);

  // True when every byte has been read: a message with bytes left over is not the one the
  // reader expected.
  bool done() const { return offset_ == size_; }
  size_t remaining() const { return size_ - offset_; }

 private:
  // Reads an element count and checks that count elements of `element_size` bytes follow.
  size_t get_count(size_t element_size, const char* what);
  const uint8_t* take(size_t size, const char* what);

  const uint8_t* data_;
  size_t size_;
  size_t offset_ = 0;
};

}  // namespace emb
