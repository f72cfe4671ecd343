// solve(): a handful of phases over the planner, the passes and the paths.
#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "cuda/gpu.hpp"
#include "engine/chunk.hpp"
#include "engine/device_pass.hpp"
#include "engine/exact.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"
#include "engine/paths.hpp"
#include "engine/planner.hpp"
#include "engine/robust.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace cubesolve {
namespace {

using namespace detail;

Progress part(const Progress& p, double lo, double hi) {
  if (!p) return {};
  return [p, lo, hi](double f) { return p(lo + (hi - lo) * f); };
}

/// Mask groups among the pixels not yet taken: pixels sharing a mask share
/// one SVD where that is cheaper than their own paths (and it keeps a mask
/// that breaks the rank, which a device leaves, on one SVD). After a device
/// only the pixels it left are looked at. Returns the progress reached.
double group_pass(Job& job, std::vector<PathCounts>& counts, const Progress& progress, double done) {
  if (job.planner.steer.defer_svd) return done;  // the groups' SVDs come in the second pass
  const bool after_device = !job.taken.empty();
  std::vector<std::size_t> left;  // after a device: the pixels it left
  Array left_cube;
  if (after_device) {
    for (std::size_t p = 0; p < job.P; ++p)
      if (!job.taken[p]) left.push_back(p);
    if (left.size() >= kMinGroup) left_cube = take_pixels(job.cube, left);
  }
  const Array& look = after_device ? left_cube : job.cube;
  if (!use_groups(job.options, job.weights != nullptr) || (after_device ? left.size() : job.P) < kMinGroup ||
      !(job.planner.exact_only || masks_repeat(look, job.planner, after_device, job.r.threads)))
    return done;
  const MaskStats masks = analyze_masks(look, nullptr, part(progress, done, done + 0.1 * (1 - done)));
  done += 0.1 * (1 - done);
  const std::vector<char> chosen = choose_groups(masks, job.planner, after_device);
  std::size_t grouped = 0;
  for (std::size_t g = 0; g < chosen.size(); ++g) grouped += chosen[g] ? masks.group_size[g] : 0;
  if (grouped == 0) return done;

  // Pixels of the chosen groups (indices into the cube), group after group,
  // cut into blocks that know their group's mask.
  std::vector<std::size_t> offset(chosen.size() + 1, 0), pixels(grouped);
  for (std::size_t g = 0; g < chosen.size(); ++g) offset[g + 1] = offset[g] + (chosen[g] ? masks.group_size[g] : 0);
  std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
  std::vector<const std::uint64_t*> mask_of(chosen.size(), nullptr);
  if (job.taken.empty()) job.taken.assign(job.P, 0);
  for (std::size_t q = 0; q < masks.pixels(); ++q) {
    const auto g = static_cast<std::size_t>(masks.group_of[q]);
    if (!chosen[g]) continue;
    const std::size_t p = after_device ? left[q] : q;
    if (!mask_of[g]) mask_of[g] = masks.mask(q);
    pixels[fill[g]++] = p;
    job.taken[p] = 1;
  }
  struct Block {
    std::size_t begin, end;
    const std::uint64_t* mask;
  };
  std::vector<Block> blocks;
  constexpr std::size_t kBlock = 4096;
  for (std::size_t g = 0; g < chosen.size(); ++g)
    for (std::size_t b = offset[g]; b < offset[g + 1]; b += kBlock)
      blocks.push_back({b, std::min(offset[g + 1], b + kBlock), mask_of[g]});
  const double share = done + (1 - done) * static_cast<double>(grouped) / static_cast<double>(masks.pixels());
  parallel_for(
      blocks.size(), 1, job.r.threads,
      [&](int t, std::size_t b0, std::size_t b1) {
        for (std::size_t b = b0; b < b1; ++b)
          solve_group_block(job, blocks[b].mask, pixels, blocks[b].begin, blocks[b].end,
                            counts[static_cast<std::size_t>(t)]);
      },
      part(progress, done, share));
  return share;
}

/// Everything not taken, on the CPU paths, streamed in chunks.
void cpu_pass(Job& job, std::vector<Workspace>& ws, const Progress& progress) {
  const bool rows = use_rows_kernel(job);
  parallel_for(
      job.P,
      cpu_chunk(job.P, job.N, job.M, static_cast<std::size_t>(job.r.threads), job.options.memory,
                job.planner.exact_only, ws.front().tune.chunk_bytes),
      job.r.threads,
      [&](int t, std::size_t b, std::size_t e) {
        Workspace& w = ws[static_cast<std::size_t>(t)];
        if (rows) solve_chunk_rows(job, w, b, e);
        else solve_chunk(job, w, b, e);
      },
      progress);
}

void add_counts(SolveResult& r, const std::vector<Workspace>& ws, const std::vector<PathCounts>& counts) {
  for (const auto& w : ws) {
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += w.paths[i];
    r.device_pixels += w.device_pixels;
  }
  for (const auto& c : counts)
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += c[i];
}

/// Whether pixel p's rows of A (weighted) lie far enough above the singular
/// values that A's row space leaves out (`dropped`, the largest) that gelsd
/// on them would count those directions as rounding too: their share of the
/// pixel's system, sqrt(max w)·dropped, within eps·max(|V|, M) of its
/// largest singular value, of which the rows give a lower bound (the largest
/// row, and the rows' Frobenius norm over the square root of the rank).
/// Pixels whose rows all lie at a far smaller scale than A's (a design whose
/// columns differ by many decades) fail it. Pixels with no valid row pass.
bool sees_row_space_only(const Array& cube, const Array* weights, const std::vector<double>& row_norm2, double dropped,
                         std::size_t M, std::size_t p) {
  const std::size_t N = cube.dim(0), P = cube.dim(1) * cube.dim(2);
  double largest = 0, sum = 0, wmax = 0;
  std::size_t nv = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double y = cube.value(i * P + p), w = weights ? weights->value(i * P + p) : 1.0;
    if (!std::isfinite(y) || !(w > 0) || !std::isfinite(w)) continue;
    ++nv;
    largest = std::max(largest, w * row_norm2[i]);
    sum += w * row_norm2[i];
    wmax = std::max(wmax, w);
  }
  if (nv == 0) return true;
  const double sigma2 = std::max(largest, sum / static_cast<double>(std::min(nv, M))), t = default_rcond(nv, M);
  return wmax * dropped * dropped <= t * t * sigma2;
}

