#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "data/random.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve {
namespace {

constexpr double kPi = 3.141592653589793;
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Y = A·X as float32, from a row-major A (N, M) and X (M, H, W).
Array forward(const Array& a, const Array& x) { return model_cube(Design(a), x); }

Array to_float32(const Array& a) {
  Array out(DType::Float32, a.shape());
  for (std::size_t i = 0; i < a.size(); ++i) out.data<float>()[i] = static_cast<float>(a.value(i));
  return out;
}

DemoCube make_seed(std::size_t S) {
  const std::size_t N = 50, M = 100, P = S * S;
  detail::Random rng(20240611);
  DemoCube d{"seed",
             "The seed setting: N=50 observations, M=100 unknowns, random A, 20% of values missing at random. "
             "Every pixel is underdetermined: the minimum-norm solution is returned.",
             {}, Array(DType::Float64, {N, M}), {}};
  for (std::size_t i = 0; i < N * M; ++i) d.design.data<double>()[i] = rng.normal();

  // Smooth, separable spatial fields for each unknown.
  Array x(DType::Float64, {M, S, S});
  for (std::size_t j = 0; j < M; ++j) {
    const double fr = rng.uniform(0.5, 3), fc = rng.uniform(0.5, 3), pr = rng.uniform(0, 2 * kPi),
                 pc = rng.uniform(0, 2 * kPi), tilt = rng.uniform(-1, 1);
    for (std::size_t r = 0; r < S; ++r) {
      const double u = static_cast<double>(r) / static_cast<double>(S);
      const double g = std::sin(2 * kPi * fr * u + pr);
      for (std::size_t c = 0; c < S; ++c) {
        const double v = static_cast<double>(c) / static_cast<double>(S);
        x.data<double>()[j * P + r * S + c] = g * std::cos(2 * kPi * fc * v + pc) + tilt * (u - v);
      }
    }
  }
  d.cube = to_float32(forward(d.design, x));
  float* y = d.cube.data<float>();
  for (std::size_t i = 0; i < N * P; ++i) {
    y[i] += static_cast<float>(0.05 * rng.normal());
    if (rng.uniform() < 0.2) y[i] = kNaN;
  }
  return d;
}

DemoCube make_insar(std::size_t S) {
  const std::size_t D = 30, M = D - 1, P = S * S, kMaxSpan = 4, kGapAfter = 14;
  detail::Random rng(19920801);
  std::vector<std::pair<std::size_t, std::size_t>> pairs;
  for (std::size_t i = 0; i < D; ++i)
    for (std::size_t j = i + 1; j < D && j - i <= kMaxSpan; ++j) pairs.emplace_back(i, j);
  const std::size_t N = pairs.size();
  DemoCube d{"insar",
             "A small-baseline InSAR stack: 30 dates 12 days apart, interferograms between dates up to 4 apart "
             "(N=110), displacement at dates 2..30 relative to the first (M=29, mm). Decorrelated patches, a lake "
             "with no data, and a field where every interferogram across dates 15-16 is lost (split network).",
             {}, Array(DType::Float64, {N, M}), {}};
  auto date = [](std::size_t i) { return date_of_day(day_number("20200101") + 12 * static_cast<long>(i)); };
  for (std::size_t k = 0; k < N; ++k) {
    const auto [i, j] = pairs[k];
    d.design.data<double>()[k * M + (j - 1)] = 1.0;
    if (i > 0) d.design.data<double>()[k * M + (i - 1)] = -1.0;
    d.pairs.emplace_back(date(i), date(j));
  }

  // Displacement (mm) at each date: a subsiding bowl, a slowly rising ridge and a seasonal term.
  Array x(DType::Float64, {M, S, S});
  for (std::size_t r = 0; r < S; ++r)
    for (std::size_t c = 0; c < S; ++c) {
      const double u = static_cast<double>(r) / static_cast<double>(S), v = static_cast<double>(c) / static_cast<double>(S);
      const double bowl = std::exp(-((u - 0.55) * (u - 0.55) + (v - 0.4) * (v - 0.4)) / 0.02);
      const double ridge = std::exp(-std::pow((u + 0.5 * v - 0.9) / 0.08, 2));
      const double season = 0.5 + 0.5 * v;
      for (std::size_t k = 1; k < D; ++k) {
        const double t = static_cast<double>(k) * 12.0 / 365.25;
        x.data<double>()[(k - 1) * P + r * S + c] =
            -40.0 * t * bowl + 8.0 * t * ridge + 4.0 * season * std::sin(2 * kPi * t);
      }
    }
  d.cube = to_float32(forward(d.design, x));
  float* y = d.cube.data<float>();

  auto inside = [](double u, double v, double cu, double cv, double ru, double rv) {
    return std::pow((u - cu) / ru, 2) + std::pow((v - cv) / rv, 2) <= 1.0;
  };
  for (std::size_t k = 0; k < N; ++k) {
    const auto [i, j] = pairs[k];
    // Decorrelated patches: more and larger for longer time spans.
    struct Blob { double cu, cv, ru, rv; };
    std::vector<Blob> blobs;
    const std::size_t count = 1 + (j - i) + static_cast<std::size_t>(rng.uniform() * 3);
    for (std::size_t b = 0; b < count; ++b)
      blobs.push_back({rng.uniform(), rng.uniform(), rng.uniform(0.03, 0.08) * static_cast<double>(j - i),
                       rng.uniform(0.03, 0.08) * static_cast<double>(j - i)});
    const bool crosses_gap = i <= kGapAfter && j > kGapAfter;
    for (std::size_t r = 0; r < S; ++r)
      for (std::size_t c = 0; c < S; ++c) {
        const double u = static_cast<double>(r) / static_cast<double>(S), v = static_cast<double>(c) / static_cast<double>(S);
        float& val = y[k * P + r * S + c];
        val += static_cast<float>(0.3 * rng.normal());
        bool lost = inside(u, v, 0.2, 0.75, 0.12, 0.18);                       // the lake
        lost = lost || (crosses_gap && u > 0.7 && u < 0.9 && v > 0.1 && v < 0.35);  // the split field
        for (const Blob& bl : blobs) lost = lost || inside(u, v, bl.cu, bl.cv, bl.ru, bl.rv);
        if (lost) val = kNaN;
      }
  }
  return d;
}

// An SBAS network of m + 1 dates: each date to the next, then n - m other
// pairs, drawn from those the fewest dates apart.
void sbas_network(std::size_t n, std::size_t m, detail::Random& rng, double* a) {
  std::vector<std::pair<std::size_t, std::size_t>> pairs, extra;
  for (std::size_t i = 0; i < m; ++i) pairs.emplace_back(i, i + 1);
  for (std::size_t span = 2; extra.size() < n - m; ++span) {
    std::vector<std::pair<std::size_t, std::size_t>> more;
    for (std::size_t i = 0; i + span <= m; ++i) more.emplace_back(i, i + span);
    for (std::size_t k = more.size(); k > 1; --k)
      std::swap(more[k - 1], more[static_cast<std::size_t>(rng.uniform() * static_cast<double>(k)) % k]);
    more.resize(std::min(more.size(), n - m - extra.size()));
    extra.insert(extra.end(), more.begin(), more.end());
  }
  pairs.insert(pairs.end(), extra.begin(), extra.end());
  std::sort(pairs.begin(), pairs.end());
  std::fill(a, a + n * m, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    a[k * m + pairs[k].second - 1] = 1.0;
    if (pairs[k].first > 0) a[k * m + pairs[k].first - 1] = -1.0;
  }
}

}  // namespace

