#define BOOST_TEST_MODULE parquet_reader
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "data_fixtures.hpp"
#include "parquet/parquet_file.hpp"
#include "parquet_writer.hpp"

using namespace emb;
using namespace emb::parquet;
using test::PageOptions;
using test::TestColumn;

namespace {

const std::string kDir = test::scratch_dir("parquet_reader");
const std::string kFixture = std::string(PROJECT_SOURCE_DIR) + "/../shared/fixtures/lerobot/g1_v21";

// Rows of a column of `type`: lists of 0..4 values (an empty one every 5th row) or one value,
// values repeating so that dictionaries have fewer entries than values.
TestColumn make_column(PhysicalType type, bool list, bool optional, int64_t rows) {
  TestColumn c;
  c.name = list ? "values" : "value", c.type = type, c.list = list, c.optional = optional;
  for (int64_t r = 0; r < rows; ++r) {
    size_t n = list ? size_t(r % 5) : 1;
    std::vector<double> nums;
    std::vector<std::string> strs;
    for (size_t i = 0; i < n; ++i) {
      int64_t k = (r * 7 + int64_t(i) * 3) % 11;
      if (type == PhysicalType::byte_array) strs.push_back("task " + std::to_string(k) + (k % 2 ? " ü" : ""));
      else if (type == PhysicalType::boolean) nums.push_back(double(k % 2));
      else if (type == PhysicalType::float32 || type == PhysicalType::float64) nums.push_back(0.25 * double(k) - 1.5);
      else nums.push_back(double(k * 1000003 - 5));
    }
    c.rows.push_back(nums), c.text_rows.push_back(strs);
  }
  if (type == PhysicalType::byte_array) c.rows.clear();
  else c.text_rows.clear();
  return c;
}

void check_column(const ColumnData& got, const TestColumn& want) {
  int64_t rows = int64_t(std::max(want.rows.size(), want.text_rows.size()));
  BOOST_REQUIRE_EQUAL(got.rows(), rows);
  BOOST_TEST(got.list == want.list);
  for (int64_t r = 0, k = 0; r < rows; ++r) {
    size_t n = want.type == PhysicalType::byte_array ? want.text_rows[size_t(r)].size() : want.rows[size_t(r)].size();
    BOOST_REQUIRE_EQUAL(got.row_size(r), int64_t(n));
    for (size_t i = 0; i < n; ++i, ++k) {
      if (want.type == PhysicalType::byte_array) BOOST_REQUIRE_EQUAL(got.strings[size_t(k)], want.text_rows[size_t(r)][i]);
      else BOOST_REQUIRE_EQUAL(got.number(k), want.rows[size_t(r)][i]);
    }
  }
}

std::string write_file(const std::string& name, const std::vector<TestColumn>& cols, PageOptions o) {
  std::string path = kDir + "/" + name;
  test::ParquetTestWriter(cols, o).write(path);
  return path;
}

std::string read_error(const std::string& path, const std::string& column) {
  try {
    ParquetFile::open(path).read(column);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

}  // namespace

// Every type × level layout × page version × value encoding × codec × level encoding,
// over several pages and row groups.
BOOST_AUTO_TEST_CASE(every_encoding_and_level_combination) {
  const PhysicalType types[] = {PhysicalType::boolean, PhysicalType::int32, PhysicalType::int64,
                                PhysicalType::float32, PhysicalType::float64, PhysicalType::byte_array};
  const Codec codecs[] = {Codec::uncompressed, Codec::snappy, Codec::zstd};
  int files = 0;
  for (PhysicalType type : types)
    for (int layout = 0; layout < 3; ++layout)  // required, optional, list
      for (bool v2 : {false, true})
        for (bool dictionary : {false, true})
          for (Codec codec : codecs)
            for (bool runs : {false, true}) {
              TestColumn col = make_column(type, layout == 2, layout == 1, 37);
              TestColumn id = make_column(PhysicalType::int64, false, false, 37);
              id.name = "id";
              PageOptions o;
              o.v2 = v2, o.dictionary = dictionary, o.codec = codec, o.level_runs = runs;
              o.rows_per_page = 6, o.row_group_rows = 16;
              std::string path = write_file("combo.parquet", {id, col}, o);
              BOOST_TEST_CONTEXT(type_name(type) << " layout " << layout << " v2 " << v2 << " dict " << dictionary
                                                 << " " << codec_name(codec) << " runs " << runs) {
                ParquetFile f = ParquetFile::open(path);
                BOOST_TEST(f.rows() == 37);
                BOOST_TEST(f.metadata().row_groups.size() == 3u);
                check_column(f.read(col.name), col);
                check_column(f.read("id"), id);
                if (layout == 2) {
                  BOOST_TEST(f.leaf(col.name).path == col.name + ".list.element");
                  BOOST_TEST(f.leaf(col.name).max_def == 3);
                  BOOST_TEST(f.leaf(col.name).max_rep == 1);
                }
              }
              ++files;
            }
  BOOST_TEST(files == 6 * 3 * 2 * 2 * 3 * 2);
}

// The real fixture files (pyarrow: Snappy, dictionary pages, list<float>).
BOOST_AUTO_TEST_CASE(reads_real_lerobot_files) {
  for (const char* episode : {"10", "11"}) {
    ParquetFile f = ParquetFile::open(kFixture + "/data/chunk-000/episode_0000" + episode + ".parquet");
    BOOST_TEST(f.metadata().created_by.find("parquet-cpp-arrow") == 0u);
    ColumnData state = f.read("observation.state"), action = f.read("action");
    ColumnData frame = f.read("frame_index"), ts = f.read("timestamp"), ep = f.read("episode_index");
    BOOST_TEST(state.list);
    BOOST_TEST(state.rows() == f.rows());
    BOOST_TEST(action.rows() == f.rows());
    for (int64_t r = 0; r < f.rows(); ++r) {
      BOOST_REQUIRE(state.row_size(r) == 26);
      BOOST_REQUIRE(action.row_size(r) == 26);
      BOOST_REQUIRE(frame.ints[size_t(r)] == r);
      BOOST_REQUIRE(ep.ints[size_t(r)] == std::stoi(episode));
      BOOST_REQUIRE(std::abs(ts.reals[size_t(r)] - double(r) / 30) < 1e-5);
    }
  }
}

// The corrupted-file corpus: each file gives one error line naming the file (and column).
BOOST_AUTO_TEST_CASE(corrupt_files_fail_with_one_clear_line) {
  TestColumn col = make_column(PhysicalType::float32, true, false, 40);
  PageOptions snappy;
  snappy.codec = Codec::snappy, snappy.dictionary = true;
  std::string good = write_file("good.parquet", {col}, snappy);
  std::string bytes = bytes_of(good);
  auto variant = [&](const std::string& name, const std::string& content) {
    std::string path = kDir + "/" + name;
    std::ofstream(path, std::ios::binary) << content;
    return path;
  };

  std::string cut = variant("truncated.parquet", bytes.substr(0, bytes.size() / 2));
  BOOST_TEST(read_error(cut, "values") == cut + ": bad magic at the end (truncated Parquet file)");
  std::string magic = variant("magic.parquet", "PAR0" + bytes.substr(4));
  BOOST_TEST(read_error(magic, "values") == magic + ": not a Parquet file (bad magic at the start)");
  std::string tiny = variant("tiny.parquet", "PAR1");
  BOOST_TEST(read_error(tiny, "values") == tiny + ": not a Parquet file (4 bytes, too short)");
  std::string footer = bytes;
  footer[footer.size() - 5] = char(0x7f);  // footer length's high byte
  std::string long_footer = variant("footer.parquet", footer);
  BOOST_TEST(read_error(long_footer, "values").find(long_footer + ": footer of ") == 0u);
  BOOST_TEST(read_error(good, "nope") == good + ": no column nope");
  BOOST_TEST(read_error(kDir + "/missing.parquet", "values") == kDir + "/missing.parquet: cannot open Parquet file");

  // A page body damaged inside: the chunk's last bytes are Snappy data.
  ColumnChunkMeta chunk = ParquetFile::open(good).metadata().row_groups[0].columns[0];
  std::string damaged = bytes;
  for (int64_t i = 1; i <= 12; ++i) damaged[size_t(chunk.first_page_offset() + chunk.total_compressed_size - i)] = char(0xff);
  std::string bad_page = variant("damaged.parquet", damaged);
  std::string err = read_error(bad_page, "values");
  BOOST_TEST(err.find(bad_page + ": column values, row group 0, page at byte ") == 0u);

  PageOptions gzip;
  gzip.codec = Codec::gzip;
  std::string gz = write_file("gzip.parquet", {col}, gzip);
  err = read_error(gz, "values");
  BOOST_TEST(err.find(gz + ": column values, row group 0, page at byte 0: unsupported compression codec GZIP") == 0u);

  PageOptions delta;
  delta.encoding_label = int32_t(Encoding::delta_binary_packed);
  std::string dp = write_file("delta.parquet", {col}, delta);
  BOOST_TEST(read_error(dp, "values") == dp + ": column values, row group 0, page at byte 0: unsupported encoding "
                                              "DELTA_BINARY_PACKED (supported: PLAIN, PLAIN_DICTIONARY, RLE_DICTIONARY, RLE)");

  TestColumn wide = make_column(PhysicalType::int64, false, false, 4);
  wide.type = PhysicalType::int96;  // a schema type the reader does not decode
  std::string i96 = write_file("int96.parquet", {wide}, PageOptions());
  BOOST_TEST(read_error(i96, "value") == i96 + ": column value: unsupported physical type INT96");
}
