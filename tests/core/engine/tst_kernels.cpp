// The engine's small dense kernels (engine/kernels.hpp) against plain
// loops and the one-system Cholesky: the batched factorizations in each
// lane width, the float32 factorization with its refinement, and the row
// kernels' ends.
#include "cases.hpp"

#include "engine/kernels.hpp"
#include "engine/planner.hpp"

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace cubesolve;
using namespace testing;

namespace {

/// The batched Cholesky in the lanes of V against the one-system kernel
/// (see TestKernels::batchedCholeskyMatchesOneSystem).
template <class V>
void batched_matches_one(std::uint64_t seed) {
  constexpr std::size_t L = detail::Lanes<V>::W;
  Rng rng(seed);
  for (const std::size_t n : {1, 2, 3, 4, 5, 7, 8, 9, 13, 31, 64, 123}) {
    std::vector<double> packed(detail::tri(n) * L), b(n * L);
    std::vector<std::vector<double>> full(L, std::vector<double>(n * n));
    for (std::size_t l = 0; l < L; ++l) {
      // G G^T / n + I, lane 2 made singular (rank n - 1) where n > 1.
      std::vector<double> g(n * n);
      for (double& v : g) v = rng.uniform() - 0.5;
      if (l == 2 && n > 1)
        for (std::size_t c = 0; c < n; ++c) g[(n - 1) * n + c] = g[c];
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) {
          double v = 0;
          for (std::size_t k = 0; k < n; ++k) v += g[i * n + k] * g[j * n + k];
          full[l][i * n + j] = l == 2 && n > 1 ? v : v / static_cast<double>(n) + (i == j);
        }
      for (std::size_t i = 0; i < n; ++i) {
        for (std::size_t j = 0; j <= i; ++j) packed[(detail::tri(i) + j) * L + l] = full[l][i * n + j];
        b[i * L + l] = rng.uniform();
      }
    }
    const std::vector<double> rhs = b;
    bool ok[L];
    detail::batched_cholesky<V>(packed.data(), n, detail::kSmallTau, ok);
    detail::batched_cholesky_solve<V>(packed.data(), n, b.data());
    for (std::size_t l = 0; l < L; ++l) {
      std::vector<double> one = full[l];
      const bool one_ok = detail::cholesky(one.data(), n, detail::kSmallTau);
      QVERIFY2(ok[l] == one_ok, qPrintable(QString("%1 lanes, n=%2 lane %3").arg(L).arg(n).arg(l)));
      QVERIFY2(ok[l] == !(l == 2 && n > 1), qPrintable(QString("%1 lanes, n=%2 lane %3").arg(L).arg(n).arg(l)));
      if (!ok[l]) continue;
      for (std::size_t i = 0; i < n; ++i)  // the diagonal is kept as its reciprocals
        for (std::size_t j = 0; j <= i; ++j)
          QVERIFY(std::fabs(packed[(detail::tri(i) + j) * L + l] - (i == j ? 1 / one[i * n + j] : one[i * n + j])) <= 1e-13);
      for (std::size_t i = 0; i < n; ++i) {  // A x = b
        double r = -rhs[i * L + l];
        for (std::size_t j = 0; j < n; ++j) r += full[l][i * n + j] * b[j * L + l];
        QVERIFY2(std::fabs(r) <= 1e-12, qPrintable(QString("%1 lanes, n=%2 lane %3 row %4: %5").arg(L).arg(n).arg(l).arg(i).arg(r)));
      }
    }
  }
}

}  // namespace

class TestKernels : public QObject {
  Q_OBJECT
private slots:
  // The batched Cholesky against the one-system kernel, lane by lane: every
  // size through the blocks of four columns and the row tiles, a lane whose
  // pivot fails beside lanes that hold, and the solve after it; in the four
  // lanes of 256-bit vectors and the eight of 512-bit ones (two groups side
  // by side, with tiles of six rows).
  void batchedCholeskyMatchesOneSystem() {
    batched_matches_one<detail::Vec4>(77);
    batched_matches_one<detail::Vec8d>(78);
  }

