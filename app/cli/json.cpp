#include "json.hpp"

#include <cmath>
#include <cstdio>

namespace cubesolve::cli {

void Json::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (!first_.empty()) {
    if (!first_.back()) out_ += ", ";
    first_.back() = false;
  }
}

Json& Json::begin_object() {
  separate();
  out_ += '{';
  first_.push_back(true);
  return *this;
}
Json& Json::end_object() {
  first_.pop_back();
  out_ += '}';
  return *this;
}
Json& Json::begin_array() {
  separate();
  out_ += '[';
  first_.push_back(true);
  return *this;
}
Json& Json::end_array() {
  first_.pop_back();
  out_ += ']';
  return *this;
}
Json& Json::key(const std::string& k) {
  value(k);
  out_ += ": ";
  after_key_ = true;
  return *this;
}
Json& Json::value(const std::string& v) {
  separate();
  out_ += '"';
  for (unsigned char c : v) {
    if (c == '"' || c == '\\') {
      out_ += '\\';
      out_ += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out_ += buf;
    } else {
      out_ += static_cast<char>(c);
    }
  }
  out_ += '"';
  return *this;
}
Json& Json::value(double v) {
  separate();
  if (!std::isfinite(v)) {
    out_ += "null";
  } else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    out_ += buf;
  }
  return *this;
}
Json& Json::value(std::size_t v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
Json& Json::value(long v) {
  separate();
  out_ += std::to_string(v);
  return *this;
}
Json& Json::value(bool v) {
  separate();
  out_ += v ? "true" : "false";
  return *this;
}

}  // namespace cubesolve::cli
