#include "checkpoint/checkpoint_file.hpp"

#include <algorithm>
#include <cstring>

#include "checkpoint/tensor_checksum.hpp"
#include "core/error.hpp"
#include "core/fs.hpp"

namespace emb {

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += str(i ? ", " : "", shape[i]);
  return s + "]";
}

namespace {

int64_t numel_of(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// Selects elements [begin, begin + count) of a 1-D dataspace; nothing when count is 0 (the
// rank still takes part in the collective transfer).
void select_range(hid_t space, int64_t begin, int64_t count) {
  if (count == 0) {
    H5Sselect_none(space);
    return;
  }
  hsize_t start = hsize_t(begin), n = hsize_t(count);
  H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, nullptr, &n, nullptr);
}

H5Handle memory_space(int64_t count) {
  hsize_t n = hsize_t(std::max<int64_t>(count, 1));
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  select_range(space.get(), 0, count);
  return space;
}

H5Handle vlen_string_type() {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  return type;
}

}  // namespace

CheckpointFile::CheckpointFile(const std::string& path, MPI_Comm comm, Access access) : path_(path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported as emb::Error, not stacks
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  xfer_ = H5Handle(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
  // MPI-IO only when ranks share the file: a one-rank communicator (the RL trainer saves on
  // MPI_COMM_SELF) writes through the POSIX driver, the same bytes, without Open MPI's shared
  // file pointer component warning "unable to open file for mmap" on every checkpoint.
  int ranks = 1;
  if (comm != MPI_COMM_NULL) MPI_Comm_size(comm, &ranks);
  if (ranks > 1) {
    H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl.get(), true);
    H5Pset_coll_metadata_write(fapl.get(), true);
    H5Pset_dxpl_mpio(xfer_.get(), H5FD_MPIO_COLLECTIVE);
  }
  if (access == Access::create) {
    file_ = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
    EMB_CHECK(file_ >= 0, clipped_path(path), ": cannot create checkpoint file");
    return;
  }
  check_readable_file(path, "checkpoint");
  EMB_CHECK(H5Fis_hdf5(path.c_str()) > 0, clipped_path(path), ": not an HDF5 file");
  file_ = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  EMB_CHECK(file_ >= 0, clipped_path(path), ": cannot open as HDF5 (truncated or corrupt file)");
}

CheckpointFile::~CheckpointFile() {
  if (file_ >= 0) H5Fclose(file_);
}

void CheckpointFile::close() {
  herr_t rc = H5Fclose(file_);
  file_ = -1;
  EMB_CHECK(rc >= 0, clipped_path(path_), ": closing failed (disk full?)");
}

void CheckpointFile::expect_complete() const {
  const std::string tmp = ".tmp";
  if (path_.size() >= tmp.size() && path_.compare(path_.size() - tmp.size(), tmp.size(), tmp) == 0)
    throw Error(str(clipped_path(path_), ": a temporary checkpoint (still being written, or torn): never loaded"));
  const std::string format = has_attr("format") ? attr_string("format") : "";
  if (format != kCheckpointFormat)
    fail("/", str("not an embtrain checkpoint (attribute format = ", quoted(format), ", expected '", kCheckpointFormat,
                  "')"));
  if (!has_attr("complete") || attr_int("complete") != 1)
    fail("/", "incomplete checkpoint (no 'complete' marker: the write was torn)");
}

void CheckpointFile::fail(const std::string& obj, const std::string& message) const {
  throw Error(str(clipped_path(path_), ":", obj, ": ", message));
}

