// The engine against per-pixel gelsd: a differential fuzzer. The fuzz bytes
// choose a design with structure, a cube with its masks and weights, the
// options and a path to steer the planner toward; every pixel of the solve is
// then compared with LAPACK dgelsd on that pixel's own weighted valid rows.
//
// Designs: SBAS networks in either formulation (chains, spans, two clusters
// joined by one row (a bridge) or by none, long links, date 0 tied by a
// single row, random pairs); dense Gaussian designs with N < M, N = M,
// N > M and N >> M; seasonal designs (offset, trend and monthly indicator
// columns, or harmonics) over irregular dates; dense designs with
// duplicated and nearly duplicated rows; any of them with its columns scaled
// by up to 1e8 either way. Masks: none missing, random, a run of rows (a
// cloudy month), every row that touches one unknown (a cut: a date left
// without interferograms, a whole month), the rows that cross one date (a
// cut of a network), the row of largest leverage (a bridge), all but one
// row, no row; pixels share masks or not; missing as NaN, ±Inf or weight 0.
// Weights: none, moderate, with zeros, tiny (1e-12) or huge (1e12) rows, or
// log-uniform over 24 decades. Options: ridge, rcond, minimum valid rows,
// float32 or float64 cube and output, residuals, threads, memory; every
// path forced (Steering) or planned, the rows kernel or the general one,
// the CPU or the device pipeline on the reference backend.
//
// The comparison rule, for every pixel (a finding is a pixel that breaks
// it; the rule is not loosened to make a finding go away). Let V be the
// pixel's valid rows (finite value, weight finite and > 0), A_w =
// diag(sqrt(w_V)) A_V (with ridge λ > 0: A_w stacked over sqrt(λ)·I, the
// system the contract minimises), σ_1 >= σ_2 >= ... its singular values and
// t = rcond·σ_1 gelsd's threshold (rcond: the option, or eps·max(|V|, M)).
//  1. The same NaN decision always: n_valid = |V|; |V| = 0 gives status
//     no-data and x all NaN, |V| < min_valid too-few and x all NaN, and
//     otherwise x has no NaN (status failed only where gelsd itself fails).
//  2. The same rank as gelsd, #{σ_i > t}, wherever no σ_i lies within a
//     factor 4 of t (t/4 < σ_i < 4t). Where one does, either rank is right:
//     any rank from #{σ_i >= 4t} to #{σ_i > t/4}.
//  3. Status ok where the rank is M or λ > 0, min-norm where it is below M.
//  4. The solution against gelsd's at the rank r CubeSolve chose (gelsd's
//     own where the ranks agree): with κ = σ_1/σ_r, the condition number of
//     A_w on its numerical rank, |x - x_ref| <= tol |x_ref|, tol = 1e-9
//     where κ <= 1e5 and 1e-14·κ beyond; a float32 output adds its own
//     rounding, 2^-24. (Where σ_r = σ_{r+1} the solution at rank r is not
//     defined and is not compared.) That tolerance presumes values the
//     model accounts for: gelsd's own answer moves under its rounding by
//     about eps·κ·ρ of itself, ρ = |b|/(σ_1 |x_ref|)·(1 + κ_g |r|/|b|) (b the
//     weighted values, r gelsd's residual, κ_g = max(κ, σ_1/(σ_r - σ_{r+1})):
//     the residual enters x through the rank-r subspaces, which rounding
//     turns by eps·σ_1/(σ_r - σ_{r+1}) (Wedin), more than eps·κ where the
//     gap is narrow; ρ is 1 to 3 for a pixel whose values the model fits),
//     so where 16 eps·κ·ρ exceeds it, that is the tolerance: a pixel whose
//     values lie almost orthogonal to what the model can fit (ρ of 1e8 and
//     more) has no answer that gelsd itself gives to 1e-9. (Found so: a
//     ridge pixel whose one valid row was 1e-10 in size; CubeSolve's x
//     equalled the exact one, computed with 60 digits, to 1e-16, gelsd's
//     was 2.75e-8 off it. And a network cut to rank 6 of 27 at κ 1.5e14
//     with σ_6/σ_7 = 4.6: gelsd at rank 6 was 0.38 off the exact answer,
//     CubeSolve 7.6e-8.)
//  5. With residuals: |rss - rss_ref| <= 1e-8 rss_ref + |A_w|·e·(2 sqrt(rss_ref)
//     + |A_w|·e) + 1e-12 |W^1/2 y_V|^2, e = tol |x_ref|: what an error of
//     tol in x moves the residual by, and the rounding of summing it.
//  6. cond, where the path reports one (an SVD was taken), within
//     κ (1e-9 + 1e-13 κ) of κ: the rounding of σ_r.
//
// Built as fuzz_robust (CUBESOLVE_FUZZ_ROBUST), the input's first choice is
// a robust loss, L1 or Huber with a given δ, solved as `solve` plans it
// (no ridge, the default rcond, the CPU), and every pixel keeps rule 1 and:
//  R1. Status ok or min-norm with x finite, or not-converged (or failed)
//      with x all NaN; the objective it reports is Σρ of x's own weighted
//      residuals (to 1e-9, or 64 eps·κ, of their terms' magnitudes; κ: cond
//      of B on its rank).
//  R2. L1: with f = c - B x (B = W^1/2 A_V, c = W^1/2 y_V), x is optimal:
//      either a dual point proves Σ|f| within 1e-6 of the optimum (u_i =
//      f_i / max(|f_i|, ε), projected onto B^T u = 0 and scaled into
//      [-1, 1], bounds it from below by c^T u; the best of ε = 1e-6, 1e-9
//      (the solver's own reweighting) and 1e-12 times max |c|), or x
//      meets the vertex condition: Z the rows where f is 0 to rounding, s_i
//      = sign(f_i) elsewhere, B_Z^T s_Z = -Σ_i∉Z s_i b_i has a solution
//      (gelsd's, the minimum-norm one) with |s_Z| <= 1. (Where that solution
//      exceeds 1 but is not unique it proves nothing; not compared.)
//  R3. Huber: no lower objective within 1e-6 of it: Newton's method with a
//      backtracking line search from x (a gelsd step on the rows within δ,
//      in the row space of the rank the solve used) finds none.
//  R4. Rank below M (with no singular value near the threshold): x lies in
//      the row space of B, the minimum-norm representative of B x.
//
// A finding prints the pixel, the rule it broke, the problem's description
// and the paths taken, then aborts. To study one: FUZZ_DUMP=FILE writes the
// problem (N M H W weighted, then A, the cube's values and the weights, one
// number a line), and FUZZ_GO_ON=1 reports every pixel that breaks the rule
// instead of stopping at the first.
#include "fuzz.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "cuda/backend.hpp"
#include "engine/lapack.hpp"
#include "engine/planner.hpp"
#include "reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

