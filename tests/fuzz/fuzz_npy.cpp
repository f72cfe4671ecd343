// The NPY reader: whole-file reads and the row-block reader.
#include "fuzz.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/stream.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = fuzz::temp_file(".npy", data, size);
  try {
    cubesolve::read_npy(path);
  } catch (const cubesolve::Error&) {
  }
  try {
    const auto reader = cubesolve::open_cube(path);
    const std::size_t H = reader->shape()[1];
    reader->rows(0, H < 3 ? H : 3);
    if (H > 1) reader->rows(H - 1, H);
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
