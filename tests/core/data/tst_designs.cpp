// Design builders (sbas, poly, harmonic) and MintPy stacks, through the core
// and through the CLI.
#include "reference.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <QDir>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "stack.hpp"

#include <cmath>
#include <set>
#include <fstream>

using namespace cubesolve;

class TestDesigns : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file(const char* name) const { return dir_.filePath(name).toStdString(); }
  void write(const char* name, const std::string& text) { std::ofstream(file(name)) << text; }

private slots:
  // The data layer's one calendar: day numbers and back, leap years, decimal years.
  void calendar() {
    QCOMPARE(day_number("19700101"), 0L);
    QCOMPARE(day_number("20000301"), 11017L);
    QCOMPARE(day_number("19691231"), -1L);
    QCOMPARE(date_of_day(-1), std::string("19691231"));
    QCOMPARE(date_of_day(day_number("20200228") + 1), std::string("20200229"));
    QCOMPARE(date_of_day(day_number("21000228") + 1), std::string("21000301"));  // not a leap year
    for (long d = day_number("18991225"); d < day_number("21010110"); d += 37) QCOMPARE(day_number(date_of_day(d)), d);
    QCOMPARE(decimal_year("20200101", "t"), 2020.0);
    QCOMPARE(decimal_year("20200702", "t"), 2020.0 + 183.0 / 366.0);
    QCOMPARE(decimal_year("20210702", "t"), 2021.0 + 182.0 / 365.0);
    QCOMPARE(decimal_year("99991231", "t"), 9999.0 + 364.0 / 365.0);
  }
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

  // The benchmarks' synthetic network: every date linked to the next, no
  // pair twice, two nonzeros a row (one for pairs from the first date).
  void syntheticSbasNetwork() {
    const std::size_t n = 90, m = 30;
    const Array a = make_synthetic(n, m, 4, 0.1, MaskPattern::Random, SyntheticDesign::Sbas).design;
    std::set<std::pair<long, long>> pairs;
    for (std::size_t k = 0; k < n; ++k) {
      long first = 0, second = -1;
      int nonzeros = 0;
      for (std::size_t j = 0; j < m; ++j) {
        const double v = a.data<double>()[k * m + j];
        if (v == 0) continue;
        ++nonzeros;
        if (v == 1.0) second = static_cast<long>(j) + 1;
        else if (v == -1.0) first = static_cast<long>(j) + 1;
        else QFAIL("an entry other than 0, 1, -1");
      }
      QVERIFY(second > first && nonzeros == (first > 0 ? 2 : 1));
      QVERIFY(pairs.emplace(first, second).second);
    }
    for (long d = 0; d < static_cast<long>(m); ++d) QVERIFY(pairs.count({d, d + 1}));
    QVERIFY_THROWS_EXCEPTION(InputError, make_synthetic(m - 1, m, 4, 0.1, MaskPattern::Random, SyntheticDesign::Sbas));
    QVERIFY_THROWS_EXCEPTION(InputError, make_synthetic(m * (m + 1) / 2 + 1, m, 4, 0.1, MaskPattern::Random, SyntheticDesign::Sbas));
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
    // The unknowns' names: a polynomial's powers, a yearly harmonic fit's terms, a CSV header.
    QCOMPARE(design_terms({"poly:2", "", "times.txt"}), (std::vector<std::string>{"offset", "trend", "t^2"}));
    QCOMPARE(design_terms({"harmonic:2", "", "times.txt"}),
             (std::vector<std::string>{"offset", "trend", "annual_cos", "annual_sin", "semiannual_cos", "semiannual_sin"}));
    QCOMPARE(design_terms({"harmonic:1:10", "", ""}), (std::vector<std::string>{"offset", "trend", "harmonic1_cos", "harmonic1_sin"}));
    // The cube's own band dates serve as a times file of those dates would.
    write("dates.txt", "20200101\n20200213\n20200407\n20200630\n20201111\n");
    const std::vector<std::string> dates{"20200101", "20200213", "20200407", "20200630", "20201111"};
    for (const char* spec : {"poly:2", "harmonic:2"}) {
      const Array from_file = make_design({spec, "", file("dates.txt")}, 5), from_bands = make_design({spec, "", "", dates}, 5);
      QVERIFY(std::memcmp(from_file.raw(), from_bands.raw(), from_file.nbytes()) == 0);
      QCOMPARE(design_terms({spec, "", "", dates}), design_terms({spec, "", file("dates.txt")}));
    }
    QCOMPARE(design_harmonics({"harmonic:1", "", "", dates}, 5)[0].unit_days, 365.25);
    QVERIFY_THROWS_EXCEPTION(InputError, make_design({"poly:1", "", "", dates}, 4));  // 5 dates for 4 bands
    write("named.csv", "a,b\n1,2\n3,4\n");
    QCOMPARE(design_terms({file("named.csv"), "", ""}), (std::vector<std::string>{"a", "b"}));
    write("unnamed.csv", "1,2\n3,4\n");
    QVERIFY(design_terms({file("unnamed.csv"), "", ""}).empty());
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

  // The dates a pixel's network leaves undetermined, and a time series' slope.
  void undeterminedAndRate() {
    // 5 dates; pairs 0-1, 1-2, 3-4 (and 2-3 missing for this pixel): dates 3 and 4
    // are not linked to the reference date 0.
    const std::vector<DatePair> pairs{{"20200101", "20200113"}, {"20200113", "20200125"}, {"20200125", "20200206"},
                                      {"20200206", "20200218"}};
    const Design A(sbas_design(pairs));
    QCOMPARE(undetermined_unknowns(A, {true, true, false, true}), (std::vector<bool>{false, false, true, true}));
    QCOMPARE(undetermined_unknowns(A, {true, true, true, true}), (std::vector<bool>{false, false, false, false}));
    QCOMPARE(undetermined_unknowns(A, {false, false, false, false}), (std::vector<bool>{true, true, true, true}));
    // A line through the series 0, 1, 2, 3 at times 0, 1, 2, 3 (and 0, 2, 4, 6 at half the times).
    Array x(DType::Float64, {3, 1, 2});
    const double v[6] = {1, 2, 2, 4, 3, 6};
    std::copy(v, v + 6, x.data<double>());
    const Array r = linear_rate(x, {0, 1, 2, 3});
    QCOMPARE(r.value(0), 1.0);
    QCOMPARE(r.value(1), 2.0);
    QVERIFY_THROWS_EXCEPTION(InputError, linear_rate(x, {0, 1}));
  }

  // A harmonic design's periodic terms as amplitude and peak day: a series
  // made with a known amplitude and peak is fitted and gives them back.
  void harmonicAmplitudeAndPeak() {
    std::string times;
    std::vector<std::string> dates;
    for (long d = day_number("20190105"); d < day_number("20220101"); d += 12) dates.push_back(date_of_day(d));
    for (const auto& d : dates) times += d + "\n";
    write("dates.txt", times);
    const DesignSpec spec{"harmonic:2", "", file("dates.txt")};
    const std::vector<Harmonic> h = design_harmonics(spec, dates.size());
    QCOMPARE(h.size(), std::size_t{2});
    QVERIFY(h[0].name == "annual" && h[0].cos == 2 && h[0].sin == 3 && h[0].period == 1.0 && h[0].unit_days == 365.25);
    QVERIFY(h[1].name == "semiannual" && h[1].cos == 4 && h[1].sin == 5 && h[1].period == 0.5);
    // Pixel 0: 3 mm peaking on day 100 and 0.5 mm every half year from day 40; pixel 1: no cycle.
    const double pi = 3.141592653589793;
    Array y(DType::Float64, {dates.size(), 1, 2});
    for (std::size_t i = 0; i < dates.size(); ++i) {
      const double t = decimal_year(dates[i], "date");
      y.data<double>()[2 * i] = 2 + 0.1 * t + 3 * std::cos(2 * pi * (t - 100 / 365.25)) + 0.5 * std::cos(4 * pi * (t - 40 / 365.25));
      y.data<double>()[2 * i + 1] = 1 + 0.2 * t;
    }
    const SolveResult r = solve(y, Design(make_design(spec, dates.size())));
    const Array amp = harmonic_amplitude(r.x, h[0]), peak = harmonic_peak(r.x, h[0]), half = harmonic_peak(r.x, h[1]);
    QVERIFY2(std::abs(amp.value(0) - 3) < 1e-8, qPrintable(QString::number(amp.value(0), 'g', 17)));
    QVERIFY2(std::abs(peak.value(0) - 100) < 1e-6, qPrintable(QString::number(peak.value(0), 'g', 17)));
    QVERIFY2(std::abs(harmonic_amplitude(r.x, h[1]).value(0) - 0.5) < 1e-8, "semiannual amplitude");
    QVERIFY2(std::abs(half.value(0) - 40) < 1e-6, qPrintable(QString::number(half.value(0), 'g', 17)));
    QVERIFY(amp.value(1) < 1e-9);
    // A peak just before the period's end stays in [0, period); no cycle has no peak.
    Array x(DType::Float64, {4, 1, 2});
    const double v[8] = {0, 0, 0, 0, std::cos(-0.01), 0, std::sin(-0.01), 0};
    std::copy(v, v + 8, x.data<double>());
    const Array p = harmonic_peak(x, h[0]);
    QVERIFY(std::abs(p.value(0) - (1 - 0.01 / (2 * pi)) * 365.25) < 1e-9);
    QVERIFY(std::isnan(p.value(1)));
    // Without dates the period is in the times' unit; other designs have no harmonics.
    QCOMPARE(design_harmonics({"harmonic:1", "", ""}, 24)[0].period, 24.0);
    QCOMPARE(design_harmonics({"harmonic:1", "", ""}, 24)[0].unit_days, 0.0);
    QVERIFY(design_harmonics({"poly:2", "", ""}, 24).empty());
  }

  // The velocity's time axis is MintPy's (yyyymmdd2years: year + (day of
  // year - 1) / 365.25), and each pixel's line goes through its valid dates.
  void velocityAsMintPy() {
    const std::vector<double> t = mintpy_years({"20191231", "20200101", "20201231", "20210301"}, "dates");
    QCOMPARE(t, (std::vector<double>{2019 + 364 / 365.25, 2020.0, 2020 + 365 / 365.25, 2021 + 59 / 365.25}));
    QVERIFY_THROWS_EXCEPTION(InputError, mintpy_years({"20200230"}, "dates"));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    // Pixels: a full series; one with a date left out; one valid date only; none.
    Array x(DType::Float64, {3, 1, 4});
    const double v[12] = {1, 1, nan, nan, 2, nan, 5, nan, 3, 3, nan, nan};
    std::copy(v, v + 12, x.data<double>());
    const Array r = linear_rate(x, t);
    // Least squares through (t_k, y_k) written out for the full series.
    double tm = 0, ym = 0, stt = 0, sty = 0;
    const double y[4] = {0, 1, 2, 3};
    for (int k = 0; k < 4; ++k) tm += t[k] / 4, ym += y[k] / 4;
    for (int k = 0; k < 4; ++k) stt += (t[k] - tm) * (t[k] - tm), sty += (t[k] - tm) * (y[k] - ym);
    QVERIFY(std::abs(r.value(0) - sty / stt) < 1e-12 * std::abs(sty / stt));
    // Two valid dates after the first: (t0, 0), (t1, 1), (t3, 3).
    tm = (t[0] + t[1] + t[3]) / 3, ym = 4.0 / 3, stt = sty = 0;
    for (int k : {0, 1, 3}) stt += (t[k] - tm) * (t[k] - tm), sty += (t[k] - tm) * ((k == 0 ? 0 : k) - ym);
    QVERIFY(std::abs(r.value(1) - sty / stt) < 1e-12 * std::abs(sty / stt));
    QCOMPARE(r.value(2), 5 / (t[2] - t[0]));  // a line through two points
    QVERIFY(std::isnan(r.value(3)));           // the first date alone
    // Its standard error, as velocityStd: the residuals of the line over
    // n - 2, over Σ(t - mean t)²; none from two points or fewer.
    const Array se = linear_rate_std(x, t);
    tm = ym = 0, stt = sty = 0;
    for (int k = 0; k < 4; ++k) tm += t[k] / 4, ym += y[k] / 4;
    for (int k = 0; k < 4; ++k) stt += (t[k] - tm) * (t[k] - tm), sty += (t[k] - tm) * (y[k] - ym);
    double rss = 0;
    for (int k = 0; k < 4; ++k) rss += std::pow(y[k] - ym - sty / stt * (t[k] - tm), 2);
    const double expected = std::sqrt(rss / 2 / stt);
    QVERIFY2(expected > 0 && std::abs(se.value(0) - expected) < 1e-9 * expected, qPrintable(QString::number(se.value(0))));
    QVERIFY(std::isfinite(se.value(1)));
    QVERIFY(std::isnan(se.value(2)) && std::isnan(se.value(3)));
  }

  // The weights MintPy 1.6.4 gives (coherence2weight, then float32 and its
  // square root): values printed by its own code for these coherences.
  void mintpyWeights() {
    struct Case {
      const char* fn;
      int looks;
      double coherence, weight;
    } cases[] = {{"var", 1, 0.0, 0.31526512907050019},     {"var", 1, NAN, 0.31526512907050019},
                 {"var", 5, 0.4, 1.1259979882888729},      {"var", 24, 0.85, 116.78987141498146},
                 {"var", 100, 0.7, 149.41827161430047},    {"var", 5, 0.999, 1589.2588104764},
                 {"fim", 5, 0.55, 4.3369173887697343},     {"fim", 24, 0.999, 23964.004675235832},
                 {"fim", 1, 0.03, 0.0050125311851303422},  {"coh", 5, 0.7, 0.70000000162293929},
                 {"coh", 1, 0.0, 0.049999998802619849}};
    for (const Case& c : cases) {
      const double coh = static_cast<float>(c.coherence);  // read from float32 files
      const double w = coherence_weight(c.fn, coh, c.looks);
      QVERIFY2(std::fabs(w - c.weight) <= 1e-6 * c.weight,
               qPrintable(QString("%1 L=%2 coherence %3: %4, MintPy %5").arg(c.fn).arg(c.looks).arg(c.coherence).arg(w, 0, 'g', 17).arg(c.weight, 0, 'g', 17)));
    }
    QVERIFY_THROWS_EXCEPTION(InputError, coherence_weight("sbas", 0.5, 1));
  }

#ifdef CUBESOLVE_TEST_HDF5
  // A stack as MintPy's inversion reads it: referenced at REF_Y/REF_X where
  // not 0, zero as no data, masked by connectComponent or coherence, weighted
  // from the coherence; against a per-pixel float64 reference of those rules.
  void mintpyRules() {
    std::vector<std::pair<int, int>> net;  // 12 dates, pairs up to 3 apart
    for (int i = 0; i < 12; ++i)
      for (int j = i + 1; j < 12 && j - i <= 3; ++j) net.emplace_back(i, j);
    const hsize_t N = net.size(), H = 7, W = 9, P = H * W;
    const std::size_t ry = 2, rx = 3;
    std::vector<float> phase(N * P), coherence(N * P), connect(N * P);
    testing::Rng rng(11);
    for (std::size_t i = 0; i < N * P; ++i) {
      const double u = rng.uniform();
      phase[i] = u < 0.08 ? NAN : u < 0.16 ? 0.0f : static_cast<float>(3 + rng.normal());
      coherence[i] = rng.uniform() < 0.05 ? NAN : static_cast<float>(rng.uniform());
      connect[i] = rng.uniform() < 0.12 ? 0.0f : 1.0f;
    }
    for (std::size_t k = 0; k < N; ++k) {  // values in every interferogram at (2, 3) and (4, 5); none at (0, 0)
      phase[k * P + ry * W + rx] = static_cast<float>(1.5 + 0.1 * k);
      phase[k * P + 4 * W + 5] = static_cast<float>(-0.7 + 0.05 * k);
    }
    phase[6 * P] = NAN;
    // Column 8: no interferogram across dates 5 and 6, a network split in two.
    for (std::size_t k = 0; k < N; ++k)
      if (net[k].first <= 5 && net[k].second >= 6)
        for (std::size_t r = 0; r < H; ++r) phase[k * P + r * W + 8] = NAN;
    std::vector<unsigned char> keep(N, 1);
    keep[4] = 0;
    std::string dates;
    auto date = [](int d) {
      char b[32];
      std::snprintf(b, sizeof b, "2021%02d%02d", 1 + d / 2, d % 2 ? 20 : 5);
      return std::string(b);
    };
    for (const auto& [i, j] : net) dates += date(i) + date(j);
    testing::StackExtras extras;
    extras.coherence = coherence.data();
    extras.connect = connect.data();
    extras.attributes = {{"REF_Y", "2"}, {"REF_X", "3"}, {"NCORRLOOKS", "7.3"}, {"WAVELENGTH", "0.05546576"}};
    testing::write_stack(file("rules.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    // The kept rows and their design.
    std::vector<std::size_t> rows;
    std::vector<DatePair> pairs;
    for (std::size_t k = 0; k < N; ++k)
      if (keep[k]) {
        rows.push_back(k);
        pairs.emplace_back(dates.substr(16 * k, 8), dates.substr(16 * k + 8, 8));
      }
    const Array A = sbas_design(pairs);
    const std::size_t n = rows.size(), m = A.dim(1);
    const std::vector<double> a(A.data<double>(), A.data<double>() + n * m);
    // The reference pixel is 0 by definition (status reference), where gelsd,
    // whose rows there are all zeros (missing), finds no data: compared as NaN.
    auto referenced = [&](double v, std::size_t p, std::size_t ref) { return p != ref ? v : v == 0 ? NAN : HUGE_VAL; };
    auto solved = [&](const QStringList& extra) {
      QProcess run;
      run.start(CUBESOLVE_CLI, QStringList{"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("rules.npy"), "--dtype",
                                           "float64"} + extra);
      run.waitForFinished(60000);
      if (run.exitCode() != 0) qWarning("%s", run.readAllStandardError().constData());
      return run.exitCode() == 0 ? read_npy(file("rules.npy")) : Array();
    };
    for (const char* fn : {"no", "var", "fim", "coh"})
      for (const char* mask : {"connectComponent", "coherence"}) {
        const Array x = solved({"--weight-func", fn, "--mask-dataset", mask, "--mask-threshold", "0.3"});
        QVERIFY2(x.size() == m * P, fn);
        auto y = [&](std::size_t k, std::size_t p) -> double {
          const std::size_t i = rows[k] * P + p;
          float v = phase[i];
          if (v != 0.0f) v -= phase[rows[k] * P + ry * W + rx];
          const float c = std::isnan(coherence[i]) ? 0.0f : coherence[i];
          const bool masked = std::string(mask) == "connectComponent" ? connect[i] == 0.0f : c < 0.3f;
          return v == 0.0f || masked ? NAN : v;
        };
        auto w = [&](std::size_t k, std::size_t p) { return coherence_weight(fn, coherence[rows[k] * P + p], 7); };
        const double err = testing::max_lstsq_error(
            a, n, m, P, y, [&](std::size_t j, std::size_t p) { return referenced(x.value(j * P + p), p, ry * W + rx); },
            std::string(fn) == "no" ? std::function<double(std::size_t, std::size_t)>{} : w);
        QVERIFY2(err <= 1e-9, qPrintable(QString("%1, %2: %3").arg(fn).arg(mask).arg(err)));
      }
    // MintPy's default formulation: minimum-norm velocity, given as the time
    // series (the running sum of velocity times interval).
    std::vector<double> dt;
    const Array B = sbas_velocity_design(pairs, &dt);
    const std::vector<double> bv(B.data<double>(), B.data<double>() + n * m);
    auto y_var = [&](std::size_t k, std::size_t p) -> double {
      const std::size_t i = rows[k] * P + p;
      float v = phase[i];
      if (v != 0.0f) v -= phase[rows[k] * P + ry * W + rx];
      return v == 0.0f ? NAN : v;
    };
    std::string fn_now;
    auto w_var = [&](std::size_t k, std::size_t p) { return coherence_weight(fn_now, coherence[rows[k] * P + p], 7); };
    for (const char* fn : {"no", "var", "fim", "coh"}) {
      const Array ts = solved({"--formulation", "velocity", "--weight-func", fn});
      QVERIFY(ts.size() == m * P);
      fn_now = fn;
      auto velocity = [&](std::size_t j, std::size_t p) {
        return referenced((ts.value(j * P + p) - (j ? ts.value((j - 1) * P + p) : 0.0)) / dt[j], p, ry * W + rx);
      };
      const double err = testing::max_lstsq_error(bv, n, m, P, y_var, velocity,
                                                  std::string(fn) == "no" ? std::function<double(std::size_t, std::size_t)>{} : w_var);
      QVERIFY2(err <= 1e-9, qPrintable(QString("velocity, %1: %2").arg(fn).arg(err)));
    }
    // On the split column the two formulations differ (each its own minimum norm).
    const Array ts_v = solved({"--formulation", "velocity"}), ts_p = solved({});
    double split_diff = 0;
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t r = 0; r < H; ++r) {
        const std::size_t i = j * P + r * W + 8;
        if (std::isfinite(ts_v.value(i)) && std::isfinite(ts_p.value(i))) split_diff = std::max(split_diff, std::fabs(ts_v.value(i) - ts_p.value(i)));
      }
    QVERIFY2(split_diff > 1e-3, qPrintable(QString::number(split_diff)));
    // Where the network is whole, both formulations give the same series, a
    // reparametrisation of one fit: the series' standard errors agree (the
    // velocity form's from its full covariance, by cumulative sums); the
    // reference pixel's are 0, as its series.
    QVERIFY(solved({"--diag", dir_.filePath("sev"), "--stderr"}).size() == m * P);
    const Array se_p = read_npy(file("sev_stderr.npy"));
    QVERIFY(solved({"--formulation", "velocity", "--diag", dir_.filePath("sev"), "--stderr"}).size() == m * P);
    const Array se_v = read_npy(file("sev_stderr.npy")), status = read_npy(file("sev_status.npy"));
    std::size_t compared = 0;
    for (std::size_t p = 0; p < P; ++p) {
      if (status.value(p) != static_cast<double>(PixelStatus::Ok)) continue;  // the split column is min-norm
      for (std::size_t j = 0; j < m; ++j) {
        const double sp = se_p.value(j * P + p), sv = se_v.value(j * P + p);
        QVERIFY2(std::fabs(sp - sv) <= 1e-9 * std::max(sp, 1e-300), qPrintable(QString("%1 vs %2").arg(sp).arg(sv)));
        compared += sp > 0;
      }
    }
    QVERIFY(compared > m * P / 2);
    for (std::size_t j = 0; j < m; ++j) QCOMPARE(se_v.value(j * P + ry * W + rx), 0.0);
    // MintPy's layout: timeseries.h5 in metres with the first date zero,
    // temporalCoherence.h5 and numInvIfgram.h5 beside it.
    QVERIFY(QDir(dir_.path()).mkpath("mintpy"));
    const Array x64 = solved({"--formulation", "velocity", "--weight-func", "var"});
    QProcess h5;
    h5.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("mintpy/timeseries.h5"),
                             "--formulation", "velocity", "--weight-func", "var", "--dtype", "float64"});
    QVERIFY(h5.waitForFinished(60000));
    QVERIFY2(h5.exitCode() == 0, h5.readAllStandardError().constData());
    const std::string ts_file = file("mintpy/timeseries.h5");
    std::vector<hsize_t> dims;
    const std::vector<float> series = testing::read_floats(ts_file, "timeseries", &dims);
    QCOMPARE(dims, (std::vector<hsize_t>{m + 1, H, W}));
    QCOMPARE(testing::read_attribute(ts_file, "FILE_TYPE"), std::string("timeseries"));
    QCOMPARE(testing::read_attribute(ts_file, "UNIT"), std::string("m"));
    QCOMPARE(testing::read_attribute(ts_file, "CUBESOLVE_FORMULATION"), std::string("velocity"));  // how it was made
    QCOMPARE(testing::read_attribute(ts_file, "CUBESOLVE_WEIGHT_FUNC"), std::string("var"));
    QCOMPARE(testing::read_attribute(ts_file, "REF_DATE"), date(0));
    QCOMPARE(testing::read_attribute(ts_file, "REF_Y"), std::string("2"));  // the stack's attributes carried on
    QCOMPARE(testing::read_attribute(ts_file, "LENGTH"), std::to_string(H));
    QCOMPARE(testing::read_floats(ts_file, "bperp").size(), std::size_t{m + 1});
    const double to_m = -0.05546576 / (4 * M_PI);
    for (std::size_t p = 0; p < P; ++p) {
      if (p == ry * W + rx) continue;
      QCOMPARE(series[p], 0.0f);
      for (std::size_t j = 0; j < m; ++j)
        QVERIFY(series[(j + 1) * P + p] == static_cast<float>(x64.value(j * P + p) * to_m) ||
                (std::isnan(series[(j + 1) * P + p]) && std::isnan(x64.value(j * P + p))));
    }
    // In millimetres: UNIT mm, the same series times 1000; a unit it has no name for is refused.
    QVERIFY(QDir(dir_.path()).mkpath("mintpy_mm"));
    QProcess mm;
    mm.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("mintpy_mm/timeseries.h5"),
                             "--formulation", "velocity", "--weight-func", "var", "--dtype", "float64", "--unit", "mm"});
    QVERIFY(mm.waitForFinished(60000));
    QVERIFY2(mm.exitCode() == 0, mm.readAllStandardError().constData());
    QCOMPARE(testing::read_attribute(file("mintpy_mm/timeseries.h5"), "UNIT"), std::string("mm"));
    const std::vector<float> series_mm = testing::read_floats(file("mintpy_mm/timeseries.h5"), "timeseries");
    for (std::size_t i = 0; i < series.size(); ++i)
      QVERIFY(std::fabs(series_mm[i] - 1000.0 * series[i]) <= 1e-6 * std::fabs(series_mm[i]) || (std::isnan(series[i]) && std::isnan(series_mm[i])));
    QProcess feet;
    feet.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("mintpy_mm/ts2.h5"), "--unit", "ft"});
    QVERIFY(feet.waitForFinished(60000));
    QCOMPARE(feet.exitCode(), 2);
    QVERIFY(QString(feet.readAllStandardError()).contains("expected radian, mm, cm or m, found 'ft'"));
    const std::vector<float> tcoh = testing::read_floats(file("mintpy/temporalCoherence.h5"), "temporalCoherence");
    const std::vector<float> num = testing::read_floats(file("mintpy/numInvIfgram.h5"), "mask");
    QCOMPARE(testing::read_attribute(file("mintpy/temporalCoherence.h5"), "FILE_TYPE"), std::string("temporalCoherence"));
    QCOMPARE(testing::read_attribute(file("mintpy/numInvIfgram.h5"), "FILE_TYPE"), std::string("mask"));
    QCOMPARE(tcoh.size(), std::size_t{P});
    // The reference pixel: zero, coherent, every interferogram.
    for (std::size_t j = 0; j <= m; ++j) QCOMPARE(series[j * P + ry * W + rx], 0.0f);
    QCOMPARE(tcoh[ry * W + rx], 1.0f);
    QCOMPARE(num[ry * W + rx], static_cast<float>(n));
    // Elsewhere MintPy's temporal coherence of the phase residuals, and the rows used.
    const Array A_ts = sbas_design(pairs);
    for (std::size_t p = 0; p < P; ++p) {
      if (p == ry * W + rx) continue;
      double c = 0, sn = 0;
      std::size_t used = 0;
      for (std::size_t k = 0; k < n; ++k) {
        const double y = y_var(k, p);
        if (std::isnan(y)) continue;
        double model = 0;
        for (std::size_t j = 0; j < m; ++j) model += A_ts.value(k * m + j) * x64.value(j * P + p);
        c += std::cos(y - model);
        sn += std::sin(y - model);
        ++used;
      }
      QCOMPARE(num[p], static_cast<float>(used));
      if (used && std::isfinite(x64.value(p))) QVERIFY(std::fabs(tcoh[p] - std::hypot(c, sn) / used) <= 1e-5);
    }
    // The same temporal coherence among the diagnostics of any output
    // (PREFIX_tcoh), the reference pixel's 1 as MintPy's; none for a cube
    // that is not a phase stack.
    QVERIFY(solved({"--formulation", "velocity", "--weight-func", "var", "--diag", dir_.filePath("tc")}).size() == m * P);
    const Array tc = read_npy(file("tc_tcoh.npy"));
    QCOMPARE(tc.shape(), (Shape{H, W}));
    QCOMPARE(tc.dtype(), DType::Float32);
    for (std::size_t p = 0; p < P; ++p)
      QVERIFY(tc.value(p) == static_cast<double>(tcoh[p]) || (std::isnan(tc.value(p)) && std::isnan(tcoh[p])));
    // Without the wavelength, metres are refused; radians are not.
    extras.attributes = {{"REF_Y", "2"}, {"REF_X", "3"}, {"NCORRLOOKS", "7.3"}};
    testing::write_stack(file("nowave.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    QProcess wave;
    wave.start(CUBESOLVE_CLI, {"solve", dir_.filePath("nowave.h5"), "sbas", "-o", dir_.filePath("mintpy/ts2.h5")});
    QVERIFY(wave.waitForFinished(60000));
    QCOMPARE(wave.exitCode(), 2);
    QVERIFY(wave.readAllStandardError().contains("WAVELENGTH"));
    QVERIFY(!QFile::exists(dir_.filePath("mintpy/ts2.h5")));
    wave.start(CUBESOLVE_CLI, {"solve", dir_.filePath("nowave.h5"), "sbas", "-o", dir_.filePath("mintpy/ts2.h5"), "--unit", "radian"});
    QVERIFY(wave.waitForFinished(60000));
    QCOMPARE(wave.exitCode(), 0);
    QCOMPARE(testing::read_attribute(file("mintpy/ts2.h5"), "UNIT"), std::string("radian"));

    // The reference pixel itself is all zero after referencing: 0 by definition.
    const Array x = solved({});
    QCOMPARE(x.value(ry * W + rx), 0.0);
    // Another reference pixel, zeros kept, no reference: each as asked.
    for (const QStringList& extra : {QStringList{"--ref-yx", "4,5"}, QStringList{"--keep-zero"}, QStringList{"--no-ref"}}) {
      const Array xe = solved(extra);
      QVERIFY(xe.size() == m * P);
      const bool keep_zero = extra[0] == "--keep-zero", no_ref = extra[0] == "--no-ref";
      const std::size_t ref = extra[0] == "--ref-yx" ? 4 * W + 5 : ry * W + rx;
      auto y = [&](std::size_t k, std::size_t p) -> double {
        float v = phase[rows[k] * P + p];
        if (!no_ref && v != 0.0f) v -= phase[rows[k] * P + ref];
        return v == 0.0f && !keep_zero ? NAN : v;
      };
      const std::size_t defined = no_ref || keep_zero ? P : ref;  // kept zeros solve to 0 there anyway
      const double err = testing::max_lstsq_error(a, n, m, P, y, [&](std::size_t j, std::size_t p) { return referenced(xe.value(j * P + p), p, defined); });
      QVERIFY2(err <= 1e-9, qPrintable(extra.join(' ') + QString(": %1").arg(err)));
    }
    // The reference pixel (2, 3) is 0 by definition, in .npy as in MintPy's
    // layout, with a status of its own, and verify agrees.
    {
      QProcess run;
      run.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("refx.npy"), "--diag",
                                dir_.filePath("refd"), "--json"});
      QVERIFY(run.waitForFinished(60000));
      QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
      QVERIFY(run.readAllStandardOutput().contains("\"reference\": 1"));
      const Array xr = read_npy(file("refx.npy")), st = read_npy(file("refd_status.npy"));
      const std::size_t p = 2 * W + 3;
      for (std::size_t j = 0; j < xr.dim(0); ++j) QCOMPARE(xr.value(j * H * W + p), 0.0);
      QCOMPARE(static_cast<int>(st.value(p)), static_cast<int>(PixelStatus::Reference));
      QProcess check;
      check.start(CUBESOLVE_CLI, {"verify", dir_.filePath("rules.h5"), "sbas", dir_.filePath("refx.npy"), "--sample", "0"});
      QVERIFY(check.waitForFinished(60000));
      QVERIFY2(check.exitCode() == 0, check.readAllStandardError().constData());
    }
    // A reference pixel without a value in some interferogram is refused.
    QProcess nan_ref;
    nan_ref.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("nanref.npy"), "--ref-yx", "0,0"});
    QVERIFY(nan_ref.waitForFinished(60000));
    QCOMPARE(nan_ref.exitCode(), 2);
    QVERIFY(nan_ref.readAllStandardError().contains("expected a value at the reference pixel (0, 0) in every interferogram"));
    // Without a reference pixel or refPhase: a clear message and nothing written.
    extras.attributes = {{"NCORRLOOKS", "7.3"}};
    testing::write_stack(file("noref.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    QProcess bad;
    bad.start(CUBESOLVE_CLI, {"solve", dir_.filePath("noref.h5"), "sbas", "-o", dir_.filePath("noref.npy")});
    QVERIFY(bad.waitForFinished(60000));
    QCOMPARE(bad.exitCode(), 2);
    const QString err = bad.readAllStandardError();
    QVERIFY2(err.contains("noref.h5") && err.contains("REF_Y") && err.contains("solve it unreferenced"), qPrintable(err));
    QVERIFY(!QFile::exists(dir_.filePath("noref.npy")));
    // A reference that is no reference: REF_Y not a pixel index, a refPhase
    // of NaN (every value would be NaN), and --looks 0.
    auto refused = [&](const char* name, const QStringList& more, const char* fragment) {
      QProcess r;
      r.start(CUBESOLVE_CLI, QStringList{"solve", dir_.filePath(name), "sbas", "-o", dir_.filePath("refused.npy")} + more);
      QVERIFY(r.waitForFinished(60000));
      const QString e = r.readAllStandardError();
      QVERIFY2(r.exitCode() == 2 && e.contains(name) && e.contains(fragment), qPrintable(e));
      QVERIFY(!QFile::exists(dir_.filePath("refused.npy")));
    };
    extras.attributes = {{"REF_Y", "1.5"}, {"REF_X", "3"}, {"NCORRLOOKS", "7.3"}};
    testing::write_stack(file("halfref.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    refused("halfref.h5", {}, "expected a pixel index (a whole number >= 0) in the attribute REF_Y, found '1.5'");
    std::vector<float> nan_phase(N, NAN);
    extras.attributes = {{"NCORRLOOKS", "7.3"}};
    extras.ref_phase = nan_phase.data();
    testing::write_stack(file("nanphase.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    refused("nanphase.h5", {}, "expected a number in 'refPhase' for every interferogram, found nan");
    QProcess looks;
    looks.start(CUBESOLVE_CLI, {"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("refused.npy"), "--weight-func",
                                "var", "--looks", "0"});
    QVERIFY(looks.waitForFinished(60000));
    QVERIFY(looks.exitCode() == 2 && looks.readAllStandardError().contains("--looks: expected the number of independent looks (>= 1), found '0'"));
    // refPhase stands in for the reference pixel.
    std::vector<float> ref_phase(N);
    for (std::size_t k = 0; k < N; ++k) ref_phase[k] = phase[k * P + ry * W + rx];
    extras.ref_phase = ref_phase.data();
    testing::write_stack(file("noref.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    const Array via_ref = [&] {
      QProcess r;
      r.start(CUBESOLVE_CLI, {"solve", dir_.filePath("noref.h5"), "sbas", "-o", dir_.filePath("viaref.npy"), "--dtype", "float64"});
      r.waitForFinished(60000);
      return read_npy(file("viaref.npy"));
    }();
    for (std::size_t i = 0; i < x.size(); ++i)  // but the reference pixel, which refPhase does not name (no data there)
      QVERIFY(x.value(i) == via_ref.value(i) || (std::isnan(x.value(i)) && std::isnan(via_ref.value(i))) ||
              (i % P == ry * W + rx && std::isnan(via_ref.value(i))));
    // A reference area: each interferogram less the mean of its valid values
    // (not 0) in the 3 x 3 pixels about (2, 3), as a refPhase of those means
    // gives; the centre is then not marked as the reference.
    std::vector<float> area_mean(N);
    for (std::size_t k = 0; k < N; ++k) {
      double sum = 0;
      std::size_t count = 0;
      for (std::size_t y = ry - 1; y <= ry + 1; ++y)
        for (std::size_t c = rx - 1; c <= rx + 1; ++c)
          if (const float v = phase[k * P + y * W + c]; std::isfinite(v) && v != 0.0f) sum += v, ++count;
      area_mean[k] = static_cast<float>(sum / static_cast<double>(count));
    }
    extras.ref_phase = area_mean.data();
    testing::write_stack(file("areamean.h5"), N, H, W, phase.data(), &dates, keep.data(), extras);
    auto solve_stack = [&](const QString& stack, const char* out, const QStringList& more) {
      QProcess r;
      r.start(CUBESOLVE_CLI, QStringList{"solve", dir_.filePath(stack), "sbas", "-o", dir_.filePath(out), "--dtype", "float64"} + more);
      r.waitForFinished(60000);
      return read_npy(file(out));
    };
    const Array via_means = solve_stack("areamean.h5", "viameans.npy", {});
    const Array via_area = solve_stack("rules.h5", "viaarea.npy", {"--ref-radius", "1", "--diag", dir_.filePath("area")});
    QCOMPARE(via_area.shape(), via_means.shape());
    for (std::size_t i = 0; i < via_area.size(); ++i)
      QVERIFY(via_area.value(i) == via_means.value(i) || (std::isnan(via_area.value(i)) && std::isnan(via_means.value(i))));
    QVERIFY(read_npy(file("area_status.npy")).value(ry * W + rx) != static_cast<double>(PixelStatus::Reference));
    for (const auto& [more, message] : {std::pair{QStringList{"--ref-radius", "1.5"}, "--ref-radius: expected the reference area's half-width"},
                                        std::pair{QStringList{"--ref-radius", "1", "--no-ref"}, "--ref-radius: expected a reference area or --no-ref"}}) {
      QProcess r;
      r.start(CUBESOLVE_CLI, QStringList{"solve", dir_.filePath("rules.h5"), "sbas", "-o", dir_.filePath("refused.npy")} + more);
      QVERIFY(r.waitForFinished(60000));
      QVERIFY(r.exitCode() == 2 && r.readAllStandardError().contains(message));
    }
    // Stack options on a cube that is no stack are refused.
    OutputSet out;
    out.add_npy(file("plain.npy"), Array(DType::Float32, {2, 2, 2}));
    out.commit();
    write("A.csv", "1\n1\n");
    QProcess plain;
    plain.start(CUBESOLVE_CLI, {"solve", dir_.filePath("plain.npy"), dir_.filePath("A.csv"), "-o", dir_.filePath("p.npy"), "--weight-func", "var"});
    QVERIFY(plain.waitForFinished(60000));
    QCOMPARE(plain.exitCode(), 2);
    QVERIFY(plain.readAllStandardError().contains("--weight-func: expected a MintPy stack"));
  }
#endif

  // --nodata: a value that means missing, in the cube's own precision.
  void noDataValue() {
    Array cube(DType::Float32, {3, 1, 2});
    const float v[6] = {1, -9999, 2, 3, 0.1f, 5};
    std::copy(v, v + 6, cube.data<float>());
    OutputSet out;
    out.add_npy(file("nd.npy"), cube);
    out.commit();
    write("ones.csv", "1\n1\n1\n");
    for (const char* nodata : {"-9999", "0.1"}) {
      QProcess run;
      run.start(CUBESOLVE_CLI, {"solve", dir_.filePath("nd.npy"), dir_.filePath("ones.csv"), "-o", dir_.filePath("nd_x.npy"),
                                "--dtype", "float64", "--nodata", nodata});
      QVERIFY(run.waitForFinished(60000));
      QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
      const Array x = read_npy(file("nd_x.npy"));
      // The mean of each pixel's valid values: (1+2+0.1)/3 or (1+2)/2; (-9999+3+5)/3 or (3+5)/2.
      const bool first = std::string(nodata) == "-9999";
      QCOMPARE(static_cast<float>(x.value(0)), first ? static_cast<float>((1.0 + 2.0 + double(0.1f)) / 3) : 1.5f);
      QCOMPARE(static_cast<float>(x.value(1)), first ? 4.0f : static_cast<float>((-9999.0 + 3 + 5) / 3));
    }
  }

#ifdef CUBESOLVE_TEST_HDF5
  // MintPy's maps (velocity.h5) read as they are: every 2-D dataset a band
  // with its name and unit, the rest of the file left out; solved by the
  // identity with maps_inputs, each channel is its map, NaN where that map
  // is (not the minimum norm's 0 beside a map the pixel has).
  void mintpyMaps() {
    const hsize_t H = 3, W = 4, P = H * W;
    std::vector<float> v(P), s(P);
    for (hsize_t p = 0; p < P; ++p) v[p] = 0.01f * static_cast<float>(p) - 0.03f, s[p] = 0.001f * static_cast<float>(p + 1);
    v[3] = NAN;
    s[5] = NAN;
    testing::write_maps(file("velocity.h5"), H, W, {{"velocity", v, "m/year"}, {"velocityStd", s, ""}, {"intercept", v, "m"}},
                        {{"FILE_TYPE", "velocity"}, {"UNIT", "m/year"}, {"REF_Y", "1"}, {"REF_X", "2"}}, true);
    QVERIFY(is_mintpy_maps(file("velocity.h5")));
    std::vector<std::string> names, units;
    StackInfo info;
    const Array maps = read_mintpy_maps(file("velocity.h5"), &names, &units, &info);
    QCOMPARE(maps.shape(), (Shape{3, H, W}));
    QCOMPARE(names, (std::vector<std::string>{"velocity", "intercept", "velocityStd"}));  // what the file is, first
    QCOMPARE(units, (std::vector<std::string>{"m/year", "m", "m/year"}));  // the dataset's, else the file's
    QCOMPARE(info.attribute("FILE_TYPE"), std::string("velocity"));
    QVERIFY(info.ref_y == 1 && info.ref_x == 2);
    const Inputs in = maps_inputs(names);
    SolveResult r = solve(maps, in.design);
    QCOMPARE(r.x.value(2 * P + 5), 0.0);  // the minimum norm's, before finish()
    in.finish(r, maps, nullptr, SolveOptions{}, 0);
    for (std::size_t i = 0; i < maps.size(); ++i)
      QVERIFY2(std::isnan(maps.value(i)) ? std::isnan(r.x.value(i)) : std::fabs(r.x.value(i) - maps.value(i)) <= 1e-7,
               qPrintable(QString("value %1: %2 vs %3").arg(i).arg(r.x.value(i)).arg(maps.value(i))));
    QCOMPARE(in.x_names, names);
    // What is no maps file: a stack, a file without a 2-D dataset, no HDF5.
    const unsigned char keep[1] = {1};
    testing::write_stack(file("stack.h5"), 1, H, W, v.data(), nullptr, keep);
    QVERIFY(!is_mintpy_maps(file("stack.h5")));
    testing::write_maps(file("none.h5"), H, W, {}, {{"FILE_TYPE", "velocity"}}, true);
    QVERIFY(!is_mintpy_maps(file("none.h5")));
    write("text.h5", "no HDF5");
    QVERIFY(!is_mintpy_maps(file("text.h5")) && !is_mintpy_maps(file("missing.h5")));
    for (const char* bad : {"none.h5", "text.h5"}) {
      try {
        read_mintpy_maps(file(bad), nullptr, nullptr, nullptr);
        QFAIL("read");
      } catch (const InputError& e) {
        QVERIFY2(std::string(e.what()).find(bad) != std::string::npos, e.what());
      }
    }
  }

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
    StackOptions raw;
    raw.reference = false;
    raw.zero_is_nodata = false;
    const InsarStack s = read_mintpy_stack(file("ifgramStack.h5"), raw);
    QCOMPARE(s.cube.shape(), (Shape{N, H, W}));
    QCOMPARE(s.pairs[3], (DatePair{"20200113", "20200206"}));
    QCOMPARE(s.keep[3], false);
    QCOMPARE(kept_only(s).cube.dim(0), std::size_t{6});

    QProcess run;
    run.start(CUBESOLVE_CLI,
              {"solve", dir_.filePath("ifgramStack.h5"), "sbas", "-o", dir_.filePath("ts.npy"), "--dtype", "float64", "--no-ref"});
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
    month.start(CUBESOLVE_CLI, {"solve", dir_.filePath("baddate.h5"), "sbas", "-o", dir_.filePath("m.npy"), "--no-ref"});
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
