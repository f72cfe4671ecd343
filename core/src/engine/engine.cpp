#include <cubesolve/engine/engine.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/error.hpp>

#include "engine/factors.hpp"
#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

namespace cubesolve {

int exit_code(const std::exception& e) noexcept {
  if (dynamic_cast<const InputError*>(&e)) return 2;
  if (dynamic_cast<const IoError*>(&e)) return 3;
  if (dynamic_cast<const Cancelled*>(&e)) return 130;
  return 4;  // NumericalError, std::bad_alloc and what no front end expects
}

const char* status_name(PixelStatus status) {
  switch (status) {
    case PixelStatus::Ok: return "ok";
    case PixelStatus::MinNorm: return "min-norm";
    case PixelStatus::NoData: return "no-data";
    case PixelStatus::TooFew: return "too-few";
    case PixelStatus::Failed: return "failed";
    case PixelStatus::Reference: return "reference";
    case PixelStatus::NotConverged: return "not-converged";
  }
  return "?";
}

const char* path_name(SolvePath path) {
  switch (path) {
    case SolvePath::Full: return "full";
    case SolvePath::Group: return "group";
    case SolvePath::Deletion: return "deletion";
    case SolvePath::Dual: return "dual";
    case SolvePath::Gram: return "gram";
    case SolvePath::Exact: return "exact";
    case SolvePath::Skipped: return "skipped";
  }
  return "?";
}

std::size_t SolveResult::count(PixelStatus s) const {
  if (status.empty()) return 0;
  const auto* st = status.data<std::uint8_t>();
  return static_cast<std::size_t>(std::count(st, st + status.size(), static_cast<std::uint8_t>(s)));
}

std::size_t SolveResult::no_dof() const {
  if (std_error.empty()) return 0;
  const std::size_t P = status.size();
  std::size_t n = 0;
  for (std::size_t p = 0; p < P; ++p) {
    const auto s = static_cast<PixelStatus>(status.data<std::uint8_t>()[p]);
    n += (s == PixelStatus::Ok || s == PixelStatus::MinNorm) && std::isnan(std_error.value(p));
  }
  return n;
}

Design::Design(const Array& a, const std::string& name) {
  if (a.ndim() == 1) {
    rows_ = a.dim(0);
    cols_ = 1;
  } else if (a.ndim() == 2) {
    rows_ = a.dim(0);
    cols_ = a.dim(1);
  } else {
    throw InputError(name + ": expected a 2-D design matrix (N, M), found shape " + shape_string(a.shape()));
  }
  if (rows_ == 0 || cols_ == 0)
    throw InputError(name + ": expected a non-empty design matrix (N, M), found shape " + shape_string(a.shape()));
  a_.resize(rows_ * cols_);
  for (std::size_t i = 0; i < a_.size(); ++i) {
    a_[i] = a.value(i);
    if (!std::isfinite(a_[i])) {
      std::ostringstream msg;
      msg << name << ": expected finite values in the design matrix, found " << a_[i] << " at row " << i / cols_
          << ", column " << i % cols_;
      throw InputError(msg.str());
    }
  }
  factors_ = std::make_shared<const detail::DesignFactors>(detail::factor_design(a_, rows_, cols_));
  // Rank r below both N and M (a split network): the design in A's row
  // space, A·Q (N, r).
  const auto& q = factors_->row_basis;
  if (!q.empty()) {
    const std::size_t r = q.size() / cols_;
    Array aq(DType::Float64, {rows_, r});
    for (std::size_t i = 0; i < rows_; ++i)
      for (std::size_t k = 0; k < r; ++k) {
        double v = 0;
        for (std::size_t j = 0; j < cols_; ++j) v += a_[i * cols_ + j] * q[k * cols_ + j];
        aq.data<double>()[i * r + k] = v;
      }
    reduced_ = std::make_shared<const Design>(aq, name + " (in its row space)");
  }
}

std::size_t Design::rank() const { return factors_->rank; }
double Design::condition() const {
  const auto& s = factors_->sigma;
  return s.back() > 0 ? s.front() / s.back() : std::numeric_limits<double>::infinity();
}

void check_cube_shape(const Shape& shape, DType dtype, const std::string& name) {
  if (shape.size() != 3) throw InputError(name + ": expected 3 dimensions (N, H, W), found shape " + shape_string(shape));
  if (shape[0] == 0) throw InputError(name + ": expected at least one observation (N >= 1), found shape " + shape_string(shape));
  if (dtype != DType::Float32 && dtype != DType::Float64)
    throw InputError(name + ": expected float32 or float64 values, found " + dtype_name(dtype));
}

void check_cube(const Array& cube, const std::string& name) { check_cube_shape(cube.shape(), cube.dtype(), name); }

void check_shapes(const Shape& cube, const Design& design, const Shape* weights, const std::string& cube_name,
                  const std::string& design_name, const std::string& weights_name) {
  if (cube[0] != design.rows())
    throw InputError(design_name + ": expected " + std::to_string(cube[0]) + " rows (one per observation of " +
                     cube_name + ", shape " + shape_string(cube) + "), found " + std::to_string(design.rows()) +
                     " rows");
  if (weights) check_like_cube(*weights, cube, weights_name);
}

void check_inputs(const Array& cube, const Design& design, const Array* weights, const std::string& cube_name,
                  const std::string& design_name, const std::string& weights_name, std::size_t first_row) {
  check_cube(cube, cube_name);
  check_shapes(cube.shape(), design, weights ? &weights->shape() : nullptr, cube_name, design_name, weights_name);
  if (weights) {
    const std::size_t P = cube.dim(1) * cube.dim(2);
    for (std::size_t i = 0; i < weights->size(); ++i) {
      const double w = weights->value(i);
      if (w < 0 || std::isinf(w)) {  // NaN, like 0, marks a missing value
        std::ostringstream msg;
        msg << weights_name << ": expected finite weights >= 0, found " << w << " at (observation " << i / P << ", row "
            << first_row + (i % P) / cube.dim(2) << ", column " << i % cube.dim(2) << ")";
        throw InputError(msg.str());
      }
    }
  }
}


Array model_cube(const Design& design, const Array& x) {
  if (x.ndim() != 3 || x.dim(0) != design.cols())
    throw InputError("solution: expected shape (" + std::to_string(design.cols()) + ", H, W), found " +
                     shape_string(x.shape()));
  const std::size_t N = design.rows(), M = design.cols(), H = x.dim(1), W = x.dim(2), P = H * W;
  Array model(x.dtype(), {N, H, W});
  constexpr std::size_t kBlock = 4096;
  std::vector<double> xb(M * kBlock), mb(N * kBlock);
  for (std::size_t b = 0; b < P; b += kBlock) {
    const std::size_t B = std::min(kBlock, P - b);
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t k = 0; k < B; ++k) xb[k + j * B] = x.value(j * P + b + k);
    // (B x N) = (B x M) * (M x N), column-major: X block^T times A^T.
    lapack::gemm('N', 'N', static_cast<int>(B), static_cast<int>(N), static_cast<int>(M), 1.0, xb.data(),
                 static_cast<int>(B), design.values().data(), static_cast<int>(M), 0.0, mb.data(),
                 static_cast<int>(B));
    std::vector<char> solved(B, 1);  // NaN in X must give NaN whatever BLAS does with it
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t k = 0; k < B; ++k) solved[k] &= static_cast<char>(std::isfinite(xb[k + j * B]));
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < B; ++k)
        model.set(i * P + b + k, solved[k] ? mb[k + i * B] : std::numeric_limits<double>::quiet_NaN());
  }
  return model;
}