DemoCube make_synthetic(std::size_t n, std::size_t m, std::size_t size, double missing, MaskPattern pattern,
                        SyntheticDesign design, std::uint64_t seed) {
  if (n == 0 || m == 0) throw InputError("synthetic cube: expected n >= 1 and m >= 1, found n=" + std::to_string(n) + ", m=" + std::to_string(m));
  if (design == SyntheticDesign::Sbas && (n < m || n > m * (m + 1) / 2))
    throw InputError("synthetic SBAS network: expected m <= n <= m(m+1)/2 (every date linked to the next, no pair "
                     "twice), found n=" + std::to_string(n) + ", m=" + std::to_string(m));
  if (!(missing >= 0 && missing < 1)) throw InputError("missing fraction: expected a fraction in [0, 1), found " + std::to_string(missing));
  if (size > 8192) throw InputError("size: expected 1..8192, found " + std::to_string(size));
  detail::Random rng(seed);
  const std::size_t P = size * size;
  DemoCube d{"synthetic", "Gaussian A and Y with missing values", Array(DType::Float32, {n, size, size}),
             Array(DType::Float64, {n, m}), {}};
  if (design == SyntheticDesign::Sbas) {
    sbas_network(n, m, rng, d.design.data<double>());
    d.description = "an SBAS network and Gaussian Y with missing values";
  } else {
    for (std::size_t i = 0; i < n * m; ++i) d.design.data<double>()[i] = rng.normal();
  }
  float* y = d.cube.data<float>();
  for (std::size_t i = 0; i < n * P; ++i) y[i] = static_cast<float>(rng.normal());
  if (pattern == MaskPattern::Random) {
    for (std::size_t i = 0; i < n * P; ++i)
      if (rng.uniform() < missing) y[i] = kNaN;
    return d;
  }
  // Discs of random radius, added to each observation until it has lost its share.
  for (std::size_t i = 0; i < n && missing > 0; ++i) {
    std::size_t lost = 0;
    const auto target = static_cast<std::size_t>(missing * static_cast<double>(P) * rng.uniform(0.2, 1.8));
    float* band = y + i * P;
    for (int tries = 0; lost < target && tries < 1000; ++tries) {
      const double cr = rng.uniform() * static_cast<double>(size), cc = rng.uniform() * static_cast<double>(size);
      const double rad = rng.uniform(0.03, 0.15) * static_cast<double>(size);
      const auto r0 = static_cast<std::size_t>(std::max(0.0, cr - rad)), r1 = std::min(size, static_cast<std::size_t>(cr + rad) + 1);
      const auto c0 = static_cast<std::size_t>(std::max(0.0, cc - rad)), c1 = std::min(size, static_cast<std::size_t>(cc + rad) + 1);
      for (std::size_t r = r0; r < r1 && lost < target; ++r)
        for (std::size_t c = c0; c < c1; ++c) {
          const double dr = static_cast<double>(r) - cr, dc = static_cast<double>(c) - cc;
          if (dr * dr + dc * dc <= rad * rad && !std::isnan(band[r * size + c])) {
            band[r * size + c] = kNaN;
            ++lost;
          }
        }
    }
  }
  return d;
}

std::vector<std::string> demo_names() { return {"insar", "seed"}; }

DemoCube make_demo(const std::string& name, std::size_t size) {
  if (size > 8192) throw InputError("size: expected 1..8192, found " + std::to_string(size));
  if (name == "seed") return make_seed(size ? size : 500);
  if (name == "insar") return make_insar(size ? size : 300);
  throw InputError("demo: expected one of insar, seed; found '" + name + "'");
}

}  // namespace cubesolve
