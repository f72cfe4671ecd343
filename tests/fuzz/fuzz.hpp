#pragma once
// What the fuzz harnesses share: the libFuzzer entry point they define, a
// temporary file per process for readers that take a path, and a small
// consumer of the fuzzer's bytes for harnesses that build structured input.
// Harnesses catch cubesolve::Error (a clear message is the contract); any
// other exception, a crash or a sanitizer report is a finding.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <unistd.h>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace fuzz {

/// The path of this process's temporary file ending in `suffix`, removed
/// when the process exits (libFuzzer's time limit ends it by exit()).
inline std::string temp_path(const std::string& suffix) {
  static struct Made {
    std::set<std::string> paths;
    ~Made() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  } made;
  const std::string path = "/tmp/cubesolve-fuzz-" + std::to_string(::getpid()) + suffix;
  made.paths.insert(path);
  return path;
}

/// A file of this process holding `size` bytes of `data`; its path.
inline std::string temp_file(const char* suffix, const std::uint8_t* data, std::size_t size) {
  const std::string path = temp_path(suffix);
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                static_cast<std::streamsize>(size));
  return path;
}

/// Reads integers and strings off the front of the fuzzer's bytes (zeros once they run out).
class Bytes {
public:
  Bytes(const std::uint8_t* data, std::size_t size) : p_(data), end_(data + size) {}
  std::uint8_t byte() { return p_ < end_ ? *p_++ : 0; }
  /// An integer in [lo, hi].
  std::size_t in(std::size_t lo, std::size_t hi) {
    std::size_t v = 0;
    for (int k = 0; k < 4; ++k) v = (v << 8) | byte();
    return lo + v % (hi - lo + 1);
  }
  std::string text(std::size_t n) {
    std::string s;
    for (std::size_t k = 0; k < n; ++k) s += static_cast<char>(byte());
    return s;
  }
  /// Up to the next 0 byte (or the end).
  std::string until_zero() {
    std::string s;
    while (p_ < end_ && *p_) s += static_cast<char>(*p_++);
    if (p_ < end_) ++p_;
    return s;
  }
  bool empty() const { return p_ >= end_; }

private:
  const std::uint8_t* p_;
  const std::uint8_t* end_;
};

}  // namespace fuzz
