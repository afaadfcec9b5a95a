// A thin, error-checked view of one HDF5 file as packed files use it: typed datasets of
// rows, string attributes and variable-length strings. Every failure throws emb::Error
// with one line "FILE:/path/in/file: what was expected". Opened with an MPI communicator
// the file goes through HDF5's MPI-IO driver with collective metadata operations, so all
// ranks of the communicator must make the same calls in the same order; how a read's bytes
// move is MpioTransfer (writes are collective). Opened with MPI_COMM_NULL it is a plain serial file (embpack, tests).
#pragma once
#include <hdf5.h>
#include <mpi.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "config/data_config.hpp"

namespace emb {

// Owns one HDF5 identifier and releases it with the matching H5*close function.
class H5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  H5Handle() = default;
  H5Handle(hid_t id, Closer close) : id_(id), close_(close) {}
  H5Handle(H5Handle&& o) noexcept : id_(o.id_), close_(o.close_) { o.id_ = -1; }
  H5Handle& operator=(H5Handle&& o) noexcept;
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() { reset(); }
  void reset();
  hid_t get() const { return id_; }

 private:
  hid_t id_ = -1;
  Closer close_ = nullptr;
};

// The element types a packed file stores. f16 is IEEE binary16, kept as raw uint16 bits in
// memory (HDF5 1.10 has no native half; converting in HDF5 would also turn collective reads
// into independent ones).
enum class Elem { f32, f16, i32, i64, u8 };
const char* elem_name(Elem e);
template <class T> constexpr Elem elem_of();
template <> constexpr Elem elem_of<float>() { return Elem::f32; }
template <> constexpr Elem elem_of<uint16_t>() { return Elem::f16; }
template <> constexpr Elem elem_of<int32_t>() { return Elem::i32; }
template <> constexpr Elem elem_of<int64_t>() { return Elem::i64; }
template <> constexpr Elem elem_of<uint8_t>() { return Elem::u8; }
size_t elem_size(Elem e);

// How a read's bytes move: MpioTransfer (config/data_config.hpp, data.mpio_transfer).
MpioTransfer mpio_transfer_from_name(const std::string& name);

// Sorted, disjoint row intervals [begin, end) of one dataset; read into one buffer where
// the intervals lie back to back in row order.
class RowRanges {
 public:
  void add(int64_t begin, int64_t end);  // any order, overlaps allowed
  void clear() { ranges_.clear(), sorted_ = true; }
  // Merges overlapping/adjacent intervals; call once after the last add().
  void finish();
  int64_t rows() const;
  // Row index inside the read buffer of file row `row` (which must be covered).
  int64_t locate(int64_t row) const;
  const std::vector<std::array<int64_t, 3>>& ranges() const { return ranges_; }  // begin, end, buffer row

 private:
  std::vector<std::array<int64_t, 3>> ranges_;
  bool sorted_ = true;
};

class H5File {
 public:
  // comm == MPI_COMM_NULL: serial. Missing, unreadable (permission) or non-HDF5 file: emb::Error.
  static H5File open(const std::string& path, MPI_Comm comm = MPI_COMM_NULL,
                     MpioTransfer transfer = MpioTransfer::independent);
  // Truncates. With a communicator the file is parallel (MPI-IO, collective metadata and
  // collective writes): every rank creates the same datasets with the same global dims and
  // writes its own rows with write_rows. Variable-length data (strings) cannot be written
  // in parallel (HDF5 1.10): write those through a serial append() after closing.
  static H5File create(const std::string& path, MPI_Comm comm = MPI_COMM_NULL);
  static H5File append(const std::string& path);  // serial, read-write

  const std::string& path() const { return path_; }
  bool parallel() const { return parallel_; }
  // "FILE:/obj: message", the one-line form of every data error.
  std::string where(const std::string& obj, const std::string& message) const;
  [[noreturn]] void fail(const std::string& obj, const std::string& message) const;

  bool has(const std::string& obj) const;  // group or dataset; intermediate groups may be missing
  std::vector<std::string> members(const std::string& group) const;  // sorted names
  std::vector<int64_t> dims(const std::string& ds) const;
  // Checks that `ds` exists, stores `e` and has `rank` dimensions; returns its dims.
  std::vector<int64_t> expect(const std::string& ds, Elem e, int rank) const;

  bool has_attr(const std::string& obj, const std::string& name) const;
  std::string attr_string(const std::string& obj, const std::string& name) const;
  double attr_double(const std::string& obj, const std::string& name) const;
  // Creates or replaces the attribute.
  void set_attr(const std::string& obj, const std::string& name, const std::string& value);
  void set_attr(const std::string& obj, const std::string& name, double value);

  template <class T>
  std::vector<T> read_all(const std::string& ds) const {
    std::vector<int64_t> d = expect_any_rank(ds, elem_of<T>());
    int64_t n = 1;
    for (int64_t x : d) n *= x;
    std::vector<T> out(static_cast<size_t>(n));
    read_raw(ds, elem_of<T>(), out.data());
    return out;
  }
  // Reads the given rows (all columns) of `ds` into dst, back to back in row order.
  // With parts > 1 this rank reads only its share: buffer rows [rows()·part/parts,
  // rows()·(part+1)/parts), written at their place in dst; every rank still issues one
  // read per range (an empty selection where its share misses the range), so the calls of
  // a parallel file stay matched. Returns the bytes this rank read.
  int64_t read_rows(const std::string& ds, Elem e, const RowRanges& rows, void* dst, int part = 0, int parts = 1) const;
  std::vector<std::string> read_strings(const std::string& ds) const;
  // Any integer or float dataset converted to float32 (for converters reading foreign files).
  std::vector<float> read_as_float(const std::string& ds) const;

  // Writes a new dataset (creating parent groups), chunked by rows.
  template <class T>
  void write(const std::string& ds, const std::vector<int64_t>& dims, const T* data) {
    write_raw(ds, elem_of<T>(), dims, 0, dims.empty() ? 0 : dims[0], data);
  }
  // Creates `ds` with the global `dims` and writes this rank's rows [first_row, first_row +
  // rows) from data (rows x dims[1..]); collective on a parallel file (rows may be 0).
  template <class T>
  void write_rows(const std::string& ds, const std::vector<int64_t>& dims, int64_t first_row, int64_t rows,
                  const T* data) {
    write_raw(ds, elem_of<T>(), dims, first_row, rows, data);
  }
  void write_strings(const std::string& ds, const std::vector<std::string>& values);

 private:
  std::vector<int64_t> expect_any_rank(const std::string& ds, Elem e) const;
  // A read past the end of a file that shrank after open returns zeros through MPI-IO (no
  // error): after each read, a file smaller than at open fails naming `ds`.
  void check_not_shrunk(const std::string& ds) const;
  void read_raw(const std::string& ds, Elem e, void* dst) const;
  void write_raw(const std::string& ds, Elem e, const std::vector<int64_t>& dims, int64_t first_row, int64_t rows,
                 const void* data);
  H5Handle open_dataset(const std::string& ds) const;
  hid_t parent_group(const std::string& obj);

  std::string path_;
  H5Handle file_;
  H5Handle xfer_;  // the MPI-IO transfer list (parallel) or H5P_DEFAULT
  bool parallel_ = false;
  int64_t bytes_at_open_ = -1;  // opened for reading: its size then (-1: not checked)
};

}  // namespace emb
