// Every path of the engine against per-pixel gelsd: each path's function on
// its own (a chunk gathered by hand, every pixel sent to that path), and
// solve() on cases built to take it, checking that the intended path ran (a
// planner that sent every pixel to the exact fallback would fail here).
#include "cases.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/engine/check.hpp>
#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/error.hpp>

#include "engine/chunk.hpp"
#include "engine/paths.hpp"

#include <QtTest>

#include <algorithm>
#include <functional>
#include <numeric>
#include <set>

using namespace cubesolve;
using namespace testing;
using detail::Kind;

namespace {

std::size_t count(const SolveResult& r, SolvePath p) { return r.paths[static_cast<std::size_t>(p)]; }

QString describe(const SolveResult& r) {
  QString s;
  for (std::size_t i = 0; i < kPathCount; ++i) s += QString(" %1=%2").arg(path_name(static_cast<SolvePath>(i))).arg(r.paths[i]);
  return s;
}

// Observations i lose a disc (every `every`-th one), so neighbouring pixels share masks.
Case blob_case(std::size_t n, std::size_t m, std::size_t size, std::size_t every, double radius, std::uint64_t seed) {
  Case c = random_case(n, m, size, size, 0.0, 0.0, seed);
  Rng rng(seed + 1);
  const std::size_t P = size * size;
  for (std::size_t i = 0; i < n; i += every) {
    const double cr = rng.uniform() * static_cast<double>(size), cc = rng.uniform() * static_cast<double>(size);
    for (std::size_t p = 0; p < P; ++p) {
      const double dr = static_cast<double>(p / size) - cr, dc = static_cast<double>(p % size) - cc;
      if (dr * dr + dc * dc < radius * radius) c.y[i * P + p] = kNaN;
    }
  }
  return c;
}

/// N=120 values of a quadratic in t = 10 + i/120 (columns of unit norm),
/// 24 x 24 pixels with 35 % missing, each mask shared by a run of four pixels.
Case polynomial_case() {
  Case c = random_case(120, 3, 24, 24, 0.35, 0.0, 21);
  std::vector<double> norm(3, 0.0);
  for (std::size_t i = 0; i < c.n; ++i)
    for (std::size_t j = 0; j < 3; ++j) norm[j] += std::pow(10 + static_cast<double>(i) / 120, 2.0 * static_cast<double>(2 - j));
  for (std::size_t i = 0; i < c.n; ++i)
    for (std::size_t j = 0; j < 3; ++j)
      c.a[i * 3 + j] = std::pow(10 + static_cast<double>(i) / 120, static_cast<double>(2 - j)) / std::sqrt(norm[j]);
  const std::size_t P = c.h * c.w;
  for (std::size_t i = 0; i < c.n; ++i)
    for (std::size_t p = 0; p < P; ++p)
      if (std::isnan(c.y[i * P + p - p % 4]) != std::isnan(c.y[i * P + p])) c.y[i * P + p] = std::isnan(c.y[i * P + p - p % 4]) ? kNaN : 0.5;
  return c;
}

Case with_weights(Case c, std::uint64_t seed) {
  Rng rng(seed);
  c.wt.resize(c.y.size());
  for (auto& v : c.wt) v = rng.uniform() < 0.05 ? 0.0 : 0.2 + rng.uniform();
  return c;
}

// An SBAS network of 30 dates (pairs up to 3 apart) with its nonzeros
// scaled: one entry in fourteen is nonzero, so the engine takes A's products
// by rows (right-hand sides, residuals) over the nonzeros.
Case sparse_network_case(double missing, std::uint64_t seed) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  Case c = sbas_case(30, 3, 16, pairs);
  Rng rng(seed);
  for (double& v : c.a) v *= 0.5 + rng.uniform();
  for (double& v : c.y)
    if (rng.uniform() < missing) v = kNaN;
  return c;
}

// Rows (1, c) along the diagonal of m unknowns, and four rows on the last
// that half the pixels lack: every Cholesky pivot of A_V^T A_V holds while
// cond(A) grows as |c|^m.
Case chain_case(std::size_t m, double c) {
  const std::size_t n = m + 4, P = 144;
  Case k = random_case(n, m, 12, 12, 0.0, 0.0, 24);
  std::fill(k.a.begin(), k.a.end(), 0.0);
  for (std::size_t i = 0; i < m; ++i) {
    k.a[i * m + i] = 1.0;
    if (i + 1 < m) k.a[i * m + i + 1] = c;
  }
  Rng rng(25);
  for (std::size_t r = m; r < n; ++r) {
    k.a[r * m + m - 1] = 1.0;
    for (std::size_t p = 0; p < P; ++p)
      if (rng.uniform() < 0.5) k.y[r * P + p] = kNaN;
  }
  return k;
}

