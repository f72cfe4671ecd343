#pragma once
// A result checked against the exact path (LAPACK gelsd per pixel) on a
// sample of its pixels: what `verify` prints, what `bench` quotes as the
// engine's error, and how a device's answers are checked after a solve.

#include <cubesolve/engine/engine.hpp>

#include <cstddef>
#include <vector>

namespace cubesolve {

/// One pixel of a result beside the exact path's answer for it.
struct PixelCheck {
  PixelStatus reference = PixelStatus::Ok;  // the exact path's status
  double cond = 0;     // the exact path's condition estimate of the weighted A_V (NaN where not solved)
  double error = 0;    // ||x - x_ref|| / ||x_ref||; 0 where both are NaN, NaN on a NaN mismatch
  bool nan_mismatch = false;  // x is NaN where x_ref is not, or x_ref is NaN and x is not all NaN
};

struct SampleCheck {
  std::vector<PixelCheck> pixels;
  double exact_seconds = 0;  // the exact path's engine time on the sample
};

/// Solves `pixels` (indices into H * W) of `cube` (N, H, W) on the exact
/// path, with `options`' rcond, ridge and minimum valid rows, and compares
/// each with the same pixel of `x` (M, H, W). `weights` as for solve().
/// Throws as solve().
SampleCheck check_pixels(const Array& cube, const Design& design, const Array* weights, const Array& x,
                         const std::vector<std::size_t>& pixels, const SolveOptions& options = {},
                         const Progress& progress = {});

/// K pixel indices spread evenly over P pixels (all of them when K >= P).
std::vector<std::size_t> spread_pixels(std::size_t pixels, std::size_t k);

/// The checks summed up: pixels whose reference is well conditioned
/// (cond <= max_cond) are judged against `tolerance`.
struct CheckSummary {
  std::size_t pixels = 0;          // checked
  std::size_t compared = 0;        // with a reference solution (not NaN)
  std::size_t judged = 0;          // of those, well conditioned
  std::size_t over_tolerance = 0;  // of those, with error > tolerance
  std::size_t nan_mismatches = 0;
  double max_error = 0;         // over the compared pixels
  double max_error_judged = 0;  // over the judged pixels
  bool ok() const { return over_tolerance == 0 && nan_mismatches == 0; }
};
CheckSummary summarize(const std::vector<PixelCheck>& checks, double tolerance, double max_cond);

}  // namespace cubesolve
