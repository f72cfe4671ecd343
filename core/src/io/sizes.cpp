#include "io/sizes.hpp"

#include <cubesolve/error.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <sys/stat.h>

namespace cubesolve::detail {

void check_not_folder(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(path + ": expected a file, found a folder");
}

void check_row_fits(const std::string& name, std::size_t width, double row_bytes, std::size_t memory, std::size_t usable) {
  if (row_bytes > static_cast<double>(usable))
    throw InputError(name + ": expected rows that fit the memory budget of " + std::to_string(memory >> 20) +
                     " MB, found rows of " + std::to_string(width) + " pixels, which need " +
                     std::to_string(std::llround(row_bytes / 1048576) + 1) +
                     " MB each with their results; raise the budget or cut the cube into tiles");
}

std::uint64_t data_bytes(const Shape& shape, std::size_t item, const std::string& path) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t n = item;
  for (std::size_t d : shape) {
    if (d != 0 && n > kMax / d)
      throw InputError(path + ": expected an array that fits in memory, found shape " + shape_string(shape) + " of " +
                       std::to_string(item) + "-byte values (more than 2^64 bytes)");
    n *= d;
  }
  for (std::size_t d : shape)
    if (d == 0) return 0;
  return n;
}

void check_file_holds(const std::string& path, std::uint64_t offset, std::uint64_t bytes, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw IoError(path + ": cannot read its size: " + std::strerror(errno));
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t have = size > offset ? size - offset : 0;
  if (bytes > have)
    throw InputError(path + ": expected " + std::to_string(bytes) + " bytes of " + what + " from byte " +
                     std::to_string(offset) + ", found " + std::to_string(have) + " (the file is truncated or its header is wrong)");
}

}  // namespace cubesolve::detail
