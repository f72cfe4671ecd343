#include "engine/paths.hpp"

#include "engine/band.hpp"
#include "engine/lanes.hpp"
#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve::detail {

using namespace lanes;

/// With a custom rcond, whether a Gram pixel's system S (M x M, ridge on
/// its diagonal) shows that [W^1/2 A_V; sqrt(ridge) I] keeps every singular
/// value above 2 rcond of its largest: S less Planner::gram_shift times its
/// trace stays positive definite. A ridge above that shift shows it at
/// once; else `factor` must factor a copy of S less the shift.
template <class Factor>
bool gram_shows_rank(const Job& job, Workspace& ws, const double* S, std::size_t M, Factor factor) {
  if (job.planner.gram_shift == 0) return true;
  double trace = 0;
  for (std::size_t a = 0; a < M; ++a) trace += S[a * (M + 1)];
  const double shift = job.planner.gram_shift * trace;
  if (job.options.ridge > shift) return true;
  ws.shifted.assign(S, S + M * M);
  for (std::size_t a = 0; a < M; ++a) ws.shifted[a * (M + 1)] -= shift;
  return factor(ws.shifted.data());
}

/// A Gram pixel whose matrix is too close to singular: to the exact path.
void gram_to_exact(Workspace& ws, std::size_t k, std::size_t M) {
  std::fill(ws.x.data() + k * M, ws.x.data() + (k + 1) * M, kNaN);
  ws.exact_list.push_back(k);
  ws.kind[k] = Kind::Exact;
}

/// One step of iterative refinement of a dense Gram pixel k's solution x of
/// S x = A_V^T W y (S = A_V^T W A_V + ridge I, its factor applied by
/// solve_with): d = S^-1 (A_V^T W (y - A_V x) - ridge x), as the band form
/// takes it (see solve_gram_banded). The normal equations lose about
/// cond(A_V)^2 eps; the step estimates that error and, taken, leaves one of
/// the order of cond(A_V) eps, as a QR would. Its residual pass sums the
/// pixel's rss. Returns false, x unchanged, where the step exceeds
/// kGramStep |x|: the factor is too far off for one step to mend.
template <class Solve>
bool refine_gram(const Job& job, Workspace& ws, std::size_t k, double* x, Solve solve_with) {
  const std::size_t N = job.N, M = job.M, words = (N + 63) / 64;
  const double* A = job.design.values().data();
  const double ridge = job.options.ridge;
  ws.rows.resize(std::max(ws.rows.size(), N));
  ws.step.resize(N + 2 * M);
  double *r = ws.step.data(), *g = r + N, *d = g + M;
  const int* I = ws.rows.data();
  const auto q = static_cast<std::size_t>(bit_list(ws.bits.data() + k * words, N, true, ws.rows.data()));
  row_dots(A, M, I, q, x, r, 1);
  double rs = 0;
  for (std::size_t a = 0; a < q; ++a) {
    const std::size_t i = static_cast<std::size_t>(I[a]);
    const double w = job.weights ? ws.w[k * N + i] : 1.0, e = ws.y[k * N + i] - r[a];
    rs += w * e * e;
    r[a] = w * e;
  }
  for (std::size_t j = 0; j < M; ++j) g[j] = -ridge * x[j];
  row_axpys(A, M, I, q, r, 1, g);
  std::copy(g, g + M, d);
  solve_with(d);
  double dd = 0, xx = 0, dg = 0;
  for (std::size_t j = 0; j < M; ++j) {
    dd += d[j] * d[j];
    xx += x[j] * x[j];
    dg += d[j] * (g[j] + ridge * (2 * x[j] + d[j]));
  }
  if (!(dd <= kGramStep * kGramStep * xx)) return false;
  for (std::size_t j = 0; j < M; ++j) x[j] += d[j];
  ws.rss[k] = std::max(rs - dg, 0.0);
  return true;
}

// Declared in band.hpp.
std::size_t free_components(const DesignFactors& f, const double* Wt, std::size_t l, int* comp) {
  const std::size_t M = f.m;
  for (std::size_t d = 0; d <= M; ++d) comp[d] = static_cast<int>(d);
  auto find = [comp](int a) {
    while (comp[a] != a) a = comp[a] = comp[comp[a]];
    return a;
  };
  for (std::size_t i = 0; i < f.n; ++i) {
    if (Wt[i * L + l] == 0 || f.link_to[i] < 0) continue;
    const int a = find(f.link_from[i]), b = find(f.link_to[i]);
    comp[std::max(a, b)] = std::min(a, b);  // a root is its component's first date
  }
  std::size_t free = 0;
  for (std::size_t d = 0; d <= M; ++d) {
    const int r = find(static_cast<int>(d));
    free += r == static_cast<int>(d) && d > 0;
    comp[d] = r;
  }
  for (std::size_t d = 0; d <= M; ++d) comp[d] = comp[d] == 0 ? -1 : comp[d];
  return free;
}

