// Writes one safetensors file as the reference library lays it out: header padded with
// spaces to 8 bytes, tensors ordered by element size (largest first) then name so that each
// starts aligned to its element size, "__metadata__" as given. The output is a function of
// the tensors alone (deterministic), and appears only when complete: it is written to
// "<path>.tmp", fsynced and renamed; a failure or an unfinished writer leaves no file.
//
// The header comes first, so every tensor is declared up front; the data then stream in,
// tensor by tensor in order(), in pieces of any size, so that no tensor has to be in memory
// whole (an exporter gathers a sharded parameter a slice at a time).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "weights/weight_dtype.hpp"

namespace emb {

struct TensorSpec {
  std::string name;
  WeightDType dtype = WeightDType::F32;  // as written; write() converts float32 to it
  std::vector<int64_t> shape;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
  }
  uint64_t bytes() const { return uint64_t(numel()) * weight_dtype_size(dtype); }
};

class SafetensorsWriter {
 public:
  SafetensorsWriter(const std::string& path, std::vector<TensorSpec> tensors,
                    const std::map<std::string, std::string>& metadata);
  ~SafetensorsWriter();  // removes the temporary file unless it was published
  SafetensorsWriter(const SafetensorsWriter&) = delete;
  SafetensorsWriter& operator=(const SafetensorsWriter&) = delete;

  const std::string& path() const { return path_; }
  // The tensors in the order their data must be written.
  const std::vector<TensorSpec>& order() const { return tensors_; }
  // Appends `count` elements of the current tensor (the first in order() not yet complete),
  // converted from float32 to its dtype (F32, BF16 or F16; BF16 and F16 round to nearest even).
  void write(const float* values, int64_t count);
  // Appends `count` elements of the current tensor as stored bytes (any dtype).
  void write_raw(const void* bytes, int64_t count);
  // True once every element of every tensor was given.
  bool all_written() const { return current_ == tensors_.size(); }
  // complete() then publish().
  void finish();
  // Checks that every tensor was written in full, then flushes and fsyncs the temporary file.
  void complete();
  // Renames the completed file into place, durably. A set of files published together (the
  // shards of a checkpoint) completes all before publishing any.
  void publish();

 private:
  // The current tensor, checked to take `count` more elements.
  const TensorSpec& take(int64_t count);
  void append(const void* bytes, uint64_t size);

  std::string path_, tmp_;
  std::vector<TensorSpec> tensors_;
  int fd_ = -1;
  size_t current_ = 0;      // tensor being written
  int64_t written_ = 0;     // elements of it written so far
  std::vector<unsigned char> staging_;  // converted elements on their way to the file
  bool published_ = false;
};

}  // namespace emb
