#include "engine/paths.hpp"

#include "engine/lanes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve::detail {

using namespace lanes;

double weight_ratio(const Workspace& ws, std::size_t k, std::size_t N) {
  double wmin = HUGE_VAL, wmax = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (ws.valid[k * N + i]) wmin = std::min(wmin, ws.w[k * N + i]), wmax = std::max(wmax, ws.w[k * N + i]);
  return wmax / wmin;
}

CUBESOLVE_SIMD_CLONES void solve_systems(const Job& job, Workspace& ws) {
  ws.rows.resize(job.N * kMaxGroups * L);
  factor_in_lanes(
      job.N, ws,
      [&](std::size_t l, std::size_t k, double* z)
          __attribute__((always_inline)) { return pixel_lane(job, ws, l, k, z); },
      [&](std::size_t l, std::size_t k, std::size_t q, const double* z, bool ok)
          __attribute__((always_inline)) { pixel_done(job, ws, q, l, k, z, ok); },
      [&](std::size_t, std::size_t k, const LaneSystem& sys, const double* z, double* r) {
        pixel_residual(job, ws, k, sys, z, r);
      });
}

}  // namespace cubesolve::detail