/// Ties each free component (see free_components) down at the unknown
/// before its first date d, d - 1: in both formulations the component's
/// null vector is not 0 there, and no earlier component's is, so the tied
/// system is positive definite and its solution is a least-squares
/// solution. Row and column d - 1 of lane l's band system S become the
/// identity's, scaled to the lane's largest diagonal entry, and x[d - 1] = 0.
void tie_down(const int* comp, std::size_t M, std::size_t b, std::size_t l, double* S, double* X) {
  const std::size_t w = b + 1;
  double dmax = 0;
  for (std::size_t p = 0; p < M; ++p) dmax = std::max(dmax, S[p * w * L + l]);
  for (std::size_t p = 0; p < M; ++p) {
    if (comp[p + 1] != static_cast<int>(p + 1)) continue;
    for (std::size_t d = 1; d <= b; ++d) {
      if (d <= p) S[(p * w + d) * L + l] = 0.0;           // (p, p - d)
      if (p + d < M) S[((p + d) * w + d) * L + l] = 0.0;  // (p + d, p)
    }
    S[p * w * L + l] = dmax > 0 ? dmax : 1.0;
    X[p * L + l] = 0.0;
  }
}

// Declared in band.hpp.
void component_numbers(const int* comp, std::size_t M, std::size_t* index) {
  for (std::size_t date = 1, next = 0; date <= M; ++date)
    if (comp[date] == static_cast<int>(date)) index[date] = next++;
}

// Declared in band.hpp. Added before they enter a product: squared apart, a
// velocity's two terms (1/t_j each) would bury a small entry in their rounding.
std::size_t null_entries(const DesignFactors& f, const int* comp, const std::size_t* index, std::size_t j, std::size_t* c,
                         double* v) {
  std::size_t n = 0;
  if (comp[j + 1] >= 0) c[n] = index[static_cast<std::size_t>(comp[j + 1])], v[n++] = f.null_to[j];
  if (comp[j] >= 0) {
    const std::size_t cj = index[static_cast<std::size_t>(comp[j])];
    if (n == 1 && c[0] == cj) v[0] -= f.null_from[j];
    else c[n] = cj, v[n++] = -f.null_from[j];
  }
  return n;
}

// Declared in band.hpp. The null vectors' k x k Gram matrix is diagonal for
// the phase formulation (divided), else factored. False where the vectors are
// nearly dependent or the projection does not settle in two passes: the
// pixel then goes to gelsd.
bool minimum_norm(const DesignFactors& f, const int* comp, std::size_t k, double* x) {
  const std::size_t M = f.m;
  std::vector<double> G(k * k, 0.0), r(k), d(k);
  std::vector<std::size_t> index(M + 1);
  component_numbers(comp, M, index.data());
  auto entries = [&](std::size_t j, std::size_t* c, double* v) { return null_entries(f, comp, index.data(), j, c, v); };
  std::size_t c[2];
  double v[2];
  for (std::size_t j = 0; j < M; ++j) {
    const std::size_t n = entries(j, c, v);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t e = 0; e < n; ++e) G[c[a] * k + c[e]] += v[a] * v[e];
  }
  // Scaled to a unit diagonal, so that the pivot test sees how nearly the
  // null vectors are dependent, not how their lengths differ (intervals of
  // a velocity design decades apart). The phase formulation's do not overlap.
  bool diagonal = true;
  for (std::size_t a = 0; a < k * k && diagonal; ++a) diagonal = a % (k + 1) == 0 || G[a] == 0;
  for (std::size_t a = 0; a < k; ++a) {
    if (!(G[a * (k + 1)] > 0)) return false;
    d[a] = 1 / std::sqrt(G[a * (k + 1)]);
  }
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t e = 0; e < k; ++e) G[a * k + e] *= d[a] * d[e];
  if (!diagonal && !cholesky(G.data(), k, 1e-6)) return false;
  // x less its part in the null vectors' span, twice: the second pass takes
  // out what the first left by its rounding (eps·cond(G) of the part, which
  // may be far larger than x itself where the ties fell on unknowns of
  // small coefficients), and must be small, or gelsd decides.
  double last = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(r.begin(), r.end(), 0.0);
    for (std::size_t j = 0; j < M; ++j) {
      const std::size_t n = entries(j, c, v);
      for (std::size_t a = 0; a < n; ++a) r[c[a]] += v[a] * x[j];
    }
    for (std::size_t a = 0; a < k; ++a) r[a] *= d[a];
    if (!diagonal) cholesky_solve(G.data(), k, r.data());
    for (std::size_t a = 0; a < k; ++a) r[a] *= d[a];
    last = 0;
    for (std::size_t j = 0; j < M; ++j) {
      const std::size_t n = entries(j, c, v);
      double dx = 0;
      for (std::size_t a = 0; a < n; ++a) dx += v[a] * r[c[a]];
      x[j] -= dx;
      last += dx * dx;
    }
  }
  return last <= 1e-20 * dot(x, x, M);
}

