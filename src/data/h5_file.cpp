#include "data/h5_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>

#include "core/error.hpp"
#include "core/fs.hpp"

namespace emb {

H5Handle& H5Handle::operator=(H5Handle&& o) noexcept {
  if (this != &o) {
    reset();
    id_ = o.id_, close_ = o.close_;
    o.id_ = -1;
  }
  return *this;
}

void H5Handle::reset() {
  if (id_ >= 0 && close_) close_(id_);
  id_ = -1;
}

const char* elem_name(Elem e) {
  switch (e) {
    case Elem::f32: return "float32";
    case Elem::f16: return "float16";
    case Elem::i32: return "int32";
    case Elem::i64: return "int64";
    case Elem::u8: return "uint8";
  }
  return "?";
}

size_t elem_size(Elem e) {
  switch (e) {
    case Elem::f32: case Elem::i32: return 4;
    case Elem::f16: return 2;
    case Elem::i64: return 8;
    case Elem::u8: return 1;
  }
  return 0;
}

namespace {

// The file type of numpy's float16 (what h5py writes), built once.
hid_t half_type() {
  static hid_t t = [] {
    hid_t h = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(h, 15, 10, 5, 0, 10);
    H5Tset_size(h, 2);
    H5Tset_ebias(h, 15);
    return h;
  }();
  return t;
}

// File type == memory type for every element: reads never convert (little-endian host).
hid_t h5_type(Elem e) {
  switch (e) {
    case Elem::f32: return H5T_IEEE_F32LE;
    case Elem::f16: return half_type();
    case Elem::i32: return H5T_STD_I32LE;
    case Elem::i64: return H5T_STD_I64LE;
    case Elem::u8: return H5T_STD_U8LE;
  }
  return -1;
}

std::string type_description(hid_t t) {
  H5T_class_t c = H5Tget_class(t);
  size_t size = H5Tget_size(t);
  const char* kind = c == H5T_FLOAT ? "float" : c == H5T_INTEGER ? (H5Tget_sign(t) == H5T_SGN_NONE ? "uint" : "int")
                     : c == H5T_STRING ? "string" : "other";
  return str(kind, size * 8);
}

std::vector<int64_t> space_dims(hid_t space) {
  int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> d(size_t(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, d.data(), nullptr);
  return std::vector<int64_t>(d.begin(), d.end());
}

// The file's size now; -1 when it is gone.
int64_t file_bytes(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? int64_t(st.st_size) : -1;
}

}  // namespace

void RowRanges::add(int64_t begin, int64_t end) {
  if (end <= begin) return;
  if (!ranges_.empty() && begin < ranges_.back()[1]) sorted_ = false;
  ranges_.push_back({begin, end, 0});
}

void RowRanges::finish() {
  if (!sorted_) std::sort(ranges_.begin(), ranges_.end());
  std::vector<std::array<int64_t, 3>> merged;
  for (const auto& r : ranges_) {
    if (!merged.empty() && r[0] <= merged.back()[1]) {
      merged.back()[1] = std::max(merged.back()[1], r[1]);
    } else {
      merged.push_back(r);
    }
  }
  int64_t at = 0;
  for (auto& r : merged) r[2] = at, at += r[1] - r[0];
  ranges_ = std::move(merged);
  sorted_ = true;
}

int64_t RowRanges::rows() const { return ranges_.empty() ? 0 : ranges_.back()[2] + ranges_.back()[1] - ranges_.back()[0]; }

int64_t RowRanges::locate(int64_t row) const {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), row,
                             [](int64_t v, const std::array<int64_t, 3>& r) { return v < r[0]; });
  EMB_ASSERT(it != ranges_.begin());
  --it;
  EMB_ASSERT(row < (*it)[1]);
  return (*it)[2] + row - (*it)[0];
}

MpioTransfer mpio_transfer_from_name(const std::string& name) {
  if (name == "independent") return MpioTransfer::independent;
  EMB_CHECK(name == "collective", "data.mpio_transfer: expected independent or collective, got ", quoted(name));
  return MpioTransfer::collective;
}

H5File H5File::open(const std::string& path, MPI_Comm comm, MpioTransfer transfer) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors are reported as emb::Error, not stacks
  // HDF5 reports an unreadable file as "not an HDF5 file": ask the system first.
  check_readable_file(path);
  EMB_CHECK(H5Fis_hdf5(path.c_str()) > 0, clipped_path(path), ": not an HDF5 file");
  H5File f;
  f.path_ = path;
  f.bytes_at_open_ = file_bytes(path);
  f.parallel_ = comm != MPI_COMM_NULL;
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (f.parallel_) {
    H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl.get(), true);
    f.xfer_ = H5Handle(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(f.xfer_.get(),
                     transfer == MpioTransfer::collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT);
  }
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, fapl.get());
  EMB_CHECK(id >= 0, clipped_path(path), ": cannot open as HDF5 (truncated or corrupt file)");
  f.file_ = H5Handle(id, H5Fclose);
  return f;
}

