#pragma once
// A small streaming JSON writer for the CLI's --json output.

#include <cstddef>
#include <string>
#include <vector>

namespace cubesolve::cli {

class Json {
public:
  Json& begin_object();
  Json& end_object();
  Json& begin_array();
  Json& end_array();
  Json& key(const std::string& k);
  Json& value(const std::string& v);
  Json& value(const char* v) { return value(std::string(v)); }
  Json& value(double v);
  Json& value(std::size_t v);
  Json& value(long v);
  Json& value(int v) { return value(static_cast<long>(v)); }
  Json& value(bool v);
  template <class T> Json& field(const std::string& k, const T& v) { return key(k).value(v); }
  const std::string& str() const { return out_; }

private:
  void separate();
  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace cubesolve::cli
