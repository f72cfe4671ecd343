#pragma once
// Small dense kernels for the many small systems of the fast paths.

#include <cmath>
#include <cstddef>

namespace cubesolve::detail {

/// In-place Cholesky S = L L^T of a symmetric positive definite n x n
/// row-major matrix (the lower triangle is read and overwritten). Returns
/// false when a pivot is not above `tau` times the largest diagonal entry:
/// the system is too close to singular for this path to be trusted.
inline bool cholesky(double* s, std::size_t n, double tau) {
  double dmax = 0;
  for (std::size_t i = 0; i < n; ++i) dmax = std::fmax(dmax, s[i * n + i]);
  const double floor = tau * dmax;
  for (std::size_t j = 0; j < n; ++j) {
    double* rj = s + j * n;
    double d = rj[j];
    for (std::size_t k = 0; k < j; ++k) d -= rj[k] * rj[k];
    if (!(d > floor)) return false;
    d = std::sqrt(d);
    rj[j] = d;
    const double inv = 1.0 / d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double* ri = s + i * n;
      double v = ri[j];
      for (std::size_t k = 0; k < j; ++k) v -= ri[k] * rj[k];
      ri[j] = v * inv;
    }
  }
  return true;
}

/// Solves L L^T x = b in place, L from cholesky().
inline void cholesky_solve(const double* l, std::size_t n, double* b) {
  for (std::size_t i = 0; i < n; ++i) {
    double v = b[i];
    const double* ri = l + i * n;
    for (std::size_t k = 0; k < i; ++k) v -= ri[k] * b[k];
    b[i] = v / ri[i];
  }
  for (std::size_t i = n; i-- > 0;) {
    double v = b[i];
    for (std::size_t k = i + 1; k < n; ++k) v -= l[k * n + i] * b[k];
    b[i] = v / l[i * n + i];
  }
}

inline double dot(const double* a, const double* b, std::size_t n) {
  double s = 0;
  for (std::size_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// y += alpha * x
inline void axpy(double alpha, const double* x, double* y, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
}

}  // namespace cubesolve::detail
