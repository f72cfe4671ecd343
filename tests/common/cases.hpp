#pragma once
// Engine test cases shared by the test programs: random problems and a
// pixel-by-pixel comparison with the gelsd reference.

#include "reference.hpp"

#include <cubesolve/engine/engine.hpp>

#include <QtTest>

#include <cmath>
#include <limits>
#include <utility>
#include <vector>

namespace testing {
using namespace cubesolve;


inline const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Case {
  std::size_t n = 0, m = 0, h = 0, w = 0;
  std::vector<double> a, y, wt;  // wt empty: no weights
};

// Random A (N, M) and cube values; `missing` of the values NaN, `inf` of them ±Inf.
inline Case random_case(std::size_t n, std::size_t m, std::size_t h, std::size_t w, double missing, double inf,
                 std::uint64_t seed) {
  Rng rng(seed);
  Case c{n, m, h, w, std::vector<double>(n * m), std::vector<double>(n * h * w), {}};
  for (auto& v : c.a) v = rng.normal();
  for (auto& v : c.y) {
    const double u = rng.uniform();
    v = u < missing ? kNaN : (u < missing + inf ? (rng.uniform() < 0.5 ? 1 : -1) * HUGE_VAL : rng.normal());
  }
  return c;
}

// Compares every pixel of `r` with the reference; `worst` gets the largest relative error.
inline void compare(const Case& c, const SolveResult& r, const SolveOptions& o, double& worst) {
  const std::size_t P = c.h * c.w;
  worst = 0;
  std::vector<double> y(c.n), w(c.n), x(c.m);
  for (std::size_t p = 0; p < P; ++p) {
    for (std::size_t i = 0; i < c.n; ++i) {
      y[i] = c.y[i * P + p];
      if (!c.wt.empty()) w[i] = c.wt[i * P + p];
    }
    for (std::size_t j = 0; j < c.m; ++j) x[j] = r.x.value(j * P + p);
    const auto ref = lstsq(c.a, c.n, c.m, y.data(), c.wt.empty() ? nullptr : w.data(), o.rcond);
    const auto status = static_cast<PixelStatus>(r.status.data<std::uint8_t>()[p]);
    QCOMPARE(r.n_valid.data<std::int32_t>()[p], ref.nvalid);
    if (ref.nvalid == 0 || ref.nvalid < o.min_valid) {
      QCOMPARE(status, ref.nvalid == 0 ? PixelStatus::NoData : PixelStatus::TooFew);
      for (double v : x) QVERIFY(std::isnan(v));
      continue;
    }
    if (o.ridge > 0) {  // gelsd on the pixel's rows stacked over sqrt(ridge) I, with its rcond
      const auto rr = lstsq(c.a, c.n, c.m, y.data(), c.wt.empty() ? nullptr : w.data(), o.rcond, o.ridge);
      worst = std::max(worst, rel_error(x, rr.x));
      QCOMPARE(status, PixelStatus::Ok);
      QCOMPARE(r.rank.data<std::int32_t>()[p], rr.rank);
      if (!o.residuals) continue;
      const double rss = r.rss.data<double>()[p];
      QVERIFY2(std::fabs(rss - rr.rss) <= 1e-8 * std::max(1.0, rr.rss), qPrintable(QString::number(rss)));
      continue;
    }
    QCOMPARE(r.rank.data<std::int32_t>()[p], ref.rank);
    QCOMPARE(status, static_cast<std::size_t>(ref.rank) == c.m ? PixelStatus::Ok : PixelStatus::MinNorm);
    worst = std::max(worst, rel_error(x, ref.x));
    if (!o.residuals) continue;  // rss is only computed on request
    const double rss = r.rss.data<double>()[p];
    QVERIFY2(std::fabs(rss - ref.rss) <= 1e-8 * std::max(1.0, ref.rss), qPrintable(QString::number(rss)));
  }
}

// The largest relative error against the reference, or +inf after a failed check.
inline double max_error(const Case& c, const SolveResult& r, const SolveOptions& o) {
  double worst = 0;
  compare(c, r, o, worst);
  return QTest::currentTestFailed() ? HUGE_VAL : worst;
}

inline SolveResult run(const Case& c, const SolveOptions& o, DType dtype = DType::Float64) {
  const Array cube = make_cube(dtype, c.n, c.h, c.w, c.y);
  Array a(DType::Float64, {c.n, c.m});
  std::copy(c.a.begin(), c.a.end(), a.data<double>());
  if (c.wt.empty()) return solve(cube, Design(a), nullptr, o);
  const Array wt = make_cube(DType::Float64, c.n, c.h, c.w, c.wt);
  return solve(cube, Design(a), &wt, o);
}


// A small-baseline network: D dates, pairs up to `span` apart, unknowns the
// dates after the first. Returns the pair list through `pairs`.
inline Case sbas_case(std::size_t dates, std::size_t span, std::size_t size, std::vector<std::pair<std::size_t, std::size_t>>& pairs) {
  pairs.clear();
  for (std::size_t i = 0; i < dates; ++i)
    for (std::size_t j = i + 1; j < dates && j - i <= span; ++j) pairs.emplace_back(i, j);
  const std::size_t N = pairs.size(), M = dates - 1;
  Case c = random_case(N, M, size, size, 0.05, 0.0, 77);
  std::fill(c.a.begin(), c.a.end(), 0.0);
  for (std::size_t k = 0; k < N; ++k) {
    c.a[k * M + pairs[k].second - 1] = 1.0;
    if (pairs[k].first > 0) c.a[k * M + pairs[k].first - 1] = -1.0;
  }
  return c;
}


/// An InSAR network (14 dates, pairs up to 3 dates apart, 20 x 20 pixels)
/// that a block of 10 x 8 pixels splits: they lose every interferogram
/// across the gap between dates 6 and 7, so rank(A_V) = M - 1 = 12 there.
/// With `others_full`, every other pixel has all its values.
constexpr std::size_t kSplitBlock = 80;
inline bool in_split_block(std::size_t p) { return p % 20 < 8 && p / 20 < 10; }
inline Case split_network_case(bool others_full = false) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  Case c = sbas_case(14, 3, 20, pairs);
  const std::size_t P = 400;
  for (std::size_t k = 0; k < pairs.size(); ++k)
    for (std::size_t p = 0; p < P; ++p) {
      const bool across = pairs[k].first <= 6 && pairs[k].second > 6;
      if (in_split_block(p) && across) c.y[k * P + p] = kNaN;
      else if (others_full && std::isnan(c.y[k * P + p])) c.y[k * P + p] = 0.5;
    }
  return c;
}

