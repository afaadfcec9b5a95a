#include "weights/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace emb {

MappedFile::MappedFile(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EMB_CHECK(fd >= 0, path, ": cannot open: ", std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(str(path, ": not a regular file"));
  }
  size_ = uint64_t(st.st_size);
  if (size_ > 0) {  // mmap of length 0 fails; an empty file maps to nothing
    void* p = ::mmap(nullptr, size_, PROT_READ, MAP_SHARED, fd, 0);
    const int err = errno;
    ::close(fd);  // the mapping keeps the file referenced
    EMB_CHECK(p != MAP_FAILED, path, ": cannot map ", size_, " bytes: ", std::strerror(err));
    data_ = static_cast<const unsigned char*>(p);
  } else {
    ::close(fd);
  }
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(const_cast<unsigned char*>(data_), size_);
}

void MappedFile::prefetch(uint64_t offset, uint64_t length) const {
  if (length == 0) return;
  const uint64_t page = uint64_t(::sysconf(_SC_PAGESIZE));
  const uint64_t first = offset / page * page;
  // Advice only: a failure changes nothing but speed.
  ::madvise(const_cast<unsigned char*>(data_) + first, offset + length - first, MADV_WILLNEED);
}

}  // namespace emb