using namespace cubesolve;
namespace detail = cubesolve::detail;
namespace gpu = cubesolve::detail::gpu;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Problem {
  std::size_t n = 0, m = 0, h = 1, w = 1;
  std::vector<double> a;                   // (n, m) row-major
  std::vector<double> y, wt;               // (n, P) observation-major; wt empty: no weights
  std::vector<std::pair<int, int>> pairs;  // a network's (from, to) dates, else empty
  std::string what;                        // how it was made, for the report
  DType cube = DType::Float64;             // the cube's type
};

/// A few values chosen by a byte.
template <class T, std::size_t K>
T pick(fuzz::Bytes& in, const T (&values)[K]) {
  return values[in.in(0, K - 1)];
}

// ---------------------------------------------------------------- designs

/// An SBAS network of `dates` dates: phase rows (-1, 1 at the dates'
/// unknowns, date 0 the reference) or velocity rows (the intervals between
/// the dates).
void network(fuzz::Bytes& in, testing::Rng& rng, Problem& p) {
  const int D = static_cast<int>(in.in(3, 28));
  const std::size_t topology = in.in(0, 5), span = in.in(1, 4);
  std::vector<std::vector<char>> linked(static_cast<std::size_t>(D), std::vector<char>(static_cast<std::size_t>(D), 0));
  auto link = [&](int i, int j) {
    if (i > j) std::swap(i, j);
    if (i == j || linked[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)]) return;
    linked[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = 1;
    p.pairs.emplace_back(i, j);
  };
  const int cut = static_cast<int>(in.in(1, static_cast<std::size_t>(D - 1)));  // clusters [0, cut), [cut, D)
  for (int i = 0; i < D; ++i)
    for (int j = i + 1; j < D && j - i <= static_cast<int>(span); ++j) {
      const bool across = i < cut && j >= cut;
      if ((topology == 1 || topology == 2) && across) continue;
      if (topology == 4 && rng.uniform() < 0.5 && j - i > 1) continue;
      if (topology == 5 && i == 0 && j > 1) continue;  // date 0 tied by one row
      link(i, j);
    }
  if (topology == 1) link(static_cast<int>(rng.uniform() * cut), cut + static_cast<int>(rng.uniform() * (D - cut)));
  if (topology == 3)
    for (std::size_t k = in.in(1, 4); k-- > 0;)
      link(static_cast<int>(rng.uniform() * D), static_cast<int>(rng.uniform() * D));
  if (topology == 4)
    for (std::size_t k = in.in(0, 6); k-- > 0;)
      link(static_cast<int>(rng.uniform() * D), static_cast<int>(rng.uniform() * D));
  const bool velocity = in.in(0, 2) == 0;
  std::vector<double> t(static_cast<std::size_t>(D), 0.0);
  for (int d = 1; d < D; ++d)
    t[static_cast<std::size_t>(d)] = t[static_cast<std::size_t>(d) - 1] + 0.01 + 0.05 * rng.uniform();
  p.n = p.pairs.size();
  p.m = static_cast<std::size_t>(D - 1);
  p.a.assign(p.n * p.m, 0.0);
  for (std::size_t k = 0; k < p.n; ++k) {
    const auto [i, j] = p.pairs[k];
    if (velocity) {
      for (int u = i; u < j; ++u)
        p.a[k * p.m + static_cast<std::size_t>(u)] =
            t[static_cast<std::size_t>(u) + 1] - t[static_cast<std::size_t>(u)];
    } else {
      p.a[k * p.m + static_cast<std::size_t>(j - 1)] = 1.0;
      if (i > 0) p.a[k * p.m + static_cast<std::size_t>(i - 1)] = -1.0;
    }
  }
  p.what = std::string(velocity ? "velocity" : "phase") + " network, topology " + std::to_string(topology) + ", span " +
           std::to_string(span) + ", cut at " + std::to_string(cut);
}

void dense(fuzz::Bytes& in, testing::Rng& rng, Problem& p) {
  const std::size_t shape = in.in(0, 3), m = in.in(1, 16);
  p.m = m;
  p.n = shape == 0 ? in.in(1, m) : shape == 1 ? m : shape == 2 ? m + in.in(1, 12) : m + in.in(20, 140);
  p.a.resize(p.n * p.m);
  for (double& v : p.a) v = rng.normal();
  p.what = "dense " + std::to_string(p.n) + " x " + std::to_string(p.m);
}

/// Offset, trend and either monthly indicator columns (twelve: with the
/// offset, a design of deficient rank; eleven) or K harmonics, over dates
/// about a month apart; some months have one date or none.
void seasonal(fuzz::Bytes& in, testing::Rng& rng, Problem& p) {
  const std::size_t years = in.in(1, 4), kind = in.in(0, 2);
  std::vector<double> t;
  for (std::size_t k = 0; k < 12 * years; ++k) {
    const double u = rng.uniform();
    if (u < 0.15) continue;  // a month without a date
    t.push_back(static_cast<double>(k) / 12 + 0.02 * rng.uniform());
    if (u > 0.8) t.push_back(static_cast<double>(k) / 12 + 0.04 + 0.03 * rng.uniform());  // two dates
  }
  if (t.empty()) t.push_back(0.0);
  const std::size_t harmonics = in.in(1, 3);
  p.n = t.size();
  p.m = kind == 2 ? 2 + 2 * harmonics : kind == 0 ? 14 : 13;
  p.a.assign(p.n * p.m, 0.0);
  const double t0 = t.front();
  for (std::size_t i = 0; i < p.n; ++i) {
    double* row = p.a.data() + i * p.m;
    row[0] = 1.0;
    row[1] = t[i] - t0;
    if (kind == 2) {
      for (std::size_t k = 0; k < harmonics; ++k) {
        row[2 + 2 * k] = std::cos(2 * M_PI * static_cast<double>(k + 1) * t[i]);
        row[3 + 2 * k] = std::sin(2 * M_PI * static_cast<double>(k + 1) * t[i]);
      }
    } else {
      const auto month = static_cast<std::size_t>(std::floor(t[i] * 12 + 1e-9)) % 12;
      if (kind == 0)
        row[2 + month] = 1.0;
      else if (month > 0)
        row[2 + month - 1] = 1.0;
    }
  }
  p.what = "seasonal " + std::to_string(p.n) + " x " + std::to_string(p.m) + " (kind " + std::to_string(kind) + ")";
}

