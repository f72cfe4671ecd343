#pragma once
// Test references, written independently of the engine: per-pixel LAPACK
// dgelsd on the weighted valid rows, and helpers to build test data.

#include <cubesolve/data/array.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace testing {

struct Reference {
  std::vector<double> x;  // M values, NaN when no row is valid
  int rank = 0;
  int nvalid = 0;
  double rss = 0;
  std::vector<double> sigma;  // the singular values of the system solved, descending
};

/// numpy.linalg.lstsq(diag(sqrt(w_V)) A_V, diag(sqrt(w_V)) y_V, rcond) for one
/// pixel; A row-major (N, M); w null for unit weights; rcond < 0: eps*max(|V|, M).
/// With ridge > 0 the system is that one stacked over sqrt(ridge)·I (M rows
/// of zeros on the right): argmin |W^1/2 (A_V x - y_V)|^2 + ridge |x|^2; rss
/// is then over the pixel's rows alone.
Reference lstsq(const std::vector<double>& a, std::size_t n, std::size_t m, const double* y, const double* w,
                double rcond = -1, double ridge = 0);

/// Ridge solution from the normal equations (A_V^T W A_V + lambda I) x = A_V^T W y.
std::vector<double> ridge(const std::vector<double>& a, std::size_t n, std::size_t m, const double* y,
                          const double* w, double lambda);

/// ||a - b|| / ||b||.
double rel_error(const std::vector<double>& a, const std::vector<double>& b);

/// A solution against lstsq pixel by pixel: value i of pixel p is y(i, p),
/// its weight w(i, p) (no weights when w is empty), x(j, p) the solution's
/// unknown j. Returns the largest relative error over pixels with valid
/// rows; +inf when a pixel without any has a number in x.
double max_lstsq_error(const std::vector<double>& a, std::size_t n, std::size_t m, std::size_t pixels,
                       const std::function<double(std::size_t, std::size_t)>& y,
                       const std::function<double(std::size_t, std::size_t)>& x,
                       const std::function<double(std::size_t, std::size_t)>& w = {}, double rcond = -1);

/// 1 - h_ii for every row i of A (N, M): what deleting row i leaves of the
/// design, from the engine's own factorization of A (its rounding included).
std::vector<double> deletion_pivots(const std::vector<double>& a, std::size_t n, std::size_t m);

/// Deterministic pseudo-random numbers for test data.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  double uniform();
  double normal();

private:
  std::uint64_t s_;
};

/// A cube (N, H, W) filled with `values` (observation-major), of dtype `dtype`.
cubesolve::Array make_cube(cubesolve::DType dtype, std::size_t n, std::size_t h, std::size_t w,
                           const std::vector<double>& values);

}  // namespace testing