/// The Gram path for designs of sparse rows and a narrow band, kLanes pixels
/// at a time (their systems share A's band: one vector per entry across
/// them): each pixel's A_V^T W A_V and A_V^T W y summed row by row over the
/// nonzeros, factored in band form, and the solution refined once against
/// its residual. For a network design, a pixel whose matrix is singular
/// because its rows split the network (free components, see
/// free_components) is solved again with each free component tied down at
/// one unknown, and the solution's projection on the components' null
/// vectors taken out: the minimum-norm solution, as gelsd's.
CUBESOLVE_SIMD_CLONES void solve_gram_banded(const Job& job, Workspace& ws) {
  const std::size_t N = job.N, M = job.M, b = job.f.band, w = b + 1;
  const std::size_t* start = job.f.row_start.data();
  const std::size_t* col = job.f.nz_col.data();
  const double* val = job.f.nz_val.data();
  const double ridge = job.options.ridge;
  const bool retie = job.f.network() && ridge == 0 && !job.planner.custom_rcond;
  ws.s.resize(M * w * L);
  ws.rhs.resize(3 * M * L);  // x, the refinement's step and its right-hand side
  ws.wm.resize(2 * N * L);   // each row's weights, then its values
  std::vector<std::size_t> split;  // pixels to solve again, tied down
  std::vector<int> comp;  // each lane's free components (see free_components)
  auto batch = [&](const std::size_t* pixels, std::size_t lanes, bool tied) __attribute__((always_inline)) {
    double *S = ws.s.data(), *X = ws.rhs.data(), *D = X + M * L, *G = D + M * L, *Wt = ws.wm.data(), *Yv = Wt + N * L;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t l = 0; l < L; ++l) {  // a padding lane has no rows (its pivots fail, unused)
        const std::size_t k = pixels[l < lanes ? l : 0];
        Wt[i * L + l] = l >= lanes ? 0.0 : job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
        Yv[i * L + l] = ws.y[k * N + i];
      }
    band_normal_equations(job.f, Wt, Yv, S, X);
    for (std::size_t a = 0; a < M; ++a) store4(S + a * w * L, load4(S + a * w * L) + ridge);
    std::size_t free[L] = {};
    if (tied) {
      comp.resize((M + 1) * L);
      for (std::size_t l = 0; l < lanes; ++l) {
        free[l] = free_components(job.f, Wt, l, comp.data() + l * (M + 1));
        tie_down(comp.data() + l * (M + 1), M, b, l, S, X);
      }
    }
    bool ok[L] = {true, true, true, true};
    if (job.planner.gram_shift > 0) {  // each lane's S less gram_shift times its trace (see gram_shows_rank)
      Vec4 shift = {};
      for (std::size_t a = 0; a < M; ++a) shift += load4(S + a * w * L);
      shift *= job.planner.gram_shift;
      if (!(ridge > shift[0] && ridge > shift[1] && ridge > shift[2] && ridge > shift[3])) {
        ws.shifted.assign(S, S + M * w * L);
        for (std::size_t a = 0; a < M; ++a) store4(ws.shifted.data() + a * w * L, load4(S + a * w * L) - shift);
        batched_cholesky_band(ws.shifted.data(), M, b, 0.0, ok);
      }
    }
    bool held[L];
    batched_cholesky_band(S, M, b, kGramTau, held);
    for (std::size_t l = 0; l < L; ++l) ok[l] = ok[l] && held[l];
    batched_cholesky_band_solve(S, M, b, X);
    // D = S^-1 (A_V^T W (y - A_V x) - ridge x): the step of one refinement,
    // about the error of x (cond(A_V)^2 eps). Taken, it leaves an error of
    // the order of cond(A_V) eps, as a QR would; a large one sends the
    // pixel to the exact path.
    // The same pass sums the rss of x, rs = |r|^2_W; that of x + D is then
    // rs - D·(G + 2 ridge x + ridge D), G the step's right-hand side
    // (S D = G, S = A_V^T W A_V + ridge I), without a pass of its own.
    for (std::size_t a = 0; a < M; ++a) store4(D + a * L, load4(X + a * L) * -ridge);
    Vec4 rs = {};
    for (std::size_t i = 0; i < N; ++i) {
      const Vec4 wt = load4(Wt + i * L);
      if (no_rows(wt)) continue;
      Vec4 r = load4(Yv + i * L);
      for (std::size_t e = start[i]; e < start[i + 1]; ++e) r -= load4(X + col[e] * L) * val[e];
      rs += wt * r * r;
      r *= wt;
      for (std::size_t e = start[i]; e < start[i + 1]; ++e) store4(D + col[e] * L, load4(D + col[e] * L) + r * val[e]);
    }
    if (tied)  // the tied unknowns stay 0
      for (std::size_t l = 0; l < lanes; ++l)
        for (std::size_t p = 0; p < M; ++p)
          if (comp[l * (M + 1) + p + 1] == static_cast<int>(p + 1)) D[p * L + l] = 0.0;
    std::copy(D, D + M * L, G);
    batched_cholesky_band_solve(S, M, b, D);
    Vec4 dd = {}, xx = {};
    for (std::size_t a = 0; a < M; ++a) {
      const Vec4 d = load4(D + a * L), x = load4(X + a * L);
      dd += d * d;
      xx += x * x;
      rs -= d * (load4(G + a * L) + ridge * (x + x + d));
    }
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::size_t k = pixels[l];
      if (!ok[l] || !(dd[l] <= kGramStep * kGramStep * xx[l])) {
        if (retie && !tied) split.push_back(k);
        else gram_to_exact(ws, k, M);
        continue;
      }
      double* x = ws.x.data() + k * M;
      for (std::size_t a = 0; a < M; ++a) x[a] = X[a * L + l] + D[a * L + l];
      ws.rss[k] = std::max(rs[l], 0.0);  // the null vectors minimum_norm takes out leave A_V x as it is
      ws.deficit[k] = static_cast<int>(free[l]);
      if (free[l] && !minimum_norm(job.f, comp.data() + l * (M + 1), free[l], x)) gram_to_exact(ws, k, M);
    }
  };
  // Fewer rows than unknowns: a network's pixel is split for certain.
  std::vector<std::size_t> whole;
  for (std::size_t k : ws.gram) (retie && static_cast<std::size_t>(ws.nv[k]) < M ? split : whole).push_back(k);
  for (std::size_t b0 = 0; b0 < whole.size(); b0 += L) batch(whole.data() + b0, std::min(L, whole.size() - b0), false);
  for (std::size_t b0 = 0; b0 < split.size(); b0 += L) batch(split.data() + b0, std::min(L, split.size() - b0), true);
}