/// A dense design some of whose rows repeat others, exactly or nearly.
void duplicated(fuzz::Bytes& in, testing::Rng& rng, Problem& p) {
  dense(in, rng, p);
  const std::size_t copies = in.in(1, std::max<std::size_t>(1, p.n / 2));
  const double nearly = pick(in, {0.0, 0.0, 1e-12, 1e-8, 1e-4});
  for (std::size_t c = 0; c < copies && p.n > 1; ++c) {
    const std::size_t from = static_cast<std::size_t>(rng.uniform() * static_cast<double>(p.n)) % p.n;
    const std::size_t to = static_cast<std::size_t>(rng.uniform() * static_cast<double>(p.n)) % p.n;
    for (std::size_t j = 0; j < p.m; ++j) p.a[to * p.m + j] = p.a[from * p.m + j] * (1 + nearly * rng.normal());
  }
  p.what += ", " + std::to_string(copies) + " rows copied (perturbed by " + std::to_string(nearly) + ")";
}

/// Column j times 10^s_j, s_j in [-8, 8].
void scale_columns(fuzz::Bytes& in, Problem& p) {
  if (in.in(0, 2) != 0) return;
  const std::size_t spread = in.in(1, 8);
  for (std::size_t j = 0; j < p.m; ++j) {
    const double s = std::pow(10.0, static_cast<double>(in.in(0, 2 * spread)) - static_cast<double>(spread));
    for (std::size_t i = 0; i < p.n; ++i) p.a[i * p.m + j] *= s;
  }
  p.what += ", columns scaled by up to 1e" + std::to_string(spread);
}

// ---------------------------------------------------------------- cube

/// Each row's leverage h_ii (A A^+'s diagonal), from gelsd with the identity.
std::vector<double> leverages(const Problem& p) {
  const int n = static_cast<int>(p.n), m = static_cast<int>(p.m), ldb = std::max(n, m);
  std::vector<double> a(p.n * p.m), b(static_cast<std::size_t>(ldb) * p.n, 0.0), s(std::min(p.n, p.m));
  for (std::size_t i = 0; i < p.n; ++i)
    for (std::size_t j = 0; j < p.m; ++j) a[j * p.n + i] = p.a[i * p.m + j];
  for (std::size_t i = 0; i < p.n; ++i) b[i * static_cast<std::size_t>(ldb) + i] = 1.0;
  const double rcond = -1;
  int rank = 0, info = 0, lwork = -1, iw = 0;
  double wq = 0;
  dgelsd_(&n, &m, &n, a.data(), &n, b.data(), &ldb, s.data(), &rcond, &rank, &wq, &lwork, &iw, &info);
  std::vector<double> work(static_cast<std::size_t>(wq) + 1);
  std::vector<int> iwork(static_cast<std::size_t>(std::max(1, iw)));
  lwork = static_cast<int>(work.size());
  const std::vector<double> a0 = p.a;
  dgelsd_(&n, &m, &n, a.data(), &n, b.data(), &ldb, s.data(), &rcond, &rank, work.data(), &lwork, iwork.data(), &info);
  std::vector<double> h(p.n, 0.0);
  if (info != 0) return h;
  for (std::size_t i = 0; i < p.n; ++i)  // h_ii = a_i · (A^+ e_i)
    for (std::size_t j = 0; j < p.m; ++j) h[i] += a0[i * p.m + j] * b[i * static_cast<std::size_t>(ldb) + j];
  return h;
}

/// One mask (1: valid) of a kind the bytes choose.
std::vector<char> make_mask(fuzz::Bytes& in, testing::Rng& rng, const Problem& p, const std::vector<double>& lev) {
  const std::size_t n = p.n;
  std::vector<char> valid(n, 1);
  switch (in.in(0, 8)) {
    case 0:
      break;   // none missing
    case 1: {  // random
      const double f = pick(in, {0.05, 0.1, 0.3, 0.5, 0.8});
      for (auto& v : valid) v = rng.uniform() >= f;
      break;
    }
    case 2: {  // a run of rows
      const std::size_t r0 = in.in(0, n - 1), len = in.in(1, std::max<std::size_t>(1, n / 3));
      for (std::size_t i = r0; i < std::min(n, r0 + len); ++i) valid[i] = 0;
      break;
    }
    case 3: {  // every row that touches one unknown
      const std::size_t j = in.in(0, p.m - 1);
      for (std::size_t i = 0; i < n; ++i)
        if (p.a[i * p.m + j] != 0) valid[i] = 0;
      break;
    }
    case 4: {  // a network's rows across one date; elsewhere the rows of largest leverage
      if (!p.pairs.empty()) {
        const int c = static_cast<int>(in.in(1, p.m));
        for (std::size_t i = 0; i < n; ++i) valid[i] = !(p.pairs[i].first < c && p.pairs[i].second >= c);
      } else {
        std::vector<std::size_t> order(n);
        std::iota(order.begin(), order.end(), std::size_t{0});
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return lev[a] > lev[b]; });
        for (std::size_t k = 0, count = in.in(1, 3); k < std::min(count, n); ++k) valid[order[k]] = 0;
      }
      break;
    }
    case 5: {  // the row of largest leverage (a bridge where one has leverage 1), and maybe a few at random
      const std::size_t top = static_cast<std::size_t>(std::max_element(lev.begin(), lev.end()) - lev.begin());
      valid[top] = 0;
      if (in.in(0, 1))
        for (auto& v : valid) v = v && rng.uniform() >= 0.1;
      break;
    }
    case 6:  // all but one row
      std::fill(valid.begin(), valid.end(), 0);
      valid[in.in(0, n - 1)] = 1;
      break;
    case 7:  // no row
      std::fill(valid.begin(), valid.end(), 0);
      break;
    default:  // a quarter of the rows at random: often fewer than the unknowns
      for (auto& v : valid) v = rng.uniform() < 0.25;
      break;
  }
  return valid;
}

