// Mask analysis against a brute-force count.
#include "reference.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/data/mask.hpp>

#include <QtTest>

#include <cmath>
#include <map>

using namespace cubesolve;

class TestMasks : public QObject {
  Q_OBJECT
private slots:
  void groupsMatchBruteForce_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("blobs");
    QTest::addColumn<double>("missing");
    QTest::newRow("random, one word") << 20 << false << 0.2;
    QTest::newRow("random, few rows (many shared masks)") << 6 << false << 0.3;
    QTest::newRow("blobs, three words") << 130 << true << 0.0;
    QTest::newRow("blobs, exactly 64 rows") << 64 << true << 0.0;
  }
  void groupsMatchBruteForce() {
    QFETCH(int, n);
    QFETCH(bool, blobs);
    QFETCH(double, missing);
    const std::size_t N = static_cast<std::size_t>(n), H = 37, W = 41, P = H * W;
    testing::Rng rng(123);
    std::vector<double> y(N * P);
    std::size_t nan = 0, inf = 0;
    for (std::size_t i = 0; i < N; ++i) {
      // Blob masks: every 8th observation loses one disc, so neighbours share masks.
      const double cr = rng.uniform() * H, cc = rng.uniform() * W, rad = 4 + rng.uniform() * 10;
      for (std::size_t p = 0; p < P; ++p) {
        const double r = static_cast<double>(p / W), c = static_cast<double>(p % W);
        bool gone = blobs ? i % 8 == 0 && (r - cr) * (r - cr) + (c - cc) * (c - cc) < rad * rad : rng.uniform() < missing;
        y[i * P + p] = rng.normal();
        if (gone) {
          if (rng.uniform() < 0.2) {
            y[i * P + p] = -HUGE_VAL;
            ++inf;
          } else {
            y[i * P + p] = std::nan("");
            ++nan;
          }
        }
      }
    }
    const Array cube = testing::make_cube(DType::Float32, N, H, W, y);
    const MaskStats s = analyze_masks(cube);

    std::map<std::vector<bool>, std::size_t> count;
    std::vector<std::vector<bool>> mask_of(P);
    std::vector<std::size_t> valid_hist(N + 1, 0);
    for (std::size_t p = 0; p < P; ++p) {
      std::vector<bool> m(N);
      std::size_t v = 0;
      for (std::size_t i = 0; i < N; ++i) v += (m[i] = std::isfinite(y[i * P + p]));
      ++count[m];
      ++valid_hist[v];
      QCOMPARE(static_cast<std::size_t>(s.n_valid[p]), v);
      for (std::size_t i = 0; i < N; ++i)
        QCOMPARE(((s.masks[p * s.words + i / 64] >> (i % 64)) & 1) != 0, bool(m[i]));
      mask_of[p] = std::move(m);
    }
    QCOMPARE(s.words, (N + 63) / 64);
    QCOMPARE(s.nan_count, nan);
    QCOMPARE(s.inf_count, inf);
    QCOMPARE(s.missing, nan + inf);
    QCOMPARE(s.distinct_masks(), count.size());
    QCOMPARE(s.valid_histogram(), valid_hist);
    for (std::size_t p = 0; p < P; ++p)
      QCOMPARE(s.group_size[static_cast<std::size_t>(s.group_of[p])], count[mask_of[p]]);
    // Same group exactly when same mask (checked against a neighbour and a far pixel).
    for (std::size_t p = 1; p < P; ++p) {
      QCOMPARE(s.group_of[p] == s.group_of[p - 1], mask_of[p] == mask_of[p - 1]);
      QCOMPARE(s.group_of[p] == s.group_of[P - 1 - p], mask_of[p] == mask_of[P - 1 - p]);
    }
    for (std::size_t k : {1, 2, 16, 256}) {
      std::size_t expect = 0;
      for (const auto& [m, c] : count)
        if (c >= k) expect += c;
      QCOMPARE(s.pixels_in_groups_of_at_least(k), expect);
    }
    std::size_t groups = 0, pixels = 0;
    for (const LogBin& b : s.group_histogram()) {
      QVERIFY(b.hi == 2 * b.lo);
      groups += b.groups;
      pixels += b.pixels;
    }
    QCOMPARE(groups, count.size());
    QCOMPARE(pixels, P);
    if (blobs) QVERIFY(s.pixels_in_groups_of_at_least(16) > 0);
  }

  // A block of rows at a time (one-row blocks, blocks of an odd size, a
  // block without any valid value): the same statistics as the whole cube.
  void byRowsAsTheWholeCube() {
    testing::Rng rng(4);
    const std::size_t N = 70, H = 23, W = 9;
    Array cube(DType::Float32, {N, H, W}), weights(DType::Float64, {N, H, W});
    for (std::size_t i = 0; i < cube.size(); ++i) {
      const std::size_t row = (i / W) % H;
      cube.data<float>()[i] = (row >= 5 && row < 12) || rng.uniform() < 0.3 ? NAN : static_cast<float>(rng.normal());
      weights.data<double>()[i] = rng.uniform() < 0.1 ? 0.0 : 1.0;
    }
    for (const Array* w : std::initializer_list<const Array*>{nullptr, &weights}) {
      const MaskStats whole = analyze_masks(cube, w);
      for (std::size_t rows : {std::size_t{1}, std::size_t{7}, H}) {
        MaskStats s = masks_for(N, H, W);
        for (std::size_t r0 = 0; r0 < H; r0 += rows) {
          const std::size_t r1 = std::min(H, r0 + rows);
          const Array block = take_rows(cube, r0, r1), wb = take_rows(weights, r0, r1);
          pack_rows(s, r0, block, w ? &wb : nullptr);
        }
        group_masks(s);
        QVERIFY(s.masks == whole.masks && s.n_valid == whole.n_valid && s.group_of == whole.group_of && s.group_size == whole.group_size);
        QVERIFY(s.nan_count == whole.nan_count && s.zero_weight == whole.zero_weight && s.missing == whole.missing);
        compact_masks(s);  // one mask per group, the same answers
        QVERIFY(s.compact && s.masks.size() == s.distinct_masks() * s.words);
        for (std::size_t p = 0; p < s.pixels(); ++p)
          for (std::size_t i = 0; i < N; ++i) QCOMPARE(s.valid(p, i), whole.valid(p, i));
      }
    }
    MaskStats s = masks_for(N, H, W);
    QVERIFY_THROWS_EXCEPTION(InputError, pack_rows(s, H - 1, take_rows(cube, 0, 2)));  // past the last row
  }

  void zeroWeightIsMissing() {
    std::vector<double> y(3 * 2 * 2, 1.0), w(3 * 2 * 2, 1.0);
    w[0] = 0;
    w[5] = std::nan("");
    const Array cube = testing::make_cube(DType::Float64, 3, 2, 2, y);
    const Array wt = testing::make_cube(DType::Float64, 3, 2, 2, w);
    const MaskStats s = analyze_masks(cube, &wt);
    QCOMPARE(s.zero_weight, std::size_t{2});
    QCOMPARE(s.n_valid[0], 2);
    QCOMPARE(s.n_valid[1], 2);
    QCOMPARE(s.n_valid[2], 3);
    QCOMPARE(s.distinct_masks(), std::size_t{3});
    QVERIFY_THROWS_EXCEPTION(InputError, analyze_masks(testing::make_cube(DType::Float64, 3, 1, 4, std::vector<double>(12)), &wt));
  }
};

QTEST_GUILESS_MAIN(TestMasks)
#include "tst_masks.moc"
