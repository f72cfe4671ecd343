#include <cubesolve/engine/check.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace cubesolve {

SampleCheck check_pixels(const Array& cube, const Design& design, const Array* weights, const Array& x,
                         const std::vector<std::size_t>& pixels, const SolveOptions& options, const Progress& progress) {
  const Array sub = take_pixels(cube, pixels), xs = take_pixels(x, pixels);
  Array ws;
  if (weights) ws = take_pixels(*weights, pixels);
  SolveOptions exact = options;
  exact.method = Method::Exact;
  exact.device = Device::Cpu;
  exact.output = DType::Float64;
  exact.residuals = false;
  const SolveResult ref = solve(sub, design, weights ? &ws : nullptr, exact, progress);
  const std::size_t K = pixels.size(), M = design.cols();
  SampleCheck out;
  out.exact_seconds = ref.engine_seconds;
  out.pixels.resize(K);
  for (std::size_t k = 0; k < K; ++k) {
    PixelCheck& c = out.pixels[k];
    c.reference = static_cast<PixelStatus>(ref.status.data<std::uint8_t>()[k]);
    c.cond = ref.cond.value(k);
    const bool ref_nan = std::isnan(ref.x.value(k));
    double diff = 0, norm = 0;
    bool any_nan = false, all_nan = true;
    for (std::size_t j = 0; j < M; ++j) {
      const double a = xs.value(j * K + k), b = ref.x.value(j * K + k);
      any_nan = any_nan || std::isnan(a);
      all_nan = all_nan && std::isnan(a);
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    c.nan_mismatch = ref_nan ? !all_nan : any_nan;
    c.error = c.nan_mismatch ? std::numeric_limits<double>::quiet_NaN()
              : ref_nan      ? 0.0
                             : std::sqrt(diff) / std::max(std::sqrt(norm), std::numeric_limits<double>::min());
    if (ref_nan) c.cond = std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

std::vector<std::size_t> spread_pixels(std::size_t pixels, std::size_t k) {
  const std::size_t K = std::min(k, pixels);
  std::vector<std::size_t> pick(K);
  for (std::size_t i = 0; i < K; ++i) pick[i] = K == pixels ? i : (i * pixels) / K + (pixels / K) / 2;
  return pick;
}

CheckSummary summarize(const std::vector<PixelCheck>& checks, double tolerance, double max_cond) {
  CheckSummary s;
  s.pixels = checks.size();
  for (const PixelCheck& c : checks) {
    if (c.nan_mismatch) {
      ++s.nan_mismatches;
      continue;
    }
    if (std::isnan(c.cond) || c.reference == PixelStatus::Failed) continue;  // no reference solution
    ++s.compared;
    s.max_error = std::max(s.max_error, c.error);
    if (!(c.cond <= max_cond)) continue;
    ++s.judged;
    s.max_error_judged = std::max(s.max_error_judged, c.error);
    if (!(c.error <= tolerance)) ++s.over_tolerance;
  }
  return s;
}

}  // namespace cubesolve