/// The cube: y = A x + noise on the valid rows, missing values as NaN or
/// ±Inf (or, with weights, some as weight 0), masks shared by pixels or not.
void make_cube(fuzz::Bytes& in, testing::Rng& rng, Problem& p) {
  p.h = in.in(1, 8);
  p.w = in.in(1, 8);
  const std::size_t P = p.h * p.w, n = p.n, m = p.m;
  const std::vector<double> lev = leverages(p);
  const std::size_t distinct = in.in(0, 4) == 0 ? P : in.in(1, 6);  // masks to share among the pixels
  std::vector<std::vector<char>> masks;
  for (std::size_t k = 0; k < std::min(distinct, P); ++k) masks.push_back(make_mask(in, rng, p, lev));
  const double noise = pick(in, {0.0, 1e-8, 1e-3, 0.1, 1.0});
  const bool pure = in.in(0, 5) == 0;  // values with no model in them
  const bool infinities = in.in(0, 5) == 0;
  // Column norms, so that the unknowns give values of order one whatever the columns' scales.
  std::vector<double> norm(m, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) norm[j] += p.a[i * m + j] * p.a[i * m + j];
  p.y.assign(n * P, 0.0);
  std::vector<double> x(m);
  for (std::size_t q = 0; q < P; ++q) {
    const std::vector<char>& valid =
        masks[distinct >= P
                  ? q
                  : static_cast<std::size_t>(rng.uniform() * static_cast<double>(masks.size())) % masks.size()];
    for (std::size_t j = 0; j < m; ++j) x[j] = rng.normal() / std::max(std::sqrt(norm[j]), 1e-300);
    for (std::size_t i = 0; i < n; ++i) {
      double v = 0;
      for (std::size_t j = 0; j < m; ++j) v += p.a[i * m + j] * x[j];
      v = pure ? rng.normal() : v + noise * rng.normal();
      if (!valid[i]) v = infinities && rng.uniform() < 0.3 ? (rng.uniform() < 0.5 ? HUGE_VAL : -HUGE_VAL) : kNaN;
      p.y[i * P + q] = v;
    }
  }
  const std::size_t weights = in.in(0, 6);
  if (weights < 2) return;  // unweighted, most often
  p.wt.assign(n * P, 1.0);
  const bool per_date = in.in(0, 1);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t q = 0; q < P; ++q) {
      double& w = p.wt[i * P + q];
      if (per_date && q > 0) {
        w = p.wt[i * P];
        continue;
      }
      const double u = rng.uniform();
      switch (weights) {
        case 2:
          w = 0.2 + u;
          break;
        case 3:
          w = u < 0.2 ? 0.0 : 0.2 + rng.uniform();
          break;
        case 4:
          w = u < 0.1 ? 1e-12 : 0.5 + rng.uniform();
          break;
        case 5:
          w = u < 0.1 ? 1e12 : 0.5 + rng.uniform();
          break;
        default:
          w = std::pow(10.0, 24 * u - 12);
          break;
      }
    }
}

// ---------------------------------------------------------------- check

/// Thrown past the pixel that broke the rule, with FUZZ_GO_ON set.
struct GoOn {};

[[noreturn]] void finding(const Problem& p, const SolveOptions& o, const detail::Steering& s, const SolveResult& r,
                          std::size_t pixel, const std::string& why) {
  std::string paths;
  for (std::size_t i = 0; i < kPathCount; ++i)
    if (r.paths[i]) paths += std::string(" ") + path_name(static_cast<SolvePath>(i)) + "=" + std::to_string(r.paths[i]);
  std::fprintf(
      stderr,
      "FINDING at pixel %zu: %s\n  design: %s (N=%zu, M=%zu), %zu x %zu pixels, %s\n"
      "  options: ridge %g, rcond %g, min_valid %d, output %s, residuals %d, device %s%s, prefer %d, rows kernel %d,\n"
      "    threads %d, memory %zu MB, cube %s\n"
      "  paths:%s\n",
      pixel, why.c_str(), p.what.c_str(), p.n, p.m, p.h, p.w, p.wt.empty() ? "unweighted" : "weighted", o.ridge,
      o.rcond, o.min_valid,
      o.output == DType::Float32   ? "float32"
      : o.output == DType::Float64 ? "float64"
                                   : "the cube's",
      o.residuals ? 1 : 0, o.device == Device::Cuda ? "reference device" : "cpu",
      o.device == Device::Cuda ? (o.device_float64 ? " float64" : " mixed") : "",
      s.prefer ? static_cast<int>(*s.prefer) : -1, s.rows_kernel ? 1 : 0, o.threads, o.memory >> 20,
      p.cube == DType::Float32 ? "float32" : "float64", paths.c_str());
  if (std::getenv("FUZZ_GO_ON")) throw GoOn{};
  std::abort();
}

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

