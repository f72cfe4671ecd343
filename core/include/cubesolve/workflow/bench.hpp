#pragma once
// Reference timings the `bench` command prints beside the engine's: the
// floors no engine can beat and the per-pixel methods the engine replaces
// (LAPACK gelsd per pixel, and the per-pixel normal equations of a loop
// over pixels).

#include <cubesolve/data/array.hpp>
#include <cubesolve/data/demo.hpp>
#include <cubesolve/engine/check.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/engine/tuning.hpp>

#include <algorithm>
#include <cstddef>
#include <array>
#include <functional>
#include <string>
#include <vector>

namespace cubesolve::bench {

/// Seconds for one GEMM of the size of P·Y~: (M, N) times (N, P), float64,
/// with the BLAS on all `threads` threads. Timed on at most 65536 columns and
/// scaled to P. Never throws but for memory.
double gemm_floor_seconds(std::size_t m, std::size_t n, std::size_t pixels, int threads);

/// Seconds to read every value of the cube once (a sum over all threads).
/// Never throws.
double read_seconds(const Array& cube, int threads);

/// Seconds per-pixel normal equations take on the given pixels: per pixel,
/// solve(A_V^T A_V, A_V^T y_V) by LU (LAPACK dgesv), on all threads. Its
/// answers are discarded (they are wrong where A_V^T A_V is singular). Never
/// throws but for memory.
double normal_equations_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels,
                                int threads);

/// The same method on the CUDA device, pixel after pixel as a per-pixel
/// loop runs it (Cholesky, float64). Throws NumericalError without a device.
double normal_equations_device_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels);

/// Weights of a weighted bench: none, positive random (0.5 to 1.5), or a
/// coherence-like field (smooth in space, lower for later observations, a
/// tenth of them 0: missing) turned into weights as 2γ²/(1 − γ²).
enum class BenchWeights { None, Random, Coherence };

/// What `bench` runs: a synthetic cube and the solve options.
struct BenchSettings {
  std::size_t n = 50, m = 100, size = 500;
  double missing = 0.2;
  MaskPattern masks = MaskPattern::Random;
  SyntheticDesign design = SyntheticDesign::Gaussian;
  std::size_t sample = 500;  // pixels the per-pixel methods are timed on (scaled to the cube)
  int repeat = 5;            // the engine's best of
  BenchWeights weights = BenchWeights::None;
  SolveOptions options;      // residuals off, as solve computes by default without --diag
  /// A robust loss to time beside least squares (options.loss stays L2 for the rest).
  Loss loss = Loss::L2;
  double huber_delta = 0;
};

/// One combination of options on the bench's cube: the engine's time with
/// the default rcond and with an explicit one, which the fast paths keep
/// wherever they show each pixel's system keeps its rank.
struct OptionsRow {
  std::string label;        // e.g. "weights, ridge 0.1"
  double seconds = 0;       // best of the repeats, default rcond
  double seconds_rcond = 0; // the same with rcond = kBenchRcond
  PathCounts paths_rcond{}; // where the pixels went with it
};
constexpr double kBenchRcond = 1e-5;

/// The figures `bench` prints, measured in one process.
struct BenchReport {
  std::size_t pixels = 0;
  int threads = 1;
  double engine = 0;        // best of `repeat`, X in the cube's float32
  double engine_float64 = 0;  // one run with X in float64 (the errors are from it)
  double engine_rss = 0;      // best of `repeat`, X in float32, with rss computed
  double engine_stderr = 0;   // the same with the standard errors (SolveOptions::std_errors)
  /// With a robust loss: its solve's time (one run), the iterations' 50th,
  /// 90th, 99th percentiles and largest, and the pixels that did not converge.
  double engine_robust = 0;
  std::array<int, 4> robust_iterations{};
  std::size_t robust_not_converged = 0;
  double floor_gemm = 0, floor_read = 0;
  /// Weighted: the Gram path's own floor, one GEMM of A's packed row
  /// products (M(M+1)/2, N) with the weights (N, P).
  double floor_gram = 0;
  double exact = 0;         // the exact path, per pixel, scaled from the sample
  double normal = 0;        // per-pixel normal equations (LU), scaled from the sample
  double normal_device = 0; // the same loop on the device (0 without one)
  /// On a device, its own floors: one float64 GEMM the size of P·Y there,
  /// the cube's upload from the host's memory, and X's download (in the
  /// cube's type, as `solve` writes it) to it (0 without one).
  double floor_device_gemm = 0, floor_upload = 0, floor_download = 0;
  /// The device's floor: the largest of its three (it overlaps them).
  double device_floor() const { return std::max({floor_device_gemm, floor_upload, floor_download}); }
  CheckSummary check;       // the float64 run against gelsd on the sample
  /// Ridge 0.1; weights (the bench's, or random ones); weights and ridge;
  /// minimum valid rows 3N/4: each without and with rcond = kBenchRcond.
  std::vector<OptionsRow> options;
  PathCounts paths{};
  Device device = Device::Cpu;
  std::size_t device_pixels = 0;
  std::vector<std::string> warnings;
};

/// Builds the cube, runs the engine and every reference. Throws InputError
/// for settings out of range, NumericalError where a device fails.
BenchReport run_bench(const BenchSettings& settings);

/// One row of the scaling table: a cube's shape and what the engine took.
struct ScalingRow {
  std::size_t n = 0, m = 0, pixels = 0;
  double missing = 0;
  double engine = 0, floor_gemm = 0;  // seconds (the engine's best of the repeats)
  PathCounts paths{};
};

/// The engine as pixels, N, M and the missing share grow from the
/// settings' cube, one at a time (pixels x2 and x4, N x2 and x4, M x2 and
/// x4, missing x1/2 and x2), each against its GEMM floor. Throws as
/// run_bench.
std::vector<ScalingRow> run_scaling(const BenchSettings& settings);

/// One candidate of the search (bench --tune): its parameters, the
/// engine's best time on each of the search's cubes, and its score.
struct TuneTrial {
  Tuning tuning;
  std::vector<double> seconds;
  /// Over the best parameters found before it, timed alternately with them:
  /// the geometric mean of the cubes' time ratios.
  double score = 0;
};

/// What bench --tune found: the machine's own parameters, the best found,
/// and the check that settled between them (alternating runs of the two).
struct TuneReport {
  MachineKey key;
  Tuning machine, best;
  std::vector<std::string> shapes;  // "seed N=50 M=100 300x300, 20% random"
  std::vector<TuneTrial> trials;
  double check_machine = 0, check_best = 0;  // the check's sums of the cubes' best times
  bool kept_machine = false;                 // nothing found 2 % faster: the machine's kept
  double seconds = 0;                        // the whole search
};

/// Searches the engine's parameters on this machine, one at a time from
/// the machine's own (see machine_tuning): each value against the best found
/// so far, the two run alternately on the bench's three shapes (seed,
/// N=100/M=50, InSAR size) with fewer pixels, taken where it is 2 % faster;
/// then the best against the machine's, alternately, kept only where it is
/// 2 % faster still. About `budget_seconds` in all. Leaves the process's
/// parameters as they were. `log` hears each trial. Throws InputError for a
/// budget out of range.
TuneReport run_tune(int threads, double budget_seconds, const std::function<void(const std::string&)>& log);

}  // namespace cubesolve::bench
