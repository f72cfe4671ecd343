#pragma once
// The solver: for every pixel p of a cube Y (N, H, W) with valid rows V and
// weights w, the minimum-norm least-squares solution
//     x_p = argmin ||diag(sqrt(w_V)) (A_V x - y_V)||_2   (+ ridge * ||x||^2)
// choosing, among all minimisers, the one of least ||x||_2, with the numerical
// rank decided as LAPACK gelsd does. That is exactly what
// numpy.linalg.lstsq(A_V, y_V, rcond=None) returns.
//
// - Overdetermined, full rank: the unique least-squares solution, status Ok.
// - Underdetermined (|V| < M) or rank-deficient A_V: the minimum-norm
//   solution, status MinNorm.
// - No valid row: X is NaN, status NoData. Fewer than min_valid rows: X is
//   NaN, status TooFew. A factorization that fails: X is NaN, status Failed.
// - ridge > 0: argmin ||W^(1/2)(A_V x - y_V)||^2 + ridge ||x||^2, always unique.

#include <cubesolve/data/array.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/data/mask.hpp>
#include <cubesolve/progress.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cubesolve {

struct Harmonic;  // a periodic term of a design (data/designs.hpp)

namespace detail {
struct DesignFactors;
}

enum class PixelStatus : std::uint8_t {
  Ok = 0,       // unique solution (rank(A_V) = M, or ridge > 0)
  MinNorm = 1,  // rank-deficient or underdetermined: minimum-norm solution
  NoData = 2,   // no valid row: NaN
  TooFew = 3,   // fewer valid rows than min_valid: NaN
  Failed = 4,   // the factorization failed: NaN
  Reference = 5,  // a MintPy stack's reference pixel: 0 by definition, not solved
  NotConverged = 6,  // a robust loss's iterations did not reach the tolerance: NaN
};
constexpr std::size_t kStatusCount = 7;
const char* status_name(PixelStatus status);

/// How a pixel was solved. The exact path is a per-pixel SVD (LAPACK gelsd)
/// on the pixel's weighted valid rows; Skipped counts NoData and TooFew pixels.
enum class SolvePath : std::uint8_t { Full, Group, Deletion, Dual, Gram, Exact, Skipped };
constexpr std::size_t kPathCount = 7;
const char* path_name(SolvePath path);
using PathCounts = std::array<std::size_t, kPathCount>;

/// A design matrix A (N, M) in float64 with what the engine derives from it
/// once (its SVD, pseudo-inverse, hat matrix and, for full row rank, A·A^T
/// and its inverse). Solving again with other options reuses all of it.
class Design {
public:
  Design() = default;
  /// Takes a 2-D array (N, M) or a 1-D array (N,) as (N, 1), of any dtype.
  /// Throws InputError naming `name` when it is empty, has more than 2
  /// dimensions or holds a value that is not finite.
  explicit Design(const Array& a, const std::string& name = "design matrix");

  std::size_t rows() const { return rows_; }
  std::size_t cols() const { return cols_; }
  /// Row-major (N, M).
  const std::vector<double>& values() const { return a_; }
  double operator()(std::size_t i, std::size_t j) const { return a_[i * cols_ + j]; }
  /// Numerical rank with rcond = eps * max(N, M).
  std::size_t rank() const;
  /// sigma_max / sigma_min over all min(N, M) singular values (inf when singular).
  double condition() const;
  const detail::DesignFactors& factors() const { return *factors_; }
  /// For A of rank r < min(N, M): A·Q (N, r), Q an orthonormal basis of A's row
  /// space. Every pixel's minimum-norm solution lies in that space, so it is
  /// Q times the minimum-norm solution for A·Q, a design of full column rank
  /// (whose fast paths apply). Null for A of full column or row rank.
  const Design* reduced() const { return reduced_.get(); }

private:
  std::size_t rows_ = 0, cols_ = 0;
  std::vector<double> a_;
  std::shared_ptr<const detail::DesignFactors> factors_;
  std::shared_ptr<const Design> reduced_;
};

/// Auto lets the planner choose each pixel's cheapest safe path (full data,
/// mask group, deletion, dual, Gram; every pixel a fast path cannot vouch for
/// is re-solved exactly); Exact forces the per-pixel SVD everywhere (the
/// reference, used by `verify`).
enum class Method { Auto, Exact };