/// The rule of the header for pixel q.
void compare(const Problem& p, const std::vector<double>& cube_values, const SolveResult& r, const SolveOptions& o,
             const detail::Steering& steer, std::size_t q) {
  const std::size_t P = p.h * p.w, n = p.n, m = p.m;
  const bool f32 = r.x.dtype() == DType::Float32;
  std::vector<double> y(n), w(n), x(m);
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = cube_values[i * P + q];
    if (!p.wt.empty()) w[i] = p.wt[i * P + q];
  }
  for (std::size_t j = 0; j < m; ++j) x[j] = r.x.value(j * P + q);
  const double* wp = p.wt.empty() ? nullptr : w.data();
  const auto status = static_cast<PixelStatus>(r.status.data<std::uint8_t>()[q]);
  const int rank = r.rank.data<std::int32_t>()[q];
  testing::Reference ref;
  bool ref_failed = false;
  try {
    ref = testing::lstsq(p.a, n, m, y.data(), wp, o.rcond, o.ridge);
  } catch (const std::exception&) {
    ref_failed = true;
  }
  auto fail = [&](const std::string& why) { finding(p, o, steer, r, q, why); };
  if (r.n_valid.data<std::int32_t>()[q] != ref.nvalid)
    fail("n_valid " + std::to_string(r.n_valid.data<std::int32_t>()[q]) + ", expected " + std::to_string(ref.nvalid));
  const bool any_nan = std::any_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
  const bool all_nan = std::all_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
  if (ref.nvalid == 0 || ref.nvalid < o.min_valid) {
    const PixelStatus want = ref.nvalid == 0 ? PixelStatus::NoData : PixelStatus::TooFew;
    if (status != want || !all_nan) fail(std::string("expected NaN with status ") + status_name(want));
    return;
  }
  if (ref_failed || status == PixelStatus::Failed) {
    if (!(ref_failed && status == PixelStatus::Failed && all_nan)) fail("failed where gelsd did not, or the other way");
    return;
  }
  if (any_nan) fail("NaN in x of a pixel with valid rows");
  for (double v : x)
    if (!std::isfinite(v)) fail("x not finite");
  // Rank: gelsd's, or within the window of a singular value near the threshold.
  const std::vector<double>& s = ref.sigma;
  const double rc = o.rcond < 0
                        ? std::numeric_limits<double>::epsilon() *
                              static_cast<double>(std::max<std::size_t>(static_cast<std::size_t>(ref.nvalid), m))
                        : o.rcond;
  const double t = rc * (s.empty() ? 0.0 : s[0]);
  int lo = 0, hi = 0;
  for (double v : s) {
    lo += v >= 4 * t;
    hi += v > t / 4;
  }
  if (rank == ref.rank) {
  } else if (rank < lo || rank > hi) {
    fail("rank " + std::to_string(rank) + ", gelsd " + std::to_string(ref.rank) +
         " (no singular value near the threshold " + num(t) + ")");
  }
  const PixelStatus want = o.ridge > 0 || static_cast<std::size_t>(rank) == m ? PixelStatus::Ok : PixelStatus::MinNorm;
  if (status != want) fail(std::string("status ") + status_name(status) + " with rank " + std::to_string(rank));
  // The solution at the rank CubeSolve chose.
  testing::Reference at = ref;
  if (rank != ref.rank) {
    const auto r_ = static_cast<std::size_t>(rank);
    const double above = r_ > 0 ? s[r_ - 1] : 2 * s[0], below = r_ < s.size() ? s[r_] : 0.0;
    if (!(above > below * (1 + 1e-12))) return;  // a tie: the solution at that rank is not defined
    at = testing::lstsq(p.a, n, m, y.data(), wp, std::sqrt(above * std::max(below, above * 1e-300)) / s[0], o.ridge);
    if (at.rank != rank) return;  // rounding put the cut elsewhere: nothing to compare at that rank
  }
  const double kappa = rank > 0 ? s[0] / s[static_cast<std::size_t>(rank) - 1] : 1.0;
  double dx = 0, nx = 0;
  for (std::size_t j = 0; j < m; ++j) {
    dx += (x[j] - at.x[j]) * (x[j] - at.x[j]);
    nx += at.x[j] * at.x[j];
  }
  dx = std::sqrt(dx);
  nx = std::sqrt(nx);
  double bb = 0;  // |b|^2: the weighted values
  for (std::size_t i = 0; i < n; ++i)
    if (std::isfinite(y[i]) && (!wp || (wp[i] > 0 && std::isfinite(wp[i])))) bb += (wp ? wp[i] : 1.0) * y[i] * y[i];
  const double rr = at.rss + o.ridge * nx * nx;  // the residual of the system gelsd solved
  // The residual moves x through the rank-r subspaces, which rounding turns by
  // eps·σ_1/(σ_r - σ_{r+1}) (Wedin): that, not κ, where the gap is the smaller.
  const double gap = rank > 0 && static_cast<std::size_t>(rank) < s.size()
                         ? s[0] / (s[static_cast<std::size_t>(rank) - 1] - s[static_cast<std::size_t>(rank)])
                         : kappa;
  const double rho =
      bb > 0 && nx > 0 ? std::sqrt(bb) / (s[0] * nx) * (1 + std::max(kappa, gap) * std::sqrt(rr / bb)) : 1.0;
  double tol = std::max(kappa <= 1e5 ? 1e-9 : 1e-14 * kappa, 16 * std::numeric_limits<double>::epsilon() * kappa * rho);
  if (f32) tol += 0x1p-24;
  if (!(dx <= tol * nx)) {
    for (std::size_t j = 0; j < m; ++j) std::fprintf(stderr, "  x[%zu] %.17g, gelsd %.17g\n", j, x[j], at.x[j]);
  }
  if (!(dx <= tol * nx))
    fail("relative error " + num(dx / nx) + " above " + num(tol) + " (kappa " + num(kappa) + ", rank " +
         std::to_string(rank) + ")");
  if (o.residuals) {
    const double rss = r.rss.data<double>()[q], e = tol * nx, norm = s.empty() ? 0.0 : s[0];
    const double bound = 1e-8 * at.rss + norm * e * (2 * std::sqrt(at.rss) + norm * e) + 1e-12 * bb;
    if (!(std::fabs(rss - at.rss) <= bound))
      fail("rss " + num(rss) + ", expected " + num(at.rss) + " (bound " + num(bound) + ")");
  }
  const double cond = r.cond.data<double>()[q];
  if (!std::isnan(cond) && rank == ref.rank && !(std::fabs(cond - kappa) <= kappa * (1e-9 + 1e-13 * kappa)))
    fail("cond " + num(cond) + ", expected " + num(kappa));
}

// ---------------------------------------------------------------- robust losses