H5File H5File::create(const std::string& path, MPI_Comm comm) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5File f;
  f.path_ = path;
  f.parallel_ = comm != MPI_COMM_NULL;
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  if (f.parallel_) {
    H5Pset_fapl_mpio(fapl.get(), comm, MPI_INFO_NULL);
    H5Pset_all_coll_metadata_ops(fapl.get(), true);
    H5Pset_coll_metadata_write(fapl.get(), true);
    f.xfer_ = H5Handle(H5Pcreate(H5P_DATASET_XFER), H5Pclose);
    H5Pset_dxpl_mpio(f.xfer_.get(), H5FD_MPIO_COLLECTIVE);
  }
  hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get());
  EMB_CHECK(id >= 0, clipped_path(path), ": cannot create file");
  f.file_ = H5Handle(id, H5Fclose);
  return f;
}

H5File H5File::append(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5File f;
  f.path_ = path;
  hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  EMB_CHECK(id >= 0, clipped_path(path), ": cannot open for writing");
  f.file_ = H5Handle(id, H5Fclose);
  return f;
}

std::string H5File::where(const std::string& obj, const std::string& message) const {
  return str(clipped_path(path_), ":", obj, ": ", message);
}

void H5File::fail(const std::string& obj, const std::string& message) const { throw Error(where(obj, message)); }

bool H5File::has(const std::string& obj) const {
  if (obj == "/") return true;
  size_t at = 0;
  while (true) {
    size_t next = obj.find('/', at + 1);
    std::string prefix = obj.substr(0, next);
    if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (next == std::string::npos) return true;
    at = next;
  }
}

std::vector<std::string> H5File::members(const std::string& group) const {
  std::vector<std::string> names;
  if (!has(group)) return names;
  H5Handle g(H5Gopen2(file_.get(), group.c_str(), H5P_DEFAULT), H5Gclose);
  if (g.get() < 0) fail(group, "not a group");
  hsize_t n = 0;
  H5Gget_num_objs(g.get(), &n);
  for (hsize_t i = 0; i < n; ++i) {
    ssize_t len = H5Gget_objname_by_idx(g.get(), i, nullptr, 0);
    std::string name(size_t(len), '\0');
    H5Gget_objname_by_idx(g.get(), i, name.data(), size_t(len) + 1);
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

H5Handle H5File::open_dataset(const std::string& ds) const {
  if (!has(ds)) fail(ds, "missing");
  // No chunk cache: rows are read once, and a cached chunk costs an extra copy into fresh
  // pages (1 MiB chunks are exactly the default cache size, so they would be cached).
  H5Handle dapl(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose);
  H5Pset_chunk_cache(dapl.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0, H5D_CHUNK_CACHE_W0_DEFAULT);
  hid_t id = H5Dopen2(file_.get(), ds.c_str(), dapl.get());
  if (id < 0) fail(ds, "not a dataset");
  return H5Handle(id, H5Dclose);
}

std::vector<int64_t> H5File::dims(const std::string& ds) const {
  H5Handle d = open_dataset(ds);
  H5Handle space(H5Dget_space(d.get()), H5Sclose);
  return space_dims(space.get());
}

std::vector<int64_t> H5File::expect_any_rank(const std::string& ds, Elem e) const {
  H5Handle d = open_dataset(ds);
  H5Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tequal(type.get(), h5_type(e)) <= 0)
    fail(ds, str("expected dtype ", elem_name(e), ", found ", type_description(type.get())));
  H5Handle space(H5Dget_space(d.get()), H5Sclose);
  return space_dims(space.get());
}

std::vector<int64_t> H5File::expect(const std::string& ds, Elem e, int rank) const {
  std::vector<int64_t> d = expect_any_rank(ds, e);
  if (int(d.size()) != rank) fail(ds, str("expected ", rank, " dimensions, found ", d.size()));
  return d;
}

bool H5File::has_attr(const std::string& obj, const std::string& name) const {
  return has(obj) && H5Aexists_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT) > 0;
}