/// The loss each pixel's weighted residuals f = W_V^1/2 (A_V x - y_V) are
/// fitted under: L2 (least squares, the contract above), L1 (Σ|f_i|, least
/// absolute deviations) or Huber (Σ f_i²/2 where |f_i| <= δ, δ|f_i| - δ²/2
/// beyond).
enum class Loss : std::uint8_t { L2, L1, Huber };
const char* loss_name(Loss loss);
/// "l2", "l1", "huber" or "huber:DELTA" (δ > 0). Throws InputError naming
/// `what`.
Loss parse_loss(const std::string& text, double& huber_delta, const std::string& what = "loss");

struct SolveOptions {
  Method method = Method::Auto;
  /// Singular values <= rcond * sigma_max count as zero. Negative: the
  /// default eps(float64) * max(|V|, M) of each pixel.
  double rcond = -1.0;
  /// Pixels with fewer valid rows are not solved (NaN, TooFew). At least 1.
  int min_valid = 1;
  /// Tikhonov regularisation lambda >= 0.
  double ridge = 0.0;
  /// Worker threads; 0 = all hardware threads.
  int threads = 0;
  /// Output element type of X; default: the cube's (float32 or float64).
  std::optional<DType> output;
  /// Compute rss for every pixel (one more pass of A·X); NaN when off.
  bool residuals = true;
  /// The loss (L1 and Huber: robust to outliers). Each pixel is solved on
  /// its own valid rows and weights from its least-squares solution: L1 by
  /// iteratively reweighted least squares to a vertex of the problem, then
  /// simplex steps to a vertex whose dual certificate proves it optimal
  /// (exact); Huber by Newton's steps with an exact line search (a network
  /// after iteratively reweighted least squares, in vector lanes) until a
  /// duality gap proves the objective within the tolerance, where it does
  /// not by reweightings that each lower the objective, then Newton's steps
  /// again. Underdetermined pixels (|V| <= rank) fit
  /// their rows exactly: the least-squares solution, objective 0. Of a
  /// rank-deficient pixel, the minimiser in the row space of its rows (the
  /// part the data do not determine 0, as the minimum norm). A pixel that
  /// does not converge within max_iterations gets NaN and NotConverged.
  Loss loss = Loss::L2;
  /// Huber's δ in the weighted residuals' unit; 0: each pixel's own,
  /// 1.345 × 1.4826 × the median absolute deviation of its least-squares
  /// residuals (1.345 × 1.2533 × their mean absolute value where the MAD is 0).
  double huber_delta = 0;
  /// Robust losses: the relative objective tolerance and the iteration cap
  /// (reweightings or ADMM iterations, plus simplex steps).
  double tolerance = 1e-6;
  int max_iterations = 500;
  /// Compute each coefficient's standard error on the pixel's own valid rows
  /// (SolveResult::std_error; implies residuals).
  bool std_errors = false;
  /// Compute each pixel's whole covariance on its own valid rows
  /// (SolveResult::covariance; implies residuals).
  bool covariance = false;
  /// Working memory budget in bytes for the streamed chunks.
  std::size_t memory = std::size_t{256} << 20;
  /// Where the full, deletion, dual and Gram paths run first: Cpu, Cuda,
  /// or Auto (a CUDA device when one is usable, else the CPU). What a device
  /// leaves (the group and exact paths, systems it cannot vouch for) runs on
  /// the CPU; a device that cannot be set up leaves everything to the CPU,
  /// with a warning.
  Device device = Device::Cpu;
  /// On a device: float64 throughout. Default: the deletion and dual systems
  /// in float32 with two steps of iterative refinement against float64
  /// residuals (Gram systems are always float64).
  bool device_float64 = false;
  /// Device memory the solve may use, in bytes; 0: what is free.
  std::size_t device_memory = 0;
};

