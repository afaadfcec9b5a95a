// Gathers every rank's byte blob on rank 0, in rank order (other ranks get nothing back).
// The collect and eval commands serialise their per-episode records with ByteWriter and read
// them back with ByteReader.
#pragma once
#include <mpi.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace emb {

std::vector<std::vector<uint8_t>> gather_bytes(MPI_Comm comm, const std::vector<uint8_t>& mine);

class ByteWriter {
 public:
  template <class T>
  void put(const T& v) { append(&v, sizeof v); }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put(uint64_t(v.size()));
    append(v.data(), v.size() * sizeof(T));
  }
  void put_string(const std::string& s) { put_vector(std::vector<char>(s.begin(), s.end())); }
  std::vector<uint8_t>& bytes() { return bytes_; }

 private:
  void append(const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<uint8_t> bytes_;
};

class ByteReader {
 public:
  explicit ByteReader(const std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  bool done() const { return pos_ == bytes_.size(); }
  template <class T>
  T get() {
    T v;
    take(&v, sizeof v);
    return v;
  }
  template <class T>
  std::vector<T> get_vector() {
    std::vector<T> v(size_t(get<uint64_t>()));
    take(v.data(), v.size() * sizeof(T));
    return v;
  }
  std::string get_string() {
    std::vector<char> c = get_vector<char>();
    return std::string(c.begin(), c.end());
  }

 private:
  void take(void* p, size_t n) {
    EMB_ASSERT(pos_ + n <= bytes_.size());
    std::memcpy(p, bytes_.data() + pos_, n);
    pos_ += n;
  }
  const std::vector<uint8_t>& bytes_;
  size_t pos_ = 0;
};

}  // namespace emb