std::string H5File::attr_string(const std::string& obj, const std::string& name) const {
  if (!has_attr(obj, name)) fail(obj, str("missing attribute '", name, "'"));
  H5Handle a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  H5Handle type(H5Aget_type(a.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING) fail(obj, str("attribute '", name, "' is not a string"));
  if (H5Tis_variable_str(type.get()) > 0) {
    H5Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* value = nullptr;
    if (H5Aread(a.get(), mem.get(), &value) < 0 || !value) fail(obj, str("cannot read attribute '", name, "'"));
    std::string out(value);
    H5free_memory(value);
    return out;
  }
  std::string out(H5Tget_size(type.get()), '\0');
  if (H5Aread(a.get(), type.get(), out.data()) < 0) fail(obj, str("cannot read attribute '", name, "'"));
  out.resize(std::strlen(out.c_str()));
  return out;
}

double H5File::attr_double(const std::string& obj, const std::string& name) const {
  if (!has_attr(obj, name)) fail(obj, str("missing attribute '", name, "'"));
  H5Handle a(H5Aopen_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  double v = 0;
  if (H5Aread(a.get(), H5T_NATIVE_DOUBLE, &v) < 0) fail(obj, str("attribute '", name, "' is not a number"));
  return v;
}

void H5File::set_attr(const std::string& obj, const std::string& name, const std::string& value) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  if (has_attr(obj, name)) H5Adelete_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT);
  H5Handle a(H5Acreate_by_name(file_.get(), obj.c_str(), name.c_str(), type.get(), space.get(), H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* p = value.c_str();
  if (a.get() < 0 || H5Awrite(a.get(), type.get(), &p) < 0) fail(obj, str("cannot write attribute '", name, "'"));
}

void H5File::set_attr(const std::string& obj, const std::string& name, double value) {
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  if (has_attr(obj, name)) H5Adelete_by_name(file_.get(), obj.c_str(), name.c_str(), H5P_DEFAULT);
  H5Handle a(H5Acreate_by_name(file_.get(), obj.c_str(), name.c_str(), H5T_IEEE_F64LE, space.get(), H5P_DEFAULT,
                               H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (a.get() < 0 || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &value) < 0)
    fail(obj, str("cannot write attribute '", name, "'"));
}

void H5File::check_not_shrunk(const std::string& ds) const {
  if (bytes_at_open_ < 0) return;
  const int64_t now = file_bytes(path_);
  if (now < bytes_at_open_)
    fail(ds, now < 0 ? str("the file was removed while this run reads it")
                     : str("the file shrank from ", bytes_at_open_, " to ", now,
                           " bytes while this run reads it (truncated or rewritten under the job); the rows read are "
                           "not the data"));
}

void H5File::read_raw(const std::string& ds, Elem e, void* dst) const {
  H5Handle d = open_dataset(ds);
  if (H5Dread(d.get(), h5_type(e), H5S_ALL, H5S_ALL, parallel_ ? xfer_.get() : H5P_DEFAULT, dst) < 0)
    fail(ds, "read failed (truncated file?)");
  check_not_shrunk(ds);
}

int64_t H5File::read_rows(const std::string& ds, Elem e, const RowRanges& rows, void* dst, int part, int parts) const {
  H5Handle d = open_dataset(ds);
  hid_t xfer = parallel_ ? xfer_.get() : H5P_DEFAULT;
  // One single-block hyperslab per range: HDF5 1.10 walks a union of hyperslabs element by
  // element (measured ~40 MB/s), while a single block takes the fast contiguous path.
  H5Handle fspace(H5Dget_space(d.get()), H5Sclose);
  std::vector<int64_t> dims = space_dims(fspace.get());
  EMB_ASSERT(!dims.empty());
  size_t row_bytes = elem_size(e);
  for (size_t i = 1; i < dims.size(); ++i) row_bytes *= size_t(dims[i]);
  int64_t share_begin = rows.rows() * part / parts, share_end = rows.rows() * (part + 1) / parts, read = 0;
  std::vector<hsize_t> start(dims.size(), 0), count(dims.begin(), dims.end());
  for (const auto& r : rows.ranges()) {
    if (r[1] > dims[0]) fail(ds, str("rows [", r[0], ", ", r[1], ") out of range (", dims[0], " rows)"));
    int64_t lo = std::max(r[2], share_begin), hi = std::min(r[2] + r[1] - r[0], share_end);
    count[0] = hsize_t(std::max<int64_t>(hi - lo, 0));
    start[0] = hsize_t(r[0] + std::max<int64_t>(lo - r[2], 0));
    H5Handle mspace(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
    if (count[0] > 0) {
      H5Sselect_hyperslab(fspace.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    } else {
      H5Sselect_none(fspace.get());
      H5Sselect_none(mspace.get());
    }
    char* at = static_cast<char*>(dst) + size_t(std::max(lo, r[2])) * row_bytes;
    if (H5Dread(d.get(), h5_type(e), mspace.get(), fspace.get(), xfer, at) < 0) fail(ds, "read failed (truncated file?)");
    read += int64_t(count[0]);
  }
  check_not_shrunk(ds);
  return read * int64_t(row_bytes);
}

std::vector<std::string> H5File::read_strings(const std::string& ds) const {
  H5Handle d = open_dataset(ds);
  H5Handle type(H5Dget_type(d.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING || H5Tis_variable_str(type.get()) <= 0)
    fail(ds, str("expected variable-length strings, found ", type_description(type.get())));
  H5Handle space(H5Dget_space(d.get()), H5Sclose);
  std::vector<int64_t> dims = space_dims(space.get());
  if (dims.size() != 1) fail(ds, str("expected 1 dimension, found ", dims.size()));
  H5Handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(mem.get(), H5T_VARIABLE);
  H5Tset_cset(mem.get(), H5T_CSET_UTF8);
  std::vector<char*> raw(size_t(dims[0]), nullptr);
  hid_t xfer = parallel_ ? xfer_.get() : H5P_DEFAULT;
  if (H5Dread(d.get(), mem.get(), H5S_ALL, H5S_ALL, xfer, raw.data()) < 0) fail(ds, "read failed");
  std::vector<std::string> out;
  for (char* s : raw) out.emplace_back(s ? s : "");
  H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, raw.data());
  return out;
}

std::vector<float> H5File::read_as_float(const std::string& ds) const {
  H5Handle d = open_dataset(ds);
  H5Handle type(H5Dget_type(d.get()), H5Tclose);
  H5T_class_t c = H5Tget_class(type.get());
  if (c != H5T_FLOAT && c != H5T_INTEGER) fail(ds, str("expected numbers, found ", type_description(type.get())));
  H5Handle space(H5Dget_space(d.get()), H5Sclose);
  int64_t n = 1;
  for (int64_t x : space_dims(space.get())) n *= x;
  std::vector<float> out(static_cast<size_t>(n));
  if (n > 0 && H5Dread(d.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data()) < 0)
    fail(ds, "read failed (truncated file?)");
  return out;
}

hid_t H5File::parent_group(const std::string& obj) {
  size_t at = 0;
  while ((at = obj.find('/', at + 1)) != std::string::npos) {
    std::string prefix = obj.substr(0, at);
    if (H5Lexists(file_.get(), prefix.c_str(), H5P_DEFAULT) <= 0) {
      H5Handle g(H5Gcreate2(file_.get(), prefix.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
      if (g.get() < 0) fail(prefix, "cannot create group");
    }
  }
  return file_.get();
}

void H5File::write_raw(const std::string& ds, Elem e, const std::vector<int64_t>& dims, int64_t first_row, int64_t rows,
                       const void* data) {
  std::vector<hsize_t> d(dims.begin(), dims.end());
  H5Handle space(H5Screate_simple(int(d.size()), d.data(), nullptr), H5Sclose);
  H5Handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!d.empty() && d[0] > 0) {  // chunks of whole rows, about 1 MiB each
    size_t row_bytes = elem_size(e);
    for (size_t i = 1; i < d.size(); ++i) row_bytes *= d[i];
    std::vector<hsize_t> chunk = d;
    chunk[0] = std::min<hsize_t>(d[0], std::max<hsize_t>(1, (1u << 20) / std::max<size_t>(row_bytes, 1)));
    H5Pset_chunk(dcpl.get(), int(chunk.size()), chunk.data());
  }
  H5Handle dset(H5Dcreate2(parent_group(ds), ds.c_str(), h5_type(e), space.get(), H5P_DEFAULT, dcpl.get(),
                           H5P_DEFAULT), H5Dclose);
  if (dset.get() < 0) fail(ds, "cannot create dataset");
  bool empty = std::any_of(d.begin(), d.end(), [](hsize_t x) { return x == 0; });
  if (empty) return;  // the same on every rank: the global dims agree
  // This rank's rows: a hyperslab of the file, back to back in memory (none selected when
  // rows == 0, which a collective write still needs every rank to take part in).
  std::vector<hsize_t> count = d, start(d.size(), 0);
  count[0] = hsize_t(rows), start[0] = hsize_t(first_row);
  H5Handle memory(H5Screate_simple(int(count.size()), count.data(), nullptr), H5Sclose);
  if (rows > 0) {
    H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  } else {
    H5Sselect_none(space.get()), H5Sselect_none(memory.get());
  }
  if (H5Dwrite(dset.get(), h5_type(e), memory.get(), space.get(), parallel_ ? xfer_.get() : H5P_DEFAULT, data) < 0)
    fail(ds, "write failed");
}

void H5File::write_strings(const std::string& ds, const std::vector<std::string>& values) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  hsize_t n = values.size();
  H5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  H5Handle dset(H5Dcreate2(parent_group(ds), ds.c_str(), type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT,
                           H5P_DEFAULT), H5Dclose);
  if (dset.get() < 0) fail(ds, "cannot create dataset");
  std::vector<const char*> ptrs;
  for (const auto& s : values) ptrs.push_back(s.c_str());
  if (n > 0 && H5Dwrite(dset.get(), type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, ptrs.data()) < 0)
    fail(ds, "write failed");
}

}  // namespace emb
