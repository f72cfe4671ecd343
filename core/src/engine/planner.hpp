#pragma once
// The planner: which path each pixel takes, from its count of valid rows and
// a flop-count cost model, and which mask groups are worth one SVD each.

#include <cubesolve/data/mask.hpp>
#include <cubesolve/engine/engine.hpp>

#include "engine/factors.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace cubesolve::detail {

constexpr std::size_t kMaxSmall = 512;     // largest system the deletion and dual paths factor
constexpr std::size_t kMinGroup = 32;      // smallest mask group worth its own factorization
constexpr std::size_t kMinExactGroup = 3;  // the same where each pixel alone would take an SVD
/// Smallest pivot of the small systems, relative to each system's scale.
/// Q_II and C_VV: their largest diagonal entry. A deletion's I - H_II: 1,
/// whatever its entries. H is an orthogonal projector, so the eigenvalues of
/// I - H_II lie in [0, 1], and λ_min(I - H_II) bounds what deleting the rows
/// I does to A's conditioning: σ_min(A_V)² >= σ_min(A)²·λ_min(I - H_II)
/// >= σ_max(A_V)²·λ_min / cond(A)². A row of leverage h_ii = 1 (an
/// interferogram that alone ties a date to the network: a bridge; a set of
/// rows that cuts it) makes I - H_II exactly singular, its rounding leaving
/// pivots of the order of eps; all of its entries may be that small (one
/// bridge: the 1 x 1 system 1 - h_ii), so a floor relative to its own
/// entries would pass them. Against 1, a pivot that clears kSmallTau shows
/// the deletion keeps the rank with cond(A_V) <= cond(A)/sqrt(kSmallTau),
/// far from what gelsd counts as rank-deficient; one that does not sends
/// the pixel to a path that decides the rank as gelsd does.
constexpr double kSmallTau = 1e-4;
constexpr double kGramTau = 1e-6;          // smallest relative pivot of a Gram matrix
constexpr double kGatherStep = 1e-6;       // largest |step| / |z| of a gathered C_VV's refinement
constexpr double kGramStep = 1e-6;         // largest |step| / |x| of the Gram path's refinement
constexpr double kMaxGrowth = 1e6;         // largest |x - x0| / |x0| a correction may have
constexpr double kMaxFastCondition = 1e4;  // cond(A) above which only SVD-based paths run
constexpr double kGemmSpeed = 4;           // a BLAS-3 flop costs this many times less than a scalar one

/// A pixel's path inside the engine: the dual path has two forms (the Schur
/// complement Q_II of a full-row-rank A, or C_VV gathered from A·A^T), and
/// Skip covers pixels with no or too few valid rows.
enum class Kind : std::uint8_t { Skip, Full, Deletion, DualSchur, DualGather, Gram, Exact, Group };

SolvePath path_of(Kind k);
/// The rank a fast path vouches for: what A_V has when its factorization
/// held (with a ridge, what A_V stacked over sqrt(ridge) I has: M).
std::size_t fast_rank(Kind k, std::size_t nv, const DesignFactors& f, bool ridge);
PixelStatus rank_status(std::size_t rank, std::size_t m);
/// Throws InputError for options out of range, naming the field.
void check_options(const SolveOptions& o);

/// How a solve is directed beyond its options. For tests and the
/// differential fuzzer: a path the planner takes wherever it is safe for a
/// pixel, over cheaper ones (Group: every mask that two pixels share), and
/// whether the rows kernel may serve; the planner's safety rules still
/// decide which pixels a path may take, and a pixel a path cannot vouch for
/// still moves on. For the two passes of a design of deficient rank (see
/// solve_in_row_space): `defer_svd` leaves the pixels that need an SVD
/// (exact and group paths) unsolved, NaN with rank -1, and `svd_only`
/// solves every pixel by those paths.
struct Steering {
  std::optional<Kind> prefer;
  bool rows_kernel = true;
  bool defer_svd = false, svd_only = false;
};

