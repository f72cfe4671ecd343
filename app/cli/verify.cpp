// cubesolve-cli verify: a result compared with per-pixel gelsd on a sample.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/workflow/verify.hpp>

#include <cstdio>
#include <iostream>
#include <limits>

namespace cubesolve::cli {

namespace {

void print_json(const Verification& v) {
  const CheckSummary& s = v.summary;
  Json j;
  j.begin_object()
      .field("command", "verify")
      .field("pixels", s.pixels)
      .field("judged", s.judged)
      .field("max_rel_error", s.max_error)
      .field("max_rel_error_well_conditioned", s.max_error_judged)
      .field("tolerance", v.tolerance)
      .field("nan_mismatches", s.nan_mismatches)
      .field("failed", s.over_tolerance)
      .field("ok", s.ok())
      .end_object();
  std::cout << j.str() << "\n";
}

void print_text(const std::string& x_path, const Verification& v) {
  const CheckSummary& s = v.summary;
  std::printf("verify %s: %zu pixels compared with per-pixel gelsd (%zu well-conditioned)\n", x_path.c_str(), s.pixels,
              s.judged);
  std::printf("  max relative error %.3g (well-conditioned: %.3g, tolerance %.0e)\n", s.max_error, s.max_error_judged,
              v.tolerance);
  std::printf("  NaN mismatches %zu, pixels over tolerance %zu: %s\n", s.nan_mismatches, s.over_tolerance,
              s.ok() ? "OK" : "FAILED");
}

}  // namespace

int cmd_verify(const std::vector<std::string>& argv) {
  const Args args("verify", argv, with_inputs({"json"}, kInputFlags),
                  with_inputs({"sample", "weights", "rcond", "min-valid", "ridge", "threads", "pairs", "times"}, kInputOptions));
  args.expect_positional(3, 3, "CUBE DESIGN X.npy");
  const std::string x_path = args.positional()[2];
  const Inputs in = open_command_inputs(args);
  const auto x = open_cube(x_path);
  const auto sample = static_cast<std::size_t>(args.integer("sample", 1000, 0, std::numeric_limits<int>::max()));
  ProgressBar bar("verifying");
  const Verification v = verify_result(in, *x, x_path, sample, solve_options(args), bar.callback());
  if (args.flag("json")) print_json(v);
  else print_text(x_path, v);
  const CheckSummary& s = v.summary;
  if (!s.ok())
    throw NumericalError(x_path + ": expected agreement with gelsd, found " + std::to_string(s.over_tolerance) +
                         " pixels over tolerance and " + std::to_string(s.nan_mismatches) + " NaN mismatches");
  return 0;
}

}  // namespace cubesolve::cli