Array residual_rms(const SolveResult& result) {
  Array out(DType::Float64, result.rss.shape());
  for (std::size_t p = 0; p < out.size(); ++p) {
    const double n = result.n_valid.value(p);
    out.data<double>()[p] = n > 0 ? std::sqrt(result.rss.value(p) / n) : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}

std::vector<double> pixel_model(const Design& design, const Array& x, std::size_t pixel) {
  const std::size_t N = design.rows(), M = design.cols(), P = x.size() / std::max<std::size_t>(1, M);
  std::vector<double> out(N, 0.0);
  for (std::size_t j = 0; j < M; ++j) {
    const double xj = x.value(j * P + pixel);
    for (std::size_t i = 0; i < N; ++i) out[i] += design(i, j) * xj;
  }
  return out;
}

Array model_band(const Design& design, const Array& x, std::size_t observation) {
  const std::size_t M = design.cols(), H = x.dim(1), W = x.dim(2), P = H * W;
  Array out(DType::Float64, {1, H, W});
  double* o = out.data<double>();
  for (std::size_t j = 0; j < M; ++j) {
    const double a = design(observation, j);
    for (std::size_t p = 0; p < P; ++p) o[p] += a * x.value(j * P + p);
  }
  return out;
}

std::vector<bool> undetermined_unknowns(const Design& design, const std::vector<bool>& valid) {
  const std::size_t N = design.rows(), M = design.cols();
  std::vector<double> av;
  std::size_t n = 0;
  for (std::size_t i = 0; i < N && i < valid.size(); ++i)
    if (valid[i]) {
      av.insert(av.end(), design.values().begin() + static_cast<std::ptrdiff_t>(i * M),
                design.values().begin() + static_cast<std::ptrdiff_t>((i + 1) * M));
      ++n;
    }
  std::vector<bool> out(M, true);
  if (n == 0) return out;
  // e_j is in the row space of A_V when the projector A_V^+ A_V keeps it.
  const detail::DesignFactors f = detail::factor_design(av, n, M);
  for (std::size_t j = 0; j < M; ++j) {
    double err = 0;
    for (std::size_t q = 0; q < M; ++q) {
      double pq = 0;  // (A_V^+ A_V)[q][j]
      for (std::size_t i = 0; i < n; ++i) pq += f.pinv[i * M + q] * av[i * M + j];
      err += (pq - (q == j ? 1.0 : 0.0)) * (pq - (q == j ? 1.0 : 0.0));
    }
    out[j] = std::sqrt(err) > 1e-6;
  }
  return out;
}

namespace {
/// The least-squares line of each pixel's valid dates: its slope, or with
/// `std_error` the slope's standard error.
Array linear_fit(const Array& x, const std::vector<double>& times, bool std_error) {
  const std::size_t M = x.dim(0), H = x.dim(1), W = x.dim(2), P = H * W;
  if (times.size() != M + 1) throw InputError("linear rate: expected " + std::to_string(M + 1) + " times, found " + std::to_string(times.size()));
  Array out(DType::Float64, {1, H, W});
  for (std::size_t p = 0; p < P; ++p) {
    // Sums over the valid dates, about times[0] (the reference date: value 0) for accuracy.
    double n = 1, st = 0, sy = 0, stt = 0, sty = 0, syy = 0;
    for (std::size_t j = 0; j < M; ++j) {
      const double y = x.value(j * P + p), t = times[j + 1] - times[0];
      if (!std::isfinite(y)) continue;
      n += 1, st += t, sy += y, stt += t * t, sty += t * y, syy += y * y;
    }
    const double var = stt - st * st / n;  // n × the variance of the valid times
    const double slope = n > 1 && var > 1e-12 * stt ? (sty - st * sy / n) / var : std::numeric_limits<double>::quiet_NaN();
    // The slope's: sqrt(s² / Σ(t - mean t)²), s² the residuals' over n - 2.
    const double rss = std::max(0.0, syy - sy * sy / n - slope * (sty - st * sy / n));
    out.data<double>()[p] = !std_error ? slope : n > 2 && std::isfinite(slope) ? std::sqrt(rss / (n - 2) / var)
                                                                           : std::numeric_limits<double>::quiet_NaN();
  }
  return out;
}
}  // namespace

Array linear_rate(const Array& x, const std::vector<double>& times) { return linear_fit(x, times, false); }

Array linear_rate_std(const Array& x, const std::vector<double>& times) { return linear_fit(x, times, true); }

namespace {
/// f(a, b) of the cosine and sine channels of `h` for every pixel of x.
Array each_harmonic(const Array& x, const Harmonic& h, double (*f)(double, double, const Harmonic&)) {
  const std::size_t M = x.dim(0), P = x.dim(1) * x.dim(2);
  if (h.cos >= M || h.sin >= M) throw InputError("harmonic " + h.name + ": expected its columns within the " + std::to_string(M) + " unknowns");
  Array out(DType::Float64, {1, x.dim(1), x.dim(2)});
  for (std::size_t p = 0; p < P; ++p) out.data<double>()[p] = f(x.value(h.cos * P + p), x.value(h.sin * P + p), h);
  return out;
}
}  // namespace

Array harmonic_amplitude(const Array& x, const Harmonic& h) {
  return each_harmonic(x, h, [](double a, double b, const Harmonic&) { return std::hypot(a, b); });
}

Array harmonic_peak(const Array& x, const Harmonic& h) {
  return each_harmonic(x, h, [](double a, double b, const Harmonic& t) {
    if (!std::isfinite(a) || !std::isfinite(b) || (a == 0 && b == 0)) return std::numeric_limits<double>::quiet_NaN();
    double at = std::atan2(b, a) / (2 * 3.141592653589793) * t.span();  // ωt = atan2(b, a), ω = 2π / period
    if (at < 0) at += t.span();
    return at;
  });
}

Array temporal_coherence(const Array& residual) {
  check_cube(residual, "residuals");
  const std::size_t N = residual.dim(0), P = residual.dim(1) * residual.dim(2);
  Array t(DType::Float32, {residual.dim(1), residual.dim(2)});
  // In float32 as MintPy (its residuals are float32), summed in float64.
  std::vector<double> c(P, 0.0), s(P, 0.0);
  std::vector<std::uint32_t> n(P, 0);
  std::vector<float> e(P);
  for (std::size_t i = 0; i < N; ++i) {
    if (residual.dtype() == DType::Float32) std::copy_n(residual.data<float>() + i * P, P, e.data());
    else
      for (std::size_t p = 0; p < P; ++p) e[p] = static_cast<float>(residual.data<double>()[i * P + p]);
    for (std::size_t p = 0; p < P; ++p) {
      if (!std::isfinite(e[p])) continue;
      c[p] += std::cos(e[p]);
      s[p] += std::sin(e[p]);
      ++n[p];
    }
  }
  for (std::size_t p = 0; p < P; ++p)
    t.data<float>()[p] = n[p] ? static_cast<float>(std::hypot(c[p], s[p]) / n[p]) : NAN;
  return t;
}

Array residual_cube(const Array& cube, const Array& model) {
  check_like_cube(model.shape(), cube.shape(), "model");
  Array res(cube.dtype(), cube.shape());
  for (std::size_t i = 0; i < cube.size(); ++i) {
    const double y = cube.value(i);
    res.set(i, std::isfinite(y) ? y - model.value(i) : std::numeric_limits<double>::quiet_NaN());
  }
  return res;
}

}  // namespace cubesolve