/// The Gram path for designs too wide for the packed outer products: each
/// pixel's B = W^1/2 A_V, then B^T B by the BLAS's SYRK and a blocked
/// Cholesky, with the same pivot test as the packed path.
void solve_gram_dense(const Job& job, Workspace& ws) {
  const std::size_t N = job.N, M = job.M;
  const double* A = job.design.values().data();
  const int m = static_cast<int>(M);
  ws.wm.resize(M * N);
  ws.wy.resize(N);
  ws.s.resize(M * M);
  for (std::size_t k : ws.gram) {
    std::size_t q = 0;
    for (std::size_t i = 0; i < N; ++i) {  // column q of the column-major B^T (M, q)
      const double wt = job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
      if (wt == 0) continue;
      const double sw = std::sqrt(wt);
      for (std::size_t j = 0; j < M; ++j) ws.wm[q * M + j] = sw * A[i * M + j];
      ws.wy[q++] = sw * ws.y[k * N + i];
    }
    double* S = ws.s.data();
    double* x = ws.x.data() + k * M;
    lapack::syrk_upper(m, static_cast<int>(q), 1.0, ws.wm.data(), m, 0.0, S, m);
    lapack::gemv(m, static_cast<int>(q), ws.wm.data(), m, ws.wy.data(), x);
    double dmax = 0;
    for (std::size_t a = 0; a < M; ++a) {
      S[a * M + a] += job.options.ridge;
      dmax = std::max(dmax, S[a * M + a]);
    }
    // The pivots of U^T U are the squares of U's diagonal.
    bool ok = q > 0 && gram_shows_rank(job, ws, S, M, [&](double* c) { return lapack::cholesky_upper(m, c, m) == 0; }) &&
              lapack::cholesky_upper(m, S, m) == 0;
    for (std::size_t a = 0; ok && a < M; ++a) ok = S[a * M + a] * S[a * M + a] > kGramTau * dmax;
    if (ok) {
      lapack::cholesky_upper_solve(m, S, m, x);
      ok = refine_gram(job, ws, k, x, [&](double* b) { lapack::cholesky_upper_solve(m, S, m, b); });
    }
    if (!ok) gram_to_exact(ws, k, M);
  }
}

