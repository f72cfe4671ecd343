// Standard errors against a reference computed here from per-pixel gelsd:
// the pseudo-inverse of the pixel's weighted rows column by column (the
// minimum-norm solutions for unit vectors), so that its covariance
// A_w^+ A_w^+T, its rank and its rss come from the same rule as the solve.
#include "cases.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include <QtTest>

#include <cmath>

using namespace cubesolve;
using namespace testing;

namespace {

/// One pixel's reference: the covariance C (M, M, without s²), the degrees
/// of freedom it leaves and s².
struct Covariance {
  std::vector<double> c;
  double dof = 0, s2 = kNaN;
  int nvalid = 0, rank = 0;
};

Covariance reference_covariance(const Case& k, std::size_t p, double ridge) {
  const std::size_t P = k.h * k.w, M = k.m;
  std::vector<double> y(k.n), w(k.n, 1.0), unit(k.n, 0.0);
  for (std::size_t i = 0; i < k.n; ++i) {
    y[i] = k.y[i * P + p];
    if (!k.wt.empty()) w[i] = k.wt[i * P + p];
  }
  Covariance out;
  out.c.assign(M * M, 0.0);
  const Reference fit = ridge > 0 ? lstsq(k.a, k.n, M, y.data(), w.data(), -1, ridge) : lstsq(k.a, k.n, M, y.data(), w.data());
  const Reference own = lstsq(k.a, k.n, M, y.data(), w.data());  // the rank of the pixel's own rows
  out.nvalid = fit.nvalid;
  out.rank = own.rank;
  double trace = 0;
  for (std::size_t i = 0; i < k.n; ++i) {
    if (!std::isfinite(y[i]) || !(w[i] > 0)) continue;
    // x_i = (A^T W A + λ)^+ a_i w_i: the solution for the unit value at row i.
    std::vector<double> e(k.n, kNaN);
    for (std::size_t q = 0; q < k.n; ++q)
      if (std::isfinite(y[q]) && w[q] > 0) e[q] = q == i ? 1.0 : 0.0;
    const std::vector<double> x = ridge > 0 ? testing::ridge(k.a, k.n, M, e.data(), w.data(), ridge)
                                            : lstsq(k.a, k.n, M, e.data(), w.data()).x;
    for (std::size_t a = 0; a < M; ++a)
      for (std::size_t b = 0; b < M; ++b) out.c[a * M + b] += x[a] * x[b] / w[i];
    for (std::size_t j = 0; j < M; ++j) trace += k.a[i * M + j] * x[j];
  }
  out.dof = ridge > 0 ? static_cast<double>(fit.nvalid) - trace : static_cast<double>(fit.nvalid - own.rank);
  if (fit.nvalid > own.rank) out.s2 = fit.rss / out.dof;
  return out;
}

/// Every pixel's reference, computed once for the comparisons of a case.
std::vector<Covariance> references(const Case& k, double ridge) {
  std::vector<Covariance> out;
  for (std::size_t p = 0; p < k.h * k.w; ++p) out.push_back(reference_covariance(k, p, ridge));
  return out;
}

/// sqrt(s² diag(T C T^T)), T the cumulative sums with `intervals` (none: I).
std::vector<double> reference_errors(const Covariance& cov, std::size_t M, const std::vector<double>& intervals) {
  std::vector<double> t(M * M, 0.0), se(M, kNaN);
  for (std::size_t j = 0; j < M; ++j)
    for (std::size_t q = 0; q <= j; ++q)
      if (intervals.empty() ? q == j : true) t[j * M + q] = intervals.empty() ? 1.0 : intervals[q];
  for (std::size_t j = 0; j < M; ++j) {
    double v = 0;
    for (std::size_t a = 0; a < M; ++a)
      for (std::size_t b = 0; b < M; ++b) v += t[j * M + a] * cov.c[a * M + b] * t[j * M + b];
    se[j] = std::sqrt(cov.s2 * v);
  }
  return se;
}

/// The largest relative difference of r's standard errors from the
/// reference; fails the test where one is NaN and the other not.
double worst_error(const Case& k, const SolveResult& r, const Array& se, const std::vector<Covariance>& refs,
                   const std::vector<double>& intervals = {}) {
  const std::size_t P = k.h * k.w;
  double worst = 0;
  for (std::size_t p = 0; p < P; ++p) {
    const auto st = static_cast<PixelStatus>(r.status.data<std::uint8_t>()[p]);
    const Covariance& cov = refs[p];
    const bool none = (st != PixelStatus::Ok && st != PixelStatus::MinNorm) || !(cov.nvalid > cov.rank);
    const std::vector<double> ref = reference_errors(cov, k.m, intervals);
    // Relative to the pixel's largest: an unknown its rows do not reach
    // (min-norm) has an error of 0 up to rounding.
    const double scale = none ? 0.0 : *std::max_element(ref.begin(), ref.end());
    for (std::size_t j = 0; j < k.m; ++j) {
      const double v = se.value(j * P + p);
      if (none) {
        if (!std::isnan(v)) return HUGE_VAL;
        continue;
      }
      if (!std::isfinite(v)) return HUGE_VAL;
      worst = std::max(worst, std::fabs(v - ref[j]) / (ref[j] + 1e-3 * scale));
    }
  }
  return worst;
}

/// The same for r's packed covariances (each relative to the pixel's largest
/// variance), against s² C.
double worst_covariance(const Case& k, const SolveResult& r, const Array& covariance, const std::vector<Covariance>& refs) {
  const std::size_t P = k.h * k.w, M = k.m;
  double worst = 0;
  for (std::size_t p = 0; p < P; ++p) {
    const Covariance& cov = refs[p];
    const bool none = std::isnan(r.std_error.value(p));
    double scale = 0;
    for (std::size_t j = 0; j < M; ++j) scale = std::max(scale, cov.s2 * cov.c[j * M + j]);
    for (std::size_t i = 0, at = 0; i < M; ++i)
      for (std::size_t j = i; j < M; ++j, ++at) {
        const double v = covariance.value(at * P + p);
        if (none != std::isnan(v)) return HUGE_VAL;
        if (!none) worst = std::max(worst, std::fabs(v - cov.s2 * cov.c[i * M + j]) / scale);
      }
  }
  return worst;
}

}  // namespace