/// A design of rank r < M: each pixel's minimum-norm solution is Q z, z the
/// minimum-norm solution for A·Q (full column rank), Q the orthonormal basis
/// of A's row space; the singular values of the pixel's rows are the same,
/// and so are its rank, residuals and condition, as long as the directions
/// the row space leaves out stay below the pixel's own rounding (see
/// sees_row_space_only). z is solved in float64 whatever the output's type,
/// so that X is rounded to it once. The fast paths run on A·Q; the pixels
/// that need an SVD, and those whose rows do not keep clear of the left-out
/// directions (a cube copied with their values missing, where there are
/// any), are solved in a second pass on A itself by the SVD paths (exact,
/// group), as gelsd would solve them. (With a ridge every rank takes the
/// Gram path, and the rank of the system it minimises counts A's null
/// space: no reduction there.)
SolveResult solve_in_row_space(const Array& cube, const Design& design, const Design& reduced, const Array* weights,
                               const SolveOptions& options, const Steering& steer, const Progress& progress) {
  const std::size_t N = cube.dim(0), M = design.cols(), R = reduced.cols(), H = cube.dim(1), W = cube.dim(2), P = H * W;
  const DesignFactors& f = design.factors();
  std::vector<double> row_norm2(N, 0.0);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t j = 0; j < M; ++j) row_norm2[i] += design(i, j) * design(i, j);
  std::vector<std::size_t> again;  // pixels for the second pass
  for (std::size_t p = 0; p < P; ++p)
    if (!sees_row_space_only(cube, weights, row_norm2, f.sigma[f.rank], M, p)) again.push_back(p);
  const std::size_t unseen = again.size();
  Array masked;
  if (unseen > 0) {  // their values missing in the first pass
    masked = cube;
    for (std::size_t p : again)
      for (std::size_t i = 0; i < N; ++i) masked.set(i * P + p, std::numeric_limits<double>::quiet_NaN());
  }
  SolveOptions in_z = options;
  in_z.output = DType::Float64;
  Steering first = steer;
  first.defer_svd = true;
  SolveResult r = solve_steered(unseen > 0 ? masked : cube, reduced, weights, in_z, first, part(progress, 0, 0.9));
  const auto t0 = std::chrono::steady_clock::now();
  const double* z = r.x.data<double>();
  std::vector<double> x(M * P);
  // X (M, P) = Q (M, R) · Z (R, P), row-major: X^T = Z^T Q^T in column-major terms.
  if (P > 0)
    lapack::gemm('N', 'T', static_cast<int>(P), static_cast<int>(M), static_cast<int>(R), 1.0, z, static_cast<int>(P),
                 f.row_basis.data(), static_cast<int>(M), 0.0, x.data(), static_cast<int>(P));
  for (std::size_t p = 0; p < P; ++p)
    if (std::isnan(z[p]))
      for (std::size_t j = 0; j < M; ++j) x[j * P + p] = std::numeric_limits<double>::quiet_NaN();
  auto* st = r.status.data<std::uint8_t>();
  auto* rank = r.rank.data<std::int32_t>();
  for (std::size_t p = 0; p < P; ++p) {
    if (rank[p] < 0) again.push_back(p);  // deferred: counted as exact in the first pass
    else if (st[p] == static_cast<std::uint8_t>(PixelStatus::Ok)) st[p] = static_cast<std::uint8_t>(PixelStatus::MinNorm);
  }
  r.paths[static_cast<std::size_t>(SolvePath::Skipped)] -= unseen;
  r.paths[static_cast<std::size_t>(SolvePath::Exact)] -= again.size() - unseen;
  if (!again.empty()) {
    const Array sub = take_pixels(cube, again);
    const Array wsub = weights ? take_pixels(*weights, again) : Array();
    Steering second;
    second.svd_only = true;
    const SolveResult s = solve_steered(sub, design, weights ? &wsub : nullptr, in_z, second, part(progress, 0.9, 1.0));
    for (std::size_t k = 0; k < again.size(); ++k) {
      const std::size_t p = again[k];
      for (std::size_t j = 0; j < M; ++j) x[j * P + p] = s.x.value(j * again.size() + k);
      st[p] = s.status.data<std::uint8_t>()[k];
      rank[p] = s.rank.data<std::int32_t>()[k];
      r.n_valid.data<std::int32_t>()[p] = s.n_valid.data<std::int32_t>()[k];
      r.rss.data<double>()[p] = s.rss.data<double>()[k];
      r.cond.data<double>()[p] = s.cond.data<double>()[k];
    }
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += s.paths[i];
    r.warnings.insert(r.warnings.end(), s.warnings.begin(), s.warnings.end());
  }
  Array full(options.output.value_or(cube.dtype()), {M, H, W});
  for (std::size_t i = 0; i < M * P; ++i) full.set(i, x[i]);
  r.x = std::move(full);
  r.engine_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