struct SolveResult {
  Array x;        // (M, H, W), NaN where not solved
  Array n_valid;  // (H, W) int32: valid rows
  Array rank;     // (H, W) int32: numerical rank of the weighted A_V
  Array rss;      // (H, W) float64: weighted residual sum of squares
  Array status;   // (H, W) uint8: PixelStatus
  Array cond;     // (H, W) float64: sigma_max / sigma_rank of the weighted A_V where an
                  // SVD was taken (exact and group paths), NaN elsewhere
  /// With SolveOptions::std_errors, (M, H, W) in X's type: the standard error
  /// of each coefficient on the pixel's own valid rows V and weights W,
  ///     sqrt(diag(s² (A_V^T W_V A_V)^+)),  s² = rss / (|V| - rank),
  /// the pseudo-inverse taken at the pixel's rank (so that of a minimum-norm
  /// solution's covariance). With a ridge λ, the covariance of the ridge
  /// estimator, s² (G + λI)^-1 G (G + λI)^-1 with G = A_V^T W_V A_V, and s²
  /// over the effective degrees of freedom |V| - tr(G (G + λI)^-1). NaN
  /// where X is, and where |V| <= rank of the pixel's weighted rows (no
  /// degree of freedom left to estimate s²). Empty otherwise.
  Array std_error;
  /// With SolveOptions::covariance, (M(M+1)/2, H, W) in X's type: the
  /// covariance whose diagonal std_error's squares are, s² (A_V^T W_V A_V)^+
  /// (with a ridge the same sandwich), packed: its upper triangle row by row
  /// (C_00, C_01, …, C_0,M-1, C_11, …). NaN where std_error is. Empty otherwise.
  Array covariance;
  /// With a robust loss, (H, W): the iterations each pixel took (int32) and
  /// its objective Σρ(f) at x (float64; NaN where not solved). Empty with L2.
  Array iterations, objective;
  /// A phase stack's temporal coherence, (H, W) float32, where it was
  /// computed (Inputs::finish with residuals); empty otherwise.
  Array temporal_coherence;
  PathCounts paths{};
  double engine_seconds = 0;
  int threads = 1;
  Device device = Device::Cpu;        // where the fast paths ran
  std::size_t device_pixels = 0;      // pixels the device solved
  std::vector<std::string> warnings;  // e.g. a device result that failed its check

  std::size_t count(PixelStatus s) const;
  /// Pixels solved (Ok, MinNorm) without standard errors (|V| <= rank: no
  /// degree of freedom left); 0 without standard errors.
  std::size_t no_dof() const;
};

/// The standard errors of a solve's pixels (SolveResult::std_error) from
/// the cube, design and weights it solved and its status, rank and rss
/// (solved with options.residuals); with `intervals` (M, nonempty), those of
/// the series s_j = Σ_k<=j t_k x_k that a velocity formulation's x turns
/// into. (M, H, W) in X's type. Throws InputError (intervals not M long),
/// Cancelled when progress returns false.
Array standard_errors(const Array& cube, const Design& design, const Array* weights, const SolveResult& r,
                      const SolveOptions& options, const std::vector<double>& intervals = {},
                      const Progress& progress = {});

/// The whole covariance of each pixel's coefficients (SolveResult::covariance),
/// on the same terms as standard_errors: (M(M+1)/2, H, W) in X's type.
Array covariances(const Array& cube, const Design& design, const Array* weights, const SolveResult& r,
                  const SolveOptions& options, const std::vector<double>& intervals = {},
                  const Progress& progress = {});
/// The standard errors a packed covariance (M(M+1)/2, H, W) holds: the
/// square roots of its diagonal, (M, H, W) in its type. With both asked
/// for, one pass gives both.
Array covariance_errors(const Array& covariance, std::size_t M);

/// Checks that `cube` is a float32/float64 cube (N, H, W); `name` (usually
/// its path) leads the message. Throws InputError.
void check_cube(const Array& cube, const std::string& name = "cube");
/// The same for a cube known by its shape and type (read a block at a
/// time). Throws InputError.
void check_cube_shape(const Shape& shape, DType dtype, const std::string& name = "cube");

/// Checks that a cube of shape `cube`, the design and weights of shape
/// `weights` (when given) fit together; names as for check_inputs. Throws
/// InputError.
void check_shapes(const Shape& cube, const Design& design, const Shape* weights, const std::string& cube_name,
                  const std::string& design_name, const std::string& weights_name);