/// The network of the report that found rank-breaking deletions: dates
/// 0..5, pairs (0,2) (1,2) (2,4) (2,3) (3,5) (4,5); one pixel lacks (0,2),
/// the only row that ties date 0 to the rest (a bridge: h_ii = 1), so
/// rank(A_V) = 4 of 5.
inline Case bridge_report_case() {
  const std::vector<std::pair<std::size_t, std::size_t>> pairs = {{0, 2}, {1, 2}, {2, 4}, {2, 3}, {3, 5}, {4, 5}};
  Case c{6, 5, 1, 1, std::vector<double>(30, 0.0), {kNaN, 1, 2, 0.5, 3, 1}, {}};
  for (std::size_t k = 0; k < 6; ++k) {
    c.a[k * 5 + pairs[k].second - 1] = 1.0;
    if (pairs[k].first > 0) c.a[k * 5 + pairs[k].first - 1] = -1.0;
  }
  return c;
}

/// Rows of a network of 40 dates in three clusters (dates 1-13, 14-26,
/// 27-39, pairs up to 6 dates apart within each) tied together, and date 0
/// to the first, by one pair each: the bridges (0, 1), (13, 14) and
/// (26, 27), rows 0, 1 and 2 (N = 205, M = 39).
inline std::vector<std::pair<std::size_t, std::size_t>> bridged_pairs() {
  std::vector<std::pair<std::size_t, std::size_t>> pairs = {{0, 1}, {13, 14}, {26, 27}};
  for (std::size_t i = 1; i < 40; ++i)
    for (std::size_t j = i + 1; j < 40 && j - i <= 6 && (j - 1) / 13 == (i - 1) / 13; ++j) pairs.emplace_back(i, j);
  return pairs;
}
constexpr std::size_t kBridges = 3;

/// That network's values, y = A x + noise, 8 x 8 pixels; pixel p lacks
/// bridge p % 3 and, by p % 4: nothing else (a 1 x 1 deletion system
/// 1 - h_ii, zero but for rounding), two other rows, 69 other rows (a
/// system for the float32 factorization); or, where p % 4 is 3, 70 rows
/// but the bridges (a deletion that keeps the rank, mostly).
inline Case bridged_network_case() {
  const std::vector<std::pair<std::size_t, std::size_t>> pairs = bridged_pairs();
  const std::size_t N = pairs.size(), M = 39, P = 64;
  Case c = random_case(N, M, 8, 8, 0.0, 0.0, 91);
  std::fill(c.a.begin(), c.a.end(), 0.0);
  for (std::size_t k = 0; k < N; ++k) {
    c.a[k * M + pairs[k].second - 1] = 1.0;
    if (pairs[k].first > 0) c.a[k * M + pairs[k].first - 1] = -1.0;
  }
  Rng rng(92);
  std::vector<double> x(M);
  for (std::size_t p = 0; p < P; ++p) {
    for (double& v : x) v = rng.normal();
    for (std::size_t i = 0; i < N; ++i) {
      double v = 0.01 * rng.normal();
      for (std::size_t j = 0; j < M; ++j) v += c.a[i * M + j] * x[j];
      c.y[i * P + p] = v;
    }
    const std::size_t kind = p % 4, others = kind == 1 ? 2 : kind >= 2 ? 69 + (kind == 3) : 0;
    if (kind != 3) c.y[(p % kBridges) * P + p] = kNaN;
    for (std::size_t lost = 0; lost < others;) {
      const std::size_t i = kBridges + static_cast<std::size_t>(rng.uniform() * static_cast<double>(N - kBridges)) % (N - kBridges);
      if (!std::isnan(c.y[i * P + p])) c.y[i * P + p] = kNaN, ++lost;
    }
  }
  return c;
}

}  // namespace testing
