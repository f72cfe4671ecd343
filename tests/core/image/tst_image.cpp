// Colour scales, colour maps, the ticks of colour bars, and profiles.
#include <cubesolve/error.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/image/profile.hpp>

#include <QtTest>

#include <cmath>

using namespace cubesolve;

class TestImage : public QObject {
  Q_OBJECT
private slots:
  // Steps of 1, 2 or 5 times a power of ten, no smaller than the range over `count`.
  void ticksAreRound() {
    QCOMPARE(nice_ticks(0, 110, 6, true), (std::vector<double>{0, 20, 40, 60, 80, 100}));
    QCOMPARE(nice_ticks(-1.17, 1.17, 5), (std::vector<double>{-1, -0.5, 0, 0.5, 1}));
    QCOMPARE(nice_ticks(0, 29, 6, true), (std::vector<double>{0, 5, 10, 15, 20, 25}));
    // Counts never get fractional ticks (a rank map of 0..3 is no 0.75 step).
    QCOMPARE(nice_ticks(0, 3, 5, true), (std::vector<double>{0, 1, 2, 3}));
    QVERIFY(nice_ticks(1, 1, 5).empty());
    QVERIFY(nice_ticks(0, std::nan(""), 5).empty());
    for (double t : nice_ticks(-3e-7, 7e-7, 4)) QVERIFY(t >= -3e-7 && t <= 7e-7);
  }

  void tickLabelsAreShort() {
    QCOMPARE(tick_label(0.5, 0.5), std::string("0.5"));
    QCOMPARE(tick_label(100, 20), std::string("100"));  // whole, not "100."
    QCOMPARE(tick_label(-1, 0.5), std::string("-1.0"));
    QCOMPARE(tick_label(0.25, 0.05), std::string("0.25"));
    QCOMPARE(tick_label(2e-7, 1e-7), std::string("2e-07"));
    QCOMPARE(tick_label(3e6, 1e6), std::string("3e+06"));
  }

  void scaleMapsValuesToColours() {
    const ColorScale s{Colormap::Viridis, false, 0, 10};
    QCOMPARE(s.index(0), 0);
    QCOMPARE(s.index(10), 255);
    QCOMPARE(s.index(-5), 0);   // clipped to the ends
    QCOMPARE(s.index(50), 255);
    QCOMPARE(s.index(std::nan("")), -1);
    QCOMPARE(s.color(std::nan("")), (std::array<std::uint8_t, 3>{128, 128, 128}));
    const ColorScale r{Colormap::Viridis, true, 0, 10};
    QCOMPARE(r.index(0), 255);
    QCOMPARE(r.color(10), s.color(0));
    const std::uint8_t* t = colormap_table(Colormap::Viridis);
    QCOMPARE(s.color(10), (std::array<std::uint8_t, 3>{t[765], t[766], t[767]}));
  }

  void colourMaps() {
    for (int k = 0; k < kColormapCount; ++k) QVERIFY(colormap_table(static_cast<Colormap>(k)) != nullptr);
    QCOMPARE(std::string(colormap_name(Colormap::Twilight)), std::string("twilight"));
    // Twilight is cyclic: its ends meet (phase -pi and pi look the same).
    const std::uint8_t* tw = colormap_table(Colormap::Twilight);
    for (int c = 0; c < 3; ++c) QVERIFY(std::abs(tw[c] - tw[765 + c]) <= 4);
    QVERIFY(std::abs(tw[3 * 128] - tw[0]) > 100);  // and its middle is far from them
    // Grey goes from black to white, one step an entry.
    const std::uint8_t* g = colormap_table(Colormap::Grey);
    for (int i = 0; i < 256; ++i) QCOMPARE(int(g[3 * i]), i);
  }

