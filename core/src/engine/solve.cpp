// solve(): a handful of phases over the planner, the passes and the paths.
#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "cuda/gpu.hpp"
#include "engine/chunk.hpp"
#include "engine/device_pass.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"
#include "engine/paths.hpp"
#include "engine/planner.hpp"

#include <algorithm>
#include <chrono>

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
                job.planner.exact_only),
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

/// A design of rank r < M: each pixel's minimum-norm solution is Q z, z the
/// minimum-norm solution for A·Q (full column rank), Q the orthonormal basis
/// of A's row space; the singular values of the pixel's rows are the same,
/// and so are its rank, residuals and condition. A pixel unique in z is of
/// minimum norm in x (with a ridge, its solution stays unique).
SolveResult solve_in_row_space(const Array& cube, const Design& design, const Design& reduced, const Array* weights,
                               const SolveOptions& options, const Steering& steer, const Progress& progress) {
  SolveResult r = solve_steered(cube, reduced, weights, options, steer, progress);
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t M = design.cols(), R = reduced.cols(), H = cube.dim(1), W = cube.dim(2), P = H * W;
  const std::vector<double>& q = design.factors().row_basis;
  std::vector<double> z(R * P), x(M * P);
  for (std::size_t i = 0; i < R * P; ++i) z[i] = r.x.value(i);
  // X (M, P) = Q (M, R) · Z (R, P), row-major: X^T = Z^T Q^T in column-major terms.
  if (P > 0)
    lapack::gemm('N', 'T', static_cast<int>(P), static_cast<int>(M), static_cast<int>(R), 1.0, z.data(), static_cast<int>(P),
                 q.data(), static_cast<int>(M), 0.0, x.data(), static_cast<int>(P));
  Array full(r.x.dtype(), {M, H, W});
  for (std::size_t j = 0; j < M; ++j)
    for (std::size_t p = 0; p < P; ++p) {
      full.set(j * P + p, std::isnan(z[p]) ? std::numeric_limits<double>::quiet_NaN() : x[j * P + p]);
    }
  r.x = std::move(full);
  auto* st = r.status.data<std::uint8_t>();
  for (std::size_t p = 0; p < P && options.ridge == 0; ++p)
    if (st[p] == static_cast<std::uint8_t>(PixelStatus::Ok)) st[p] = static_cast<std::uint8_t>(PixelStatus::MinNorm);
  r.engine_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace

SolveResult solve(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
                  const Progress& progress) {
  return solve_steered(cube, design, weights, options, {}, progress);
}

SolveResult detail::solve_steered(const Array& cube, const Design& design, const Array* weights,
                                  const SolveOptions& options, const Steering& steer, const Progress& progress) {
  check_inputs(cube, design, weights);
  check_options(options);
  if (const Design* reduced = design.reduced(); reduced && options.method == Method::Auto)
    return solve_in_row_space(cube, design, *reduced, weights, options, steer, progress);
  const auto t0 = std::chrono::steady_clock::now();
  SolveResult r = allocate_result(cube, design, options);
  const Device device = options.device == Device::Auto ? resolve_device(Device::Auto) : options.device;
  Planner planner = make_planner(design, weights != nullptr, options, device == Device::Cpu);
  planner.steer = steer;
  Job job(cube, design, weights, options, planner, r);
  std::vector<Workspace> ws;
  for (int t = 0; t < r.threads; ++t) ws.emplace_back(design, job.N, options.ridge > 0);
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
