#include "engine/planner.hpp"

#include "engine/parallel.hpp"
#include "engine/paths.hpp"

#include <cubesolve/error.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

namespace cubesolve::detail {

SolvePath path_of(Kind k) {
  switch (k) {
    case Kind::Full: return SolvePath::Full;
    case Kind::Deletion: return SolvePath::Deletion;
    case Kind::DualSchur:
    case Kind::DualGather: return SolvePath::Dual;
    case Kind::Gram: return SolvePath::Gram;
    case Kind::Group: return SolvePath::Group;
    case Kind::Exact: return SolvePath::Exact;
    case Kind::Skip: break;
  }
  return SolvePath::Skipped;
}

std::size_t fast_rank(Kind k, std::size_t nv, const DesignFactors& f, bool ridge) {
  if (ridge) return f.m;  // the system minimised, stacked over sqrt(ridge) I
  if (k == Kind::Full) return f.rank;
  return k == Kind::DualSchur || k == Kind::DualGather ? nv : f.m;
}

PixelStatus rank_status(std::size_t rank, std::size_t m) { return rank == m ? PixelStatus::Ok : PixelStatus::MinNorm; }

void check_options(const SolveOptions& o) {
  if (o.min_valid < 1)
    throw InputError("min_valid (minimum valid rows): expected an integer >= 1, found " + std::to_string(o.min_valid));
  if (!(o.ridge >= 0) || !std::isfinite(o.ridge))
    throw InputError("ridge: expected a finite value >= 0, found " + std::to_string(o.ridge));
  if (!std::isfinite(o.rcond)) throw InputError("rcond: expected a finite value, found " + std::to_string(o.rcond));
  if (o.threads < 0) throw InputError("threads: expected an integer >= 0, found " + std::to_string(o.threads));
  if (!(o.huber_delta >= 0) || !std::isfinite(o.huber_delta))
    throw InputError("huber delta: expected a finite value > 0 (or 0: each pixel's own), found " + std::to_string(o.huber_delta));
  if (!(o.tolerance > 0) || !(o.tolerance < 1))
    throw InputError("tolerance: expected a value in (0, 1), found " + std::to_string(o.tolerance));
  if (o.max_iterations < 1) throw InputError("max iterations: expected an integer >= 1, found " + std::to_string(o.max_iterations));
  if (o.loss != Loss::L2 && (o.std_errors || o.covariance))
    throw InputError(std::string(o.std_errors ? "standard errors" : "covariance") + ": expected the loss l2 (they are least squares'), found " + loss_name(o.loss));
  if (o.loss != Loss::L2 && o.ridge > 0)
    throw InputError(std::string("ridge: expected 0 with the loss ") + loss_name(o.loss) + ", found " + std::to_string(o.ridge));
}

double Planner::exact_cost(std::size_t nv) const {
  const double n = static_cast<double>(nv), m = static_cast<double>(f.m);
  return 4 * n * m * m + 8 * m * m * m + 200 * m;
}

double Planner::x0_cost() const { return 2.0 * static_cast<double>(f.m * f.n) / kGemmSpeed; }

double Planner::small_cost(std::size_t k) const {
  const double s = static_cast<double>(k);
  return s * s * s / 3 + s * s;
}

double Planner::gram_cost(bool band) const {
  const double m = static_cast<double>(f.m), n = static_cast<double>(f.n);
  // Unweighted pixels on a device are chosen as before the band form (the
  // paths that work on A's factors); the band form itself runs wherever
  // the Gram path does.
  if (f.banded_gram && band) {  // summed over the rows' nonzero pairs, factored in band form, refined once
    const double nz = static_cast<double>(f.nz_col.size()), w = static_cast<double>(f.band + 1);
    return 2 * nz * (nz / n + 1) + n + m * w * w + 8 * m * w + 4 * nz;
  }
  if (f.outer.empty()) return (n * m * m + 2 * n * m) / kGemmSpeed + m * m * m / 3 / kGemmSpeed + 2 * m * m;  // SYRK
  return 2 * (static_cast<double>(f.packed()) + m) * n / kGemmSpeed + m * m * m / 3 + 2 * m * m;
}

std::pair<Kind, double> Planner::choose(std::size_t nv) const {
  if (nv == 0 || nv < min_valid) return {Kind::Skip, 0.0};
  std::pair<Kind, double> best{Kind::Exact, exact_cost(nv)};
  if (exact_only || steer.prefer == Kind::Exact) return best;
  auto consider = [&](Kind k, double c) {
    if (steer.prefer == k) c = -1;  // steered there wherever it is safe
    if (c < best.second) best = {k, c};
  };
  const bool band = weighted || band_unweighted;
  // The band form ties a split network down: its Gram path takes any rank
  // (not with a custom rcond, which that tie cannot vouch for).
  const bool can_gram = ridge || nv >= f.m || (band && f.banded_gram && f.network() && !custom_rcond);
  if (ridge) {  // every rank: the Gram path, or the dual form x = A_V^T (C_VV + ridge W^-1)^-1 y_V
    if (can_gram) consider(Kind::Gram, gram_cost(true));
    // With a custom rcond the dual form shows the rank only by the ridge
    // itself (see pixel_lane); the Gram path's own Cholesky shows more.
    if (ridge_dual && !f.gram_rows.empty() && nv <= kMaxSmall && (!custom_rcond || nv < f.m))
      consider(Kind::DualGather, small_cost(nv) + 2.0 * static_cast<double>(nv * f.m));
    return best;
  }
  const std::size_t m = f.n - nv, M = f.m, N = f.n;
  const bool factors = fast_ok && factor_paths;
  if (!weighted && m == 0 && factor_paths) return {Kind::Full, x0_cost()};
  if (!weighted && factors && f.full_column_rank() && !f.hat.empty() && nv >= M && m <= kMaxSmall)
    consider(Kind::Deletion, x0_cost() + small_cost(m) + 2.0 * static_cast<double>(m * M));
  // The dual paths serve weighted pixels too: where A_V has full row rank
  // (which their Cholesky checks) the pixel is fitted exactly, and the
  // minimum-norm exact fit does not depend on the weights.
  if (factors && f.full_row_rank() && m <= kMaxSmall && m <= nv)
    consider(Kind::DualSchur, x0_cost() + small_cost(m) + 2.0 * static_cast<double>(m * (N + M)));
  // A_V of full row rank (checked by the Cholesky of C_VV) needs no more of A.
  if (factors && !f.gram_rows.empty() && nv <= M && nv <= kMaxSmall)
    consider(Kind::DualGather, small_cost(nv) + 2.0 * static_cast<double>(nv * M));
  if (can_gram && (band || (!f.outer.empty() && (gram_ok || weighted)))) consider(Kind::Gram, gram_cost(band));
  return best;
}

Planner make_planner(const Design& design, bool weighted, const SolveOptions& options, bool on_cpu) {
  const auto& f = design.factors();
  Planner planner{f};
  planner.weighted = weighted;
  planner.band_unweighted = on_cpu && f.banded_gram;
  planner.ridge_dual = on_cpu;
  planner.ridge = options.ridge > 0;
  planner.min_valid = static_cast<std::size_t>(options.min_valid);
  planner.exact_only = options.method == Method::Exact;
  const double cond = f.rank > 0 ? f.sigma.front() / f.sigma[f.rank - 1] : HUGE_VAL;
  planner.fast_ok = cond <= kMaxFastCondition;
  // The Gram path's pivot test on A's own Gram matrix: a pixel's, of fewer
  // rows, has a last pivot no larger (A_V^T A_V <= A^T A) and a diagonal
  // about as much smaller as its rows are fewer. Where A fails it, unweighted
  // pixels would (nearly) all go on to an SVD, which a mask group can share.
  planner.gram_ok = true;
  if (!f.gram_root.empty()) {
    double dmax = 0, pivot = HUGE_VAL;
    for (std::size_t j = 0; j < f.m; ++j) {
      double g = 0;  // (A^T A)_jj = |U e_j|², column j of U
      for (std::size_t i = 0; i <= j; ++i) g += f.gram_root[i + j * f.m] * f.gram_root[i + j * f.m];
      dmax = std::max(dmax, g);
      pivot = std::min(pivot, f.gram_root[j + j * f.m] * f.gram_root[j + j * f.m]);
    }
    planner.gram_ok = pivot > kGramTau * dmax;
  }
  planner.custom_rcond = options.rcond >= 0;
  if (planner.custom_rcond) {
    // σ_min(A_V) >= σ_min(A)·sqrt(λ_min(I - H_II)) and σ_max(A_V) <= σ_max(A):
    // λ_min(I - H_II) > t² with t = 2 rcond cond(A) gives cond(A_V) < 1/(2 rcond).
    // A shift of at least 1e-8 (relative to the system's norm, <= 1 for
    // I - H_II and <= σ_max(A)² for C_VV) stays far above the rounding of
    // the shifted Cholesky (about q² eps), which the factor 2 in t absorbs;
    // the Gram paths' shift of at least 1e-12 of the trace, above that of
    // an M x M Cholesky (about M eps of it) for M up to some thousands.
    const double t = 2 * options.rcond * cond, smax = f.rank > 0 ? f.sigma.front() : 0.0;
    planner.factor_paths = planner.fast_ok && t < 1;
    planner.rcond_t = t;
    planner.shift_deletion = std::max(t * t, 1e-8);
    planner.shift_gather = std::max(4 * options.rcond * options.rcond, 1e-8) * smax * smax;
    planner.gram_shift = std::max(4 * options.rcond * options.rcond, 1e-12);
  } else if (planner.ridge) {
    // A ridge far below the data's scale is rounding there: gelsd counts
    // its singular values as zero (rcond eps·max(|V|, M)); the same test as
    // a custom rcond's shows the ridge clear of that.
    planner.gram_shift = 1e-12;
  }
  // (Only the CPU's paths hand pixels on: with a device too, those it leaves.)
  planner.network_gram = f.network() && f.banded_gram && !planner.ridge && !planner.custom_rcond && !planner.exact_only;
  return planner;
}

bool use_groups(const SolveOptions& options, bool weighted) {
  return options.method == Method::Auto && !weighted && options.ridge == 0;
}

bool masks_repeat(const Array& cube, const Planner& planner, bool left_by_device, int threads) {
  if (planner.steer.prefer == Kind::Group) return true;
  const std::size_t N = cube.dim(0), P = cube.dim(1) * cube.dim(2), words = (N + 63) / 64;
  constexpr std::size_t kRuns = 16, kRun = 256;
  // Every pixel of a small cube; else kRuns runs of kRun, spread over it.
  const std::size_t run = P > kRuns * kRun ? kRun : P, count = P > kRuns * kRun ? kRuns * kRun : P;
  std::vector<std::uint64_t> keys(count * words, 0);  // sample s's mask at keys[s * words]
  // Blocks of 64 pixels of a run, on all threads, word by word of their
  // masks (typed and branch-free: this pass reads a good share of a small cube).
  const std::size_t per_run = (run + 63) / 64, blocks = count / std::max<std::size_t>(run, 1) * per_run;
  auto sample = [&](const auto* values) {
    parallel_for(blocks, 1, threads, [&](int, std::size_t b0, std::size_t b1) {
      std::uint64_t acc[64];
      for (std::size_t b = b0; b < b1; ++b) {
        const std::size_t r = b / per_run, k0 = (b % per_run) * 64, len = std::min<std::size_t>(64, run - k0);
        const std::size_t first = (r * (P - run)) / kRuns + k0;  // the block's first pixel
        for (std::size_t w = 0; w < words; ++w) {
          std::fill(acc, acc + len, 0);
          for (std::size_t i = w * 64; i < std::min(N, w * 64 + 64); ++i) {
            const auto* row = values + i * P + first;
            if (i + 4 < N)  // rows lie far apart: each is a new stream the prefetcher has not seen
              for (std::size_t k = 0; k < len; k += 64 / sizeof(*row)) __builtin_prefetch(row + 4 * P + k);
            const std::uint64_t bit = std::uint64_t{1} << (i % 64);
            for (std::size_t k = 0; k < len; ++k)
              acc[k] |= bit & (std::uint64_t{0} - std::isfinite(static_cast<double>(row[k])));
          }
          for (std::size_t k = 0; k < len; ++k) keys[(r * run + k0 + k) * words + w] = acc[k];
        }
      }
    });
  };
  if (cube.dtype() == DType::Float32) sample(cube.data<float>());
  else if (cube.dtype() == DType::Float64) sample(cube.data<double>());
  else return false;  // not a cube of values: check_inputs says so
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), std::size_t{0});
  auto key = [&](std::size_t k) { return keys.begin() + static_cast<std::ptrdiff_t>(k * words); };
  auto same = [&](std::size_t a, std::size_t b) { return std::equal(key(a), key(a + 1), key(b)); };
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::lexicographical_compare(key(a), key(a + 1), key(b), key(b + 1));
  });
  std::size_t repeated = 0;
  for (std::size_t k = 0, end = 0; k < count; k = end) {  // each run of equal masks
    for (end = k + 1; end < count && same(order[k], order[end]);) ++end;
    const std::uint64_t* mask = keys.data() + order[k] * words;
    const auto nv = static_cast<std::size_t>(bit_count(mask, words));
    const std::size_t seen = end - k, size = seen * P / count;  // count > 0 here
    if (seen > 1 && group_pays(planner, nv, size, mask, left_by_device)) repeated += seen;
  }
  return repeated * 20 >= count;
}

