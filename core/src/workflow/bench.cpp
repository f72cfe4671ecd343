#include <cubesolve/workflow/bench.hpp>

#include <cubesolve/engine/check.hpp>
#include <cubesolve/error.hpp>

#include "cuda/gpu.hpp"
#include "engine/exact.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"
#include "data/random.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace cubesolve::bench {
namespace {
double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

double gemm_floor_seconds(std::size_t m, std::size_t n, std::size_t pixels, int threads) {
  const std::size_t cols = std::max<std::size_t>(1, std::min<std::size_t>(pixels, 65536));
  std::vector<double> a(m * n), b(n * cols), c(m * cols);
  detail::Random rng(3);
  for (auto& v : a) v = rng.uniform();
  for (auto& v : b) v = rng.uniform();
  const lapack::BlasThreads blas(threads);
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    lapack::gemm('N', 'N', static_cast<int>(m), static_cast<int>(cols), static_cast<int>(n), 1.0, a.data(),
                 static_cast<int>(m), b.data(), static_cast<int>(n), 0.0, c.data(), static_cast<int>(m));
    best = std::min(best, seconds_since(t0));
  }
  return best * static_cast<double>(pixels) / static_cast<double>(cols);
}

double read_seconds(const Array& cube, int threads) {
  const std::size_t n = cube.size();
  std::vector<double> sums(static_cast<std::size_t>(threads), 0.0);
  double best = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    detail::parallel_for(n, std::max<std::size_t>(1 << 16, n / static_cast<std::size_t>(threads) + 1), threads,
                         [&](int t, std::size_t b, std::size_t e) {
                           double s = 0;
                           if (cube.dtype() == DType::Float32) {
                             const float* p = cube.data<float>();
                             for (std::size_t i = b; i < e; ++i) s += p[i];
                           } else {
                             const double* p = cube.data<double>();
                             for (std::size_t i = b; i < e; ++i) s += p[i];
                           }
                           sums[static_cast<std::size_t>(t)] += s;
                         });
    best = std::min(best, seconds_since(t0));
  }
  volatile double keep = sums[0];
  (void)keep;
  return best;
}

double normal_equations_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels,
                                int threads) {
  const std::size_t N = design.rows(), M = design.cols();
  const double* A = design.values().data();
  lapack::SingleThreadedBlas single;
  const auto t0 = std::chrono::steady_clock::now();
  detail::parallel_for(pixels.size(), 16, threads, [&](int, std::size_t b, std::size_t e) {
    std::vector<double> av(N * M), g(M * M), rhs(M), y(N);
    std::vector<int> ipiv(M), rows(N);
    for (std::size_t k = b; k < e; ++k) {
      const std::size_t nv = detail::valid_rows(cube, pixels[k], rows.data(), y.data());
      if (nv == 0) continue;
      for (std::size_t j = 0; j < M; ++j)
        for (std::size_t a = 0; a < nv; ++a) av[j * N + a] = A[static_cast<std::size_t>(rows[a]) * M + j];
      const int mv = static_cast<int>(nv), m = static_cast<int>(M), ld = static_cast<int>(N), one = 1;
      // G = A_V^T A_V, rhs = A_V^T y: torch.linalg.solve on the normal equations, as a per-pixel loop does.
      lapack::gemm('T', 'N', m, m, mv, 1.0, av.data(), ld, av.data(), ld, 0.0, g.data(), m);
      lapack::gemm('T', 'N', m, 1, mv, 1.0, av.data(), ld, y.data(), mv, 0.0, rhs.data(), m);
      int info = 0;
      dgesv_(&m, &one, g.data(), &m, ipiv.data(), rhs.data(), &m, &info);
    }
  });
  return seconds_since(t0);
}

double normal_equations_device_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels) {
  const std::size_t N = design.rows();
  std::vector<detail::gpu::PixelRows> systems(pixels.size(), {std::vector<int>(N), std::vector<double>(N)});
  for (std::size_t k = 0; k < pixels.size(); ++k) {
    const std::size_t nv = detail::valid_rows(cube, pixels[k], systems[k].rows.data(), systems[k].y.data());
    systems[k].rows.resize(nv);
    systems[k].y.resize(nv);
  }
  std::vector<double> x;
  return detail::gpu::normal_equations(design.values(), design.cols(), systems, x);
}