/// Chooses each pixel's path from its valid-row count and a flop-count cost model.
struct Planner {
  const DesignFactors& f;
  bool weighted = false, ridge = false, exact_only = false, fast_ok = false, gram_ok = false;
  std::size_t min_valid = 1;
  /// With a custom rcond (gelsd keeps the singular values above rcond·σ_max
  /// of the pixel's system), a fast path serves a pixel only where that
  /// system is shown to keep all of them: cond < 1/(2 rcond).
  /// - The paths on A's factors (full, deletion, dual), only where
  ///   t = 2 rcond cond(A) < 1 (factor_paths). For A of full row rank,
  ///   cond(A) bounds every cond(A_V) (C_VV's eigenvalues interlace C's). A
  ///   deletion's I - H_II, or a gathered C_VV, must stay positive definite
  ///   less the shift below (its own Cholesky shows it): then σ_min(A_V) >
  ///   2 rcond σ_max(A). Weighted dual pixels (an exact fit, but gelsd's
  ///   rank is that of W^1/2 A_V): cond(W^1/2 A_V) <= sqrt(max w / min w)
  ///   cond(A_V), so the Schur form needs t sqrt(max w / min w) < 1 and the
  ///   gathered form's shift grows by max w / min w.
  /// - The Gram paths (weights, ridge): the pixel's S = A_V^T W A_V + ridge I
  ///   must stay positive definite less gram_shift·trace(S) (its trace
  ///   bounds σ_max² of the system gelsd sees, [W^1/2 A_V; sqrt(ridge) I],
  ///   and its smallest eigenvalue is that system's σ_min²); a ridge above
  ///   the shift shows it without a second factorization.
  /// Pixels not shown so go to the exact path, gelsd with that rcond. A
  /// ridge with the default rcond is shown so too (gram_shift 1e-12): one
  /// far below the data's scale is rounding there, which gelsd cuts.
  bool custom_rcond = false, factor_paths = true;
  double rcond_t = 0;  // t = 2 rcond cond(A)
  double shift_deletion = 0, shift_gather = 0, gram_shift = 0;
  /// The band form of the Gram path (see DesignFactors::banded_gram) also
  /// serves unweighted pixels: on the CPU it is far cheaper than the
  /// deletion, and its refinement step keeps it as accurate.
  bool band_unweighted = false;
  /// A ridge's dual form x = A_V^T (C_VV + ridge W^-1)^-1 y_V serves pixels
  /// of few rows on the CPU (a device keeps its Gram path).
  bool ridge_dual = false;
  /// A network design's pixels whose small system fails on the CPU (their
  /// rows split the network) go to the band Gram path, which ties the split
  /// down (see solve_gram), instead of to gelsd.
  bool network_gram = false;
  Steering steer{};

  double exact_cost(std::size_t nv) const;
  /// The path of a pixel with nv valid rows, and its cost in flops.
  std::pair<Kind, double> choose(std::size_t nv) const;

private:
  double x0_cost() const;
  double small_cost(std::size_t k) const;
  /// The Gram path's cost; the band form's where it serves the pixel.
  double gram_cost(bool band) const;
};

/// `on_cpu`: the solve runs on the CPU alone (a device keeps its own paths).
Planner make_planner(const Design& design, bool weighted, const SolveOptions& options, bool on_cpu = true);

/// Whether mask groups are looked for at all (no weights, no ridge, not exact only).
bool use_groups(const SolveOptions& options, bool weighted);

/// Whether a mask of nv valid rows (`mask`: its bits) shared by `size`
/// pixels is worth one SVD for them all: a group big enough, and cheaper that
/// way than the path each of its pixels would take alone. Pixels a device
/// left (`left_by_device`) failed their fast path there, so alone they would
/// most likely go to gelsd.
bool group_pays(const Planner& planner, std::size_t nv, std::size_t size, const std::uint64_t* mask, bool left_by_device);

/// Whether pixels share masks often enough for grouping to be worth a full
/// pass: the share of a sample (runs of neighbouring pixels, where clouds and
/// patches make masks repeat) whose mask occurs more than once in it, in
/// groups that would pay (group_pays, their size scaled from the sample to
/// the cube); the whole cube where it has at most 4096 pixels. Read on
/// `threads` threads.
bool masks_repeat(const Array& cube, const Planner& planner, bool left_by_device, int threads);

/// The mask groups worth one SVD each (group_pays).
std::vector<char> choose_groups(const MaskStats& masks, const Planner& planner, bool left_by_device = false);

/// Pixels per chunk of the CPU paths, for P pixels of N rows and M unknowns
/// on `threads` threads with `memory` bytes: a chunk's values (B x N doubles)
/// should stay within `cache_bytes` (Tuning::chunk_bytes), every thread should get chunks, and small
/// chunks keep cancelling prompt. Exact-only solves (a pixel takes
/// milliseconds) take at most 64 pixels a chunk and as few as one, so that a
/// handful of pixels (a check's sample) still spreads over the threads.
/// The paths the planner chooses for pixels described by their valid-count
/// histogram (N + 1 counts) and their mask groups (each group's mask,
/// `words` words, and size): plan() for MaskStats and for CubeStats.
PathCounts plan_groups(const std::vector<std::size_t>& valid_histogram, const std::vector<std::uint64_t>& masks,
                       std::size_t words, const std::vector<std::size_t>& sizes, const Design& design, bool weighted,
                       const SolveOptions& options);

/// solve() steered (see Steering): what the tests use to run each path on
/// every pixel it may take.
SolveResult solve_steered(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
                          const Steering& steer, const Progress& progress = {});

std::size_t cpu_chunk(std::size_t P, std::size_t N, std::size_t M, std::size_t threads, std::size_t memory,
                      bool exact_only, std::size_t cache_bytes);

}  // namespace cubesolve::detail
