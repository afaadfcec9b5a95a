#include "weights/zip_directory.hpp"

#include "core/error.hpp"

namespace emb {

namespace {

constexpr uint32_t kEndOfDirectory = 0x06054b50, kZip64End = 0x06064b50, kZip64Locator = 0x07064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50, kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64Extra = 0x0001;
constexpr uint64_t kEndSize = 22, kLocatorSize = 20, kZip64EndSize = 56, kEntrySize = 46, kLocalSize = 30;

// Little-endian fields of the mapped file, bounds-checked so that a corrupt offset is an
// error naming the file, never a read outside the mapping.
class Fields {
 public:
  explicit Fields(const MappedFile& file) : file_(file) {}
  uint64_t get(uint64_t offset, int bytes, const char* what) const {
    need(offset, uint64_t(bytes), what);
    uint64_t v = 0;
    for (int i = bytes - 1; i >= 0; --i) v = v << 8 | file_.data()[offset + i];
    return v;
  }
  std::string text(uint64_t offset, uint64_t length, const char* what) const {
    need(offset, length, what);
    return std::string(reinterpret_cast<const char*>(file_.data()) + offset, length);
  }

 private:
  void need(uint64_t offset, uint64_t length, const char* what) const {
    EMB_CHECK(offset <= file_.size() && length <= file_.size() - offset, file_.path(), ": zip ", what, " at byte ",
              offset, " lies past the end of the file (", file_.size(), " bytes)");
  }

  const MappedFile& file_;
};

// The end-of-central-directory record: the last 22 bytes unless a comment follows it.
uint64_t find_end_record(const MappedFile& file, const Fields& f) {
  EMB_CHECK(file.size() >= kEndSize, file.path(), ": ", file.size(), " bytes, too short for a zip file");
  const uint64_t lowest = file.size() >= kEndSize + 0xffff ? file.size() - kEndSize - 0xffff : 0;
  for (uint64_t at = file.size() - kEndSize + 1; at-- > lowest;)
    if (f.get(at, 4, "end record") == kEndOfDirectory && at + kEndSize + f.get(at + 20, 2, "comment length") ==
                                                             file.size())
      return at;
  throw Error(str(file.path(), ": no zip end-of-directory record (truncated, or not a torch.save zip file)"));
}

struct Directory {
  uint64_t entries, offset, size;
};

Directory locate_directory(const MappedFile& file, const Fields& f) {
  const uint64_t end = find_end_record(file, f);
  Directory d{f.get(end + 10, 2, "entry count"), f.get(end + 16, 4, "directory offset"),
              f.get(end + 12, 4, "directory size")};
  // ZIP64 (torch always writes it): a locator just before the end record points at the
  // 64-bit end record, whose counts and offsets replace the 16/32-bit ones.
  if (end >= kLocatorSize && f.get(end - kLocatorSize, 4, "zip64 locator") == kZip64Locator) {
    const uint64_t end64 = f.get(end - kLocatorSize + 8, 8, "zip64 end offset");
    EMB_CHECK(f.get(end64, 4, "zip64 end record") == kZip64End && end64 + kZip64EndSize <= end - kLocatorSize,
              file.path(), ": zip64 end record expected at byte ", end64, " (corrupt zip)");
    d = {f.get(end64 + 32, 8, "entry count"), f.get(end64 + 48, 8, "directory offset"),
         f.get(end64 + 40, 8, "directory size")};
  }
  EMB_CHECK(d.offset <= file.size() && d.size <= file.size() - d.offset, file.path(), ": zip directory [", d.offset,
            ", +", d.size, ") lies past the end of the file (", file.size(), " bytes): truncated?");
  return d;
}

// Sizes and offsets of 0xffffffff live in the entry's ZIP64 extra field, in this order.
void apply_zip64_extra(const MappedFile& file, const Fields& f, uint64_t extra, uint64_t extra_length,
                       const std::string& name, uint64_t* sizes[3]) {
  for (uint64_t at = extra; at + 4 <= extra + extra_length;) {
    const uint64_t id = f.get(at, 2, "extra field"), length = f.get(at + 2, 2, "extra field");
    if (id == kZip64Extra) {
      uint64_t field = at + 4;
      for (int i = 0; i < 3; ++i) {
        if (*sizes[i] != 0xffffffffu) continue;
        EMB_CHECK(field + 8 <= at + 4 + length, file.path(), ": zip entry ", emb::quoted_name(name),
                  ": zip64 extra field too short");
        *sizes[i] = f.get(field, 8, "zip64 extra field");
        field += 8;
      }
      return;
    }
    at += 4 + length;
  }
}

}  // namespace

std::vector<ZipEntry> read_zip_directory(const MappedFile& file) {
  const Fields f(file);
  const Directory d = locate_directory(file, f);
  std::vector<ZipEntry> entries;
  uint64_t at = d.offset;
  for (uint64_t i = 0; i < d.entries; ++i) {
    EMB_CHECK(f.get(at, 4, "directory entry") == kDirectoryEntry, file.path(), ": zip directory entry ", i,
              " at byte ", at, " has a bad signature (corrupt zip)");
    const uint64_t flags = f.get(at + 8, 2, "flags"), method = f.get(at + 10, 2, "method");
    uint64_t compressed = f.get(at + 20, 4, "size"), size = f.get(at + 24, 4, "size");
    const uint64_t name_length = f.get(at + 28, 2, "name length"), extra_length = f.get(at + 30, 2, "extra length"),
                   comment_length = f.get(at + 32, 2, "comment length");
    uint64_t local = f.get(at + 42, 4, "local header offset");
    ZipEntry entry;
    entry.name = f.text(at + kEntrySize, name_length, "entry name");
    uint64_t* sizes[3] = {&size, &compressed, &local};
    apply_zip64_extra(file, f, at + kEntrySize + name_length, extra_length, entry.name, sizes);
    const std::string where = str(file.path(), ": zip entry ", emb::quoted_name(entry.name), ": ");
    EMB_CHECK(!(flags & 1u), where, "encrypted; torch.save writes plain entries");
    EMB_CHECK(method == 0 && compressed == size, where, "compressed (method ", method,
              "); torch.save stores entries uncompressed, so this file was re-zipped by another tool: "
              "re-save it with torch.save");
    EMB_CHECK(f.get(local, 4, "local header") == kLocalHeader, where, "no local header at byte ", local,
              " (corrupt zip)");
    entry.data_offset = local + kLocalSize + f.get(local + 26, 2, "name length") + f.get(local + 28, 2, "extra length");
    entry.size = size;
    EMB_CHECK(entry.data_offset <= file.size() && size <= file.size() - entry.data_offset, where, "data [",
              entry.data_offset, ", +", size, ") lies past the end of the file (", file.size(), " bytes): truncated?");
    entries.push_back(std::move(entry));
    at += kEntrySize + name_length + extra_length + comment_length;
  }
  return entries;
}

}  // namespace emb
