// Design builders (sbas, poly, harmonic) and MintPy stacks, through the core
// and through the CLI.
#include "reference.hpp"

#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "stack.hpp"

#include <cmath>
#include <fstream>

using namespace cubesolve;

class TestDesigns : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file(const char* name) const { return dir_.filePath(name).toStdString(); }
  void write(const char* name, const std::string& text) { std::ofstream(file(name)) << text; }

private slots:
  void sbasFromPairs() {
    write("pairs.txt", "# dates\n20200101_20200113\n20200113 20200125\n20200125,20200101\n\n20200113_20200206\n");
    const auto pairs = read_pairs(file("pairs.txt"));
    QCOMPARE(pairs.size(), std::size_t{4});
    std::vector<std::string> dates;
    const Array A = sbas_design(pairs, &dates);
    QCOMPARE(dates, (std::vector<std::string>{"20200101", "20200113", "20200125", "20200206"}));
    QCOMPARE(A.shape(), (Shape{4, 3}));
    const double expect[4][3] = {{1, 0, 0}, {-1, 1, 0}, {0, -1, 0}, {-1, 0, 1}};  // row 2 is given late-to-early
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) QCOMPARE(A.value(static_cast<std::size_t>(i * 3 + j)), expect[i][j]);
    write("bad.txt", "20200101_20200113\n2020-01-13_20200125\n");
    try {
      read_pairs(file("bad.txt"));
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("line 2: expected a pair YYYYMMDD_YYYYMMDD"), e.what());
    }
    QVERIFY_THROWS_EXCEPTION(InputError, sbas_design({{"20200101", "20200101"}}));
    // Eight digits that are no day of the calendar.
    for (const char* date : {"20201301", "20200230", "20210229", "20200100"}) {
      write("nodate.txt", std::string("20200101_") + date + "\n");
      try {
        read_pairs(file("nodate.txt"));
        QFAIL("expected InputError");
      } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("line 1: expected calendar dates YYYYMMDD") && QString(e.what()).contains(date),
                 e.what());
      }
      QVERIFY_THROWS_EXCEPTION(InputError, sbas_design({{"20200101", date}}));
      write("times.txt", std::string("20200101\n") + date + "\n");
      QVERIFY_THROWS_EXCEPTION(InputError, read_times(file("times.txt")));
    }
    QCOMPARE(sbas_design({{"20200228", "20200229"}}).shape(), (Shape{1, 1}));  // a leap day
  }

  void polyAndHarmonic() {
    write("times.txt", "20200101\n20200701\n20210101\n20210701\n20220101\n");
    const auto t = read_times(file("times.txt"));
    QCOMPARE(t.size(), std::size_t{5});
    QVERIFY(std::fabs(t[2] - 2021.0) < 1e-12);
    const Array p = build_design("poly:2", 5, t);
    QCOMPARE(p.shape(), (Shape{5, 3}));
    const double mean = (t[0] + t[1] + t[2] + t[3] + t[4]) / 5;
    QCOMPARE(p.value(0), 1.0);
    QVERIFY(std::fabs(p.value(1) - (t[0] - mean)) < 1e-12);
    QVERIFY(std::fabs(p.value(2) - (t[0] - mean) * (t[0] - mean)) < 1e-12);
    const Array h = build_design("harmonic:1", 5, t);
    QCOMPARE(h.shape(), (Shape{5, 4}));
    QVERIFY(std::fabs(h.value(2) - std::cos(2 * M_PI * t[0])) < 1e-12);
    const Array b = build_design("harmonic:2:10", 10, {});  // band index, period 10
    QCOMPARE(b.shape(), (Shape{10, 6}));
    QVERIFY(std::fabs(b.value(5 * 6 + 3) - std::sin(2 * M_PI * 5 / 10.0)) < 1e-12);
    QVERIFY_THROWS_EXCEPTION(InputError, build_design("poly:2", 4, t));  // 5 times for 4 bands
    QVERIFY_THROWS_EXCEPTION(InputError, build_design("poly:x", 5, t));
    QVERIFY_THROWS_EXCEPTION(InputError, build_design("spline:3", 5, t));
  }

  void cliWithBuiltDesigns() {
    // A 3-band-per-year series fitted with poly:1 from a times file, via the CLI.
    const std::size_t N = 9, H = 4, W = 5, P = H * W;
    std::vector<double> y(N * P), times(N);
    std::string tt;
    for (std::size_t i = 0; i < N; ++i) {
      times[i] = 2020.0 + static_cast<double>(i) / 3;
      tt += std::to_string(times[i]) + "\n";
    }
    write("t.txt", tt);
    testing::Rng rng(2);
    for (auto& v : y) v = rng.uniform() < 0.2 ? std::nan("") : rng.normal();
    OutputSet o;
    o.add_npy(file("c.npy"), testing::make_cube(DType::Float64, N, H, W, y));
    o.commit();
    QProcess run;
    run.start(CUBESOLVE_CLI, {"solve", dir_.filePath("c.npy"), "poly:1", "--times", dir_.filePath("t.txt"), "-o",
                              dir_.filePath("p.npy")});
    QVERIFY(run.waitForFinished(60000));
    QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
    const Array x = read_npy(file("p.npy"));
    QCOMPARE(x.shape(), (Shape{2, H, W}));
    const Array A = build_design("poly:1", N, read_times(file("t.txt")));
    const std::vector<double> a(A.data<double>(), A.data<double>() + A.size());
    QVERIFY(testing::max_lstsq_error(a, N, 2, P, [&](std::size_t i, std::size_t p) { return y[i * P + p]; },
                                     [&](std::size_t j, std::size_t p) { return x.value(j * P + p); }) <= 1e-9);
    QProcess nopairs;
    nopairs.start(CUBESOLVE_CLI, {"solve", dir_.filePath("c.npy"), "sbas", "-o", dir_.filePath("s.npy")});
    QVERIFY(nopairs.waitForFinished(60000));
    QCOMPARE(nopairs.exitCode(), 2);
    QVERIFY(QString(nopairs.readAllStandardError()).contains("--pairs"));
  }

