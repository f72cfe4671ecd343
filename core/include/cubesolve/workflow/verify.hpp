#pragma once
// A result file compared with the exact path (per-pixel gelsd) on a sample
// of its pixels, read a block of rows at a time.

#include <cubesolve/engine/check.hpp>
#include <cubesolve/progress.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <string>

namespace cubesolve {

struct Verification {
  CheckSummary summary;
  double tolerance = 0;  // 1e-9 for float64 X, 1e-6 for float32
  double max_cond = 0;   // pixels whose A_V is conditioned worse are not judged
};

/// Compares X (M, H, W) from `x` with the exact path on `sample` pixels
/// spread evenly over the cube (every pixel when 0). Throws IoError,
/// InputError (X of another shape, naming `x_name`), Cancelled.
Verification verify_result(const Inputs& in, CubeReader& x, const std::string& x_name, std::size_t sample,
                           const SolveOptions& options, const Progress& progress = {});

}  // namespace cubesolve
