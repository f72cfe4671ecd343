// The pairs and times readers and the SBAS design built from pairs: the
// input is a pairs file, a zero byte, then a times file.
#include "fuzz.hpp"

#include <cubesolve/data/designs.hpp>
#include <cubesolve/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::string pairs = in.until_zero(), times = in.until_zero();
  try {
    const auto p = cubesolve::read_pairs(
        fuzz::temp_file(".pairs", reinterpret_cast<const std::uint8_t*>(pairs.data()), pairs.size()));
    if (p.size() <= 4096) cubesolve::sbas_design(p);
  } catch (const cubesolve::Error&) {
  }
  try {
    cubesolve::read_times(fuzz::temp_file(".times", reinterpret_cast<const std::uint8_t*>(times.data()), times.size()));
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