  // The tables hold the published colour maps: entries 0, 100 and 255 of each
  // against the published floating-point tables (Scientific colour maps 8.0,
  // cmocean 4.0), to the byte (v * 255 rounded).
  void colourMapsAreThePublishedTables() {
    struct Sample {
      Colormap map;
      int entry;
      double r, g, b;
    };
    const Sample samples[] = {
        {Colormap::Batlow, 0, 0.005193, 0.098238, 0.349842},   {Colormap::Batlow, 100, 0.327007, 0.4579, 0.286377},
        {Colormap::Batlow, 255, 0.981354, 0.800406, 0.981267}, {Colormap::Vik, 0, 0.001328, 0.069836, 0.379529},
        {Colormap::Vik, 100, 0.628351, 0.774452, 0.846058},    {Colormap::Vik, 255, 0.350423, 6.1e-05, 0.030499},
        {Colormap::Roma, 0, 0.492325, 0.090787, 7.6e-05},      {Colormap::Roma, 255, 0.009824, 0.192129, 0.596704},
        {Colormap::Broc, 100, 0.683568, 0.76016, 0.834202},    {Colormap::Broc, 255, 0.150046, 0.150558, 0.00193},
        {Colormap::RomaO, 100, 0.822394, 0.767865, 0.440566},  {Colormap::BrocO, 0, 0.214288, 0.184671, 0.218215},
        {Colormap::Balance, 0, 0.093176, 0.111173, 0.261512},  {Colormap::Balance, 100, 0.64254, 0.750659, 0.787451},
        {Colormap::Balance, 255, 0.236056, 0.035297, 0.069437}, {Colormap::Viridis, 0, 0.267004, 0.004874, 0.329415},
        {Colormap::Cividis, 255, 0.995737, 0.909344, 0.217772},
    };
    for (const Sample& s : samples) {
      const std::uint8_t* t = colormap_table(s.map) + 3 * s.entry;
      const double want[] = {s.r, s.g, s.b};
      for (int c = 0; c < 3; ++c)
        QVERIFY2(std::abs(t[c] - want[c] * 255) <= 0.5 + 1e-9,
                 qPrintable(QString("%1[%2]").arg(colormap_name(s.map)).arg(s.entry)));
    }
    // Names, kinds, and the cyclic maps' ends that meet.
    for (int k = 0; k < kColormapCount; ++k) {
      const auto map = static_cast<Colormap>(k);
      QCOMPARE(colormap_by_name(colormap_name(map)), std::optional<Colormap>(map));
      if (colormap_kind(map) == ColormapKind::Cyclic) {
        const std::uint8_t* t = colormap_table(map);
        for (int c = 0; c < 3; ++c) QVERIFY(std::abs(t[c] - t[765 + c]) <= 4);
      }
    }
    QCOMPARE(colormap_by_name("ROMAO"), std::optional<Colormap>(Colormap::RomaO));
    QVERIFY(!colormap_by_name("jet"));
    QCOMPARE(colormap_kind(Colormap::Vik), ColormapKind::Diverging);
    QCOMPARE(colormap_kind(Colormap::Batlow), ColormapKind::Sequential);
  }

  // Equal bins over [lo, hi], hi in the last; outside values and NaN not counted.
  void histogramCounts() {
    const std::vector<double> v{0, 0.5, 0.99, 1, 2.5, 4, 4.0000001, -1e-9, std::nan(""), 3.999};
    QCOMPARE(histogram(v.data(), v.size(), 0, 4, 4), (std::vector<std::size_t>{3, 1, 1, 2}));
    QCOMPARE(histogram(v.data(), v.size(), 1, 1, 3), (std::vector<std::size_t>{0, 0, 0}));
    const auto wide = robust_range(v.data(), v.size(), false, 0.0);
    QCOMPARE(wide.first, -1e-9);
    QCOMPARE(wide.second, 4.0000001);
    // A map of 6M values (uniform on [0, 1), spread by the golden ratio)
    // ranged from a sample of it: its quantiles within 1e-3.
    std::vector<double> big(6'000'000);
    for (std::size_t i = 0; i < big.size(); ++i) big[i] = std::fmod(0.6180339887498949 * static_cast<double>(i), 1.0);
    const auto [lo, hi] = robust_range(big.data(), big.size(), false);
    QVERIFY2(std::fabs(lo - 0.02) < 1e-3 && std::fabs(hi - 0.98) < 1e-3, qPrintable(QString("%1 %2").arg(lo).arg(hi)));
  }