void CheckpointFile::create_group(const std::string& group) {
  H5Handle g(H5Gcreate2(file_, group.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
  if (g.get() < 0) fail(group, "cannot create group");
}

bool CheckpointFile::has(const std::string& obj) const {
  size_t at = 0;
  while (true) {
    size_t next = obj.find('/', at + 1);
    if (H5Lexists(file_, obj.substr(0, next).c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == std::string::npos) return true;
    at = next;
  }
}

std::vector<std::string> CheckpointFile::members(const std::string& group) const {
  std::vector<std::string> names;
  if (!has(group)) return names;
  H5Handle g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
  if (g.get() < 0) fail(group, "not a group");
  H5G_info_t info;
  H5Gget_info(g.get(), &info);
  for (hsize_t i = 0; i < info.nlinks; ++i) {
    ssize_t len = H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, nullptr, 0, H5P_DEFAULT);
    std::string name(size_t(std::max<ssize_t>(len, 0)), '\0');
    H5Lget_name_by_idx(g.get(), ".", H5_INDEX_NAME, H5_ITER_INC, i, name.data(), name.size() + 1, H5P_DEFAULT);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

H5Handle CheckpointFile::open_dataset(const std::string& ds) const {
  if (!has(ds)) fail(ds, "missing");
  H5Handle d(H5Dopen2(file_, ds.c_str(), H5P_DEFAULT), H5Dclose);
  if (d.get() < 0) fail(ds, "not a dataset");
  return d;
}

void CheckpointFile::write_tensor(const std::string& ds, const std::vector<int64_t>& shape, int64_t begin,
                                  int64_t count, const float* data) {
  hsize_t numel = hsize_t(numel_of(shape));
  H5Handle fspace(H5Screate_simple(1, &numel, nullptr), H5Sclose);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  H5Pset_alloc_time(dcpl.get(), H5D_ALLOC_TIME_EARLY);
  H5Pset_fill_time(dcpl.get(), H5D_FILL_TIME_NEVER);  // every element is written once, by one rank
  H5Handle d(H5Dcreate2(file_, ds.c_str(), H5T_IEEE_F32LE, fspace.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
             H5Dclose);
  if (d.get() < 0) fail(ds, "cannot create dataset");
  hsize_t rank = shape.size();
  H5Handle aspace(H5Screate_simple(1, &rank, nullptr), H5Sclose);
  H5Handle a(H5Acreate2(d.get(), "shape", H5T_STD_I64LE, aspace.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), H5T_NATIVE_INT64, shape.data()) < 0)
    fail(ds, "cannot write attribute 'shape'");
  select_range(fspace.get(), begin, count);
  H5Handle mspace = memory_space(count);
  const float unused = 0;
  if (H5Dwrite(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), xfer_.get(), count ? data : &unused) < 0)
    fail(ds, "write failed (disk full?)");
}

void CheckpointFile::read_tensor(const std::string& ds, int64_t begin, int64_t count, float* data) const {
  H5Handle d = open_dataset(ds);
  H5Handle fspace(H5Dget_space(d.get()), H5Sclose);
  select_range(fspace.get(), begin, count);
  H5Handle mspace = memory_space(count);
  float unused = 0;
  if (H5Dread(d.get(), H5T_NATIVE_FLOAT, mspace.get(), fspace.get(), xfer_.get(), count ? data : &unused) < 0)
    fail(ds, "read failed (truncated file?)");
}

std::vector<int64_t> CheckpointFile::tensor_shape(const std::string& ds) const {
  H5Handle d = open_dataset(ds);
  H5Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tequal(type.get(), H5T_IEEE_F32LE) <= 0) fail(ds, "expected float32 elements");
  H5Handle space(H5Dget_space(d.get()), H5Sclose);
  hsize_t numel = 0;
  if (H5Sget_simple_extent_ndims(space.get()) != 1) fail(ds, "expected a 1-D dataset");
  H5Sget_simple_extent_dims(space.get(), &numel, nullptr);
  if (H5Aexists(d.get(), "shape") <= 0) fail(ds, "missing attribute 'shape'");
  H5Handle a(H5Aopen(d.get(), "shape", H5P_DEFAULT), H5Aclose);
  H5Handle aspace(H5Aget_space(a.get()), H5Sclose);
  std::vector<int64_t> shape(size_t(std::max<hssize_t>(H5Sget_simple_extent_npoints(aspace.get()), 0)));
  if (H5Aread(a.get(), H5T_NATIVE_INT64, shape.data()) < 0) fail(ds, "attribute 'shape' is not integers");
  if (numel_of(shape) != int64_t(numel))
    fail(ds, str("shape ", shape_text(shape), " does not match its ", numel, " elements"));
  return shape;
}

void CheckpointFile::set_tensor_checksum(const std::string& ds, uint32_t crc) {
  H5Handle d = open_dataset(ds);
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate2(d.get(), "crc32", H5T_STD_U32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), H5T_NATIVE_UINT32, &crc) < 0) fail(ds, "cannot write attribute 'crc32'");
}

