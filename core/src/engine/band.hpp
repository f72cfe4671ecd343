#pragma once
// One pixel's Gram matrix A_V^T W A_V of a banded design (SBAS networks: a
// few nonzeros a row, DesignFactors::banded_gram) in band form, summed over
// its rows' nonzeros, its Cholesky U^T U and solves with it: M w² flops
// where the dense form takes |V| M².

#include "engine/factors.hpp"
#include "engine/kernels.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace cubesolve::detail {

/// Whether a row has no weight in any lane.
CUBESOLVE_KERNEL bool no_rows(Vec4 wt) { return wt[0] == 0 && wt[1] == 0 && wt[2] == 0 && wt[3] == 0; }

/// The band systems A_V^T W A_V (S, lanes as in batched_cholesky_band) and,
/// where Yv is given, right-hand sides A_V^T W y (X) of kLanes pixels, from
/// each row's weights Wt[i * kLanes + l] and values Yv[i * kLanes + l],
/// summed over A's nonzeros.
CUBESOLVE_KERNEL void band_normal_equations(const DesignFactors& f, const double* Wt, const double* Yv, double* S, double* X) {
  constexpr std::size_t L = kLanes;
  const std::size_t N = f.n, M = f.m, w = f.band + 1;
  const std::size_t* start = f.row_start.data();
  const std::size_t* col = f.nz_col.data();
  const double* val = f.nz_val.data();
  std::fill(S, S + M * w * L, 0.0);
  if (Yv) std::fill(X, X + M * L, 0.0);
  for (std::size_t i = 0; i < N; ++i) {
    const Vec4 wt = load4(Wt + i * L);
    if (no_rows(wt)) continue;
    const Vec4 wy = Yv ? wt * load4(Yv + i * L) : Vec4{};
    for (std::size_t e = start[i]; e < start[i + 1]; ++e) {
      const std::size_t p = col[e];
      if (Yv) store4(X + p * L, load4(X + p * L) + wy * val[e]);
      const Vec4 wa = wt * val[e];
      for (std::size_t g = start[i]; g <= e; ++g) {  // col[g] <= p
        double* sp = S + (p * w + (p - col[g])) * L;
        store4(sp, load4(sp) + wa * val[g]);
      }
    }
  }
}

/// The components of the dates that lane l's rows link (weight Wt[i·4 + l]
/// not 0), for a network design (see DesignFactors::link_from): comp[d] = -1
/// for the dates linked to date 0, else the first date of d's component.
/// Returns the number of those free components: the dimension of A_V's null
/// space. `comp` has m + 1 entries.
std::size_t free_components(const DesignFactors& f, const double* Wt, std::size_t l, int* comp);
/// Ties each free component down at the unknown before its first date (see
/// gram.cpp): row and column of lane l's band system S (as
/// batched_cholesky_band takes it) become the identity's, scaled to the
/// lane's largest diagonal entry, and X there 0.
void tie_down(const int* comp, std::size_t M, std::size_t b, std::size_t l, double* S, double* X);
/// x less its projection on the null vectors of the k free components (see
/// free_components): the minimum-norm solution of a split network. False
/// where the vectors are nearly dependent or the projection does not settle.
bool minimum_norm(const DesignFactors& f, const int* comp, std::size_t k, double* x);
/// index[d] (M + 1 entries): the number of the free component whose first
/// date is d, for each such d (see free_components).
void component_numbers(const int* comp, std::size_t M, std::size_t* index);
/// Unknown j's terms in the null vectors of the free components (index[d]:
/// the number of the free component whose first date is d): of date j + 1's
/// component and of date j's, one term where both dates are in one
/// component. Their numbers to c, their values to v; returns how many (<= 2).
std::size_t null_entries(const DesignFactors& f, const int* comp, const std::size_t* index, std::size_t j, std::size_t* c,
                         double* v);

struct BandGram {
  std::size_t m = 0, w = 0;  // order and bandwidth
  /// (w + 1, m) column-major: entry (i, j), j - w <= i <= j, at (w + i - j) + j (w + 1).
  std::vector<double> b;

  double& at(std::size_t i, std::size_t j) { return b[(w + i - j) + j * (w + 1)]; }
  double at(std::size_t i, std::size_t j) const { return b[(w + i - j) + j * (w + 1)]; }

  /// Σ_k weight[k] a_r a_r^T over the rows r = rows[k], k < nv.
  void assemble(const DesignFactors& f, const int* rows, const double* weight, std::size_t nv) {
    m = f.m;
    w = f.band;
    b.assign((w + 1) * m, 0.0);
    for (std::size_t k = 0; k < nv; ++k) {
      const auto r = static_cast<std::size_t>(rows[k]);
      for (std::size_t p = f.row_start[r]; p < f.row_start[r + 1]; ++p)
        for (std::size_t q = p; q < f.row_start[r + 1]; ++q) {
          const std::size_t i = std::min(f.nz_col[p], f.nz_col[q]), j = std::max(f.nz_col[p], f.nz_col[q]);
          at(i, j) += weight[k] * f.nz_val[p] * f.nz_val[q] * (p == q || f.nz_col[p] != f.nz_col[q] ? 1.0 : 2.0);
        }
    }
  }

  /// U in place, and its diagonal's reciprocals in `inv` (the divisions'
  /// latency would chain every entry of the band); false where a pivot is
  /// not positive.
  bool factor() {
    inv.resize(m);
    const std::size_t ld = w + 1;
    for (std::size_t j = 0; j < m; ++j) {
      const std::size_t lo = j > w ? j - w : 0;
      double* cj = b.data() + j * ld + w - j;  // cj[k] = (k, j)
      for (std::size_t i = lo; i <= j; ++i) {
        const double* ci = b.data() + i * ld + w - i;
        double v = cj[i];
        for (std::size_t k = std::max(lo, i > w ? i - w : 0); k < i; ++k) v -= ci[k] * cj[k];
        if (i < j) cj[i] = v * inv[i];
        else if (!(v > 0)) return false;
        else cj[j] = std::sqrt(v), inv[j] = 1.0 / cj[j];
      }
    }
    return true;
  }

  /// x <- (U^T U)^-1 x.
  void solve(double* x) const {
    const std::size_t ld = w + 1;
    for (std::size_t j = 0; j < m; ++j) {  // U^T t = x
      const double* cj = b.data() + j * ld + w - j;
      double v = x[j];
      for (std::size_t k = j > w ? j - w : 0; k < j; ++k) v -= cj[k] * x[k];
      x[j] = v * inv[j];
    }
    for (std::size_t j = m; j-- > 0;) {  // U x = t
      double v = x[j];
      for (std::size_t k = j + 1; k <= std::min(j + w, m - 1); ++k) v -= at(j, k) * x[k];
      x[j] = v * inv[j];
    }
  }

  std::vector<double> inv;  // 1 / U_jj, from factor()
};

}  // namespace cubesolve::detail