/// Checks that cube (N, H, W), design (N, M) and weights (N, H, W) fit
/// together. The names appear in the messages (usually the file paths).
/// Throws InputError.
/// `first_row` is the cube's first row when it is a block of a larger cube
/// (messages then give rows of the whole cube).
void check_inputs(const Array& cube, const Design& design, const Array* weights,
                  const std::string& cube_name = "cube", const std::string& design_name = "design matrix",
                  const std::string& weights_name = "weights", std::size_t first_row = 0);

/// Solves every pixel. Weights, when given, must be finite and >= 0 (a
/// weight of 0 or NaN marks the value missing).
/// Throws InputError (shapes, negative weights, bad options), Cancelled.
SolveResult solve(const Array& cube, const Design& design, const Array* weights = nullptr,
                  const SolveOptions& options = {}, const Progress& progress = {});

/// The paths the planner chooses for the pixels described by `masks` (with
/// or without weights), before any pixel a fast path cannot vouch for is
/// moved to the exact path. What `info` prints as the plan. Throws
/// InputError for options out of range.
PathCounts plan(const MaskStats& masks, const Design& design, bool weighted, const SolveOptions& options = {});

/// sqrt(rss / n_valid) per pixel, (H, W) float64; NaN where rss is NaN.
/// Never throws but for memory.
Array residual_rms(const SolveResult& result);

/// A·x of one pixel of X (M, H, W): its N fitted values (NaN when x is NaN).
/// Never throws but for memory; `pixel` < H·W.
std::vector<double> pixel_model(const Design& design, const Array& x, std::size_t pixel);

/// One band of the model cube: (A·X)[observation], (1, H, W) float64.
/// Never throws but for memory; `observation` < N.
Array model_band(const Design& design, const Array& x, std::size_t observation);

/// Which unknowns a pixel's valid rows (`valid`, N flags) leave undetermined:
/// those whose unit vector is not in the row space of A_V, so that the
/// minimum-norm solution sets them by convention rather than from data (an
/// SBAS date the pixel's network does not reach). Throws NumericalError
/// when the SVD of A_V does not converge.
std::vector<bool> undetermined_unknowns(const Design& design, const std::vector<bool>& valid);

/// The least-squares slope of each pixel's time series, (1, H, W) float64:
/// x (M, H, W) holds the values at times[1..M], and the series starts at 0
/// at times[0] (the reference). Each pixel's line is fitted to its valid
/// dates only (a NaN in x is a date left out); NaN where fewer than two
/// distinct times are valid or x is NaN throughout. Throws InputError when
/// `times` is not M + 1 long.
Array linear_rate(const Array& x, const std::vector<double>& times);
/// The standard error of linear_rate's slope, as MintPy's velocityStd from
/// the residuals of the line (timeseries2velocity.py's default):
/// sqrt(s² / Σ(t - mean t)²), s² = Σ residual² / (n - 2) over the n valid
/// dates (the reference's 0 included); NaN where n <= 2 or the slope is.
Array linear_rate_std(const Array& x, const std::vector<double>& times);

/// Each pixel's amplitude of a periodic term of x (M, H, W): the amplitude
/// of a·cos + b·sin, sqrt(a² + b²); (1, H, W) float64, NaN where x is.
Array harmonic_amplitude(const Array& x, const Harmonic& h);
/// When each pixel's periodic term peaks: the time within its period at
/// which a·cos(ωt) + b·sin(ωt) is largest, atan2(b, a)/ω modulo the period,
/// in days where the times are dates (days after 1 January for an annual
/// term), else in the design's time unit; NaN where x is or a = b = 0.
Array harmonic_peak(const Array& x, const Harmonic& h);

/// The model cube A·X (N, H, W) in X's dtype, NaN where X is NaN. Throws
/// InputError for X not of shape (M, H, W).
Array model_cube(const Design& design, const Array& x);
/// Y - A·X (N, H, W) in the cube's dtype, NaN where Y is missing or X is
/// NaN. Throws InputError for a model of another shape than the cube.
Array residual_cube(const Array& cube, const Array& model);
/// MintPy's temporal coherence of each pixel of a phase stack's residuals
/// (N, H, W), |Σ exp(i e)| / n over the n residuals e that are numbers, in
/// float32 as MintPy's (its residuals are float32), summed in float64; (H,
/// W) float32, NaN where there is none. Throws InputError for residuals
/// that are not a float cube.
Array temporal_coherence(const Array& residual);

}  // namespace cubesolve
