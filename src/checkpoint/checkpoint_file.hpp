// One checkpoint file (DESIGN.md "Checkpoints"), format "embtrain-ckpt/1": every tensor is a
// 1-D fp32 dataset holding the FULL logical tensor (its `shape` attribute gives the
// logical shape), and the metadata are attributes of the root group. Opened with a
// communicator, the file goes through HDF5's MPI-IO driver: every rank transfers one
// contiguous range of a tensor (possibly empty) in one collective call, so all ranks of the
// communicator make the same calls in the same order with the same metadata values. Opened
// with MPI_COMM_NULL it is a plain serial file (rank 0's validation, resume resolution).
// Every failure throws emb::Error "FILE:/object: what was expected".
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "data/h5_file.hpp"

namespace emb {

constexpr const char* kCheckpointFormat = "embtrain-ckpt/1";
// The groups holding the three states' tensors (/params/<name>, ...), in file order.
constexpr std::array<const char*, 3> kTensorGroups = {"params", "exp_avg", "exp_avg_sq"};

std::string shape_text(const std::vector<int64_t>& shape);  // "[2, 3]", for messages

class CheckpointFile {
 public:
  enum class Access { create, read };  // create truncates; read is read-only
  CheckpointFile(const std::string& path, MPI_Comm comm, Access access);
  ~CheckpointFile();
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;

  const std::string& path() const { return path_; }
  // Throws unless this is a finished checkpoint: not a "*.tmp" name, the right `format`, and
  // the `complete` marker that saving writes last (absent: the write was torn).
  void expect_complete() const;
  [[noreturn]] void fail(const std::string& obj, const std::string& message) const;

  void create_group(const std::string& group);
  bool has(const std::string& obj) const;
  std::vector<std::string> members(const std::string& group) const;  // sorted names

  // Creates `ds` (numel of `shape` fp32 elements, attribute `shape`) and writes data[0, count)
  // to its elements [begin, begin + count).
  void write_tensor(const std::string& ds, const std::vector<int64_t>& shape, int64_t begin, int64_t count,
                    const float* data);
  // Reads elements [begin, begin + count) of `ds` into data.
  void read_tensor(const std::string& ds, int64_t begin, int64_t count, float* data) const;
  // The logical shape of `ds` after checking that it is a 1-D fp32 dataset of that many
  // elements; "missing" when absent.
  std::vector<int64_t> tensor_shape(const std::string& ds) const;

  // The CRC-32 of a tensor's whole data (attribute crc32 of the dataset, tensor_checksum.hpp).
  void set_tensor_checksum(const std::string& ds, uint32_t crc);
  uint32_t tensor_checksum(const std::string& ds) const;
  // Reads the whole of `ds` (n elements) into data and checks it against its stored CRC-32:
  // fail() naming `ds` on a mismatch.
  void read_verified_tensor(const std::string& ds, int64_t n, float* data) const;

  // Attributes of the root group.
  bool has_attr(const std::string& name) const;
  void set_attr(const std::string& name, int64_t value);
  void set_attr(const std::string& name, uint64_t value);
  void set_attr(const std::string& name, const std::string& value);  // variable-length UTF-8
  int64_t attr_int(const std::string& name) const;
  uint64_t attr_uint(const std::string& name) const;
  std::string attr_string(const std::string& name) const;

  // Pushes everything written so far to storage (MPI_File_sync), so that a marker written
  // afterwards is never on disk before the data it vouches for.
  void sync();
  // Collective; reports a failed final flush (the destructor closes silently).
  void close();

 private:
  void write_scalar_attr(const std::string& name, hid_t file_type, hid_t mem_type, const void* value);
  void read_scalar_attr(const std::string& name, H5T_class_t cls, hid_t mem_type, void* value) const;
  H5Handle open_dataset(const std::string& ds) const;

  std::string path_;
  hid_t file_ = -1;
  H5Handle xfer_;  // collective transfers (parallel) or the defaults
};

}  // namespace emb
