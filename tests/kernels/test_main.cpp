#define BOOST_TEST_MODULE kernels_cpu
#include <boost/test/unit_test.hpp>