CUBESOLVE_SIMD_CLONES bool band_rank_holds(const DesignFactors& f, const std::uint64_t* mask) {
  const std::size_t N = f.n, M = f.m, w = f.band + 1;
  std::vector<double> wt(N * L, 0.0), yv(N * L, 0.0), s(M * w * L), x(M * L);
  for (std::size_t i = 0; i < N; ++i) wt[i * L] = static_cast<double>((mask[i / 64] >> (i % 64)) & 1);  // lane 0
  band_normal_equations(f, wt.data(), yv.data(), s.data(), x.data());
  if (f.network()) {  // as the Gram path solves a split network: its free components tied down
    std::vector<int> comp(M + 1);
    free_components(f, wt.data(), 0, comp.data());
    tie_down(comp.data(), M, f.band, 0, s.data(), x.data());
  }
  bool ok[L];
  batched_cholesky_band(s.data(), M, f.band, kGramTau, ok);
  return ok[0];
}

CUBESOLVE_SIMD_CLONES void solve_gram(const Job& job, Workspace& ws) {
  if (ws.gram.empty()) return;
  if (job.f.banded_gram) return solve_gram_banded(job, ws);
  if (job.f.outer.empty()) return solve_gram_dense(job, ws);
  const std::size_t N = job.N, M = job.M, G = ws.gram.size(), T = job.f.packed();
  const double* A = job.design.values().data();
  ws.wm.assign(N * G, 0.0);
  ws.wy.assign(N * G, 0.0);
  for (std::size_t c = 0; c < G; ++c) {
    const std::size_t k = ws.gram[c];
    for (std::size_t i = 0; i < N; ++i) {
      const double wt = job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
      ws.wm[c * N + i] = wt;
      ws.wy[c * N + i] = wt * ws.y[k * N + i];
    }
  }
  ws.g.resize(T * G);
  ws.s.resize(M * M);
  ws.model.resize(M * G);
  // Every pixel's packed A_V^T W A_V and A_V^T W y: two GEMMs.
  lapack::gemm('N', 'N', static_cast<int>(T), static_cast<int>(G), static_cast<int>(N), 1.0, job.f.outer.data(),
               static_cast<int>(T), ws.wm.data(), static_cast<int>(N), 0.0, ws.g.data(), static_cast<int>(T));
  lapack::gemm('N', 'N', static_cast<int>(M), static_cast<int>(G), static_cast<int>(N), 1.0, A, static_cast<int>(M),
               ws.wy.data(), static_cast<int>(N), 0.0, ws.model.data(), static_cast<int>(M));
  for (std::size_t c = 0; c < G; ++c) {
    const std::size_t k = ws.gram[c];
    const double* gp = ws.g.data() + c * T;
    double* S = ws.s.data();
    for (std::size_t a = 0; a < M; ++a)
      for (std::size_t b = a; b < M; ++b) S[b * M + a] = *gp++;
    for (std::size_t a = 0; a < M; ++a) S[a * M + a] += job.options.ridge;
    double* x = ws.x.data() + k * M;
    std::copy(ws.model.data() + c * M, ws.model.data() + (c + 1) * M, x);
    bool ok = gram_shows_rank(job, ws, S, M, [&](double* t) { return cholesky(t, M, 0.0); }) && cholesky(S, M, kGramTau);
    if (ok) {
      cholesky_solve(S, M, x);
      ok = refine_gram(job, ws, k, x, [&](double* b) { cholesky_solve(S, M, b); });
    }
    if (!ok) gram_to_exact(ws, k, M);
  }
}

}  // namespace cubesolve::detail
