// The engine against per-pixel LAPACK gelsd computed here, on every kind of
// pixel the contract names.
#include "cases.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include <QtTest>

#include <cmath>
#include <limits>

using namespace cubesolve;
using namespace testing;


/// L1's optimality condition at x for B (n, m; row-major) and c: some u
/// with |u_i| <= 1, u_i = sign(f_i) where the residual f_i is not 0, has
/// B^T u = 0. Solves B_Z^T u_Z = -B_N^T sign(f_N) (Z the rows fitted
/// exactly, N the others) by gelsd; returns max |u_Z|, or +inf where that
/// system has no solution.
double l1_multipliers(const std::vector<double>& b, const std::vector<double>& c, std::size_t m, const std::vector<double>& x) {
  const std::size_t n = c.size();
  double scale = 0;
  for (double v : c) scale = std::max(scale, std::fabs(v));
  std::vector<double> bz, g(m, 0.0);  // B_Z^T (m, |Z|) row-major, and -B_N^T sign(f_N)
  std::vector<std::size_t> zero;
  for (std::size_t i = 0; i < n; ++i) {
    double f = -c[i];
    for (std::size_t j = 0; j < m; ++j) f += b[i * m + j] * x[j];
    if (std::fabs(f) <= 1e-9 * scale) zero.push_back(i);
    else
      for (std::size_t j = 0; j < m; ++j) g[j] -= (f > 0 ? 1 : -1) * b[i * m + j];
  }
  for (std::size_t j = 0; j < m; ++j)
    for (std::size_t i : zero) bz.push_back(b[i * m + j]);
  const Reference u = lstsq(bz, m, zero.size(), g.data(), nullptr);
  double most = 0, off = 0, size = 0;
  for (double v : u.x) most = std::max(most, std::fabs(v));
  for (std::size_t j = 0; j < m; ++j) {
    double s = -g[j];
    for (std::size_t k = 0; k < zero.size(); ++k) s += bz[j * zero.size() + k] * u.x[k];
    off = std::max(off, std::fabs(s));
    size = std::max(size, std::fabs(g[j]));
  }
  return off <= 1e-8 * (1 + size) ? most : HUGE_VAL;
}

