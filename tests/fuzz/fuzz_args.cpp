// The CLI's argument parser and the options each command reads from it:
// the input is the arguments, separated by zero bytes.
#include "fuzz.hpp"

#include "args.hpp"
#include "common.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/workflow/results.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
  std::vector<std::string> argv;
  while (!in.empty() && argv.size() < 64) argv.push_back(in.until_zero());
  try {
    const cubesolve::cli::Args args("solve", argv, {"json"},
                                    {"output", "weights", "device", "rcond", "min-valid", "ridge", "diag", "threads",
                                     "dtype", "model", "residual", "method", "memory", "pairs", "times",
                                     "device-precision", "device-memory", "sample", "size", "n", "m", "nan"});
    args.expect_positional(0, 8, "ARGS");
    cubesolve::SolveOptions o = cubesolve::cli::solve_options(args);
    cubesolve::cli::device_options(args, o, "cpu");
    args.integer("sample", 1000, 0, 1 << 30);
    args.number("nan", 0.2);
    cubesolve::ResultPaths paths;
    paths.x = args.get("output", "x.npy");
    paths.diagnostics = args.get("diag", "");
    paths.model = args.get("model", "");
    paths.residual = args.get("residual", "");
    paths.check(args.positional());
  } catch (const cubesolve::Error&) {
  }
  return 0;
}