// An SBAS network of 41 dates (pairs up to 3 apart, M = 40, banded) that
// three blocks of pixels split: the first loses every pair across dates
// 10-11 (one free component), the second every pair with date 20 and every
// pair across dates 30-31 (two), the third all but the pairs of neighbours
// among the first 21 dates (fewer rows than unknowns, 20 free dates).
// Elsewhere 5 % of the values are missing. With `velocity`, the unknowns
// are the velocities between neighbouring dates (intervals of 0.03-0.05).
Case split_band_network_case(bool velocity = false) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  Case c = sbas_case(41, 3, 16, pairs);
  if (velocity) {
    std::fill(c.a.begin(), c.a.end(), 0.0);
    for (std::size_t k = 0; k < pairs.size(); ++k)
      for (std::size_t j = pairs[k].first; j < pairs[k].second; ++j) c.a[k * c.m + j] = 0.03 + 0.01 * static_cast<double>(j % 3);
  }
  const std::size_t P = 256;
  for (std::size_t k = 0; k < pairs.size(); ++k) {
    const auto [i, j] = pairs[k];
    for (std::size_t p = 0; p < P; ++p) {
      const std::size_t r = p / 16, col = p % 16;
      const bool lost = (r < 6 && col < 6 && i <= 10 && j > 10) ||
                        (r >= 10 && col >= 10 && (i == 20 || j == 20 || (i <= 30 && j > 30))) ||
                        (r >= 12 && col < 4 && !(j == i + 1 && j <= 20));
      if (lost) c.y[k * P + p] = kNaN;
    }
  }
  return c;
}
// The same network (phase or velocity), two thirds of every pixel's values
// missing at random: most pixels split somewhere, many lose whole dates.
Case sparse_band_network_case(bool velocity) {
  Case c = split_band_network_case(velocity);
  Rng rng(28);
  for (double& v : c.y)
    if (rng.uniform() < 0.65) v = kNaN;
  return c;
}
constexpr std::size_t kSplitBandPixels = 36 + 36 + 16;  // the third block's chains may take the dual path

Array design_of(const Case& c) {
  Array a(DType::Float64, {c.n, c.m});
  std::copy(c.a.begin(), c.a.end(), a.data<double>());
  return a;
}

/// A solve() case: the data, the options, and what must have run.
struct SolveCase {
  const char* name;
  std::function<Case()> make;
  SolveOptions options;
  std::function<bool(const SolveResult&, const Case&)> took;
};

SolveOptions with(std::function<void(SolveOptions&)> set) {
  SolveOptions o;
  set(o);
  return o;
}

SolveOptions on_cpu() {
  return with([](SolveOptions& o) { o.device = Device::Cpu; });
}

// Split networks: none on the exact path, at least `gram` pixels on the Gram
// path and `min_norm` of minimum norm.
std::function<bool(const SolveResult&, const Case&)> tied_down(std::size_t gram, std::size_t min_norm) {
  return [=](const SolveResult& r, const Case&) {
    return count(r, SolvePath::Exact) == 0 && count(r, SolvePath::Gram) >= gram && r.count(PixelStatus::MinNorm) >= min_norm;
  };
}

std::size_t fast(const SolveResult& r) {
  return count(r, SolvePath::Full) + count(r, SolvePath::Deletion) + count(r, SolvePath::Dual);
}

