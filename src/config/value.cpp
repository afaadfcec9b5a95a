#include "config/value.hpp"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/error.hpp"

namespace emb {

std::string trim(const std::string& text) {
  const char* blanks = " \t\r\n";
  std::size_t first = text.find_first_not_of(blanks);
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(blanks) - first + 1);
}

bool parse_int(const std::string& text, int64_t* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end != text.c_str() + text.size()) return false;  // "4<NUL>junk" is not 4
  *out = value;
  return true;
}

bool parse_real(const std::string& text, double* out) {
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end != text.c_str() + text.size() || !std::isfinite(value)) return false;
  *out = value;
  return true;
}

bool parse_bool(const std::string& text, bool* out) {
  if (text == "true" || text == "on" || text == "yes" || text == "1") return *out = true, true;
  if (text == "false" || text == "off" || text == "no" || text == "0") return *out = false, true;
  return false;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  if (trim(text).empty()) return items;
  std::size_t start = 0;
  while (true) {
    std::size_t comma = text.find(',', start);
    items.push_back(trim(text.substr(start, comma - start)));
    if (comma == std::string::npos) return items;
    start = comma + 1;
  }
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string joined;
  for (std::size_t i = 0; i < items.size(); ++i) joined += (i == 0 ? "" : separator) + items[i];
  return joined;
}

std::string format_number(double x) {
  char buffer[32];
  if (x == std::trunc(x) && std::fabs(x) < 1e15) {  // whole numbers in full: 1000000000, not 1e+09
    std::snprintf(buffer, sizeof buffer, "%.0f", x);
    return buffer;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
    if (std::strtod(buffer, nullptr) == x) break;
  }
  return buffer;
}

namespace {

[[noreturn]] void fail(const KeySpec& spec, const std::string& message) {
  throw Error(str(spec.key, ": ", message), kExitInput);
}

void check_range(const KeySpec& spec, double value, const std::string& text) {
  if (spec.range.contains(value)) return;
  std::string unit = spec.unit.empty() ? "" : " " + spec.unit;
  fail(spec, str(clipped(text), " is out of range ", spec.range.text(), unit));
}

std::string canonical_int(const KeySpec& spec, const std::string& text) {
  if (spec.or_auto && text == "auto") return text;
  int64_t value = 0;
  if (!parse_int(text, &value))
    fail(spec, str("expected an integer", spec.or_auto ? " or auto" : "", ", got ", quoted(text)));
  check_range(spec, static_cast<double>(value), text);
  return std::to_string(value);
}

}  // namespace

std::string canonical_value(const KeySpec& spec, const std::string& text) {
  if (text.find('#') != std::string::npos)
    fail(spec, str("'#' starts a comment in a deck and cannot be part of a value, got ", quoted(text)));
  switch (spec.type) {
    case KeyType::integer:
      return canonical_int(spec, text);
    case KeyType::real: {
      double value = 0;
      if (!parse_real(text, &value)) fail(spec, str("expected a number, got ", quoted(text)));
      check_range(spec, value, text);
      return format_number(value);
    }
    case KeyType::boolean: {
      bool value = false;
      if (!parse_bool(text, &value)) fail(spec, str("expected true or false, got ", quoted(text)));
      return value ? "true" : "false";
    }
    case KeyType::string:
      return text;
    case KeyType::enumeration:
      for (const std::string& choice : spec.choices)
        if (text == choice) return text;
      fail(spec, str(quoted(text), " is not allowed; choose one of ", join(spec.choices)));
    case KeyType::list: {
      std::vector<std::string> items = split_list(text);
      for (const std::string& item : items)
        if (item.empty()) fail(spec, str("empty item in the list ", quoted(text)));
      return join(items);
    }
    case KeyType::int_list: {
      std::vector<std::string> items = split_list(text);
      if (spec.list_size != 0 && items.size() != spec.list_size)
        fail(spec, str("expected ", spec.list_size, " comma-separated integers, got ", items.size(),
                       " in ", quoted(text)));
      for (std::string& item : items) item = canonical_int(spec, item);
      return join(items);
    }
  }
  EMB_ASSERT(!"every KeyType is handled above");
  return {};
}

}  // namespace emb