/// Σρ(f): L1 |f|, Huber f²/2 within δ and δ|f| - δ²/2 beyond.
double loss_sum(const std::vector<double>& f, Loss loss, double delta) {
  double sum = 0;
  for (double v : f) {
    const double a = std::fabs(v);
    sum += loss == Loss::L1 ? a : a <= delta ? 0.5 * v * v : delta * a - 0.5 * delta * delta;
  }
  return sum;
}

/// One pixel's weighted valid rows: B (|V|, M) row-major and c.
struct Rows {
  std::vector<double> b, c;
  std::size_t n = 0;
  /// c - B x.
  std::vector<double> residual(const std::vector<double>& x, std::size_t m) const {
    std::vector<double> f(c);
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j) f[i] -= b[i * m + j] * x[j];
    return f;
  }
};

/// Rule R2 for x: "" where it holds (or the multipliers are not unique).
std::string l1_condition(const Rows& rows, std::size_t m, const std::vector<double>& x, double kappa) {
  const std::vector<double> f = rows.residual(x, m);
  std::vector<double> g(m, 0.0), zt;  // -Σ s_i b_i outside Z; B_Z^T, (m, |Z|) row-major once filled
  std::vector<std::size_t> zero;
  double scale = 0;
  for (std::size_t i = 0; i < rows.n; ++i) {
    double size = std::fabs(rows.c[i]), norm = 0;
    for (std::size_t j = 0; j < m; ++j) size += std::fabs(rows.b[i * m + j] * x[j]), norm += std::fabs(rows.b[i * m + j]);
    scale += norm;
    if (std::fabs(f[i]) <= std::max(1e-9, 64 * std::numeric_limits<double>::epsilon() * kappa) * size) {
      zero.push_back(i);
      continue;
    }
    for (std::size_t j = 0; j < m; ++j) g[j] -= (f[i] > 0 ? 1.0 : -1.0) * rows.b[i * m + j];
  }
  if (zero.empty()) {
    double gg = 0;
    for (double v : g) gg = std::max(gg, std::fabs(v));
    return gg <= 1e-9 * scale ? "" : "no residual is 0 and the signs' sum is not: not optimal";
  }
  const std::size_t k = zero.size();
  zt.assign(m * k, 0.0);
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t a = 0; a < k; ++a) zt[j * k + a] = rows.b[zero[a] * m + j];
  const testing::Reference u = testing::lstsq(zt, m, k, g.data(), nullptr);
  double off = 0, most = 0;
  for (std::size_t j = 0; j < m; ++j) {
    double v = -g[j];
    for (std::size_t a = 0; a < k; ++a) v += zt[j * k + a] * u.x[a];
    off = std::max(off, std::fabs(v));
  }
  for (double v : u.x) most = std::max(most, std::fabs(v));
  if (!(off <= 1e-8 * std::max(1.0, most) * scale)) return "no multipliers on the rows where f is 0: not optimal (off " + num(off) + ")";
  if (static_cast<std::size_t>(u.rank) == k && !(most <= 1 + 1e-6))
    return "a multiplier of " + num(most) + " (unique): not optimal";
  return "";
}

/// R2's lower bound on the L1 optimum from the dual points of three ε.
double l1_dual_bound(const Rows& rows, std::size_t m, const std::vector<double>& f) {
  double scale = 0, best = -HUGE_VAL;
  for (double v : rows.c) scale = std::max(scale, std::fabs(v));
  for (double eps : {1e-6, 1e-9, 1e-12}) {
    std::vector<double> u(rows.n);
    for (std::size_t i = 0; i < rows.n; ++i) u[i] = f[i] / std::max(std::fabs(f[i]), eps * scale + 1e-300);
    const testing::Reference t = testing::lstsq(rows.b, rows.n, m, u.data(), nullptr);  // u's part in B's range
    double top = 1, bound = 0;
    for (std::size_t i = 0; i < rows.n; ++i) {
      for (std::size_t j = 0; j < m; ++j) u[i] -= rows.b[i * m + j] * t.x[j];
      top = std::max(top, std::fabs(u[i]));
    }
    for (std::size_t i = 0; i < rows.n; ++i) bound += rows.c[i] * u[i] / top;
    best = std::max(best, bound);
  }
  return best;
}

/// The first `rank` right singular vectors of B, (m, rank) column-major:
/// the row space a solve at that rank works in.
std::vector<double> row_basis(const Rows& rows, std::size_t m, std::size_t rank) {
  const std::size_t n = rows.n, k = std::min(n, m);
  std::vector<double> a(n * m), s(k), u(n * k), vt(k * m), v(m * rank);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j) a[i + j * n] = rows.b[i * m + j];
  if (lapack::svd(static_cast<int>(n), static_cast<int>(m), a.data(), s.data(), u.data(), vt.data()) != 0) return {};
  for (std::size_t c = 0; c < rank && c < k; ++c)
    for (std::size_t j = 0; j < m; ++j) v[j + c * m] = vt[c + j * k];
  return v;
}