uint32_t CheckpointFile::tensor_checksum(const std::string& ds) const {
  H5Handle d = open_dataset(ds);
  if (H5Aexists(d.get(), "crc32") <= 0) fail(ds, "missing attribute 'crc32' (the tensor's checksum)");
  H5Handle a(H5Aopen(d.get(), "crc32", H5P_DEFAULT), H5Aclose);
  uint32_t crc = 0;
  if (H5Aread(a.get(), H5T_NATIVE_UINT32, &crc) < 0) fail(ds, "attribute 'crc32' is not an integer");
  return crc;
}

void CheckpointFile::read_verified_tensor(const std::string& ds, int64_t n, float* data) const {
  read_tensor(ds, 0, n, data);
  const uint32_t stored = tensor_checksum(ds), read = uint32_t(checksum_piece(data, n).crc);
  if (stored != read) fail(ds, checksum_mismatch(stored, read));
}

bool CheckpointFile::has_attr(const std::string& name) const {
  return H5Aexists_by_name(file_, "/", name.c_str(), H5P_DEFAULT) > 0;
}

void CheckpointFile::write_scalar_attr(const std::string& name, hid_t file_type, hid_t mem_type, const void* value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle a(H5Acreate_by_name(file_, "/", name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT,
                               H5P_DEFAULT),
             H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), mem_type, value) < 0) fail("/", str("cannot write attribute '", name, "'"));
}

void CheckpointFile::set_attr(const std::string& name, int64_t value) {
  write_scalar_attr(name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

void CheckpointFile::set_attr(const std::string& name, uint64_t value) {
  write_scalar_attr(name, H5T_STD_U64LE, H5T_NATIVE_UINT64, &value);
}

void CheckpointFile::set_attr(const std::string& name, const std::string& value) {
  H5Handle type = vlen_string_type();
  const char* p = value.c_str();
  write_scalar_attr(name, type.get(), type.get(), &p);
}

void CheckpointFile::read_scalar_attr(const std::string& name, H5T_class_t cls, hid_t mem_type, void* value) const {
  if (!has_attr(name)) fail("/", str("missing attribute '", name, "'"));
  H5Handle a(H5Aopen_by_name(file_, "/", name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Handle type(H5Aget_type(a.get()), H5Tclose);
  const char* expected = cls == H5T_STRING ? "a string" : "an integer";
  if (H5Tget_class(type.get()) != cls) fail("/", str("attribute '", name, "' is not ", expected));
  if (H5Aread(a.get(), mem_type, value) < 0) fail("/", str("cannot read attribute '", name, "'"));
}

int64_t CheckpointFile::attr_int(const std::string& name) const {
  int64_t v = 0;
  read_scalar_attr(name, H5T_INTEGER, H5T_NATIVE_INT64, &v);
  return v;
}

uint64_t CheckpointFile::attr_uint(const std::string& name) const {
  uint64_t v = 0;
  read_scalar_attr(name, H5T_INTEGER, H5T_NATIVE_UINT64, &v);
  return v;
}

std::string CheckpointFile::attr_string(const std::string& name) const {
  H5Handle type = vlen_string_type();
  char* value = nullptr;
  read_scalar_attr(name, H5T_STRING, type.get(), &value);
  if (!value) fail("/", str("cannot read attribute '", name, "'"));
  std::string out(value);
  H5free_memory(value);
  return out;
}

void CheckpointFile::sync() {
  if (H5Fflush(file_, H5F_SCOPE_GLOBAL) < 0) fail("/", "flush failed (disk full?)");
}

}  // namespace emb