bool group_pays(const Planner& planner, std::size_t nv, std::size_t size, const std::uint64_t* mask, bool left_by_device) {
  const bool steered = planner.steer.prefer == Kind::Group;
  if (size < 2) return false;
  const auto [kind, fast_cost] = planner.choose(nv);
  if (kind == Kind::Skip || kind == Kind::Full) return false;
  // A pixel of its own would take an SVD: a few sharing it already pay for the grouping.
  if (!steered && size < (kind == Kind::Exact ? kMinExactGroup : kMinGroup)) return false;
  if (steered) return true;
  double cost = left_by_device ? planner.exact_cost(nv) : fast_cost;
  const double group_cost =
      planner.exact_cost(nv) / static_cast<double>(size) + 2.0 * static_cast<double>(planner.f.m * nv) / kGemmSpeed;
  // A mask that breaks a band Gram matrix's rank (a split SBAS network)
  // fails that path: alone, each of its pixels would go to gelsd.
  if (group_cost >= cost && kind == Kind::Gram && planner.f.banded_gram && !band_rank_holds(planner.f, mask))
    cost = planner.exact_cost(nv);
  return group_cost < cost;
}

std::vector<char> choose_groups(const MaskStats& masks, const Planner& planner, bool left_by_device) {
  std::vector<char> chosen(masks.distinct_masks(), 0);
  const std::vector<std::size_t> first = masks.first_pixels();
  for (std::size_t g = 0; g < chosen.size(); ++g)
    chosen[g] = group_pays(planner, static_cast<std::size_t>(masks.n_valid[first[g]]), masks.group_size[g],
                           masks.mask(first[g]), left_by_device);
  return chosen;
}

