// The emb::Error message a call throws ("" when it does not throw): tests assert error texts.
#pragma once
#include <functional>
#include <string>

#include "core/error.hpp"

namespace emb::test {

inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const emb::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace emb::test
