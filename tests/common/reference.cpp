#include "reference.hpp"

#include "engine/factors.hpp"
#include "engine/lapack.hpp"  // the BLAS/LAPACK prototypes (the reference calls dgelsd itself)

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace testing {

Reference lstsq(const std::vector<double>& a, std::size_t n, std::size_t m, const double* y, const double* w,
                double rcond, double ridge) {
  Reference r;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(y[i]) && (!w || (w[i] > 0 && std::isfinite(w[i])))) rows.push_back(i);
  r.nvalid = static_cast<int>(rows.size());
  if (rows.empty()) {
    r.x.assign(m, std::numeric_limits<double>::quiet_NaN());
    return r;
  }
  const int nv = static_cast<int>(rows.size()), mm = nv + (ridge > 0 ? static_cast<int>(m) : 0);
  const int nn = static_cast<int>(m), nrhs = 1;
  const int lda = mm, ldb = std::max(mm, nn);
  std::vector<double> A(static_cast<std::size_t>(lda) * m, 0.0), b(static_cast<std::size_t>(ldb), 0.0),
      s(static_cast<std::size_t>(std::min(mm, nn)));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const double sw = w ? std::sqrt(w[rows[k]]) : 1.0;
    for (std::size_t j = 0; j < m; ++j) A[j * static_cast<std::size_t>(lda) + k] = sw * a[rows[k] * m + j];
    b[k] = sw * y[rows[k]];
  }
  if (ridge > 0)
    for (std::size_t j = 0; j < m; ++j) A[j * static_cast<std::size_t>(lda) + rows.size() + j] = std::sqrt(ridge);
  const std::vector<double> A0 = A, b0 = b;
  if (rcond < 0) rcond = std::numeric_limits<double>::epsilon() * std::max(nv, nn);
  int info = 0, lwork = -1, iw = 0;
  double wq = 0;
  dgelsd_(&mm, &nn, &nrhs, A.data(), &lda, b.data(), &ldb, s.data(), &rcond, &r.rank, &wq, &lwork, &iw, &info);
  std::vector<double> work(static_cast<std::size_t>(wq) + 1);
  std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iw)));
  lwork = static_cast<int>(work.size());
  dgelsd_(&mm, &nn, &nrhs, A.data(), &lda, b.data(), &ldb, s.data(), &rcond, &r.rank, work.data(), &lwork,
          iwork.data(), &info);
  if (info != 0) throw std::runtime_error("reference dgelsd failed");
  r.x.assign(b.begin(), b.begin() + nn);
  r.sigma = s;
  for (int k = 0; k < nv; ++k) {
    double f = 0;
    for (std::size_t j = 0; j < m; ++j) f += A0[j * static_cast<std::size_t>(lda) + static_cast<std::size_t>(k)] * r.x[j];
    r.rss += (f - b0[static_cast<std::size_t>(k)]) * (f - b0[static_cast<std::size_t>(k)]);
  }
  return r;
}

std::vector<double> ridge(const std::vector<double>& a, std::size_t n, std::size_t m, const double* y,
                          const double* w, double lambda) {
  // Normal equations solved by Gaussian elimination with partial pivoting.
  std::vector<double> g(m * (m + 1), 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!std::isfinite(y[i]) || (w && !(w[i] > 0))) continue;
    const double wi = w ? w[i] : 1.0;
    for (std::size_t r = 0; r < m; ++r) {
      for (std::size_t c = 0; c < m; ++c) g[r * (m + 1) + c] += wi * a[i * m + r] * a[i * m + c];
      g[r * (m + 1) + m] += wi * a[i * m + r] * y[i];
    }
  }
  for (std::size_t r = 0; r < m; ++r) g[r * (m + 1) + r] += lambda;
  for (std::size_t c = 0; c < m; ++c) {
    std::size_t p = c;
    for (std::size_t r = c + 1; r < m; ++r)
      if (std::fabs(g[r * (m + 1) + c]) > std::fabs(g[p * (m + 1) + c])) p = r;
    for (std::size_t k = 0; k <= m; ++k) std::swap(g[c * (m + 1) + k], g[p * (m + 1) + k]);
    for (std::size_t r = 0; r < m; ++r) {
      if (r == c) continue;
      const double f = g[r * (m + 1) + c] / g[c * (m + 1) + c];
      for (std::size_t k = c; k <= m; ++k) g[r * (m + 1) + k] -= f * g[c * (m + 1) + k];
    }
  }
  std::vector<double> x(m);
  for (std::size_t r = 0; r < m; ++r) x[r] = g[r * (m + 1) + m] / g[r * (m + 1) + r];
  return x;
}

double max_lstsq_error(const std::vector<double>& a, std::size_t n, std::size_t m, std::size_t pixels,
                       const std::function<double(std::size_t, std::size_t)>& y,
                       const std::function<double(std::size_t, std::size_t)>& x,
                       const std::function<double(std::size_t, std::size_t)>& w, double rcond) {
  double worst = 0;
  std::vector<double> yp(n), wp(n), xp(m);
  for (std::size_t p = 0; p < pixels; ++p) {
    for (std::size_t i = 0; i < n; ++i) {
      yp[i] = y(i, p);
      if (w) wp[i] = w(i, p);
    }
    for (std::size_t j = 0; j < m; ++j) xp[j] = x(j, p);
    const Reference ref = lstsq(a, n, m, yp.data(), w ? wp.data() : nullptr, rcond);
    if (ref.nvalid == 0) {
      for (double v : xp)
        if (!std::isnan(v)) return HUGE_VAL;
      continue;
    }
    const double e = rel_error(xp, ref.x);
    if (std::isnan(e)) return HUGE_VAL;
    worst = std::max(worst, e);
  }
  return worst;
}

double rel_error(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, n = 0;
  for (std::size_t i = 0; i < b.size(); ++i) {
    d += (a[i] - b[i]) * (a[i] - b[i]);
    n += b[i] * b[i];
  }
  return std::sqrt(d) / std::max(std::sqrt(n), 1e-300);
}

double Rng::uniform() {
  std::uint64_t z = (s_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return static_cast<double>((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
}

double Rng::normal() {
  double u = 0;
  while (u <= 0) u = uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(6.283185307179586 * uniform());
}

cubesolve::Array make_cube(cubesolve::DType dtype, std::size_t n, std::size_t h, std::size_t w,
                           const std::vector<double>& values) {
  cubesolve::Array c(dtype, {n, h, w});
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (dtype == cubesolve::DType::Float32) c.data<float>()[i] = static_cast<float>(values[i]);
    else c.data<double>()[i] = values[i];
  }
  return c;
}

std::vector<double> deletion_pivots(const std::vector<double>& a, std::size_t n, std::size_t m) {
  const cubesolve::detail::DesignFactors f = cubesolve::detail::factor_design(a, n, m);
  std::vector<double> d(n);
  for (std::size_t i = 0; i < n; ++i) d[i] = 1.0 - f.hat[i * n + i];
  return d;
}

}  // namespace testing