PathCounts plan_groups(const std::vector<std::size_t>& valid_histogram, const std::vector<std::uint64_t>& masks,
                       std::size_t words, const std::vector<std::size_t>& sizes, const Design& design, bool weighted,
                       const SolveOptions& options) {
  check_options(options);
  const Planner planner = make_planner(design, weighted, options);
  PathCounts counts{};
  std::vector<std::size_t> left = valid_histogram;  // pixels by valid count, but those of groups chosen
  if (use_groups(options, weighted))
    for (std::size_t g = 0; g < sizes.size(); ++g) {
      const std::uint64_t* mask = masks.data() + g * words;
      const auto nv = static_cast<std::size_t>(bit_count(mask, words));
      if (!group_pays(planner, nv, sizes[g], mask, false)) continue;
      const std::size_t taken = std::min(sizes[g], left[nv]);  // an estimate may overshoot
      counts[static_cast<std::size_t>(SolvePath::Group)] += taken;
      left[nv] -= taken;
    }
  for (std::size_t nv = 0; nv < left.size(); ++nv) counts[static_cast<std::size_t>(path_of(planner.choose(nv).first))] += left[nv];
  return counts;
}

std::size_t cpu_chunk(std::size_t P, std::size_t N, std::size_t M, std::size_t threads, std::size_t memory,
                      bool exact_only, std::size_t cache_bytes) {
  threads = std::max<std::size_t>(threads, 1);
  const std::size_t per_pixel = 8 * (3 * N + 3 * M) + N + 64;
  const std::size_t budget = std::max<std::size_t>(memory / threads, 1 << 20);
  const std::size_t fair = (P + threads * 4 - 1) / (threads * 4);
  if (exact_only) return std::clamp<std::size_t>(std::min(budget / per_pixel, fair), 1, 64);
  const std::size_t cached = std::clamp<std::size_t>(cache_bytes / (8 * std::max<std::size_t>(N, 1)), 512, 2048);
  return std::clamp<std::size_t>(std::min(budget / per_pixel, fair), 64, cached);
}

}  // namespace cubesolve::detail

namespace cubesolve {

PathCounts plan(const MaskStats& masks, const Design& design, bool weighted, const SolveOptions& options) {
  std::vector<std::uint64_t> group_masks;
  for (std::size_t p : masks.first_pixels()) group_masks.insert(group_masks.end(), masks.mask(p), masks.mask(p) + masks.words);
  return detail::plan_groups(masks.valid_histogram(), group_masks, masks.words, masks.group_size, design, weighted, options);
}

}  // namespace cubesolve