  // A profile's points are the map's values at their nearest pixels, a
  // pixel apart at most, every vertex one of them, distances along the line.
  void profileFollowsTheMap() {
    const std::size_t h = 20, w = 30;
    std::vector<double> ramp(h * w);
    for (std::size_t r = 0; r < h; ++r)
      for (std::size_t c = 0; c < w; ++c) ramp[r * w + c] = 2.0 * r + 3.0 * c;
    const std::vector<std::array<double, 2>> line{{2, 3}, {15, 25}, {15, 4}};
    const auto points = profile(ramp.data(), h, w, line);
    const double first = std::hypot(13, 22);
    QCOMPARE(points.front().distance, 0.0);
    QVERIFY(std::abs(points.back().distance - (first + 21)) < 1e-12);
    std::size_t at_vertex = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
      const ProfilePoint& p = points[i];
      QCOMPARE(p.count, std::size_t{1});
      QCOMPARE(p.mean, 2.0 * std::round(p.row) + 3.0 * std::round(p.col));
      QCOMPARE(p.std, 0.0);
      if (i > 0) QVERIFY(p.distance - points[i - 1].distance <= 1 + 1e-12 && p.distance > points[i - 1].distance);
      for (const auto& v : line) at_vertex += p.row == v[0] && p.col == v[1];
    }
    QCOMPARE(at_vertex, line.size());
    QCOMPARE(points.size(), std::size_t{26 + 21 + 1});  // ceil(25.56) steps, 21 steps, the last vertex
  }

  // Across the line: the band's values (nearest pixels, one apart), their
  // mean and population standard deviation; NaN and pixels off the map are
  // left out, and a point with none has no value.
  void profileBandAcross() {
    const std::size_t h = 30, w = 30;
    std::vector<double> rows(h * w);
    for (std::size_t r = 0; r < h; ++r)
      for (std::size_t c = 0; c < w; ++c) rows[r * w + c] = static_cast<double>(r);
    for (const ProfilePoint& p : profile(rows.data(), h, w, {{{10, 2}, {10, 20}}}, 5)) {  // across: rows 8..12
      QCOMPARE(p.count, std::size_t{5});
      QCOMPARE(p.mean, 10.0);
      QVERIFY(std::abs(p.std - std::sqrt(2.0)) < 1e-12);
    }
    for (const ProfilePoint& p : profile(rows.data(), h, w, {{{3, 7}, {25, 7}}}, 7)) {  // across: one row
      QCOMPARE(p.mean, p.row);
      QCOMPARE(p.std, 0.0);
    }
    rows[9 * w + 5] = std::nan("");
    const auto gap = profile(rows.data(), h, w, {{{10, 5}, {10, 6}}}, 3);
    QCOMPARE(gap.front().count, std::size_t{2});  // rows 10 and 11
    QCOMPARE(gap.front().mean, 10.5);
    QCOMPARE(gap.front().std, 0.5);
    const auto edge = profile(rows.data(), h, w, {{{0, -3}, {0, 2}}}, 3);
    QCOMPARE(edge.front().count, std::size_t{0});
    QVERIFY(std::isnan(edge.front().mean) && std::isnan(edge.front().std));
    QCOMPARE(edge.back().count, std::size_t{2});  // row -1 is off the map
  }

  // An area's mean: its finite values only, corners in either order, clipped to the plane.
  void areaMean() {
    std::vector<double> v(4 * 5);
    for (std::size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k);  // row r, column c: 5r + c
    QCOMPARE(area_mean(v.data(), 4, 5, 1, 1, 2, 3), (6 + 7 + 8 + 11 + 12 + 13) / 6.0);
    QCOMPARE(area_mean(v.data(), 4, 5, 2, 3, 1, 1), (6 + 7 + 8 + 11 + 12 + 13) / 6.0);
    QCOMPARE(area_mean(v.data(), 4, 5, 3, 4, 9, 9), 19.0);  // clipped
    v[19] = std::nan("");
    QVERIFY(std::isnan(area_mean(v.data(), 4, 5, 3, 4, 9, 9)));
    QVERIFY(std::isnan(area_mean(v.data(), 4, 5, 5, 0, 7, 2)));  // off the plane
  }

  void profileRefusesWhatIsNoLine() {
    const std::vector<double> v(4, 1.0);
    QVERIFY_THROWS_EXCEPTION(InputError, profile(v.data(), 2, 2, {{{0, 0}}}));
    QVERIFY_THROWS_EXCEPTION(InputError, profile(v.data(), 2, 2, {{{1, 1}, {1, 1}}}));
    QVERIFY_THROWS_EXCEPTION(InputError, profile(v.data(), 2, 2, {{{0, 0}, {1, 1}}}, 0));
    QVERIFY_THROWS_EXCEPTION(InputError, profile(v.data(), 2, 2, {{{0, 0}, {std::nan(""), 1}}}));
  }
};

QTEST_APPLESS_MAIN(TestImage)
#include "tst_image.moc"