class TestUncertainty : public QObject {
  Q_OBJECT
private slots:
  void matchesReference_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<double>("ridge");
    QTest::addColumn<QString>("design");
    QTest::addColumn<bool>("float32");
    QTest::newRow("few missing (deletion form)") << 40 << 4 << 0.1 << false << 0.0 << "gaussian" << false;
    // four pixels at a time in vector lanes, their columns in one pass up to 52
    QTest::newRow("deletion form, 11 unknowns") << 60 << 11 << 0.15 << false << 0.0 << "gaussian" << false;
    QTest::newRow("deletion form, 17 unknowns") << 80 << 17 << 0.1 << false << 0.0 << "gaussian" << true;
    QTest::newRow("deletion form, 53 unknowns (two passes)") << 58 << 53 << 0.04 << false << 0.0 << "gaussian" << false;
    QTest::newRow("many missing (SVD)") << 30 << 5 << 0.5 << false << 0.0 << "gaussian" << false;
    QTest::newRow("weights") << 30 << 5 << 0.2 << true << 0.0 << "gaussian" << false;
    QTest::newRow("rank-deficient design (min-norm)") << 30 << 5 << 0.2 << false << 0.0 << "deficient" << false;
    QTest::newRow("ridge (the ridge estimator's)") << 20 << 6 << 0.3 << true << 0.7 << "gaussian" << false;
    QTest::newRow("float32 cube") << 40 << 4 << 0.2 << false << 0.0 << "gaussian" << true;
    QTest::newRow("underdetermined pixels") << 8 << 6 << 0.25 << false << 0.0 << "gaussian" << false;
    // 3 neighbours a date: a band of 3; gaps split some pixels' networks.
    QTest::newRow("SBAS network (band form)") << 0 << 40 << 0.15 << false << 0.0 << "sbas" << false;
    QTest::newRow("SBAS network, weights") << 0 << 40 << 0.3 << true << 0.0 << "sbas" << false;
    // more rows missing than valid: most networks split
    QTest::newRow("SBAS network, most rows missing") << 0 << 40 << 0.52 << false << 0.0 << "sbas" << false;
    // MintPy's velocity formulation: a pair's row holds the intervals it spans
    QTest::newRow("SBAS network, velocities") << 0 << 40 << 0.3 << true << 0.0 << "velocity" << false;
  }
  void matchesReference() {
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    QFETCH(bool, weighted);
    QFETCH(double, ridge);
    QFETCH(QString, design);
    QFETCH(bool, float32);
    std::vector<double> sbas;  // dates 0..m, date 0 the reference; pair (d, d + 1..3)
    for (int d = 0; d < m; ++d)
      for (int e = d + 1; e <= std::min(m, d + 3); ++e) {
        std::vector<double> row(static_cast<std::size_t>(m), 0.0);
        if (design == "velocity")  // unknown j: the velocity over dates j to j + 1, 6 to 23 days apart
          for (int j = d; j < e; ++j) row[static_cast<std::size_t>(j)] = 6 + (j * 7) % 18;
        else {
          if (d > 0) row[static_cast<std::size_t>(d - 1)] = -1;
          row[static_cast<std::size_t>(e - 1)] = 1;
        }
        sbas.insert(sbas.end(), row.begin(), row.end());
      }
    const bool network = design == "sbas" || design == "velocity";
    if (network) n = static_cast<int>(sbas.size()) / m;
    Case k = random_case(static_cast<std::size_t>(n), static_cast<std::size_t>(m), 9, 11, missing, 0.0, 3);
    if (network) k.a = sbas;
    if (design == "deficient")  // the last column the sum of the first two
      for (std::size_t i = 0; i < k.n; ++i) k.a[i * k.m + k.m - 1] = k.a[i * k.m] + k.a[i * k.m + 1];
    Rng rng(5);
    if (weighted) {
      k.wt.resize(k.y.size());
      for (double& v : k.wt) v = rng.uniform() < 0.1 ? 0.0 : 0.2 + 2 * rng.uniform();
    }
    if (float32)  // the reference sees the values the engine sees
      for (double& v : k.y) v = static_cast<double>(static_cast<float>(v));
    const Array cube = make_cube(float32 ? DType::Float32 : DType::Float64, k.n, k.h, k.w, k.y);
    const Array wts = k.wt.empty() ? Array() : make_cube(DType::Float64, k.n, k.h, k.w, k.wt);
    Array a(DType::Float64, {k.n, k.m});
    for (std::size_t i = 0; i < k.a.size(); ++i) a.set(i, k.a[i]);
    SolveOptions o;
    o.std_errors = true;
    o.ridge = ridge;
    o.output = DType::Float64;
    const Design matrix(a);
    const SolveResult r = solve(cube, matrix, k.wt.empty() ? nullptr : &wts, o);
    QCOMPARE(r.std_error.shape(), (Shape{k.m, k.h, k.w}));
    const std::vector<Covariance> refs = references(k, ridge);
    const double worst = worst_error(k, r, r.std_error, refs);
    QVERIFY2(worst <= 1e-9, qPrintable(QString("largest relative difference %1").arg(worst)));
    if (ridge == 0) {  // the whole matrix, packed (by the SVD, apart from the errors' paths)
      const Array cov = covariances(cube, matrix, k.wt.empty() ? nullptr : &wts, r, o);
      QCOMPARE(cov.shape(), (Shape{k.m * (k.m + 1) / 2, k.h, k.w}));
      const double off = worst_covariance(k, r, cov, refs);
      QVERIFY2(off <= 1e-9, qPrintable(QString("covariance: largest difference %1 of the largest variance").arg(off)));
      // asked for together, the errors are its diagonal's roots
      SolveOptions both = o;
      both.covariance = true;
      const SolveResult rb = solve(cube, matrix, k.wt.empty() ? nullptr : &wts, both);
      const Array roots = covariance_errors(rb.covariance, k.m);
      for (std::size_t i = 0; i < roots.size(); ++i)
        QVERIFY(roots.value(i) == rb.std_error.value(i) || (std::isnan(roots.value(i)) && std::isnan(rb.std_error.value(i))));
      QVERIFY(worst_error(k, rb, rb.std_error, refs) <= 1e-9);
    }
    std::size_t solved = r.count(PixelStatus::Ok) + r.count(PixelStatus::MinNorm), with = 0;
    for (std::size_t p = 0; p < k.h * k.w; ++p) with += std::isfinite(r.std_error.value(p));
    QCOMPARE(r.no_dof(), solved - with);
  }

  // A pixel with as many rows as unknowns fits them exactly: nothing is left
  // to estimate the noise, and its errors are NaN, not 0.
  void noDegreeOfFreedom() {
    Case k = random_case(6, 3, 1, 3, 0.0, 0.0, 8);
    for (std::size_t i = 3; i < 6; ++i) k.y[i * 3 + 1] = kNaN;  // pixel 1: 3 rows for 3 unknowns
    for (std::size_t i = 0; i < 6; ++i) k.y[i * 3 + 2] = kNaN;  // pixel 2: none
    Array a(DType::Float64, {k.n, k.m});
    for (std::size_t i = 0; i < k.a.size(); ++i) a.set(i, k.a[i]);
    SolveOptions o;
    o.std_errors = true;
    const SolveResult r = solve(make_cube(DType::Float64, 6, 1, 3, k.y), Design(a), nullptr, o);
    for (std::size_t j = 0; j < 3; ++j) {
      QVERIFY(std::isfinite(r.std_error.value(j * 3)) && r.std_error.value(j * 3) > 0);
      QVERIFY(std::isnan(r.std_error.value(j * 3 + 1)));
      QVERIFY(std::isnan(r.std_error.value(j * 3 + 2)));
    }
    QCOMPARE(r.status.data<std::uint8_t>()[1], static_cast<std::uint8_t>(PixelStatus::Ok));
    QCOMPARE(r.no_dof(), std::size_t{1});
    o.std_errors = false;
    QVERIFY(solve(make_cube(DType::Float64, 6, 1, 3, k.y), Design(a), nullptr, o).std_error.empty());
  }

  // The velocity formulation's x becomes a series of cumulative sums; its
  // errors are those of the series, from the full covariance.
  void seriesOfVelocities_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::newRow("5 unknowns") << 30 << 5;
    QTest::newRow("13 unknowns") << 60 << 13;
  }
  void seriesOfVelocities() {
    QFETCH(int, n);
    QFETCH(int, m);
    Case k = random_case(static_cast<std::size_t>(n), static_cast<std::size_t>(m), 4, 5, 0.2, 0.0, 11);
    std::vector<double> intervals;
    for (int j = 0; j < m; ++j) intervals.push_back(0.05 + 0.3 * ((j * 7) % 11) / 11.0);
    Array a(DType::Float64, {k.n, k.m});
    for (std::size_t i = 0; i < k.a.size(); ++i) a.set(i, k.a[i]);
    const Array cube = make_cube(DType::Float64, k.n, k.h, k.w, k.y);
    SolveOptions o;
    const Design design(a);
    const SolveResult r = solve(cube, design, nullptr, o);
    const Array se = standard_errors(cube, design, nullptr, r, o, intervals);
    const double worst = worst_error(k, r, se, references(k, 0.0), intervals);
    QVERIFY2(worst <= 1e-9, qPrintable(QString("largest relative difference %1").arg(worst)));
    QVERIFY_THROWS_EXCEPTION(InputError, standard_errors(cube, design, nullptr, r, o, {1.0, 2.0}));
    // the series' whole covariance: its diagonal those errors squared
    const Array cov = covariances(cube, design, nullptr, r, o, intervals);
    const std::size_t P = k.h * k.w;
    QCOMPARE(cov.shape(), (Shape{k.m * (k.m + 1) / 2, k.h, k.w}));
    for (std::size_t j = 0, at = 0; j < k.m; at += k.m - j, ++j)
      for (std::size_t p = 0; p < P; ++p) {
        const double e = se.value(j * P + p), c = cov.value(at * P + p);
        QVERIFY(std::isnan(e) ? std::isnan(c) : std::fabs(c - e * e) <= 1e-12 * e * e);
      }
  }
};

QTEST_APPLESS_MAIN(TestUncertainty)
#include "tst_uncertainty.moc"
