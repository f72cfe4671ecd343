// Every fast path of the engine against per-pixel gelsd, on cases built to
// take it, checking that the intended path ran (a planner that sent every
// pixel to the exact fallback would fail here).
#include "cases.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/error.hpp>

#include <QtTest>

using namespace cubesolve;
using namespace testing;

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

}  // namespace

class TestPaths : public QObject {
  Q_OBJECT
private slots:
  void fullData() {
    const Case c = random_case(30, 8, 20, 20, 0.0, 0.0, 1);
    const SolveResult r = run(c, {});
    QCOMPARE(count(r, SolvePath::Full), std::size_t{400});
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void deletion() {
    const Case c = random_case(40, 10, 24, 24, 0.15, 0.0, 2);
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Deletion) >= 500, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  // Many missing rows (a tall stack losing a quarter): systems of ~200 rows
  // are still far cheaper than gelsd per pixel.
  void largeDeletions() {
    const Case c = random_case(800, 200, 8, 8, 0.25, 0.0, 12);
    SolveOptions o;
    o.threads = 2;
    const SolveResult r = run(c, o);
    QCOMPARE(count(r, SolvePath::Deletion), std::size_t{64});
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  void deletionWithoutResiduals_data() {
    // Without residuals, overdetermined designs keep chunks observation-major
    // and correct x0 = P·y~ per pixel; every kind of pixel must still match.
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::addColumn<int>("memoryKiB");
    QTest::newRow("deletion") << 40 << 10 << 0.15 << 262144;
    QTest::newRow("many missing: dual, gram, exact too") << 30 << 20 << 0.45 << 262144;
    QTest::newRow("no data and full pixels") << 12 << 3 << 0.05 << 262144;
    QTest::newRow("tiny chunks") << 40 << 10 << 0.2 << 64;
  }
  void deletionWithoutResiduals() {
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    QFETCH(int, memoryKiB);
    Case c = random_case(static_cast<std::size_t>(n), static_cast<std::size_t>(m), 30, 27, missing, 0.0, 31);
    for (std::size_t i = 0; i < c.n; ++i) c.y[i * 810 + 7] = kNaN;  // one pixel with no data
    SolveOptions o;
    o.residuals = false;
    o.memory = static_cast<std::size_t>(memoryKiB) << 10;
    const SolveResult r = run(c, o);
    QVERIFY2(count(r, SolvePath::Deletion) > 0, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  void splitNetworkWithoutResiduals() {
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    Case c = sbas_case(14, 3, 20, pairs);
    const std::size_t P = 400;
    for (std::size_t p = 0; p < P; ++p) {
      if (p % 20 >= 8 || p / 20 >= 10) continue;
      for (std::size_t k = 0; k < pairs.size(); ++k)
        if (pairs[k].first <= 6 && pairs[k].second > 6) c.y[k * P + p] = kNaN;
    }
    SolveOptions o;
    o.residuals = false;
    const SolveResult r = run(c, o);
    QVERIFY(max_error(c, r, o) <= 1e-9);
    QVERIFY2(count(r, SolvePath::Exact) + count(r, SolvePath::Group) >= 80, qPrintable(describe(r)));
  }

  void dualSchur() {
    // The seed's shape: N < M, few missing rows.
    const Case c = random_case(20, 40, 24, 24, 0.1, 0.0, 3);
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Dual) >= 450, qPrintable(describe(r)));
    QCOMPARE(r.count(PixelStatus::MinNorm), std::size_t{576} - count(r, SolvePath::Skipped));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void dualGathered() {
    // Most rows missing: the gathered C_VV system is the smaller one.
    const Case c = random_case(20, 40, 24, 24, 0.7, 0.0, 4);
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Dual) >= 500, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void dualForUnderdeterminedPixelsOfATallDesign() {
    // N > M, but most rows missing: A_V has fewer rows than unknowns, so the
    // minimum-norm solution comes from C_VV although A has no full row rank.
    const Case c = random_case(30, 20, 24, 24, 0.5, 0.0, 13);
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Dual) >= 450, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void maskGroups() {
    // Clouds: half the observations lose a large disc, so big groups share
    // masks with many rows missing.
    const Case c = blob_case(30, 6, 64, 2, 22.0, 5);
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Group) >= 1000, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void randomMasksSkipGrouping() {
    const Case c = random_case(30, 6, 64, 64, 0.3, 0.0, 6);
    const SolveResult r = run(c, {});
    QCOMPARE(count(r, SolvePath::Group), std::size_t{0});
  }

  void splitNetworkGoesExact() {
    // Pixels in a block lose every interferogram across the gap between
    // dates 6 and 7: the network splits, rank(A_V) = M - 1, and the
    // deletion path must not be trusted there.
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    Case c = sbas_case(14, 3, 20, pairs);
    const std::size_t P = 400, M = 13;
    std::size_t split = 0;
    for (std::size_t p = 0; p < P; ++p) {
      if (p % 20 >= 8 || p / 20 >= 10) continue;  // a 10 x 8 block
      ++split;
      for (std::size_t k = 0; k < pairs.size(); ++k)
        if (pairs[k].first <= 6 && pairs[k].second > 6) c.y[k * P + p] = kNaN;
    }
    const SolveResult r = run(c, {});
    QVERIFY(max_error(c, r, {}) <= 1e-9);
    QVERIFY2(count(r, SolvePath::Deletion) >= 200, qPrintable(describe(r)));
    QVERIFY2(count(r, SolvePath::Exact) + count(r, SolvePath::Group) >= split, qPrintable(describe(r)));
    QCOMPARE(r.rank.data<std::int32_t>()[0], int(M - 1));
    QCOMPARE(static_cast<PixelStatus>(r.status.data<std::uint8_t>()[0]), PixelStatus::MinNorm);
  }

  void weightsUseGram() {
    Case c = random_case(30, 6, 20, 20, 0.1, 0.0, 7);
    Rng rng(8);
    c.wt.resize(c.y.size());
    for (auto& v : c.wt) v = rng.uniform() < 0.05 ? 0.0 : 0.2 + rng.uniform();
    const SolveResult r = run(c, {});
    QVERIFY2(count(r, SolvePath::Gram) >= 350, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void ridgeUsesGram() {
    const Case c = random_case(12, 8, 20, 20, 0.3, 0.0, 9);
    SolveOptions o;
    o.ridge = 0.25;
    const SolveResult r = run(c, o);
    QVERIFY2(count(r, SolvePath::Gram) >= 350, qPrintable(describe(r)));
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  void rankDeficientDesignIsExact() {
    Case c = random_case(20, 6, 12, 12, 0.2, 0.0, 10);
    for (std::size_t i = 0; i < 20; ++i) c.a[i * 6 + 5] = c.a[i * 6 + 4];
    const SolveResult r = run(c, {});
    QCOMPARE(count(r, SolvePath::Deletion) + count(r, SolvePath::Dual), std::size_t{0});
    QVERIFY(max_error(c, r, {}) <= 1e-9);
  }

  void customRcondIsExact() {
    const Case c = random_case(20, 6, 12, 12, 0.2, 0.0, 11);
    SolveOptions o;
    o.rcond = 0.3;  // large enough to cut singular values
    const SolveResult r = run(c, o);
    QCOMPARE(count(r, SolvePath::Deletion) + count(r, SolvePath::Dual) + count(r, SolvePath::Full), std::size_t{0});
    QVERIFY(max_error(c, r, o) <= 1e-9);
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

  void demoInsarTakesGroupsAndMatches() {
    const DemoCube d = make_demo("insar", 200);
    const Design design(d.design);
    const SolveResult r = solve(d.cube, design);
    QVERIFY2(count(r, SolvePath::Group) > 0, qPrintable(describe(r)));
    SolveOptions exact;
    exact.method = Method::Exact;
    const SolveResult e = solve(d.cube, design, nullptr, exact);
    QCOMPARE(e.paths[static_cast<std::size_t>(SolvePath::Exact)] + e.paths[static_cast<std::size_t>(SolvePath::Skipped)],
             r.status.size());
    double worst = 0;
    const std::size_t P = r.status.size(), M = design.cols();
    for (std::size_t p = 0; p < P; ++p) {
      QCOMPARE(r.status.data<std::uint8_t>()[p], e.status.data<std::uint8_t>()[p]);
      double dn = 0, nn = 0;
      for (std::size_t j = 0; j < M; ++j) {
        const double a = r.x.value(j * P + p), b = e.x.value(j * P + p);
        if (std::isnan(b)) {
          QVERIFY(std::isnan(a));
          continue;
        }
        dn += (a - b) * (a - b);
        nn += b * b;
      }
      if (nn > 0) worst = std::max(worst, std::sqrt(dn / nn));
    }
    QVERIFY2(worst <= 1e-6, qPrintable(QString::number(worst)));  // float32 output
  }
};

QTEST_GUILESS_MAIN(TestPaths)
#include "tst_paths.moc"
