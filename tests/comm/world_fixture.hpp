// Boost.Test global fixture for the comm suites: the MPI world for the whole run.
#pragma once
#include <boost/test/unit_test.hpp>

#include "comm/world.hpp"

namespace emb {

inline World& test_world() {
  static World world;
  return world;
}

struct WorldFixture {
  WorldFixture() {
    auto& suite = boost::unit_test::framework::master_test_suite();
    test_world() = init_world(&suite.argc, &suite.argv);
  }
  ~WorldFixture() { finalize_world(); }
};

}  // namespace emb
