#pragma once
// What one solve's passes share: the job (inputs, options, the result every
// pass writes into) and each thread's workspace for a chunk of pixels, with
// the gathers that copy a chunk of the cube into it.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/engine/tuning.hpp>

#include "engine/exact.hpp"
#include "engine/kernels.hpp"
#include "engine/large.hpp"
#include "engine/planner.hpp"

#include <atomic>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace cubesolve::detail {

namespace gpu {
class Solver;
}

/// X (M, H, W) and the diagnostics (H, W) of a solve, unset: every pixel of
/// every output is written by exactly one path.
SolveResult allocate_result(const Array& cube, const Design& design, const SolveOptions& options);

/// The state every chunk and group task of one solve reads and writes.
struct Job {
  const Array& cube;
  const Design& design;
  const DesignFactors& f;
  const Array* weights;
  const SolveOptions& options;
  const Planner& planner;
  SolveResult& r;
  std::size_t N, M, P;
  std::vector<char> taken;             // pixels already solved by the device or the group pass
  std::vector<Kind> kinds;             // the planner's choice by valid count, 0..N
  gpu::Solver* gpu = nullptr;          // the device for the paths it takes
  std::atomic<std::size_t> gpu_short{0};  // pixels the device had no memory for (solved on the CPU)

  Job(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
      const Planner& planner, SolveResult& r);

  /// Whether every pixel of [begin, end) was solved by another pass.
  bool all_taken(std::size_t begin, std::size_t end) const;
  void write_pixel(std::size_t p, const double* x, PixelStatus status, int rank, double cond, double rss, int nv);
  void write_diagnostics(std::size_t p, PixelStatus status, int rank, double cond, double rss, int nv);
  /// Writes x for pixels [begin, begin + B) from pixel-major `x` (M values a
  /// pixel), skipping those marked in `skip`.
  void write_block(std::size_t begin, std::size_t B, const double* x, const std::vector<char>& skip);
};

/// Per-thread buffers for a chunk of B pixels. Pixel-major arrays hold
/// value i of pixel k at k * N + i; observation-major ones at i * B + k.
struct Workspace {
  Workspace(const Design& d, std::size_t max_rows, bool ridge, const Tuning& t)
      : exact(d, max_rows, ridge), tune(t) {}
  ExactSolver exact;
  Tuning tune;                         // the machine's parameters, as the solve read them (see tuning.hpp)
  std::vector<double> y;               // pixel-major values, 0 where missing
  std::vector<std::uint8_t> valid;     // pixel-major: 1 where valid
  std::vector<double> w;               // pixel-major weights, 0 where missing (weighted solves)
  LargeDoubles yo;                     // observation-major values (the rows kernel; large pages)
  std::vector<double> yy;              // |y~|^2 per pixel (the rows kernel's rss, see gather_rows)
  std::vector<std::uint64_t> bits;     // masks, (N + 63) / 64 words a pixel: bit i set where valid
  std::vector<int> nv;                 // valid rows per pixel
  std::vector<int> deficit;            // rank(A_V) below the path's own (a split network on the Gram path)
  std::vector<Kind> kind;              // each pixel's path (Group: written by another pass)
  LargeDoubles x0;                     // M values a pixel: P·y~ (the rows kernel; large pages)
  std::vector<double> x;               // M values a pixel: the solutions
  std::vector<double> rss;
  std::vector<std::vector<std::size_t>> buckets;  // small-system pixels by system size
  std::vector<std::size_t> order;                 // the buckets' pixels in order (see factor_in_lanes)
  std::vector<double> del_rhs;                    // the deletions' right-hand sides (rows kernel, see deletion_rhs)
  std::vector<std::size_t> del_at, lack_start, lack_fill;  // where each pixel's starts; each row's pairs
  std::vector<int> lack;                          // (pixel, position) of each row a pixel lacks
  std::vector<std::size_t> gram, exact_list;      // pixels of the Gram and exact paths
  std::vector<char> skip;
  std::vector<int> rows;
  std::vector<double> s, rhs, model, wm, wy, g;   // the paths' scratch
  std::vector<double> shifted;                    // the lanes' systems less their shift (a custom rcond)
  std::vector<double> step;                       // a dense Gram pixel's refinement (see refine_gram)
  std::vector<double> pair;                       // two groups' systems side by side (factor_pair)
  std::vector<float> s32;                         // float32 systems (batched_solve_mixed)
  std::vector<double> refine;                     // their refinement's float64 vectors
  std::vector<std::uint8_t> gpu_kind, gpu_done;   // the device's answers for a chunk
  std::vector<std::size_t> gpu_sample;            // pixels the device solved, for the check
  PathCounts paths{};
  std::size_t device_pixels = 0;

  /// Sizes the buffers every chunk kernel uses for B pixels.
  void reset(std::size_t N, std::size_t M, std::size_t B, bool weighted);
};

/// Pixel-major copy of pixels [begin, begin + B): ws.y, ws.valid, the masks
/// as bits in ws.bits, valid counts in ws.nv and (with weights) ws.w, a
/// missing value or a zero weight marking the row invalid.
void gather(const Job& job, Workspace& ws, std::size_t begin, std::size_t B);
/// Observation-major copy for the rows kernel: ws.yo (0 where missing),
/// masks as bits per pixel in ws.bits, valid counts in ws.nv; with residuals
/// by the identity (DesignFactors::rss_identity), each pixel's |y~|^2 in
/// ws.yy, summed as the values are read.
void gather_rows(const Job& job, Workspace& ws, std::size_t begin, std::size_t B);
/// x of a pixel no path solves: NaN (Skip), or 0 where another pass writes it (Group).
void fill_unsolved(Workspace& ws, std::size_t k, std::size_t M);
/// The pixel-major values and flags of pixel k from the observation-major copy.
void unpack(Workspace& ws, std::size_t k, std::size_t N, std::size_t B);

/// How many bits are set in `words` words of `bits`.
CUBESOLVE_KERNEL int bit_count(const std::uint64_t* bits, std::size_t words) {
  int count = 0;
  for (std::size_t w = 0; w < words; ++w) count += __builtin_popcountll(bits[w]);
  return count;
}

/// The indices i < n whose bit in `bits` equals `want`.
CUBESOLVE_KERNEL int bit_list(const std::uint64_t* bits, std::size_t n, bool want, int* out) {
  int count = 0;
  for (std::size_t w = 0; w * 64 < n; ++w) {
    std::uint64_t b = want ? bits[w] : ~bits[w];
    if ((w + 1) * 64 > n) b &= (std::uint64_t{1} << (n - w * 64)) - 1;
    while (b) {
      out[count++] = static_cast<int>(w * 64) + __builtin_ctzll(b);
      b &= b - 1;
    }
  }
  return count;
}


/// The chunk kernels: every pixel of [begin, end) not taken by another pass,
/// on the CPU paths. The pixel-major kernel serves every solve; the rows
/// kernel (observation-major: x0 = P·y~ for the whole chunk first, and each
/// deletion corrects it, x = x0 + P[:, I] z) serves solves of a design of
/// full column rank without weights or ridge.
void solve_chunk(Job& job, Workspace& ws, std::size_t begin, std::size_t end);
void solve_chunk_rows(Job& job, Workspace& ws, std::size_t begin, std::size_t end);
/// Whether a solve takes the rows kernel.
bool use_rows_kernel(const Job& job);

}  // namespace cubesolve::detail