namespace {

/// The bench's weights (N, H, W) float32, or an empty array.
Array bench_weights(const BenchSettings& b) {
  if (b.weights == BenchWeights::None) return {};
  const std::size_t N = b.n, S = b.size, P = S * S;
  Array w(DType::Float32, {N, S, S});
  detail::Random rng(29);
  float* out = w.data<float>();
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t p = 0; p < P; ++p) {
      if (b.weights == BenchWeights::Random) {
        out[i * P + p] = static_cast<float>(0.5 + rng.uniform());
        continue;
      }
      const double y = static_cast<double>(p / S) / S, x = static_cast<double>(p % S) / S;
      const double g = std::clamp(0.85 - 0.3 * static_cast<double>(i) / N - 0.25 * std::exp(-((x - 0.6) * (x - 0.6) + (y - 0.3) * (y - 0.3)) / 0.02) +
                                      0.08 * rng.normal(),
                                  0.05, 0.98);
      out[i * P + p] = rng.uniform() < 0.1 ? 0.0f : static_cast<float>(2 * g * g / (1 - g * g));
    }
  return w;
}

}  // namespace

BenchReport run_bench(const BenchSettings& b) {
  const DemoCube d = make_synthetic(b.n, b.m, b.size, b.missing, b.masks, b.design);
  const Design design(d.design, "A");
  const std::size_t P = b.size * b.size;
  const Array weight_cube = bench_weights(b);
  const Array* weights = weight_cube.size() ? &weight_cube : nullptr;
  SolveOptions options = b.options;
  BenchReport r;
  r.pixels = P;
  // Timed as `solve` runs by default (X in the cube's float32); the accuracy
  // is read from one more run that keeps X in float64.
  const auto best_of_repeats = [&](const SolveOptions& o) {
    double best = 1e300;
    for (int k = 0; k < b.repeat; ++k) best = std::min(best, solve(d.cube, design, weights, o).engine_seconds);
    return best;
  };
  r.engine = best_of_repeats(options);
  SolveOptions with_rss = options;
  with_rss.residuals = true;
  r.engine_rss = best_of_repeats(with_rss);
  with_rss.std_errors = true;
  r.engine_stderr = best_of_repeats(with_rss);
  if (b.loss != Loss::L2) {
    SolveOptions robust = options;
    robust.loss = b.loss;
    robust.huber_delta = b.huber_delta;
    const SolveResult rr = solve(d.cube, design, weights, robust);
    r.engine_robust = rr.engine_seconds;
    r.robust_not_converged = rr.count(PixelStatus::NotConverged);
    std::vector<int> its;
    for (std::size_t p = 0; p < P; ++p)
      if (const auto s = static_cast<PixelStatus>(rr.status.data<std::uint8_t>()[p]); s == PixelStatus::Ok || s == PixelStatus::MinNorm)
        its.push_back(rr.iterations.data<std::int32_t>()[p]);
    std::sort(its.begin(), its.end());
    const double q[4] = {0.5, 0.9, 0.99, 1.0};
    for (int k = 0; k < 4 && !its.empty(); ++k)
      r.robust_iterations[static_cast<std::size_t>(k)] = its[std::min(its.size() - 1, static_cast<std::size_t>(q[k] * static_cast<double>(its.size() - 1) + 0.5))];
  }
  options.output = DType::Float64;
  const SolveResult x64 = solve(d.cube, design, weights, options);
  r.engine_float64 = x64.engine_seconds;
  r.threads = x64.threads;
  r.paths = x64.paths;
  r.device = x64.device;
  r.device_pixels = x64.device_pixels;
  r.warnings = x64.warnings;
  r.floor_gemm = gemm_floor_seconds(b.m, b.n, P, r.threads);
  r.floor_read = read_seconds(d.cube, r.threads);
  if (weights) r.floor_gram = gemm_floor_seconds(b.m * (b.m + 1) / 2, b.n, P, r.threads);

  // The exact path and per-pixel normal equations on an evenly spread
  // sample, scaled to all pixels.
  const std::vector<std::size_t> pick = spread_pixels(P, b.sample);
  const double scale = static_cast<double>(P) / static_cast<double>(pick.size());
  const SampleCheck check = check_pixels(d.cube, design, weights, x64.x, pick, options);
  r.check = summarize(check.pixels, 1e-9, 1e300);
  r.exact = check.exact_seconds * scale;
  if (!weights) r.normal = normal_equations_seconds(d.cube, design, pick, r.threads) * scale;
  // Combinations of options, each without and with an explicit rcond.
  {
    const Array random = weights ? Array() : bench_weights([&] {
      BenchSettings rw = b;
      rw.weights = BenchWeights::Random;
      return rw;
    }());
    const Array* w = weights ? weights : &random;
    struct Combo {
      const char* label;
      const Array* weights;
      double ridge;
      int min_valid;
    };
    const std::string min_valid = "minimum valid rows " + std::to_string(std::max<std::size_t>(1, 3 * b.n / 4));
    const Combo combos[] = {{"ridge 0.1", nullptr, 0.1, 1},
                            {weights ? "weights" : "random weights", w, 0.0, 1},
                            {weights ? "weights, ridge 0.1" : "random weights, ridge 0.1", w, 0.1, 1},
                            {min_valid.c_str(), nullptr, 0.0, static_cast<int>(std::max<std::size_t>(1, 3 * b.n / 4))}};
    for (const Combo& c : combos) {
      SolveOptions o = b.options;
      o.ridge = c.ridge;
      o.min_valid = c.min_valid;
      OptionsRow row;
      row.label = c.label;
      const auto best = [&](const SolveOptions& opt) {
        double t = 1e300;
        for (int k = 0; k < std::min(b.repeat, 3); ++k) {
          const SolveResult s = solve(d.cube, design, c.weights, opt);
          t = std::min(t, s.engine_seconds);
          if (opt.rcond >= 0) row.paths_rcond = s.paths;
        }
        return t;
      };
      row.seconds = best(o);
      o.rcond = kBenchRcond;
      row.seconds_rcond = best(o);
      r.options.push_back(row);
    }
  }
  // On a device, its own floors, and the per-pixel loop there too.
  if (r.device == Device::Cuda) {
    const detail::gpu::Floors f =
        detail::gpu::floors(b.m, b.n, P, d.cube.raw(), d.cube.nbytes(), b.m * P * dtype_size(d.cube.dtype()));
    r.floor_device_gemm = f.gemm;
    r.floor_upload = f.upload;
    r.floor_download = f.download;
    if (!weights) r.normal_device = normal_equations_device_seconds(d.cube, design, pick) * scale;
  }
  return r;
}