/// Rule R3: the lowest objective Newton's method finds from x (x itself
/// where it finds none lower). Below full rank (`rank` < m, the solver's)
/// its steps are projected onto the rank's row space, where the solver
/// minimises: beyond it lie the directions the rank rule drops.
double huber_descent(const Rows& rows, std::size_t m, std::vector<double> x, double delta, std::size_t rank) {
  const std::vector<double> basis = rank < m ? row_basis(rows, m, rank) : std::vector<double>{};
  double best = loss_sum(rows.residual(x, m), Loss::Huber, delta);
  for (int it = 0; it < 50; ++it) {
    const std::vector<double> f = rows.residual(x, m);
    std::vector<double> inside;  // the rows within δ
    std::vector<double> grad(m, 0.0);  // B^T ψ(f)
    for (std::size_t i = 0; i < rows.n; ++i) {
      const double psi = std::max(-delta, std::min(delta, f[i]));
      for (std::size_t j = 0; j < m; ++j) grad[j] += rows.b[i * m + j] * psi;
      if (std::fabs(f[i]) <= delta) inside.insert(inside.end(), rows.b.begin() + static_cast<std::ptrdiff_t>(i * m),
                                                  rows.b.begin() + static_cast<std::ptrdiff_t>((i + 1) * m));
    }
    // The step solves (B_E^T B_E) d = B^T ψ(f): the least-squares system [B_E; 0] d ~ its
    // pseudo-inverse's, by gelsd on B_E^T's normal form (B_E^T B_E small: m x m).
    const std::size_t e = inside.size() / m;
    std::vector<double> h(m * m, 0.0);
    for (std::size_t i = 0; i < e; ++i)
      for (std::size_t a = 0; a < m; ++a)
        for (std::size_t b = 0; b < m; ++b) h[a * m + b] += inside[i * m + a] * inside[i * m + b];
    std::vector<double> d = e > 0 ? testing::lstsq(h, m, m, grad.data(), nullptr).x : grad;
    if (e == 0)
      for (double& v : d) v *= 1e-3;
    if (!basis.empty()) {  // d <- V V^T d
      std::vector<double> t(rank, 0.0), p(m, 0.0);
      for (std::size_t c = 0; c < rank; ++c)
        for (std::size_t j = 0; j < m; ++j) t[c] += basis[j + c * m] * d[j];
      for (std::size_t c = 0; c < rank; ++c)
        for (std::size_t j = 0; j < m; ++j) p[j] += basis[j + c * m] * t[c];
      d = p;
    }
    bool lower = false;
    for (double step = 1; step > 1e-6 && !lower; step /= 2) {
      std::vector<double> next(x);
      for (std::size_t j = 0; j < m; ++j) next[j] += step * d[j];
      const double v = loss_sum(rows.residual(next, m), Loss::Huber, delta);
      if (v < best) best = v, x = next, lower = true;
    }
    if (!lower) break;
  }
  return best;
}

/// Rule R4 (f = c - B x, ref: gelsd's on the pixel's rows): "" where it
/// holds or the rank is full or not clear.
std::string row_space(const Rows& rows, std::size_t m, const std::vector<double>& x, const std::vector<double>& f,
                      const testing::Reference& ref, double kappa) {
  const double t = std::numeric_limits<double>::epsilon() * static_cast<double>(std::max<std::size_t>(rows.n, m)) * ref.sigma[0];
  bool clear = true;
  for (double v : ref.sigma) clear = clear && !(v > t / 4 && v < 4 * t);
  if (!clear || static_cast<std::size_t>(ref.rank) == m) return "";
  std::vector<double> bx(rows.n, 0.0);
  for (std::size_t i = 0; i < rows.n; ++i) bx[i] = rows.c[i] - f[i];
  const testing::Reference own = testing::lstsq(rows.b, rows.n, m, bx.data(), nullptr);  // B x's minimum-norm preimage
  double dx = 0, nx = 0;
  for (std::size_t j = 0; j < m; ++j) dx += (own.x[j] - x[j]) * (own.x[j] - x[j]), nx += x[j] * x[j];
  if (std::sqrt(dx) <= 1e-8 * std::max(1.0, kappa) * std::sqrt(nx) + 1e-300) return "";
  return "x not in its rows' row space (off " + num(std::sqrt(dx / std::max(nx, 1e-300))) + ")";
}

/// The robust rules of the header for pixel q.
void compare_robust(const Problem& p, const std::vector<double>& cube_values, const SolveResult& r, const SolveOptions& o,
                    std::size_t q) {
  const std::size_t P = p.h * p.w, n = p.n, m = p.m;
  std::vector<double> y(n), w(n, 1.0), x(m);
  Rows rows;
  for (std::size_t i = 0; i < n; ++i) {
    y[i] = cube_values[i * P + q];
    if (!p.wt.empty()) w[i] = p.wt[i * P + q];
    if (!std::isfinite(y[i]) || !std::isfinite(w[i]) || !(w[i] > 0)) continue;
    const double sw = std::sqrt(w[i]);
    for (std::size_t j = 0; j < m; ++j) rows.b.push_back(sw * p.a[i * m + j]);
    rows.c.push_back(sw * y[i]);
    ++rows.n;
  }
  for (std::size_t j = 0; j < m; ++j) x[j] = r.x.value(j * P + q);
  const auto status = static_cast<PixelStatus>(r.status.data<std::uint8_t>()[q]);
  auto fail = [&](const std::string& why) { finding(p, o, detail::Steering{}, r, q, std::string(loss_name(o.loss)) + ": " + why); };
  const bool all_nan = std::all_of(x.begin(), x.end(), [](double v) { return std::isnan(v); });
  const int nv = static_cast<int>(rows.n);
  if (nv == 0 || nv < o.min_valid) {
    if (status != (nv == 0 ? PixelStatus::NoData : PixelStatus::TooFew) || !all_nan) fail("expected NaN with no or too few rows");
    return;
  }
  if (status == PixelStatus::NotConverged || status == PixelStatus::Failed) {
    if (!all_nan) fail(std::string("status ") + status_name(status) + " with numbers in x");
    return;
  }
  if (status != PixelStatus::Ok && status != PixelStatus::MinNorm) fail(std::string("status ") + status_name(status));
  for (double v : x)
    if (!std::isfinite(v)) fail("x not finite");
  if (r.x.dtype() == DType::Float32) return;  // x rounded to float32: the rules below are float64's
  const std::vector<double> f = rows.residual(x, m);
  double size = 0;
  for (std::size_t i = 0; i < rows.n; ++i) size += std::fabs(rows.c[i]) + std::fabs(rows.c[i] - f[i]);
  const double delta = o.huber_delta, obj = loss_sum(f, o.loss, delta), reported = r.objective.value(q);
  const double unit = o.loss == Loss::L1 ? size : delta * size;
  const testing::Reference ref = testing::lstsq(p.a, n, m, y.data(), p.wt.empty() ? nullptr : w.data());
  const double kappa = ref.rank > 0 ? ref.sigma[0] / ref.sigma[static_cast<std::size_t>(ref.rank) - 1] : 1.0;
  // (x from the solver's coordinates moves the residuals by eps·κ of their terms)
  if (!(std::fabs(reported - obj) <= std::max(1e-9, 64 * std::numeric_limits<double>::epsilon() * kappa) * unit + 1e-12 * obj))
    fail("objective " + num(reported) + ", its residuals give " + num(obj));
  if (kappa > 1e8) return;  // (the rules' rounding is not modelled that far)
  if (o.loss == Loss::L1) {
    const bool bounded = obj - l1_dual_bound(rows, m, f) <= 1e-6 * obj + 1e-9 * unit;
    if (const std::string why = bounded ? "" : l1_condition(rows, m, x, kappa); !why.empty()) fail(why);
  } else {
    const auto rank = static_cast<std::size_t>(r.rank.data<std::int32_t>()[q]);
    const double lower = huber_descent(rows, m, x, delta, rank);
    if (!(obj - lower <= 1e-6 * obj + 1e-9 * unit)) fail("objective " + num(obj) + ", Newton's method reaches " + num((obj - lower) / obj) + " lower");
  }
  if (const std::string why = row_space(rows, m, x, f, ref, kappa); !why.empty()) fail(why);
}

