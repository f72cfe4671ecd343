#include "engine/factors.hpp"

#include <cubesolve/error.hpp>

#include "cuda/gpu.hpp"
#include "engine/exact.hpp"
#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>

namespace cubesolve::detail {

namespace {
constexpr std::size_t kMaxSquare = 4096;        // keep (n, n) matrices up to this n
constexpr std::size_t kMaxOuterDoubles = 1 << 23;  // 64 MB of packed outer products
/// Sets f's network links (see DesignFactors::link_from) where every row of
/// A (from its nonzeros) is a phase row, or a velocity row; false otherwise.
bool find_network(DesignFactors& f, bool velocity) {
  const std::size_t n = f.n, m = f.m;
  std::vector<int> from(n, -1), to(n, -1);
  std::vector<double> t(m, 0.0);  // velocity: each unknown's interval
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e0 = f.row_start[i], e1 = f.row_start[i + 1];
    if (e0 == e1) continue;
    const std::size_t c0 = f.nz_col[e0], c1 = f.nz_col[e1 - 1];
    if (!velocity) {
      if (e1 - e0 > 2 || (e1 - e0 == 2 && f.nz_val[e0] != -f.nz_val[e0 + 1])) return false;
      from[i] = e1 - e0 == 1 ? 0 : static_cast<int>(c0 + 1);
      to[i] = static_cast<int>(c1 + 1);
      continue;
    }
    if (c1 - c0 + 1 != e1 - e0) return false;  // a run of neighbouring unknowns
    for (std::size_t e = e0; e < e1; ++e) {
      const double v = std::fabs(f.nz_val[e]);
      if ((f.nz_val[e] > 0) != (f.nz_val[e0] > 0) || (t[f.nz_col[e]] != 0 && t[f.nz_col[e]] != v)) return false;
      t[f.nz_col[e]] = v;
    }
    from[i] = static_cast<int>(c0);
    to[i] = static_cast<int>(c1 + 1);
  }
  if (velocity && std::count(t.begin(), t.end(), 0.0) > 0) return false;  // an unknown in no row
  f.link_from = std::move(from);
  f.link_to = std::move(to);
  f.null_to.assign(m, 1.0);
  f.null_from.assign(m, 0.0);
  if (velocity)
    for (std::size_t j = 0; j < m; ++j) f.null_to[j] = f.null_from[j] = 1.0 / t[j];
  return true;
}

}  // namespace

DesignFactors factor_design(const std::vector<double>& a, std::size_t n, std::size_t m) {
  DesignFactors f;
  f.device = std::make_shared<gpu::FactorCache>();
  f.n = n;
  f.m = m;
  const std::size_t k = std::min(n, m);
  // The row-major A is the column-major A^T (m, n); its SVD A^T = U S VT gives
  // A = VT^T S U^T: A's right singular vectors are U, its left ones VT's rows.
  std::vector<double> t = a, u(m * k), vt(k * n);
  f.sigma.resize(k);
  if (lapack::svd(static_cast<int>(m), static_cast<int>(n), t.data(), f.sigma.data(), u.data(), vt.data()) != 0)
    throw NumericalError("design matrix: the SVD did not converge");
  const double tol = default_rcond(n, m) * f.sigma.front();
  f.rank = static_cast<std::size_t>(std::count_if(f.sigma.begin(), f.sigma.end(), [&](double s) { return s > tol; }));
  const std::size_t r = f.rank;
  const int M = static_cast<int>(m), N = static_cast<int>(n), R = static_cast<int>(r), K = static_cast<int>(k);
  if (r > 0 && r < std::min(m, n)) f.row_basis.assign(u.begin(), u.begin() + static_cast<std::ptrdiff_t>(m * r));

  // P = U_r S_r^-1 VT_r  (m, n).
  f.pinv.assign(m * n, 0.0);
  if (r > 0) {
    std::vector<double> us(m * r);
    for (std::size_t s = 0; s < r; ++s)
      for (std::size_t j = 0; j < m; ++j) us[s * m + j] = u[s * m + j] / f.sigma[s];
    lapack::gemm('N', 'N', M, N, R, 1.0, us.data(), M, vt.data(), K, 0.0, f.pinv.data(), M);
  }
  if (r == m && m <= n) {
    f.gram_root.assign(m * m, 0.0);
    lapack::syrk_upper(M, N, 1.0, a.data(), M, 0.0, f.gram_root.data(), M);
    if (lapack::cholesky_upper(M, f.gram_root.data(), M) != 0) f.gram_root.clear();
  }
  if (n > kMaxSquare) return f;

  // H = VT_r^T VT_r  (n, n).
  f.hat.assign(n * n, 0.0);
  if (r > 0) lapack::gemm('T', 'N', N, N, R, 1.0, vt.data(), K, vt.data(), K, 0.0, f.hat.data(), N);
  if (r == m && m < n) {  // the deletion systems' source (see DesignFactors::hat_lower)
    f.hat_lower.resize(n * (n + 1) / 2);
    for (std::size_t i = 0, at = 0; i < n; at += ++i)
      std::copy(f.hat.begin() + i * n, f.hat.begin() + i * n + i + 1, f.hat_lower.begin() + at);
  }

  // C = A A^T from A directly (any rank: C_VV = A_V A_V^T serves every
  // underdetermined pixel); for full row rank also Q = VT^T S^-2 VT.
  f.gram_rows.assign(n * n, 0.0);
  lapack::gemm('T', 'N', N, N, M, 1.0, a.data(), M, a.data(), M, 0.0, f.gram_rows.data(), N);
  if (r == n && n <= m) {
    std::vector<double> vs(k * n);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t s = 0; s < k; ++s) vs[i * k + s] = vt[i * k + s] / (f.sigma[s] * f.sigma[s]);
    f.gram_rows_inv.assign(n * n, 0.0);
    lapack::gemm('T', 'N', N, N, K, 1.0, vs.data(), K, vt.data(), K, 0.0, f.gram_rows_inv.data(), N);
  }

  f.row_start.push_back(0);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t first = m, last = 0;
    for (std::size_t p = 0; p < m; ++p)
      if (a[i * m + p] != 0) {
        f.nz_col.push_back(p);
        f.nz_val.push_back(a[i * m + p]);
        first = std::min(first, p);
        last = p;
      }
    if (first < m) f.band = std::max(f.band, last - first);
    f.row_start.push_back(f.nz_col.size());
  }
  if (!find_network(f, false)) find_network(f, true);
  // Worth it when a row's pairs and the band are a small part of the dense work.
  f.banded_gram = m >= 8 && 4 * (f.band + 1) <= m && 4 * f.nz_col.size() <= n * m;
  f.sparse_rows = 8 * f.nz_col.size() <= n * m;

  if (f.packed() * n <= kMaxOuterDoubles) {
    const std::size_t T = f.packed();
    f.outer.resize(T * n);
    for (std::size_t i = 0; i < n; ++i) {
      const double* row = a.data() + i * m;
      double* o = f.outer.data() + i * T;
      for (std::size_t p = 0; p < m; ++p)
        for (std::size_t q = p; q < m; ++q) *o++ = row[p] * row[q];
    }
  }
  return f;
}

}  // namespace cubesolve::detail