std::vector<ScalingRow> run_scaling(const BenchSettings& b) {
  struct Shape {
    std::size_t n, m, size;
    double missing;
  };
  const auto side = [&](double factor) { return static_cast<std::size_t>(std::lround(static_cast<double>(b.size) * std::sqrt(factor))); };
  const std::vector<Shape> shapes{{b.n, b.m, b.size, b.missing},         {b.n, b.m, side(2), b.missing},
                                  {b.n, b.m, side(4), b.missing},         {2 * b.n, b.m, b.size, b.missing},
                                  {4 * b.n, b.m, b.size, b.missing},      {b.n, 2 * b.m, b.size, b.missing},
                                  {b.n, 4 * b.m, b.size, b.missing},      {b.n, b.m, b.size, b.missing / 2},
                                  {b.n, b.m, b.size, std::min(0.9, b.missing * 2)}};
  std::vector<ScalingRow> rows;
  for (const Shape& s : shapes) {
    const DemoCube d = make_synthetic(s.n, s.m, s.size, s.missing, b.masks, b.design);
    const Design design(d.design, "A");
    ScalingRow row{s.n, s.m, s.size * s.size, s.missing, 1e300, 0, {}};
    for (int k = 0; k < b.repeat; ++k) {
      const SolveResult r = solve(d.cube, design, nullptr, b.options);
      row.engine = std::min(row.engine, r.engine_seconds);
      row.paths = r.paths;
      if (k == 0) row.floor_gemm = gemm_floor_seconds(s.m, s.n, row.pixels, r.threads);
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace cubesolve::bench

namespace cubesolve::bench {
namespace {

struct TuneCube {
  std::string label;
  DemoCube cube;
  Design design;
};

/// The cubes of the search, their sides scaled by `scale` (1: 300 x 300 and 60 x 60).
std::vector<TuneCube> tune_cubes(double scale) {
  struct Shape {
    const char* label;
    std::size_t n, m, size;
    double missing;
    MaskPattern masks;
  };
  // The bench's three shapes (seed, N=100/M=50, InSAR size), fewer pixels.
  const Shape shapes[] = {{"seed", 50, 100, 300, 0.2, MaskPattern::Random},
                          {"", 100, 50, 300, 0.2, MaskPattern::Random},
                          {"InSAR size", 1231, 270, 60, 0.1, MaskPattern::Blobs}};
  std::vector<TuneCube> cubes;
  for (Shape s : shapes) {
    s.size = std::max<std::size_t>(8, static_cast<std::size_t>(std::lround(static_cast<double>(s.size) * scale)));
    DemoCube d = make_synthetic(s.n, s.m, s.size, s.missing, s.masks, SyntheticDesign::Gaussian);
    Design design(d.design, "A");
    const std::string label = std::string(s.label) + (*s.label ? " " : "") + "N=" + std::to_string(s.n) + " M=" + std::to_string(s.m) + " " +
                              std::to_string(s.size) + "x" + std::to_string(s.size) + ", " +
                              std::to_string(static_cast<int>(100 * s.missing)) + "% " +
                              (s.masks == MaskPattern::Blobs ? "blobs" : "random");
    cubes.push_back({label, std::move(d), std::move(design)});
  }
  return cubes;
}

/// Each cube's engine time under `t`: the best of `repeat` solves.
std::vector<double> time_tuning(const std::vector<TuneCube>& cubes, const Tuning& t, int repeat, const SolveOptions& o) {
  set_tuning(t);
  std::vector<double> s;
  for (const auto& c : cubes) {
    double best = 1e300;
    for (int k = 0; k < repeat; ++k) best = std::min(best, solve(c.cube.cube, c.design, nullptr, o).engine_seconds);
    s.push_back(best);
  }
  return s;
}

double score(const std::vector<double>& s, const std::vector<double>& base) {
  double log_sum = 0;
  for (std::size_t k = 0; k < s.size(); ++k) log_sum += std::log(s[k] / base[k]);
  return std::exp(log_sum / static_cast<double>(s.size()));
}

/// The values tried for each parameter, from the machine's own.
std::vector<std::vector<Tuning>> tune_candidates(const MachineKey& key, const Tuning& machine) {
  std::vector<std::vector<Tuning>> axes(3);
  for (int wide = 0; wide < 2 && key.vector_bits >= 512; ++wide) {
    Tuning t = machine;
    t.wide = wide == 1;
    axes[0].push_back(t);
  }
  for (std::size_t mixed : {32, 48, 64, 96, 128, 513}) {
    Tuning t = machine;
    t.mixed_min = mixed;
    axes[1].push_back(t);
  }
  const std::size_t l2 = key.l2_bytes > 0 ? key.l2_bytes : std::size_t{1} << 20;
  for (std::size_t share : {8, 4, 2}) {
    Tuning t = machine;
    t.chunk_bytes = std::clamp<std::size_t>(l2 / share, 16 << 10, std::size_t{64} << 20) / 1024 * 1024;
    axes[2].push_back(t);
  }
  for (std::size_t times : {1, 2}) {
    Tuning t = machine;
    t.chunk_bytes = std::clamp<std::size_t>(l2 * times, 16 << 10, std::size_t{64} << 20) / 1024 * 1024;
    axes[2].push_back(t);
  }
  return axes;
}

/// Alternating runs of two sets of parameters, one solve of each cube a
/// round, so that both see the same state of the machine: each cube's best
/// time under a and under b.
std::pair<std::vector<double>, std::vector<double>> paired(const std::vector<TuneCube>& cubes, const Tuning& a,
                                                           const Tuning& b, int rounds, const SolveOptions& o) {
  std::vector<double> ta(cubes.size(), 1e300), tb(cubes.size(), 1e300);
  for (int r = 0; r < rounds; ++r) {
    const auto sa = time_tuning(cubes, a, 1, o), sb = time_tuning(cubes, b, 1, o);
    for (std::size_t k = 0; k < cubes.size(); ++k) ta[k] = std::min(ta[k], sa[k]), tb[k] = std::min(tb[k], sb[k]);
  }
  return {ta, tb};
}

double sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

TuneReport run_tune(int threads, double budget_seconds, const std::function<void(const std::string&)>& log) {
  if (!(budget_seconds >= 5 && budget_seconds <= 3600))
    throw InputError("--tune-seconds: expected 5 to 3600 seconds, found " + std::to_string(budget_seconds));
  const auto t0 = std::chrono::steady_clock::now();
  // The process's parameters as they were, whatever happens on the way.
  struct Restore {
    TuningState before = tuning_state();
    ~Restore() { set_tuning(before.source == TuningSource::Set ? std::optional<Tuning>(before.tuning) : std::nullopt); }
  } restore;
  TuneReport r;
  r.key = machine_key();
  r.machine = machine_tuning(r.key);
  SolveOptions o;
  o.threads = threads;
  o.residuals = false;
  // Sides scaled with the budget: the default 50 s takes 300 x 300 and 60 x 60.
  const std::vector<TuneCube> cubes = tune_cubes(std::clamp(std::sqrt(budget_seconds / 50), 0.25, 2.0));
  for (const auto& c : cubes) r.shapes.push_back(c.label);
  time_tuning(cubes, r.machine, 1, o);  // warm: the first solves of a process run cold
  // One solve of each cube sets the rounds, so that the trials (each
  // against the best so far, side by side) and the check fit the budget.
  const auto axes = tune_candidates(r.key, r.machine);
  std::size_t trials = 0;
  for (const auto& axis : axes) trials += axis.size();
  const double one = sum(time_tuning(cubes, r.machine, 1, o));
  const int rounds = std::clamp(static_cast<int>((budget_seconds / one - 12) / (2.0 * static_cast<double>(trials))), 1, 7);
  r.best = r.machine;
  for (const auto& axis : axes) {
    Tuning axis_best = r.best;
    double axis_score = 0.98;  // a value is taken only where it is 2 % faster
    for (const Tuning& t : axis) {
      Tuning c = r.best;  // the axis's own value over the best found so far
      if (t.wide != r.machine.wide) c.wide = t.wide;
      if (t.mixed_min != r.machine.mixed_min) c.mixed_min = t.mixed_min;
      if (t.chunk_bytes != r.machine.chunk_bytes) c.chunk_bytes = t.chunk_bytes;
      if (c == r.best) continue;
      const auto [tb, tc] = paired(cubes, r.best, c, rounds, o);
      r.trials.push_back({c, tc, score(tc, tb)});
      if (log) log(c.describe() + ": " + std::to_string(r.trials.back().score).substr(0, 5) + "x the best before it");
      if (r.trials.back().score < axis_score) axis_score = r.trials.back().score, axis_best = c;
    }
    r.best = axis_best;
  }
  r.kept_machine = r.best == r.machine;
  if (!r.kept_machine) {
    const auto [tm, tb] = paired(cubes, r.machine, r.best, 5, o);
    r.check_machine = sum(tm), r.check_best = sum(tb);
    r.kept_machine = r.check_best > 0.98 * r.check_machine;
  }
  if (r.kept_machine) r.best = r.machine;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace cubesolve::bench