/// While it lives, the engine's device is the reference backend.
struct ReferenceDevice {
  explicit ReferenceDevice(bool on) : on_(on) {
    if (on_)
      gpu::set_backend_factory([] { return gpu::make_host_backend(std::size_t{64} << 20, std::size_t{64} << 20); });
  }
  ~ReferenceDevice() {
    if (on_) gpu::set_backend_factory(nullptr);
  }
  ReferenceDevice(const ReferenceDevice&) = delete;
  ReferenceDevice& operator=(const ReferenceDevice&) = delete;
  bool on_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::Bytes in(data, size);
#ifdef CUBESOLVE_FUZZ_ROBUST
  const Loss loss = in.in(0, 1) ? Loss::Huber : Loss::L1;
  const double delta = pick(in, {0.01, 0.3, 3.0, 100.0});
#else
  const Loss loss = Loss::L2;
  const double delta = 0;
#endif
  Problem p;
  testing::Rng rng(in.in(0, 1u << 30));
  switch (in.in(0, 3)) {
    case 0:
      network(in, rng, p);
      break;
    case 1:
      dense(in, rng, p);
      break;
    case 2:
      seasonal(in, rng, p);
      break;
    default:
      duplicated(in, rng, p);
      break;
  }
  if (p.n == 0 || p.m == 0) return 0;
  scale_columns(in, p);
  make_cube(in, rng, p);

  SolveOptions o;
  o.ridge = pick(in, {0.0, 0.0, 0.0, 0.0, 1e-8, 1e-3, 0.1, 10.0});
  o.rcond = pick(in, {-1.0, -1.0, -1.0, 1e-5, 1e-10, 1e-3, 1e-14});
  const std::size_t mv = in.in(0, 5);
  o.min_valid = mv < 3    ? 1
                : mv == 3 ? static_cast<int>(p.m)
                : mv == 4 ? static_cast<int>(p.m) + 1
                          : static_cast<int>(in.in(1, p.n + 1));
  p.cube = in.in(0, 1) ? DType::Float32 : DType::Float64;
  const std::size_t out = in.in(0, 2);
  if (out > 0) o.output = out == 1 ? DType::Float32 : DType::Float64;
  o.residuals = in.in(0, 1);
  o.threads = static_cast<int>(in.in(1, 2));
  o.memory = in.in(0, 1) ? std::size_t{1} << 20 : std::size_t{256} << 20;
  detail::Steering steer;
  const std::size_t prefer = in.in(0, 8);
  const detail::Kind kinds[] = {detail::Kind::Full,       detail::Kind::Deletion, detail::Kind::DualSchur,
                                detail::Kind::DualGather, detail::Kind::Gram,     detail::Kind::Exact,
                                detail::Kind::Group};
  if (prefer < 7) steer.prefer = kinds[prefer];
  steer.rows_kernel = in.in(0, 1);
  const std::size_t device = in.in(0, 5);
  if (device >= 4) {
    o.device = Device::Cuda;
    o.device_float64 = device == 5;
  }
  if (loss != Loss::L2) {
    o.loss = loss;
    o.huber_delta = delta;
    o.ridge = 0;
    o.rcond = -1;  // (a larger one changes the problem the rules check to its truncation)
    o.device = Device::Cpu;
  }

  Array cube(p.cube, {p.n, p.h, p.w});
  std::vector<double> values(p.y.size());  // what the engine sees: the values in the cube's type
  for (std::size_t i = 0; i < p.y.size(); ++i) {
    cube.set(i, p.y[i]);
    values[i] = cube.value(i);
  }
  Array a(DType::Float64, {p.n, p.m});
  std::copy(p.a.begin(), p.a.end(), a.data<double>());
  Array wt;
  if (!p.wt.empty()) {
    wt = Array(DType::Float64, {p.n, p.h, p.w});
    std::copy(p.wt.begin(), p.wt.end(), wt.data<double>());
  }
  if (const char* dump = std::getenv("FUZZ_DUMP")) {
    FILE* f = std::fopen(dump, "w");
    std::fprintf(f, "%zu %zu %zu %zu %d\n", p.n, p.m, p.h, p.w, p.wt.empty() ? 0 : 1);
    for (double v : p.a) std::fprintf(f, "%.17g\n", v);
    for (double v : values) std::fprintf(f, "%.17g\n", v);
    for (double v : p.wt) std::fprintf(f, "%.17g\n", v);
    std::fclose(f);
  }
  ReferenceDevice dev(o.device == Device::Cuda);
  SolveResult r;
  try {
    const Design design(a);
    r = o.loss == Loss::L2 ? detail::solve_steered(cube, design, p.wt.empty() ? nullptr : &wt, o, steer)
                           : solve(cube, design, p.wt.empty() ? nullptr : &wt, o);
  } catch (const cubesolve::Error& e) {
    std::fprintf(stderr, "FINDING: solve threw: %s\n  design: %s\n", e.what(), p.what.c_str());
    std::abort();
  }
  for (std::size_t q = 0; q < p.h * p.w; ++q) {
    try {
      if (o.loss == Loss::L2) compare(p, values, r, o, steer, q);
      else compare_robust(p, values, r, o, q);
    } catch (const GoOn&) {
    }
  }
  return 0;
}
