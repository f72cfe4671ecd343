#include "engine/paths.hpp"

#include "engine/lanes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve::detail {

using namespace lanes;

/// The rows kernel's right-hand sides A_I x0 of the chunk's deletion pixels
/// (a dense A), each at ws.del_rhs[ws.del_at[k]], kDelBlock pixels at a
/// time: A's rows in order, each read once for the block and dotted with
/// the x0 of every pixel of it that lacks the row (four at a time sharing
/// its loads), while those x0 stay in cache. Pixel by pixel each dot product
/// would read its row of A again from the larger caches.
CUBESOLVE_KERNEL void deletion_rhs(const Job& job, Workspace& ws, std::size_t B) {
  constexpr std::size_t kDelBlock = 128;
  const std::size_t N = job.N, M = job.M, words = (N + 63) / 64;
  const double* A = job.design.values().data();
  std::vector<std::size_t>& pixels = ws.order;  // the deletion pixels
  pixels.clear();
  for (std::size_t k = 0; k < B; ++k)
    if (ws.kind[k] == Kind::Deletion) pixels.push_back(k);
  ws.rows.resize(std::max(ws.rows.size(), N));
  for (std::size_t b0 = 0; b0 < pixels.size(); b0 += kDelBlock) {
    const std::size_t b1 = std::min(pixels.size(), b0 + kDelBlock);
    // Each row's (pixel, destination) pairs, by a count of the rows the pixels lack.
    ws.lack_start.assign(N + 1, 0);
    std::size_t pairs = 0;
    for (std::size_t p = b0; p < b1; ++p) {
      const std::size_t k = pixels[p];
      const int q = bit_list(ws.bits.data() + k * words, N, false, ws.rows.data());
      for (int a = 0; a < q; ++a) ++ws.lack_start[static_cast<std::size_t>(ws.rows[a]) + 1];
      pairs += static_cast<std::size_t>(q);
    }
    for (std::size_t i = 0; i < N; ++i) ws.lack_start[i + 1] += ws.lack_start[i];
    ws.lack.resize(2 * pairs);
    ws.lack_fill.assign(ws.lack_start.begin(), ws.lack_start.end() - 1);
    for (std::size_t p = b0; p < b1; ++p) {
      const std::size_t k = pixels[p];
      const int q = bit_list(ws.bits.data() + k * words, N, false, ws.rows.data());
      for (int a = 0; a < q; ++a) {
        const std::size_t e = ws.lack_fill[static_cast<std::size_t>(ws.rows[a])]++;
        ws.lack[2 * e] = static_cast<int>(k);
        ws.lack[2 * e + 1] = a;
      }
    }
    for (std::size_t i = 0; i < N; ++i) {
      const double* Ai = A + i * M;
      std::size_t e = ws.lack_start[i];
      const std::size_t end = ws.lack_start[i + 1];
      for (; e < end; e += 4) {  // the last group repeats its last pair where it is short
        const std::size_t n = std::min<std::size_t>(4, end - e);
        const double* x0[4];
        for (std::size_t t = 0; t < 4; ++t)
          x0[t] = ws.x0.data() + static_cast<std::size_t>(ws.lack[2 * (e + std::min(t, n - 1))]) * M;
        double d[4];
        dot4(x0, Ai, M, d);
        for (std::size_t t = 0; t < n; ++t) {
          const auto k = static_cast<std::size_t>(ws.lack[2 * (e + t)]);
          ws.del_rhs[ws.del_at[k] + static_cast<std::size_t>(ws.lack[2 * (e + t) + 1])] = d[t];
        }
      }
    }
  }
}

CUBESOLVE_SIMD_CLONES void solve_systems_rows(const Job& job, Workspace& ws, std::size_t B) {
  const std::size_t N = job.N, M = job.M, words = (N + 63) / 64;
  // A design that stays in a core's cache is read row by row for each pixel.
  constexpr std::size_t kCachedDesign = std::size_t{512} << 10;
  const bool streamed = !job.f.sparse_rows && N * M * sizeof(double) > kCachedDesign;
  // Each deletion's right-hand side b = A_I x0 at ws.del_rhs[ws.del_at[k]]:
  // its rss needs it after the solve (see chunk_residuals_rows).
  ws.del_at.assign(B, 0);
  std::size_t total = 0;
  for (std::size_t k = 0; k < B; ++k)
    if (ws.kind[k] == Kind::Deletion) {
      ws.del_at[k] = total;
      total += N - static_cast<std::size_t>(ws.nv[k]);
    }
  ws.del_rhs.resize(total);
  if (streamed) deletion_rhs(job, ws, B);
  ws.rows.resize(N * kMaxGroups * L);
  // A deletion: (I - H_II) z = A_I x0 (= H_I y~), x = x0 + P[:, I] z.
  auto lane = [&](std::size_t l, std::size_t k, double* z) __attribute__((always_inline)) {
    if (ws.kind[k] != Kind::Deletion) return pixel_lane(job, ws, l, k, z);  // unpacked
    int* I = ws.rows.data() + l * N;
    const auto q = static_cast<std::size_t>(bit_list(ws.bits.data() + k * words, N, false, I));
    const double* x0 = ws.x0.data() + k * M;
    if (job.f.sparse_rows) {
      for (std::size_t a = 0; a < q; ++a) z[a * L] = sparse_row_dot(job.f, static_cast<std::size_t>(I[a]), x0);
    } else {
      double* b = ws.del_rhs.data() + ws.del_at[k];
      if (!streamed) row_dots(job.design.values().data(), M, I, q, x0, b, 1);
      for (std::size_t a = 0; a < q; ++a) z[a * L] = b[a];
    }
    return LaneSystem{job.f.hat_lower.data(), I, q, true, job.planner.shift_deletion, true};
  };
  auto done = [&](std::size_t l, std::size_t k, std::size_t q, const double* z, bool ok)
      __attribute__((always_inline)) {
    if (ws.kind[k] != Kind::Deletion) return pixel_done(job, ws, q, l, k, z, ok);
    if (ok) {  // a correction out of all proportion to x0 is not trusted
      const int* I = ws.rows.data() + l * N;
      double* x = ws.x.data() + k * M;
      const double* x0 = ws.x0.data() + k * M;
      std::fill(x, x + M, 0.0);
      row_axpys(job.f.pinv.data(), M, I, q, z, L, x);
      const double dx = dot(x, x, M), nx = dot(x0, x0, M);
      axpy(1.0, x0, x, M);
      if (dx <= kMaxGrowth * kMaxGrowth * std::max(nx, 1e-300)) {
        if (job.options.residuals && !job.f.sparse_rows) {  // -z·b, for chunk_residuals_rows
          const double* b = ws.del_rhs.data() + ws.del_at[k];
          double zb = 0;
          for (std::size_t a = 0; a < q; ++a) zb += z[a * L] * b[a];
          ws.rss[k] = -zb;
        }
        return;
      }
    }
    unpack(ws, k, N, B);
    leave_small_path(job, ws, k);
  };
  factor_in_lanes(N, ws, lane, done, [&](std::size_t, std::size_t k, const LaneSystem& sys, const double* z, double* r) {
    pixel_residual(job, ws, k, sys, z, r);
  });
}

}  // namespace cubesolve::detail