SolveResult solve(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
                  const Progress& progress) {
  check_options(options);
  const bool robust = options.loss != Loss::L2;
  if (!options.std_errors && !options.covariance && !robust) return solve_steered(cube, design, weights, options, {}, progress);
  SolveOptions first = options;  // least squares, with rss
  first.residuals = true;
  first.loss = Loss::L2;
  if (robust) first.output = DType::Float64;  // the start of the iterations, rounded once at the end
  SolveResult r = solve_steered(cube, design, weights, first, {}, part(progress, 0, robust ? 0.3 : 0.8));
  const auto t0 = std::chrono::steady_clock::now();
  if (robust) {
    detail::robust_pass(cube, design, weights, options, r, part(progress, 0.3, 1.0));
    if (const DType out = options.output.value_or(cube.dtype()); out != DType::Float64) {
      Array x(out, r.x.shape());
      for (std::size_t i = 0; i < x.size(); ++i) x.set(i, r.x.value(i));
      r.x = std::move(x);
    }
  } else {
    if (options.covariance) {  // the errors from its diagonal
      r.covariance = covariances(cube, design, weights, r, options, {}, part(progress, 0.8, 1.0));
      if (options.std_errors) r.std_error = covariance_errors(r.covariance, design.cols());
    } else {
      r.std_error = standard_errors(cube, design, weights, r, options, {}, part(progress, 0.8, 1.0));
    }
  }
  r.engine_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SolveResult detail::solve_steered(const Array& cube, const Design& design, const Array* weights,
                                  const SolveOptions& options, const Steering& steer, const Progress& progress) {
  check_inputs(cube, design, weights);
  check_options(options);
  if (const Design* reduced = design.reduced(); reduced && options.method == Method::Auto && options.ridge == 0 &&
                                                !steer.svd_only)
    return solve_in_row_space(cube, design, *reduced, weights, options, steer, progress);
  const auto t0 = std::chrono::steady_clock::now();
  SolveResult r = allocate_result(cube, design, options);
  const Device device = options.device == Device::Auto ? resolve_device(Device::Auto) : options.device;
  Planner planner = make_planner(design, weights != nullptr, options, device == Device::Cpu);
  planner.steer = steer;
  if (steer.svd_only) planner.exact_only = true;
  Job job(cube, design, weights, options, planner, r);
  std::vector<Workspace> ws;
  const Tuning tune = tuning();  // (once: every thread's the same)
  for (int t = 0; t < r.threads; ++t) ws.emplace_back(design, job.N, options.ridge > 0, tune);
  std::vector<PathCounts> counts(static_cast<std::size_t>(r.threads), PathCounts{});
  lapack::SingleThreadedBlas single;

  // On a device first: the pixels of its paths, straight from the cube.
  std::unique_ptr<gpu::Solver> gpu;
  if (device == Device::Cuda) gpu = make_device_solver(job);
  double done = 0;
  if (gpu) {
    job.gpu = gpu.get();
    r.device = Device::Cuda;
    device_pass(job, ws, part(progress, 0, 0.5));
    done = 0.5;
  }
  done = group_pass(job, counts, progress, done);
  cpu_pass(job, ws, part(progress, done, 1.0));
  add_counts(r, ws, counts);

  if (gpu) {
    device_warnings(job, r.warnings);
    // A device's answers are checked against the exact path on a sample of
    // its pixels; if one disagrees, the whole solve is done again on the CPU.
    if (!device_results_hold(job, ws)) {
      SolveOptions cpu = options;
      cpu.device = Device::Cpu;
      SolveResult again = solve_steered(cube, design, weights, cpu, steer, progress);
      again.warnings.push_back("the CUDA results failed their check against the exact path; solved on the CPU");
      return again;
    }
  }
  r.engine_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace cubesolve