class TestEngine : public QObject {
  Q_OBJECT
private slots:
  void matchesGelsd_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::addColumn<double>("inf");
    QTest::addColumn<int>("minValid");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<double>("ridge");
    QTest::newRow("overdetermined") << 20 << 5 << 0.2 << 0.0 << 1 << false << 0.0;
    QTest::newRow("seed shape N<M (min-norm)") << 25 << 50 << 0.2 << 0.0 << 1 << false << 0.0;
    QTest::newRow("exactly determined") << 6 << 6 << 0.0 << 0.0 << 1 << false << 0.0;
    QTest::newRow("mostly missing (all-NaN pixels)") << 4 << 2 << 0.7 << 0.0 << 1 << false << 0.0;
    QTest::newRow("Inf values") << 15 << 4 << 0.1 << 0.1 << 1 << false << 0.0;
    QTest::newRow("weights") << 18 << 6 << 0.15 << 0.0 << 1 << true << 0.0;
    QTest::newRow("ridge") << 12 << 8 << 0.3 << 0.0 << 1 << false << 0.5;
    QTest::newRow("weights and ridge, underdetermined") << 8 << 12 << 0.2 << 0.0 << 1 << true << 0.1;
    QTest::newRow("min_valid") << 10 << 3 << 0.5 << 0.0 << 6 << false << 0.0;
  }
  void matchesGelsd() {
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    QFETCH(double, inf);
    QFETCH(int, minValid);
    QFETCH(bool, weighted);
    QFETCH(double, ridge);
    Case c = random_case(static_cast<std::size_t>(n), static_cast<std::size_t>(m), 17, 13, missing, inf, 42);
    if (weighted) {
      testing::Rng rng(7);
      c.wt.resize(c.y.size());
      for (auto& v : c.wt) v = rng.uniform() < 0.1 ? 0.0 : rng.uniform() * 3;
    }
    SolveOptions o;
    o.min_valid = minValid;
    o.ridge = ridge;
    const SolveResult r = run(c, o);
    QCOMPARE(r.x.shape(), (Shape{c.m, c.h, c.w}));
    const double worst = max_error(c, r, o);
    QVERIFY2(worst <= 1e-9, qPrintable(QString("max relative error %1").arg(worst)));
    std::size_t counted = 0;
    for (std::size_t v : r.paths) counted += v;
    QCOMPARE(counted, c.h * c.w);
  }

  void rankDeficientDesign() {
    // Duplicated rows and a column that is the sum of two others: rank 4 of 5.
    Case c = random_case(14, 5, 9, 11, 0.1, 0.0, 3);
    for (std::size_t i = 0; i < c.n; ++i) c.a[i * 5 + 4] = c.a[i * 5 + 0] + c.a[i * 5 + 1];
    for (std::size_t j = 0; j < 5; ++j) c.a[7 * 5 + j] = c.a[6 * 5 + j];
    const SolveResult r = run(c, {});
    QVERIFY(max_error(c, r, {}) <= 1e-9);
    QCOMPARE(r.count(PixelStatus::MinNorm), c.h * c.w);
    QCOMPARE(r.rank.data<std::int32_t>()[0], 4);
  }

  void minimumNormProperties() {
    // Independent of gelsd: for N < M the solution interpolates the valid
    // data and lies in the row space of A_V (so it has the least norm).
    Case c = random_case(10, 30, 3, 4, 0.2, 0.0, 11);
    const SolveResult r = run(c, {});
    const std::size_t P = 12;
    for (std::size_t p = 0; p < P; ++p) {
      std::vector<std::size_t> rows;
      for (std::size_t i = 0; i < c.n; ++i)
        if (std::isfinite(c.y[i * P + p])) rows.push_back(i);
      std::vector<double> x(c.m);
      for (std::size_t j = 0; j < c.m; ++j) x[j] = r.x.value(j * P + p);
      for (std::size_t i : rows) {
        double f = 0;
        for (std::size_t j = 0; j < c.m; ++j) f += c.a[i * c.m + j] * x[j];
        QVERIFY(std::fabs(f - c.y[i * P + p]) < 1e-10);
      }
      // x = A_V^T z: project x onto the row space by least squares and check the residual.
      std::vector<double> at(c.m * rows.size());
      for (std::size_t k = 0; k < rows.size(); ++k)
        for (std::size_t j = 0; j < c.m; ++j) at[j * rows.size() + k] = c.a[rows[k] * c.m + j];
      const auto z = testing::lstsq(at, c.m, rows.size(), x.data(), nullptr);
      QVERIFY(z.rss < 1e-20);
    }
  }

  void float32CubeAndOutput() {
    Case c = random_case(12, 4, 8, 8, 0.2, 0.0, 5);
    for (auto& v : c.y) v = static_cast<float>(v);  // the values a float32 cube holds
    SolveOptions o;
    const SolveResult r32 = run(c, o, DType::Float32);
    QCOMPARE(r32.x.dtype(), DType::Float32);
    o.output = DType::Float64;
    const SolveResult r64 = run(c, o, DType::Float32);
    QCOMPARE(r64.x.dtype(), DType::Float64);
    QVERIFY(max_error(c, r64, o) <= 1e-9);
    for (std::size_t i = 0; i < r32.x.size(); ++i)
      QCOMPARE(r32.x.data<float>()[i], static_cast<float>(r64.x.data<double>()[i]));
  }

  void emptyCube() {
    Case c = random_case(5, 2, 0, 7, 0.0, 0.0, 1);
    const SolveResult r = run(c, {});
    QCOMPARE(r.x.shape(), (Shape{2, 0, 7}));
    QCOMPARE(r.status.size(), std::size_t{0});
  }

  void threadsAgree() {
    Case c = random_case(30, 10, 40, 30, 0.25, 0.0, 9);
    SolveOptions one, two;
    one.threads = 1;
    two.threads = 3;
    const SolveResult a = run(c, one), b = run(c, two);
    QCOMPARE(a.threads, 1);
    for (std::size_t i = 0; i < a.x.size(); ++i) {
      const double u = a.x.value(i), v = b.x.value(i);
      QVERIFY(std::fabs(u - v) <= 1e-12 * std::max(1.0, std::fabs(v)));
    }
  }

  void cancelThrows() {
    Case c = random_case(30, 10, 200, 100, 0.2, 0.0, 2);
    const Array cube = testing::make_cube(DType::Float64, c.n, c.h, c.w, c.y);
    Array a(DType::Float64, {c.n, c.m});
    std::copy(c.a.begin(), c.a.end(), a.data<double>());
    int calls = 0;
    QVERIFY_THROWS_EXCEPTION(Cancelled, solve(cube, Design(a), nullptr, {}, [&](double) { return ++calls < 1; }));
    QVERIFY(calls >= 1);
  }

  void badInputs() {
    Array a(DType::Float64, {4, 2});
    const Array cube2d(DType::Float32, {4, 10});
    QVERIFY_THROWS_EXCEPTION(InputError, solve(cube2d, Design(a)));
    const Array cube(DType::Float32, {5, 2, 2});
    try {
      solve(cube, Design(a, "A.npy"));
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY(QString(e.what()).contains("expected 5 rows"));
    }
    a.data<double>()[3] = kNaN;
    try {
      Design d(a, "A.npy");
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY(QString(e.what()).startsWith("A.npy: expected finite values"));
    }
    Array b(DType::Float64, {4, 2});
    Array w(DType::Float64, {4, 2, 2});
    w.data<double>()[5] = -1;
    const Array cube4(DType::Float64, {4, 2, 2});
    QVERIFY_THROWS_EXCEPTION(InputError, solve(cube4, Design(b), &w));
    SolveOptions o;
    o.ridge = -1;
    QVERIFY_THROWS_EXCEPTION(InputError, solve(cube4, Design(b), nullptr, o));
  }

  void modelAndResidual() {
    Case c = random_case(9, 3, 4, 5, 0.2, 0.0, 21);
    const SolveResult r = run(c, {});
    Array a(DType::Float64, {c.n, c.m});
    std::copy(c.a.begin(), c.a.end(), a.data<double>());
    const Design d(a);
    const Array model = model_cube(d, r.x);
    const Array cube = testing::make_cube(DType::Float64, c.n, c.h, c.w, c.y);
    const Array res = residual_cube(cube, model);
    const std::size_t P = c.h * c.w;
    for (std::size_t i = 0; i < c.n; ++i)
      for (std::size_t p = 0; p < P; ++p) {
        double f = 0;
        for (std::size_t j = 0; j < c.m; ++j) f += c.a[i * c.m + j] * r.x.value(j * P + p);
        if (std::isnan(f)) {
          QVERIFY(std::isnan(model.value(i * P + p)));
          continue;
        }
        QVERIFY(std::fabs(model.value(i * P + p) - f) < 1e-12);
        if (std::isfinite(c.y[i * P + p])) QVERIFY(std::fabs(res.value(i * P + p) - (c.y[i * P + p] - f)) < 1e-12);
        else QVERIFY(std::isnan(res.value(i * P + p)));
      }
  }

  void l1OnNetworksIsOptimal_data() {
    QTest::addColumn<bool>("velocity");
    QTest::addColumn<bool>("weighted");
    QTest::newRow("phases") << false << false;
    QTest::newRow("phases, weighted") << false << true;
    QTest::newRow("velocities, weighted") << true << true;
  }
  void l1OnNetworksIsOptimal() {
    // An SBAS network of 14 dates (pairs up to 2 apart: 25 rows, 13
    // unknowns, solved on its tree of dates) whose gaps split many pixels'
    // networks, with unwrapping jumps: each pixel's L1 solution meets the
    // optimality condition on its valid rows (l1_multipliers), its
    // objective is Σ|f| there, and a split pixel's solution lies in its
    // rows' row space (gelsd of B x returns x).
    QFETCH(bool, velocity);
    QFETCH(bool, weighted);
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    Case c = sbas_case(14, 2, 12, pairs);
    const std::size_t N = c.n, M = c.m, P = c.h * c.w;
    Rng rng(5);
    for (double& v : c.y) v = rng.uniform() < 0.25 ? kNaN : rng.normal() + (rng.uniform() < 0.1 ? 2 * M_PI : 0.0);
    if (velocity)  // each pair spans the intervals between its dates
      for (std::size_t k = 0; k < N; ++k)
        for (std::size_t j = 0; j < M; ++j) c.a[k * M + j] = j >= pairs[k].first && j < pairs[k].second ? 0.1 + 0.01 * j : 0.0;
    if (weighted) {
      c.wt.resize(c.y.size());
      for (double& v : c.wt) v = 0.5 + 1.5 * rng.uniform();
    }
    SolveOptions o;
    o.loss = Loss::L1;
    const SolveResult r = run(c, o);
    std::size_t split = 0;
    for (std::size_t p = 0; p < P; ++p) {
      const auto status = static_cast<PixelStatus>(r.status.data<std::uint8_t>()[p]);
      if (status != PixelStatus::Ok && status != PixelStatus::MinNorm) continue;
      std::vector<double> b, cv, x(M);  // the weighted valid rows, row-major
      for (std::size_t i = 0; i < N; ++i) {
        if (std::isnan(c.y[i * P + p])) continue;
        const double sw = weighted ? std::sqrt(c.wt[i * P + p]) : 1.0;
        for (std::size_t j = 0; j < M; ++j) b.push_back(sw * c.a[i * M + j]);
        cv.push_back(sw * c.y[i * P + p]);
      }
      for (std::size_t j = 0; j < M; ++j) x[j] = r.x.value(j * P + p);
      const double u = l1_multipliers(b, cv, M, x);
      QVERIFY2(u <= 1 + 1e-7, qPrintable(QString("pixel %1: multipliers up to %2").arg(p).arg(u)));
      std::vector<double> fit(cv.size(), 0.0);
      double sum = 0;
      for (std::size_t i = 0; i < cv.size(); ++i) {
        for (std::size_t j = 0; j < M; ++j) fit[i] += b[i * M + j] * x[j];
        sum += std::fabs(fit[i] - cv[i]);
      }
      QVERIFY(std::fabs(r.objective.data<double>()[p] - sum) <= 1e-12 * (1 + sum));
      if (status == PixelStatus::Ok) continue;
      ++split;
      QVERIFY2(rel_error(x, lstsq(b, cv.size(), M, fit.data(), nullptr).x) <= 1e-9, qPrintable(QString("pixel %1").arg(p)));
    }
    QVERIFY2(split >= 10, qPrintable(QString("%1 split networks").arg(split)));
  }

  void designSummary() {
    Array a(DType::Float64, {3, 2});
    const double v[] = {1, 0, 0, 2, 0, 0};
    std::copy(v, v + 6, a.data<double>());
    const Design d(a);
    QCOMPARE(d.rank(), std::size_t{2});
    QVERIFY(std::fabs(d.condition() - 2.0) < 1e-12);
    a.data<double>()[3] = 0;
    QCOMPARE(Design(a).rank(), std::size_t{1});
  }
};

QTEST_GUILESS_MAIN(TestEngine)
#include "tst_engine.moc"