const std::vector<SolveCase>& solve_cases() {
  static const std::vector<SolveCase> cases = {
      {"full data", [] { return random_case(30, 8, 20, 20, 0.0, 0.0, 1); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Full) == 400; }},
      {"deletion", [] { return random_case(40, 10, 24, 24, 0.15, 0.0, 2); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Deletion) >= 500; }},
      // A tall stack losing a quarter: systems of ~200 rows are still far cheaper than gelsd.
      {"large deletions", [] { return random_case(800, 200, 8, 8, 0.25, 0.0, 12); }, with([](SolveOptions& o) { o.threads = 2; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Deletion) == 64; }},
      // The seed's shape: N < M, few missing rows.
      {"dual (Schur)", [] { return random_case(20, 40, 24, 24, 0.1, 0.0, 3); }, {},
       [](const SolveResult& r, const Case&) {
         return count(r, SolvePath::Dual) >= 450 && r.count(PixelStatus::MinNorm) == 576 - count(r, SolvePath::Skipped);
       }},
      // Most rows missing: the gathered C_VV system is the smaller one.
      {"dual (gathered)", [] { return random_case(20, 40, 24, 24, 0.7, 0.0, 4); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 500; }},
      // N > M, but most rows missing: A_V has fewer rows than unknowns, so the
      // minimum-norm solution comes from C_VV although A has no full row rank.
      {"dual for underdetermined pixels of a tall design", [] { return random_case(30, 20, 24, 24, 0.5, 0.0, 13); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 450; }},
      // Clouds: half the observations lose a large disc, so big groups share masks.
      {"mask groups", [] { return blob_case(30, 6, 64, 2, 22.0, 5); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Group) >= 1000; }},
      // A quadratic in time far from its origin (cond(A) about 6e3, its own
      // Gram matrix past the Gram path's pivot test): four neighbouring pixels
      // share each mask, and one SVD serves them instead of one each.
      {"ill-conditioned design: small groups share an SVD", [] { return polynomial_case(); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Group) >= 500 && count(r, SolvePath::Gram) == 0; }},
      {"weights take Gram", [] { return with_weights(random_case(30, 6, 20, 20, 0.1, 0.0, 7), 8); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 350; }},
      // Underdetermined pixels fit exactly, whatever the weights: the dual paths.
      {"weights on an underdetermined design take the dual paths",
       [] { return with_weights(random_case(20, 40, 24, 24, 0.15, 0.0, 14), 15); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 500 && count(r, SolvePath::Exact) == 0; }},
      // Too wide for the packed outer products: each pixel's Gram by SYRK.
      {"weights on a wide design take the SYRK Gram path",
       [] { return with_weights(random_case(420, 200, 6, 6, 0.1, 0.0, 16), 17); }, {},
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) == 36; }},
      // A ridge: the Gram path, or for few rows its dual form
      // x = A_V^T (C_VV + ridge W^-1)^-1 y_V, whatever A_V's rank.
      {"ridge takes Gram or its dual form", [] { return random_case(12, 8, 20, 20, 0.3, 0.0, 9); }, with([](SolveOptions& o) { o.ridge = 0.25; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 50 && count(r, SolvePath::Dual) >= 250; }},
      {"ridge on an underdetermined design takes the dual form", [] { return random_case(20, 40, 24, 24, 0.2, 0.0, 3); },
       with([](SolveOptions& o) { o.ridge = 0.1, o.residuals = true; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) == 576 - count(r, SolvePath::Skipped); }},
      {"weights and ridge on an underdetermined design take the dual form",
       [] { return with_weights(random_case(20, 40, 24, 24, 0.2, 0.0, 14), 15); },
       with([](SolveOptions& o) { o.ridge = 0.1, o.residuals = true; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) == 576 - count(r, SolvePath::Skipped); }},
      // A rank-deficient design is solved in its row space (A·Q, of full
      // column rank) by the fast paths; every pixel is of minimum norm.
      {"rank-deficient design in its row space",
       [] {
         Case c = random_case(20, 6, 12, 12, 0.2, 0.0, 10);
         for (std::size_t i = 0; i < 20; ++i) c.a[i * 6 + 5] = c.a[i * 6 + 4];
         return c;
       },
       {},
       [](const SolveResult& r, const Case&) {
         return count(r, SolvePath::Deletion) + count(r, SolvePath::Full) >= 100 && r.count(PixelStatus::Ok) == 0;
       }},
      {"rank-deficient design, weighted, in its row space",
       [] {
         Case c = random_case(20, 6, 12, 12, 0.2, 0.0, 12);
         for (std::size_t i = 0; i < 20; ++i) c.a[i * 6 + 5] = c.a[i * 6 + 4] - c.a[i * 6 + 3];
         c.wt.assign(c.y.size(), 0.0);
         testing::Rng rng(5);
         for (double& w : c.wt) w = 0.5 + rng.uniform();
         return c;
       },
       {}, [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 100 && r.count(PixelStatus::Ok) == 0; }},
      {"custom rcond is exact", [] { return random_case(20, 6, 12, 12, 0.2, 0.0, 11); },
       with([](SolveOptions& o) { o.rcond = 0.3; }),  // large enough to cut singular values
       [](const SolveResult& r, const Case&) { return fast(r) == 0; }},
      // cond(A) well below 1/rcond: every A_V is shown to keep its rank.
      {"custom rcond keeps the fast paths", [] { return random_case(40, 10, 24, 24, 0.15, 0.0, 2); },
       with([](SolveOptions& o) { o.rcond = 1e-3; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Deletion) >= 500 && count(r, SolvePath::Exact) == 0; }},
      {"custom rcond keeps the dual paths", [] { return random_case(20, 40, 24, 24, 0.1, 0.0, 3); },
       with([](SolveOptions& o) { o.rcond = 1e-3; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 450 && count(r, SolvePath::Exact) == 0; }},
      {"custom rcond keeps the gathered dual path of a tall design", [] { return random_case(30, 20, 24, 24, 0.5, 0.0, 13); },
       with([](SolveOptions& o) { o.rcond = 1e-3; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 450; }},
      // The second column lives on rows 18 and 19 (elsewhere 2 % of it):
      // without both, cond(A_V) is about 50, and gelsd at rcond 0.05 cuts it
      // to rank 1, although the deletion's (or the Gram path's) own pivots
      // would hold. Those pixels go to the exact path; the others keep the
      // fast paths.
      {"custom rcond sends pixels it cuts to the exact path",
       [] {
         Case c = random_case(20, 2, 24, 24, 0.3, 0.0, 18);
         for (std::size_t i = 0; i < 20; ++i) {
           c.a[i * 2] = 1.0;
           c.a[i * 2 + 1] = i >= 18 ? 1.0 : 0.02 * c.a[i * 2 + 1];
         }
         return c;
       },
       with([](SolveOptions& o) { o.rcond = 0.05; }),
       [](const SolveResult& r, const Case& c) {
         const std::size_t P = c.h * c.w;
         std::size_t cut = 0;  // pixels without rows 18 and 19, but enough rows for the deletion path
         for (std::size_t p = 0; p < P; ++p)
           cut += std::isnan(c.y[18 * P + p]) && std::isnan(c.y[19 * P + p]) && r.n_valid.data<std::int32_t>()[p] >= 2;
         return cut > 20 && count(r, SolvePath::Exact) >= cut && count(r, SolvePath::Deletion) + count(r, SolvePath::Gram) >= 300;
       }},
      // With a custom rcond the Gram paths show each pixel's system keeps
      // its singular values above 2 rcond of the largest (a ridge above the
      // shift at once, else a Cholesky less it), and stay fast.
      {"ridge and a custom rcond keep the Gram path", [] { return random_case(12, 8, 20, 20, 0.3, 0.0, 9); },
       with([](SolveOptions& o) { o.ridge = 0.25, o.rcond = 1e-5; }),
       [](const SolveResult& r, const Case&) {
         return count(r, SolvePath::Gram) + count(r, SolvePath::Dual) >= 350 && count(r, SolvePath::Exact) == 0;
       }},
      {"weights, ridge and a custom rcond keep the dual form", [] { return with_weights(random_case(20, 40, 24, 24, 0.2, 0.0, 14), 15); },
       with([](SolveOptions& o) { o.ridge = 0.1, o.rcond = 1e-5; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) == 576 - count(r, SolvePath::Skipped); }},
      // A ridge far below the shift: each pixel's Cholesky less it decides.
      // Pixels of fewer rows than unknowns keep singular values of about
      // sqrt(ridge), which gelsd cuts: they go to the exact path.
      {"a tiny ridge and a custom rcond", [] { return random_case(12, 8, 20, 20, 0.3, 0.0, 9); },
       with([](SolveOptions& o) { o.ridge = 1e-12, o.rcond = 1e-5; }),
       [](const SolveResult& r, const Case& c) {
         std::size_t under = 0;
         for (std::size_t p = 0; p < 400; ++p) under += r.n_valid.data<std::int32_t>()[p] < static_cast<int>(c.m);
         return under > 50 && count(r, SolvePath::Exact) == under && count(r, SolvePath::Gram) == 400 - under - count(r, SolvePath::Skipped);
       }},
      {"weights and a custom rcond keep the Gram path", [] { return with_weights(random_case(30, 6, 20, 20, 0.1, 0.0, 7), 8); },
       with([](SolveOptions& o) { o.rcond = 1e-5; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 350 && count(r, SolvePath::Exact) == 0; }},
      {"weights and a custom rcond keep the dual paths",
       [] { return with_weights(random_case(20, 40, 24, 24, 0.15, 0.0, 14), 15); }, with([](SolveOptions& o) { o.rcond = 1e-3; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Dual) >= 500 && count(r, SolvePath::Exact) == 0; }},
      // Weights spread over twenty decades: W^1/2 A_V loses singular values
      // at rcond 1e-3 that A_V keeps. The dual paths cannot vouch for such
      // pixels (the spread bounds what the weights do); gelsd decides them.
      {"a custom rcond sends widely weighted pixels to the exact path",
       [] {
         Case c = random_case(20, 40, 12, 12, 0.15, 0.0, 14);
         c.wt.assign(c.y.size(), 1.0);
         for (std::size_t i = 0; i < 20; ++i)
           for (std::size_t p = 0; p < 144; ++p) c.wt[i * 144 + p] = p % 2 ? 1.0 : std::pow(10.0, static_cast<double>(i % 5) * 5 - 10);
         return c;
       },
       with([](SolveOptions& o) { o.rcond = 1e-3; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Exact) >= 60 && count(r, SolvePath::Dual) >= 60; }},
      {"weights, a custom rcond and a sparse design keep the band Gram path",
       [] { return with_weights(sparse_network_case(0.1, 19), 20); }, with([](SolveOptions& o) { o.rcond = 1e-5; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 200; }},
      {"weights on a sparse design, with residuals", [] { return with_weights(sparse_network_case(0.1, 19), 20); },
       with([](SolveOptions& o) { o.residuals = true; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 200; }},
      {"ridge on a sparse design, with residuals", [] { return with_weights(sparse_network_case(0.1, 19), 20); },
       with([](SolveOptions& o) { o.ridge = 0.5, o.residuals = true; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 200; }},
      // Rows (1, -2) along the diagonal, cond(A) about 2e7: the band Gram
      // path's first answer is about 1e-9 off, its refinement step mends it.
      {"band Gram refined", [] { return chain_case(24, -2.0); }, with([](SolveOptions& o) { o.device = Device::Cpu; }),
       [](const SolveResult& r, const Case&) { return count(r, SolvePath::Gram) >= 120; }},
      // A banded network split three ways: the band Gram path ties each free
      // component down and takes the null vectors' part out, for gelsd's
      // minimum norm.
      {"split band network", [] { return split_band_network_case(); },
       with([](SolveOptions& o) { o.device = Device::Cpu, o.residuals = true; }), tied_down(72, kSplitBandPixels)},
      {"split band network, weighted", [] { return with_weights(split_band_network_case(), 26); }, on_cpu(),
       tied_down(72, kSplitBandPixels)},
      {"split band network, velocity", [] { return split_band_network_case(true); }, on_cpu(), tied_down(72, kSplitBandPixels)},
      {"split band network, velocity, weighted", [] { return with_weights(split_band_network_case(true), 27); }, on_cpu(),
       tied_down(72, kSplitBandPixels)},
      {"network two thirds missing", [] { return sparse_band_network_case(false); }, on_cpu(), tied_down(200, 128)},
      {"network two thirds missing, velocity", [] { return sparse_band_network_case(true); }, on_cpu(), tied_down(200, 128)},
      // A split InSAR network: rank(A_V) = M - 1 in the block, where the
      // deletion path must not be trusted.
      {"split network", [] { return split_network_case(); }, {},
       [](const SolveResult& r, const Case&) {
         return count(r, SolvePath::Deletion) >= 200 &&
                count(r, SolvePath::Exact) + count(r, SolvePath::Group) >= kSplitBlock && r.rank.data<std::int32_t>()[0] == 12 &&
                static_cast<PixelStatus>(r.status.data<std::uint8_t>()[0]) == PixelStatus::MinNorm;
       }},
  };
  return cases;
}

/// Cases without weights or ridge: overdetermined designs then take the rows
/// kernel (x0 = P·y~ first, each deletion corrects it); every kind of pixel
/// must still match.
struct RowsCase {
  const char* name;
  std::function<Case()> make;
  std::size_t memory;
};

const std::vector<RowsCase>& rows_cases() {
  auto random_with_empty = [](std::size_t n, std::size_t m, double missing) {
    Case c = random_case(n, m, 30, 27, missing, 0.0, 31);
    for (std::size_t i = 0; i < c.n; ++i) c.y[i * 810 + 7] = kNaN;  // one pixel with no data
    return c;
  };
  // Every `every`-th pixel's values lie on A x (scaled up): its rss is
  // rounding, far below what |y~|^2 - |A x0|^2 - z·b can resolve.
  auto fitted = [=](std::size_t every) {
    Case c = random_with_empty(40, 10, 0.15);
    const std::size_t P = c.h * c.w;
    Rng rng(5);
    std::vector<double> x(c.m);
    for (std::size_t p = 0; p < P; p += every) {
      for (double& v : x) v = 1e4 * rng.normal();
      for (std::size_t i = 0; i < c.n; ++i)
        if (!std::isnan(c.y[i * P + p])) c.y[i * P + p] = std::inner_product(x.begin(), x.end(), c.a.begin() + i * c.m, 0.0);
    }
    return c;
  };
  static const std::vector<RowsCase> cases = {
      {"exact fits among others: rss row by row", [=] { return fitted(8); }, 256 << 20},
      {"exact fits only: rss from A x", [=] { return fitted(1); }, 256 << 20},
      {"deletion", [=] { return random_with_empty(40, 10, 0.15); }, 256 << 20},
      {"many missing: dual, gram, exact too", [=] { return random_with_empty(30, 20, 0.45); }, 256 << 20},
      {"no data and full pixels", [=] { return random_with_empty(12, 3, 0.05); }, 256 << 20},
      {"tiny chunks", [=] { return random_with_empty(40, 10, 0.2); }, 64 << 10},
      {"split network", [] { return split_network_case(); }, 256 << 20},
      {"sparse design", [] { return sparse_network_case(0.15, 21); }, 256 << 20},
      {"float32 factor: deletions of 64 rows and more", [=] { return random_with_empty(240, 120, 0.3); }, 256 << 20},
  };
  return cases;
}

/// Pixel k of a chunk's workspace against gelsd (or the ridge solution).
double pixel_error(const Case& c, const detail::Workspace& ws, std::size_t k, double ridge) {
  const std::size_t P = c.h * c.w;
  std::vector<double> y(c.n), w(c.n), x(ws.x.begin() + static_cast<std::ptrdiff_t>(k * c.m),
                                       ws.x.begin() + static_cast<std::ptrdiff_t>((k + 1) * c.m));
  for (std::size_t i = 0; i < c.n; ++i) {
    y[i] = c.y[i * P + k];
    if (!c.wt.empty()) w[i] = c.wt[i * P + k];
  }
  const double* wp = c.wt.empty() ? nullptr : w.data();
  return ridge > 0 ? rel_error(x, testing::ridge(c.a, c.n, c.m, y.data(), wp, ridge)) : rel_error(x, lstsq(c.a, c.n, c.m, y.data(), wp).x);
}

}  // namespace

class TestPaths : public QObject {
  Q_OBJECT
private slots:
  void pathMatchesGelsd_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < solve_cases().size(); ++i) QTest::newRow(solve_cases()[i].name) << static_cast<int>(i);
  }
  void pathMatchesGelsd() {
    QFETCH(int, index);
    const SolveCase& sc = solve_cases()[static_cast<std::size_t>(index)];
    const Case c = sc.make();
    const SolveResult r = run(c, sc.options);
    QVERIFY2(sc.took(r, c), qPrintable(describe(r)));
    QVERIFY(max_error(c, r, sc.options) <= 1e-9);
  }

  void rowsKernelMatchesGelsd_data() {
    QTest::addColumn<int>("index");
    for (std::size_t i = 0; i < rows_cases().size(); ++i) QTest::newRow(rows_cases()[i].name) << static_cast<int>(i);
  }
  void rowsKernelMatchesGelsd() {
    QFETCH(int, index);
    const RowsCase& rc = rows_cases()[static_cast<std::size_t>(index)];
    const Case c = rc.make();
    for (const bool residuals : {false, true}) {  // with residuals, rss comes from the chunk's observation-major copy
      SolveOptions o;
      o.residuals = residuals;
      o.memory = rc.memory;
      const SolveResult r = run(c, o);
      QVERIFY2(count(r, SolvePath::Deletion) > 0, qPrintable(describe(r)));
      QVERIFY(max_error(c, r, o) <= 1e-9);
    }
  }

  // As chain_case, cond(A) about 3^28: only the band Gram path's refinement
  // step (about 1e-5 of x here) shows how far its answer is off, too far
  // for one step to mend. Those pixels go to the exact path.
  void bandGramStepSendsIllConditionedPixelsToExact() {
    const Case c = chain_case(28, -3.0);
    SolveOptions o;
    o.device = Device::Cpu;
    const SolveResult r = run(c, o);
    QVERIFY2(count(r, SolvePath::Gram) == 0 && count(r, SolvePath::Exact) >= 120, qPrintable(describe(r)));
    QCOMPARE(r.count(PixelStatus::Ok), std::size_t{144});
  }

  void sparseDesignsAreMarked() {
    const Case sparse = sparse_network_case(0, 22), dense = random_case(84, 29, 1, 1, 0, 0, 23);
    QVERIFY(detail::factor_design(sparse.a, sparse.n, sparse.m).sparse_rows);
    QVERIFY(!detail::factor_design(dense.a, dense.n, dense.m).sparse_rows);
  }

  // Phase rows (-1, 1) or (1), velocity rows (the intervals between two
  // dates): a network, whose split pixels the Gram path ties down.
  void networkDesignsAreMarked() {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    const Case sbas = sbas_case(41, 3, 1, pairs), scaled = sparse_network_case(0, 22), dense = random_case(84, 29, 1, 1, 0, 0, 23);
    const auto phase = detail::factor_design(sbas.a, sbas.n, sbas.m);
    QVERIFY(phase.network() && phase.null_from[5] == 0);
    QCOMPARE(phase.link_from[0], 0);  // the pair (0, 1): one unknown
    QCOMPARE(phase.link_to[0], 1);
    Case velocity = split_band_network_case(true);
    const auto v = detail::factor_design(velocity.a, velocity.n, velocity.m);
    QVERIFY(v.network() && v.null_from[5] > 0);
    QCOMPARE(v.link_from[2], 0);  // the pair (0, 3): three intervals
    QCOMPARE(v.link_to[2], 3);
    velocity.a[2 * velocity.m + 1] *= 1.5;  // unknown 1's interval differs between rows
    QVERIFY(!detail::factor_design(velocity.a, velocity.n, velocity.m).network());
    QVERIFY(!detail::factor_design(scaled.a, scaled.n, scaled.m).network());  // rows (a, -b), a != b
    QVERIFY(!detail::factor_design(dense.a, dense.n, dense.m).network());
  }

  // Each path's function on its own: a chunk of 64 pixels gathered into a
  // workspace, every pixel the path can take sent to it by hand, the path
  // run, and its x compared with gelsd. Pixels a path hands to the exact
  // path (a failed pivot) are not counted as its own.
  void pathOnItsOwn_data() {
    QTest::addColumn<int>("kind");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<double>("ridge");
    QTest::newRow("deletion") << int(Kind::Deletion) << 40 << 10 << 0.15 << false << 0.0;
    QTest::newRow("deletion (float32 factor)") << int(Kind::Deletion) << 200 << 16 << 0.4 << false << 0.0;
    QTest::newRow("dual (Schur)") << int(Kind::DualSchur) << 20 << 40 << 0.1 << false << 0.0;
    QTest::newRow("dual (gathered)") << int(Kind::DualGather) << 20 << 40 << 0.6 << false << 0.0;
    QTest::newRow("gram (weights)") << int(Kind::Gram) << 30 << 6 << 0.1 << true << 0.0;
    QTest::newRow("gram (ridge)") << int(Kind::Gram) << 12 << 8 << 0.3 << false << 0.5;
    QTest::newRow("gram (weights, SYRK)") << int(Kind::Gram) << 420 << 200 << 0.1 << true << 0.0;
    QTest::newRow("dual (Schur, weights)") << int(Kind::DualSchur) << 20 << 40 << 0.1 << true << 0.0;
    QTest::newRow("dual (gathered, weights)") << int(Kind::DualGather) << 20 << 40 << 0.6 << true << 0.0;
    QTest::newRow("exact") << int(Kind::Exact) << 20 << 30 << 0.2 << true << 0.0;
  }
  void pathOnItsOwn() {
    QFETCH(int, kind);
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    QFETCH(bool, weighted);
    QFETCH(double, ridge);
    const std::size_t N = static_cast<std::size_t>(n), M = static_cast<std::size_t>(m), B = 64;
    Case c = random_case(N, M, 8, 8, missing, 0.0, 40 + static_cast<std::uint64_t>(kind));
    if (weighted) c = with_weights(c, 41);
    const Array cube = make_cube(DType::Float64, c.n, c.h, c.w, c.y);
    const Array wt = weighted ? make_cube(DType::Float64, c.n, c.h, c.w, c.wt) : Array();
    const Design design(design_of(c));
    SolveOptions o;
    o.ridge = ridge;
    const detail::Planner planner = detail::make_planner(design, weighted, o);
    SolveResult r = detail::allocate_result(cube, design, o);
    detail::Job job(cube, design, weighted ? &wt : nullptr, o, planner, r);
    detail::Workspace ws(design, N, ridge > 0, tuning());
    ws.reset(N, M, B, weighted);
    detail::gather(job, ws, 0, B);
    ws.buckets.assign(detail::kMaxSmall + 1, {});
    const Kind k_path = static_cast<Kind>(kind);
    std::vector<std::size_t> mine;
    for (std::size_t k = 0; k < B; ++k) {
      std::size_t nv = 0;
      for (std::size_t i = 0; i < N; ++i) nv += ws.valid[k * N + i];
      ws.nv[k] = static_cast<int>(nv);
      const bool fits = k_path == Kind::Deletion    ? nv >= M && nv < N
                        : k_path == Kind::DualSchur ? nv < N && N - nv <= nv
                        : k_path == Kind::DualGather ? nv > 0 && nv <= M
                        : k_path == Kind::Gram       ? nv >= M || ridge > 0
                                                     : nv > 0;
      if (!fits) continue;
      ws.kind[k] = k_path;
      mine.push_back(k);
      if (k_path == Kind::Gram) ws.gram.push_back(k);
      else if (k_path == Kind::Exact) ws.exact_list.push_back(k);
      else ws.buckets[k_path == Kind::DualGather ? nv : N - nv].push_back(k);
    }
    QVERIFY2(mine.size() >= 32, qPrintable(QString::number(mine.size())));
    if (k_path == Kind::Gram) detail::solve_gram(job, ws);
    else if (k_path == Kind::Exact) detail::solve_exact(job, ws, 0);
    else detail::solve_systems(job, ws);
    if (k_path == Kind::Deletion || k_path == Kind::DualSchur) detail::solve_product(job, ws, B);
    const std::set<std::size_t> handed_on(ws.exact_list.begin(), ws.exact_list.end());
    std::size_t own = 0;
    double worst = 0;
    for (std::size_t k : mine) {
      if (k_path != Kind::Exact && handed_on.count(k)) continue;
      ++own;
      worst = std::max(worst, pixel_error(c, ws, k, ridge));
    }
    QVERIFY2(own >= mine.size() * 3 / 4, qPrintable(QString("%1 of %2").arg(own).arg(mine.size())));
    QVERIFY2(worst <= 1e-9, qPrintable(QString::number(worst)));
  }

  // The sample that decides whether masks are grouped at all: the whole of a
  // small cube, runs of neighbours in a large one; every word of a mask of
  // more than 64 observations, in float32 and float64 cubes alike; only
  // masks whose groups would pay count.
  void masksRepeatSeesWholeMasks() {
    for (const std::size_t size : {40, 100}) {  // 1600 pixels, and 10000 (runs)
      const std::size_t n = 130, P = size * size;
      Case distinct = random_case(n, 4, size, size, 0.0, 0.0, 40), shared = distinct;
      Rng rng(41);
      for (std::size_t i = 64; i < n; ++i)  // pixels differ only after the first word
        for (std::size_t p = 0; p < P; ++p)
          if (rng.uniform() < 0.3) distinct.y[i * P + p] = kNaN;
      for (std::size_t i = 0; i < n; ++i)  // one of three masks, by rows of the image
        for (std::size_t p = 0; p < P; ++p)
          if ((i + p / size) % 3 == 0 && i % 7 == 0) shared.y[i * P + p] = kNaN;
      const Design design(design_of(shared));
      const detail::Planner planner = detail::make_planner(design, false, {});
      for (const DType t : {DType::Float32, DType::Float64}) {
        QVERIFY(!detail::masks_repeat(make_cube(t, n, size, size, distinct.y), planner, false, 2));
        QVERIFY(detail::masks_repeat(make_cube(t, n, size, size, shared.y), planner, false, 2));
      }
    }
    // Clouds (as in the solve case "mask groups"): in the whole of a 64 x 64
    // cube, and in the runs of a 128 x 128 one.
    for (const std::size_t size : {64, 128}) {
      const Case blobs = blob_case(30, 6, size, 2, 22.0 * static_cast<double>(size) / 64, 5);
      const Design design(design_of(blobs));
      const detail::Planner planner = detail::make_planner(design, false, {});
      QVERIFY(detail::masks_repeat(make_cube(DType::Float32, 30, size, size, blobs.y), planner, false, 1));
    }
  }

  // Masks that repeat but would not pay as groups (full masks, and masks of
  // one or two missing rows whose own paths cost little) do not make the
  // solve read the whole cube for groups: N=50, M=100 with 10 % missing.
  void cheapRepeatsSkipGrouping() {
    const Case c = random_case(50, 100, 100, 100, 0.1, 0.0, 42);
    const Design design(design_of(c));
    const detail::Planner planner = detail::make_planner(design, false, {});
    const Array cube = make_cube(DType::Float32, c.n, c.h, c.w, c.y);
    QVERIFY(!detail::masks_repeat(cube, planner, false, 2));
    // Every fourth row of pixels with the same mask (its first 25 observations
    // missing): 2,500 pixels whose own paths (systems of 25 rows) cost more
    // than one SVD shared among them.
    Case d = c;
    for (std::size_t i = 0; i < c.n; ++i)
      for (std::size_t p = 0; p < c.h * c.w; ++p)
        if ((p / c.w) % 4 == 0) d.y[i * c.h * c.w + p] = i < 25 ? kNaN : 1.0;
    QVERIFY(detail::masks_repeat(make_cube(DType::Float32, d.n, d.h, d.w, d.y), planner, false, 2));
  }

  // The CPU's chunks: an exact-only solve of a few pixels (the device's
  // self-check, bench's and verify's samples: milliseconds a pixel at InSAR
  // size) spreads them over every thread; large cubes keep chunks that fill
  // a core's cache.
  void chunksSpreadOverThreads() {
    const std::size_t GiB = std::size_t{1} << 30;
    for (const std::size_t threads : {2, 16}) {
      for (const std::size_t P : {2, 8, 32, 100}) {
        const std::size_t chunk = detail::cpu_chunk(P, 1231, 270, threads, 4 * GiB, true, Tuning{}.chunk_bytes);
        QVERIFY(chunk >= 1);
        QVERIFY((P + chunk - 1) / chunk >= std::min(P, threads));  // a chunk for every thread that can have one
      }
      QCOMPARE(detail::cpu_chunk(400000, 1231, 270, threads, 4 * GiB, true, Tuning{}.chunk_bytes), std::size_t{64});
      const std::size_t fast = detail::cpu_chunk(250000, 50, 100, threads, 4 * GiB, false, Tuning{}.chunk_bytes);
      QVERIFY(fast >= 64 && fast <= 2048);
      QCOMPARE(detail::cpu_chunk(32, 50, 100, threads, 4 * GiB, false, Tuning{}.chunk_bytes), std::size_t{64});  // whole lanes of pixels
    }
  }

  void randomMasksSkipGrouping() {
    const Case c = random_case(30, 6, 64, 64, 0.3, 0.0, 6);
    const SolveResult r = run(c, {});
    QCOMPARE(count(r, SolvePath::Group), std::size_t{0});
  }

  // Weights are read in their own type: integer weights (0 drops a value)
  // and float32 ones give the float64 weights' answer, on a chunk whose
  // rows and pixels do not come in fours (the values outside whole blocks).
  void weightsOfEveryTypeAgree() {
    Case c = random_case(31, 6, 9, 11, 0.1, 0.0, 29);
    Rng rng(30);
    c.wt.resize(c.y.size());
    for (double& v : c.wt) v = static_cast<double>(static_cast<int>(rng.uniform() * 4));  // 0..3
    SolveOptions o;
    o.residuals = true;
    const SolveResult ref = run(c, o);
    QVERIFY(max_error(c, ref, o) <= 1e-9);
    const Array cube = make_cube(DType::Float64, c.n, c.h, c.w, c.y);
    const Design design(design_of(c));
    for (const DType t : {DType::Float32, DType::Int32, DType::UInt8}) {
      Array wt(t, {c.n, c.h, c.w});
      for (std::size_t i = 0; i < wt.size(); ++i) {
        if (t == DType::Float32) wt.data<float>()[i] = static_cast<float>(c.wt[i]);
        else if (t == DType::Int32) wt.data<std::int32_t>()[i] = static_cast<std::int32_t>(c.wt[i]);
        else wt.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(c.wt[i]);
      }
      const SolveResult r = solve(cube, design, &wt, o);
      for (std::size_t i = 0; i < r.x.size(); ++i) {
        const double u = ref.x.value(i), v = r.x.value(i);
        QVERIFY2(u == v || (std::isnan(u) && std::isnan(v)), dtype_name(t));
      }
      for (std::size_t p = 0; p < c.h * c.w; ++p) QCOMPARE(r.n_valid.data<std::int32_t>()[p], ref.n_valid.data<std::int32_t>()[p]);
    }
  }

  void smallMemoryAndThreadsAgree() {
    const Case c = blob_case(40, 12, 48, 3, 12.0, 12);
    SolveOptions a, b;
    a.threads = 1;
    b.threads = 3;
    b.memory = 1 << 16;  // tiny chunks
    const SolveResult ra = run(c, a), rb = run(c, b);
    for (std::size_t i = 0; i < ra.x.size(); ++i) {
      const double u = ra.x.value(i), v = rb.x.value(i);
      QVERIFY(std::isnan(u) == std::isnan(v));
      if (!std::isnan(u)) QVERIFY(std::fabs(u - v) <= 1e-12 * std::max(1.0, std::fabs(v)));
    }
    QCOMPARE(ra.paths, rb.paths);
  }

  // A deletion that breaks the rank (a bridge of the network among the
  // missing rows: I - H_II singular, its entries of the order of eps for a
  // bridge alone) must leave its path, in each kernel that factors deletion
  // systems (the rows kernel from the packed H, the general one, and the
  // float32 factorization of systems of 64 rows and more) and each output
  // precision, with gelsd's rank and status; deletions that keep the rank
  // stay on it.
  void bridgesLeaveTheDeletion_data() {
    QTest::addColumn<bool>("rows_kernel");
    QTest::addColumn<bool>("float32");
    for (const bool rows : {true, false})
      for (const bool f32 : {false, true})
        QTest::newRow(qPrintable(QString("%1 kernel, %2").arg(rows ? "rows" : "general", f32 ? "float32" : "float64")))
            << rows << f32;
  }
  void bridgesLeaveTheDeletion() {
    QFETCH(bool, rows_kernel);
    QFETCH(bool, float32);
    detail::Steering steer;
    steer.prefer = Kind::Deletion;
    steer.rows_kernel = rows_kernel;
    SolveOptions o;
    o.device = Device::Cpu;
    o.output = float32 ? DType::Float32 : DType::Float64;
    const double tol = float32 ? 1e-6 : 1e-9;
    {  // the report's pixel
      const Case c = bridge_report_case();
      const SolveResult r = detail::solve_steered(make_cube(DType::Float64, c.n, 1, 1, c.y), Design(design_of(c)), nullptr, o, steer);
      QCOMPARE(r.rank.data<std::int32_t>()[0], 4);
      QCOMPARE(static_cast<PixelStatus>(r.status.data<std::uint8_t>()[0]), PixelStatus::MinNorm);
      const double want[] = {-1.95, -0.95, -0.575, 1.175, 2.3};
      for (std::size_t j = 0; j < 5; ++j) QVERIFY(std::fabs(r.x.value(j) - want[j]) <= 1e-6);
      QVERIFY(max_error(c, r, o) <= tol);
    }
    const Case c = bridged_network_case();
    {  // rounding leaves some bridge's 1 - h_ii above 0: a tiny pivot, not a negative one, to catch
      const std::vector<double> d = deletion_pivots(c.a, c.n, c.m);
      QVERIFY(std::any_of(d.begin(), d.begin() + kBridges, [](double v) { return v > 0; }));
    }
    const SolveResult r = detail::solve_steered(make_cube(DType::Float64, c.n, c.h, c.w, c.y), Design(design_of(c)), nullptr, o, steer);
    // Only the pixels that keep the bridge (16, most of which keep the rank) may stay.
    QVERIFY2(count(r, SolvePath::Deletion) >= 12 && count(r, SolvePath::Deletion) <= 16, qPrintable(describe(r)));
    QVERIFY2(r.count(PixelStatus::MinNorm) >= 48, qPrintable(QString::number(r.count(PixelStatus::MinNorm))));
    QVERIFY(max_error(c, r, o) <= tol);
  }

  // An SBAS network on the CPU: the band form of the Gram path, unweighted,
  // for every pixel with data, the split field's too (of minimum norm, with
  // the rank gelsd finds).
  void demoInsarTakesBandGramAndMatches() {
    const DemoCube d = make_demo("insar", 200);
    const Design design(d.design);
    SolveOptions o;
    o.device = Device::Cpu;
    const SolveResult r = solve(d.cube, design, nullptr, o);
    QVERIFY2(count(r, SolvePath::Gram) > 30000 && count(r, SolvePath::Exact) == 0 && r.count(PixelStatus::MinNorm) > 1900,
             qPrintable(describe(r)));
    // Every pixel against the exact path: float32 X within 1e-6.
    std::vector<std::size_t> all(r.status.size());
    for (std::size_t p = 0; p < all.size(); ++p) all[p] = p;
    const SampleCheck check = check_pixels(d.cube, design, nullptr, r.x, all);
    for (std::size_t p = 0; p < all.size(); ++p) QCOMPARE(r.status.data<std::uint8_t>()[p], std::uint8_t(check.pixels[p].reference));
    const CheckSummary s = summarize(check.pixels, 1e-6, 1e300);
    QCOMPARE(s.nan_mismatches, std::size_t{0});
    QVERIFY2(s.max_error <= 1e-6, qPrintable(QString::number(s.max_error)));
  }
};

QTEST_GUILESS_MAIN(TestPaths)
#include "tst_paths.moc"
