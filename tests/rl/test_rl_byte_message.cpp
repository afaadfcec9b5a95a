#define BOOST_TEST_MODULE rl_byte_message
#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "rl/byte_message.hpp"
#include "error_of.hpp"

using namespace emb;
using emb::test::error_of;

namespace {

struct Step {
  int32_t env;
  float reward;
  bool done;
};

}  // namespace

BOOST_AUTO_TEST_CASE(fields_come_back_in_the_order_written) {
  ByteWriter w;
  w.put(int64_t(-7));
  w.put(Step{3, 0.25f, true});
  w.put_vector(std::vector<float>{1.5f, -2.0f, 3.25f});
  w.put_vector(std::vector<int32_t>{});
  w.put_string("pick cube");
  w.put_string("");
  w.put(uint8_t(200));
  std::vector<uint8_t> bytes = w.take();
  // 8 + 12 (Step, padded) + (8 + 12) + 8 + (8 + 9) + 8 + 1
  BOOST_TEST(bytes.size() == 8u + sizeof(Step) + 20u + 8u + 17u + 8u + 1u);
  BOOST_TEST(w.take().empty());  // take() leaves the writer empty

  ByteReader r(bytes);
  BOOST_TEST(r.get<int64_t>("version") == -7);
  const Step s = r.get<Step>("step");
  BOOST_TEST(s.env == 3);
  BOOST_TEST(s.reward == 0.25f);
  BOOST_TEST(s.done);
  BOOST_TEST(r.get_vector<float>("action") == (std::vector<float>{1.5f, -2.0f, 3.25f}), boost::test_tools::per_element());
  BOOST_TEST(r.get_vector<int32_t>("empty").empty());
  BOOST_TEST(r.get_string("task") == "pick cube");
  BOOST_TEST(r.get_string("empty text") == "");
  BOOST_TEST(!r.done());
  BOOST_TEST(r.remaining() == 1u);
  BOOST_TEST(int(r.get<uint8_t>("flag")) == 200);
  BOOST_TEST(r.done());
}

BOOST_AUTO_TEST_CASE(a_short_message_names_the_field_being_read) {
  ByteWriter w;
  w.put(int32_t(1));
  const std::vector<uint8_t> bytes = w.take();
  ByteReader r(bytes);
  const std::string e = error_of([&] { r.get<int64_t>("episode"); });
  BOOST_TEST(e == "rl message too short reading 'episode': needs 8 bytes at offset 0, 4 left of 4");
  BOOST_TEST(r.get<int32_t>("env") == 1);  // a failed read consumes nothing
  BOOST_TEST(r.done());
}

BOOST_AUTO_TEST_CASE(a_vector_longer_than_the_message_is_refused) {
  ByteWriter w;
  w.put(int64_t(1000));  // announces 1000 floats, carries 2
  w.put(1.0f);
  w.put(2.0f);
  const std::vector<uint8_t> bytes = w.take();
  ByteReader r(bytes);
  const std::string e = error_of([&] { r.get_vector<float>("observation"); });
  BOOST_TEST(e == "rl message too short reading 'observation': 1000 elements of 4 bytes announced at offset 0, 8 bytes left");

  ByteWriter corrupt;
  corrupt.put(int64_t(-1));
  const std::vector<uint8_t> negative = corrupt.take();
  ByteReader rn(negative);
  BOOST_CHECK_THROW(rn.get_string("task"), Error);
}
