// Designs built from a description: a spec ("poly:D", "harmonic:K[:P]",
// "sbas", ...), a zero byte, a band count byte, then a times file.
#include "fuzz.hpp"

#include <cubesolve/data/designs.hpp>
#include <cubesolve/error.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  const std::string spec = in.until_zero();
  const std::size_t n = in.in(1, 300);
  const std::string times = in.until_zero();
  const std::string tpath =
      fuzz::temp_file(".times", reinterpret_cast<const std::uint8_t*>(times.data()), times.size());
  try {
    // A spec that names no description would be a file to read: not fuzzed here.
    if (cubesolve::is_design_spec(spec)) cubesolve::make_design({spec, tpath, times.empty() ? "" : tpath}, n);
  } catch (const cubesolve::Error&) {
  }
  try {
    cubesolve::build_design(spec, n, {});
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
