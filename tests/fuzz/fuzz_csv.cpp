// The CSV design-matrix reader (and what reads a design by its name).
#include "fuzz.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::temp_file(".csv", data, size);
  try {
    const cubesolve::Array a = cubesolve::read_array(path);
    if (a.size() <= 4096) cubesolve::Design d(a, path);
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