#ifdef CUBESOLVE_TEST_HDF5
  void mintpyStack() {
    // A stack in MintPy's layout: 5 dates, 7 interferograms, one dropped.
    const char* pairs[7][2] = {{"20200101", "20200113"}, {"20200101", "20200125"}, {"20200113", "20200125"},
                               {"20200113", "20200206"}, {"20200125", "20200206"}, {"20200125", "20200218"},
                               {"20200206", "20200218"}};
    const hsize_t N = 7, H = 6, W = 8, P = H * W;
    std::vector<float> phase(N * P);
    testing::Rng rng(3);
    for (auto& v : phase) v = rng.uniform() < 0.15 ? NAN : static_cast<float>(rng.normal());
    const unsigned char keep[7] = {1, 1, 1, 0, 1, 1, 1};
    auto write_stack = [&](const std::string& path, bool with_date) {
      std::string dates;
      for (auto& p : pairs) dates += std::string(p[0]) + p[1];
      testing::write_stack(path, N, H, W, phase.data(), with_date ? &dates : nullptr, keep);
    };
    write_stack(file("ifgramStack.h5"), true);
    const InsarStack s = read_mintpy_stack(file("ifgramStack.h5"));
    QCOMPARE(s.cube.shape(), (Shape{N, H, W}));
    QCOMPARE(s.pairs[3], (DatePair{"20200113", "20200206"}));
    QCOMPARE(s.keep[3], false);
    QCOMPARE(kept_only(s).cube.dim(0), std::size_t{6});

    QProcess run;
    run.start(CUBESOLVE_CLI, {"solve", dir_.filePath("ifgramStack.h5"), "sbas", "-o", dir_.filePath("ts.npy"), "--dtype", "float64"});
    QVERIFY(run.waitForFinished(60000));
    QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
    const Array ts = read_npy(file("ts.npy"));
    QCOMPARE(ts.shape(), (Shape{4, H, W}));  // 5 dates, the first the reference
    // Reference: the kept rows with the design written out by hand.
    const double A[6][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {-1, 1, 0, 0}, {0, -1, 1, 0}, {0, -1, 0, 1}, {0, 0, -1, 1}};
    const std::vector<double> a(&A[0][0], &A[0][0] + 24);
    const std::size_t rows[6] = {0, 1, 2, 4, 5, 6};
    QVERIFY(testing::max_lstsq_error(a, 6, 4, P, [&](std::size_t k, std::size_t p) { return phase[rows[k] * P + p]; },
                                     [&](std::size_t j, std::size_t p) { return ts.value(j * P + p); }) <= 1e-9);

    write_stack(file("nodate.h5"), false);
    QProcess bad;
    bad.start(CUBESOLVE_CLI, {"solve", dir_.filePath("nodate.h5"), "sbas", "-o", dir_.filePath("n.npy")});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 2);
    const QString err = bad.readAllStandardError();
    QVERIFY2(err.contains("nodate.h5") && err.contains("expected a dataset 'date'"), qPrintable(err));
    QVERIFY(!QFile::exists(dir_.filePath("n.npy")));

    pairs[6][1] = "20201301";  // no 13th month
    write_stack(file("baddate.h5"), true);
    QProcess month;
    month.start(CUBESOLVE_CLI, {"solve", dir_.filePath("baddate.h5"), "sbas", "-o", dir_.filePath("m.npy")});
    QVERIFY(month.waitForFinished(60000));
    QCOMPARE(month.exitCode(), 2);
    const QString merr = month.readAllStandardError();
    QVERIFY2(merr.contains("baddate.h5") && merr.contains("calendar dates") && merr.contains("20201301"), qPrintable(merr));
    QVERIFY(!QFile::exists(dir_.filePath("m.npy")));
  }
#endif
};

QTEST_GUILESS_MAIN(TestDesigns)
#include "tst_designs.moc"