  // The factorization and solve by rows ([S | B] to [U | U^-T B]) against the
  // one-system Cholesky and a plain forward substitution: every size through
  // its blocks of four rows (B starting inside the last block where n is not
  // a multiple of four), right-hand sides that take one or two vectors at a
  // time, a matrix that is not positive definite refused, and nothing
  // written past a row's end.
  void choleskyRowsMatchesOneSystem() {
    Rng rng(91);
    for (const std::size_t n : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 21, 33})
      for (const std::size_t cols : {1, 3, 4, 9, 50}) {
        const std::size_t m = (n + cols + 3) / 4 * 4, ld = m + 2;
        std::vector<double> g(n * n), s(n * n), w(n * ld, 7.0), b(n * cols);
        for (double& v : g) v = rng.uniform() - 0.5;
        for (double& v : b) v = rng.uniform() - 0.5;
        for (std::size_t i = 0; i < n; ++i)
          for (std::size_t j = 0; j < n; ++j) {
            double v = i == j ? 0.1 : 0.0;
            for (std::size_t k = 0; k < n; ++k) v += g[i * n + k] * g[j * n + k];
            s[i * n + j] = v;
          }
        for (std::size_t i = 0; i < n; ++i) {
          std::copy_n(s.data() + i * n, n, w.data() + i * ld);
          std::copy_n(b.data() + i * cols, cols, w.data() + i * ld + n);
          std::fill(w.data() + i * ld + n + cols, w.data() + i * ld + m, 0.0);
        }
        const QString where = QString("n=%1 columns=%2").arg(n).arg(cols);
        QVERIFY2(detail::cholesky_rows(w.data(), n, m, ld), qPrintable(where));
        QVERIFY2(detail::cholesky(s.data(), n, 0.0), qPrintable(where));
        for (std::size_t i = 0; i < n; ++i) {
          for (std::size_t j = i; j < n; ++j)  // U = L^T
            QVERIFY2(std::fabs(w[i * ld + j] - s[j * n + i]) <= 1e-12, qPrintable(where));
          for (std::size_t c = 0; c < cols; ++c) {
            double z = b[i * cols + c];
            for (std::size_t k = 0; k < i; ++k) z -= s[i * n + k] * w[k * ld + n + c];
            QVERIFY2(std::fabs(w[i * ld + n + c] - z / s[i * n + i]) <= 1e-12, qPrintable(where));
          }
          QCOMPARE(w[i * ld + m], 7.0);
          QCOMPARE(w[i * ld + m + 1], 7.0);
        }
        for (std::size_t i = 0; i < n; ++i)  // diag(1, ..., 1, -1): not positive definite
          for (std::size_t j = i; j < n; ++j) w[i * ld + j] = j == i ? (i + 1 < n ? 1.0 : -1.0) : 0.0;
        QVERIFY2(!detail::cholesky_rows(w.data(), n, m, ld), qPrintable(where));
      }
  }

  // dot, dot4, row_axpys and axpy, which end a row that is not a multiple of four
  // with one vector step over its last four entries, against plain sums:
  // every length through the steps of four and eight, each entry counted
  // once, nothing written past a row's end.
  void rowKernelsCountEachEntryOnce() {
    Rng rng(5);
    for (std::size_t n = 1; n <= 19; ++n) {
      const std::size_t rows = 9, pad = 4;
      std::vector<double> mat(rows * n), v(n), coef(rows * 2);
      for (double& e : mat) e = rng.uniform() - 0.5;
      for (double& e : v) e = rng.uniform() + 1.0;
      for (double& e : coef) e = rng.uniform() - 0.5;
      auto plain = [&](std::size_t r) {
        double s = 0;
        for (std::size_t i = 0; i < n; ++i) s += mat[r * n + i] * v[i];
        return s;
      };
      const QString at = QString("n=%1").arg(n);
      QVERIFY2(std::fabs(detail::dot(mat.data(), v.data(), n) - plain(0)) <= 1e-14, qPrintable(at));
      const std::size_t src[4] = {3, 1, 4, 2};
      const double* four[4] = {&mat[src[0] * n], &mat[src[1] * n], &mat[src[2] * n], &mat[src[3] * n]};
      double out[4];
      detail::dot4(four, v.data(), n, out);
      for (std::size_t t = 0; t < 4; ++t) QVERIFY2(std::fabs(out[t] - plain(src[t])) <= 1e-14, qPrintable(at));
      for (std::size_t q = 1; q <= rows; ++q) {
        std::vector<int> which(q);
        for (std::size_t a = 0; a < q; ++a) which[a] = static_cast<int>((a * 5) % rows);
        std::vector<double> x(n + pad, 7.0), want(n);
        for (std::size_t i = 0; i < n; ++i) x[i] = want[i] = rng.uniform();
        for (std::size_t a = 0; a < q; ++a)
          for (std::size_t i = 0; i < n; ++i) want[i] += coef[a * 2] * mat[static_cast<std::size_t>(which[a]) * n + i];
        detail::row_axpys(mat.data(), n, which.data(), q, coef.data(), 2, x.data());
        detail::axpy(0.25, v.data(), x.data(), n);
        for (std::size_t i = 0; i < n; ++i) want[i] += 0.25 * v[i];
        for (std::size_t i = 0; i < n; ++i)
          QVERIFY2(std::fabs(x[i] - want[i]) <= 1e-14, qPrintable(at + QString(" q=%1 entry %2").arg(q).arg(i)));
        for (std::size_t i = n; i < n + pad; ++i) QCOMPARE(x[i], 7.0);
      }
    }
  }

  // The float32 factorization and its float64 refinement against the
  // float64 Cholesky, lane by lane, over sizes through the blocks and tiles:
  // well-conditioned lanes; a tridiagonal lane of condition ~1e3 (several
  // refinement steps); a lane whose last pivot clears tau but not the float32
  // path's 4 tau, and a singular one (both to float64, which decides); a zero
  // right-hand side. The others must be solved in float32, and every answer
  // must be the float64 solve's, to 1e-12.
  void mixedFactorMatchesFloat64() {
    constexpr std::size_t L = detail::kLanes;
    Rng rng(78);
    for (const std::size_t G : {2, 4})  // eight float lanes, and the sixteen of 512-bit vectors
      for (const std::size_t n : {64, 65, 97, 130}) {
        const std::size_t T = detail::tri(n);
        std::vector<double> S(G * T * L), rhs(G * n * L);
        for (std::size_t lane = 0; lane < G * L; ++lane) {
          const std::size_t g = lane / L, l = lane % L;
          std::vector<double> full(n * n, 0.0);
          if (lane == 1) {  // tridiagonal (-a, 1, -a), a just below 1/2
            for (std::size_t i = 0; i < n; ++i) {
              full[i * n + i] = 1.0;
              if (i > 0) full[i * n + i - 1] = full[(i - 1) * n + i] = -0.49999;
            }
          } else {  // (G G^T / n + I) / 2; lane 5 singular
            std::vector<double> gm(n * n);
            for (double& v : gm) v = rng.uniform() - 0.5;
            if (lane == 5)
              for (std::size_t c = 0; c < n; ++c) gm[(n - 1) * n + c] = gm[c];
            for (std::size_t i = 0; i < n; ++i)
              for (std::size_t j = 0; j < n; ++j) {
                double v = 0;
                for (std::size_t k = 0; k < n; ++k) v += gm[i * n + k] * gm[j * n + k];
                full[i * n + j] = lane == 5 ? v / static_cast<double>(n) : (v / static_cast<double>(n) + (i == j)) / 2;
              }
          }
          if (lane == 3) {  // the last pivot 2 tau times the largest diagonal entry
            std::vector<double> head(n * n, 0.0), v(n - 1);
            for (std::size_t i = 0; i + 1 < n; ++i) {
              v[i] = full[(n - 1) * n + i];
              for (std::size_t j = 0; j + 1 < n; ++j) head[i * (n - 1) + j] = full[i * n + j];
            }
            std::vector<double> w = v;
            QVERIFY(detail::cholesky(head.data(), n - 1, 0.0));
            detail::cholesky_solve(head.data(), n - 1, w.data());
            double dmax = 0, vw = 0;
            for (std::size_t i = 0; i + 1 < n; ++i) dmax = std::max(dmax, full[i * n + i]), vw += v[i] * w[i];
            full[(n - 1) * n + n - 1] = vw + 2 * detail::kSmallTau * std::max(dmax, vw);
          }
          for (std::size_t i = 0; i < n; ++i) {
            for (std::size_t j = 0; j <= i; ++j) S[g * T * L + (detail::tri(i) + j) * L + l] = full[i * n + j];
            rhs[g * n * L + i * L + l] = lane == 6 ? 0.0 : rng.uniform() - 0.5;
          }
        }
        // The float64 answer, group by group.
        std::vector<double> S64 = S, x64 = rhs;
        bool ok64[4 * L];
        for (std::size_t g = 0; g < G; ++g) {
          detail::batched_cholesky(S64.data() + g * T * L, n, detail::kSmallTau, ok64 + g * L);
          detail::batched_cholesky_solve(S64.data() + g * T * L, n, x64.data() + g * n * L);
        }
        std::vector<double> x = rhs, work(3 * G * n * L);
        std::vector<float> f32((T + n) * G * L);
        double* z[4] = {};
        for (std::size_t g = 0; g < G; ++g) z[g] = x.data() + g * n * L;
        bool ok[4 * L];
        const unsigned refined =
            G == 4 ? detail::batched_solve_mixed<4>(S.data(), n, z, f32.data(), work.data(), detail::kSmallTau, ok)
                   : detail::batched_solve_mixed<2>(S.data(), n, z, f32.data(), work.data(), detail::kSmallTau, ok);
        const unsigned all = (1u << (G * L)) - 1;
        QCOMPARE(refined, all & ~(1u << 3 | 1u << 5));  // all but the two float64 ones in float32
        for (std::size_t lane = 0; lane < G * L; ++lane) {
          const std::size_t g = lane / L, l = lane % L;
          const QString where = QString("%1 lanes, n=%2 lane %3").arg(G * L).arg(n).arg(lane);
          QVERIFY2(ok[lane] == ok64[lane] && ok[lane] == (lane != 5), qPrintable(where));
          if (!ok[lane]) continue;
          double scale = 0, diff = 0;
          for (std::size_t i = 0; i < n; ++i) {
            const double a = x64[g * n * L + i * L + l], b = x[g * n * L + i * L + l];
            scale = std::max(scale, std::fabs(a));
            diff = std::max(diff, std::fabs(a - b));
          }
          QVERIFY2(diff <= 1e-12 * scale, qPrintable(where + QString(": %1 of %2").arg(diff).arg(scale)));
        }
      }
  }
};

QTEST_GUILESS_MAIN(TestKernels)
#include "tst_kernels.moc"
