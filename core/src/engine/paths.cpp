#include "engine/paths.hpp"

#include "engine/lanes.hpp"
#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve::detail {

using namespace lanes;

void solve_product(const Job& job, Workspace& ws, std::size_t B) {
  const std::size_t N = job.N, M = job.M;
  // Into x itself where no pixel of the chunk has its solution there yet
  // (the paths after this one write over what it leaves in their pixels).
  const auto kinds = ws.kind.begin();
  const bool direct = std::none_of(kinds, kinds + static_cast<std::ptrdiff_t>(B), [](Kind k) { return k == Kind::DualGather; });
  lapack::gemm('N', 'N', static_cast<int>(M), static_cast<int>(B), static_cast<int>(N), 1.0, job.f.pinv.data(),
               static_cast<int>(M), ws.y.data(), static_cast<int>(N), 0.0, direct ? ws.x.data() : ws.x0.data(),
               static_cast<int>(M));
  for (std::size_t k = 0; k < B; ++k) {
    const Kind kind = ws.kind[k];
    if (direct && (kind == Kind::Skip || kind == Kind::Group)) fill_unsolved(ws, k, M);
    if (!direct && (kind == Kind::Full || kind == Kind::Deletion || kind == Kind::DualSchur))
      std::copy(ws.x0.data() + k * M, ws.x0.data() + (k + 1) * M, ws.x.data() + k * M);
  }
}

CUBESOLVE_SIMD_CLONES void solve_exact(Job& job, Workspace& ws, std::size_t begin) {
  const std::size_t N = job.N, M = job.M;
  if (job.planner.steer.defer_svd) {  // left to the design's own SVD (see Steering)
    for (std::size_t k : ws.exact_list) {
      ws.kind[k] = Kind::Exact;
      std::fill(ws.x.data() + k * M, ws.x.data() + (k + 1) * M, kNaN);
      job.write_diagnostics(begin + k, PixelStatus::Failed, -1, kNaN, kNaN, ws.nv[k]);
    }
    return;
  }
  const double* A = job.design.values().data();
  std::vector<double> yv(N), sw(N);
  ws.rows.resize(std::max(ws.rows.size(), N));
  for (std::size_t k : ws.exact_list) {
    ws.kind[k] = Kind::Exact;
    std::size_t q = 0;
    for (std::size_t i = 0; i < N; ++i)
      if (ws.valid[k * N + i]) {
        ws.rows[q] = static_cast<int>(i);
        yv[q] = ws.y[k * N + i];
        sw[q] = job.weights ? std::sqrt(ws.w[k * N + i]) : 1.0;
        ++q;
      }
    double* x = ws.x.data() + k * M;
    const auto out = ws.exact.solve(ws.rows.data(), job.weights ? sw.data() : nullptr, yv.data(), q, job.options.rcond,
                                    job.options.ridge, x);
    const std::size_t p = begin + k;
    if (out.failed) {
      job.write_diagnostics(p, PixelStatus::Failed, out.rank, kNaN, kNaN, ws.nv[k]);
      continue;
    }
    double rss = 0;
    for (std::size_t a = 0; a < q; ++a) {
      const double e = (dot(A + static_cast<std::size_t>(ws.rows[a]) * M, x, M) - yv[a]) * sw[a];
      rss += e * e;
    }
    const PixelStatus st = job.options.ridge > 0 ? PixelStatus::Ok : rank_status(static_cast<std::size_t>(out.rank), M);
    job.write_diagnostics(p, st, out.rank, out.cond, rss, ws.nv[k]);
  }
}

/// Sets pixel k's rss where it needs no model, and says whether it did: the
/// band Gram path has written it, or the pixel's fast path fits its values
/// exactly (rss 0): A_V of full row rank (a dual path's factorization held,
/// or A's own for a full pixel), whose ridge-free solution solves A_V x = y_V.
bool rss_without_model(const Job& job, Workspace& ws, std::size_t k) {
  const Kind kind = ws.kind[k];
  if (kind == Kind::Gram) return !std::isnan(ws.rss[k]);
  const bool fits = job.options.ridge == 0 && (kind == Kind::DualSchur || kind == Kind::DualGather ||
                                               (kind == Kind::Full && job.f.full_row_rank()));
  if (fits) ws.rss[k] = 0;
  return fits;
}

CUBESOLVE_SIMD_CLONES void chunk_residuals(const Job& job, Workspace& ws, std::size_t B) {
  const std::size_t N = job.N, M = job.M;
  const DesignFactors& f = job.f;
  std::vector<char> need(B);  // pixels whose rss needs their model
  for (std::size_t k = 0; k < B; ++k) {
    const Kind kind = ws.kind[k];
    need[k] = kind != Kind::Skip && kind != Kind::Group && kind != Kind::Exact && !rss_without_model(job, ws, k);
  }
  const bool any = std::find(need.begin(), need.end(), 1) != need.end();
  if (!f.sparse_rows && any) {  // the model A x of every pixel: one GEMM
    ws.model.resize(N * B);
    lapack::gemm('T', 'N', static_cast<int>(N), static_cast<int>(B), static_cast<int>(M), 1.0,
                 job.design.values().data(), static_cast<int>(M), ws.x.data(), static_cast<int>(M), 0.0,
                 ws.model.data(), static_cast<int>(N));
  }
  for (std::size_t k = 0; k < B; ++k) {
    if (!need[k]) continue;
    double rss = 0;
    for (std::size_t i = 0; i < N; ++i)
      if (ws.valid[k * N + i]) {
        const double model = f.sparse_rows ? sparse_row_dot(f, i, ws.x.data() + k * M) : ws.model[k * N + i];
        const double e = model - ws.y[k * N + i];
        rss += (job.weights ? ws.w[k * N + i] : 1.0) * e * e;
      }
    ws.rss[k] = rss;
  }
}

/// The rows kernel's rss. A full or deletion pixel's comes without the model
/// A x (a product as large as x0's): with its missing values filled in by
/// its own model, y* = y~ + E_I z (z = A_I x: the deletion's solution), its
/// x is P y*, and its rss is |(I - H) y*|^2 = |y~|^2 - |A x0|^2 - z·b
/// (b = A_I x0; done() leaves -z·b in ws.rss), |A x0| = |U x0| (U^T U =
/// A^T A). The subtractions lose about eps κ(A)^2 of |y~|^2 + z·b, so that
/// a pixel fitted too closely (rss below kRssTrust κ(A)^2 of those), and
/// every pixel of another path, gets the sum over its valid rows instead;
/// a chunk of many such pixels, the product A x for all of them.
CUBESOLVE_SIMD_CLONES void chunk_residuals_rows(const Job& job, Workspace& ws, std::size_t B) {
  constexpr double kRssTrust = 1e-4;
  const std::size_t N = job.N, M = job.M, words = (N + 63) / 64;
  const DesignFactors& f = job.f;
  std::vector<std::size_t>& direct = ws.order;  // the pixels whose rss is summed row by row
  direct.clear();
  if (f.rss_identity()) {
    const std::vector<double>& yy = ws.yy;  // |y~|^2, from gather_rows
    lapack::trmm_upper(static_cast<int>(M), static_cast<int>(B), f.gram_root.data(), static_cast<int>(M), ws.x0.data(),
                       static_cast<int>(M));
    const double kappa = f.sigma.front() / f.sigma[M - 1];
    const double trust = kRssTrust * std::max(1.0, kappa * kappa);
    for (std::size_t k = 0; k < B; ++k) {
      const Kind kind = ws.kind[k];
      if (kind == Kind::Skip || kind == Kind::Group || kind == Kind::Exact || rss_without_model(job, ws, k)) continue;
      const double zb = kind == Kind::Deletion ? -ws.rss[k] : 0.0;  // NaN: a deletion that left its path
      const double rss = yy[k] - dot(ws.x0.data() + k * M, ws.x0.data() + k * M, M) - zb;
      if ((kind == Kind::Full || kind == Kind::Deletion) && rss >= trust * (yy[k] + std::fabs(zb)))
        ws.rss[k] = rss;
      else
        direct.push_back(k);
    }
  } else {
    for (std::size_t k = 0; k < B; ++k) {
      const Kind kind = ws.kind[k];
      if (kind != Kind::Skip && kind != Kind::Group && kind != Kind::Exact && !rss_without_model(job, ws, k))
        direct.push_back(k);
    }
  }
  if (!f.sparse_rows && 4 * direct.size() > B) {  // the model observation-major (i * B + k), beside the values
    ws.model.resize(N * B);
    lapack::gemm('T', 'N', static_cast<int>(B), static_cast<int>(N), static_cast<int>(M), 1.0, ws.x.data(),
                 static_cast<int>(M), job.design.values().data(), static_cast<int>(M), 0.0, ws.model.data(),
                 static_cast<int>(B));
    for (std::size_t k : direct) ws.rss[k] = 0;
    for (std::size_t i = 0; i < N; ++i) {
      const double *y = ws.yo.data() + i * B, *model = ws.model.data() + i * B;
      const std::uint64_t* bits = ws.bits.data() + i / 64;
      const std::uint64_t bit = std::uint64_t{1} << (i % 64);
      for (std::size_t k : direct)
        if (bits[k * words] & bit) ws.rss[k] += (model[k] - y[k]) * (model[k] - y[k]);
    }
  } else {
    const double* A = job.design.values().data();
    ws.rows.resize(std::max(ws.rows.size(), N));
    ws.g.resize(N);
    for (std::size_t k : direct) {
      const int q = bit_list(ws.bits.data() + k * words, N, true, ws.rows.data());
      const double* x = ws.x.data() + k * M;
      if (f.sparse_rows)
        for (int a = 0; a < q; ++a) ws.g[a] = sparse_row_dot(f, static_cast<std::size_t>(ws.rows[a]), x);
      else
        row_dots(A, M, ws.rows.data(), static_cast<std::size_t>(q), x, ws.g.data(), 1);
      double rss = 0;
      for (int a = 0; a < q; ++a) {
        const double e = ws.g[a] - ws.yo[static_cast<std::size_t>(ws.rows[a]) * B + k];
        rss += e * e;
      }
      ws.rss[k] = rss;
    }
  }
  for (std::size_t k = 0; k < B; ++k)  // pixels with no fit, or whose rss another path wrote
    if (ws.kind[k] == Kind::Skip || ws.kind[k] == Kind::Group || ws.kind[k] == Kind::Exact) ws.rss[k] = kNaN;
}

void solve_group_block(Job& job, const std::uint64_t* mask, const std::vector<std::size_t>& pixels, std::size_t begin,
                       std::size_t end, PathCounts& paths) {
  const std::size_t N = job.N, M = job.M, G = end - begin;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < N; ++i)
    if ((mask[i / 64] >> (i % 64)) & 1) rows.push_back(i);
  const std::size_t nv = rows.size(), ldb = std::max<std::size_t>({nv, M, 1});
  const double* A = job.design.values().data();
  // A_V column-major (nv, M), kept for the residuals; the pixels' values as
  // gelsd's right-hand sides: the SVD of A_V and the rank it decides are the
  // exact path's, pixel for pixel, and one SVD serves the group.
  std::vector<double> av(nv * M), work_a, s(std::min(nv, M)), b(ldb * G, 0.0), y(nv * G);
  for (std::size_t j = 0; j < M; ++j)
    for (std::size_t a = 0; a < nv; ++a) av[j * nv + a] = A[rows[a] * M + j];
  work_a = av;
  for (std::size_t c = 0; c < G; ++c)
    for (std::size_t a = 0; a < nv; ++a)
      b[c * ldb + a] = y[c * nv + a] = job.cube.value(rows[a] * job.P + pixels[begin + c]);
  const double rcond = job.options.rcond < 0 ? default_rcond(nv, M) : job.options.rcond;
  int rank = 0;
  const int info = lapack::gelsd(static_cast<int>(nv), static_cast<int>(M), static_cast<int>(G), work_a.data(), b.data(),
                                 static_cast<int>(ldb), s.data(), rcond, rank);
  std::vector<double> x(M * G, kNaN);
  double cond = kNaN;
  if (info == 0) {
    for (std::size_t c = 0; c < G; ++c) std::copy(b.begin() + static_cast<std::ptrdiff_t>(c * ldb),
                                                  b.begin() + static_cast<std::ptrdiff_t>(c * ldb + M), x.begin() + static_cast<std::ptrdiff_t>(c * M));
    cond = rank > 0 ? s[0] / s[static_cast<std::size_t>(rank) - 1] : std::numeric_limits<double>::infinity();
  }
  const int m_ = static_cast<int>(nv), n_ = static_cast<int>(M);
  std::vector<double> model;
  if (job.options.residuals && info == 0) {
    model.resize(nv * G);
    lapack::gemm('N', 'N', m_, static_cast<int>(G), n_, 1.0, av.data(), m_, x.data(), n_, 0.0, model.data(), m_);
  }
  for (std::size_t c = 0; c < G; ++c) {
    double rss = kNaN;
    if (!model.empty()) {
      rss = 0;
      for (std::size_t a = 0; a < nv; ++a) rss += (model[c * nv + a] - y[c * nv + a]) * (model[c * nv + a] - y[c * nv + a]);
    }
    const PixelStatus st = info != 0 ? PixelStatus::Failed : rank_status(static_cast<std::size_t>(rank), M);
    job.write_pixel(pixels[begin + c], x.data() + c * M, st, rank, cond, rss, static_cast<int>(nv));
  }
  paths[static_cast<std::size_t>(SolvePath::Group)] += G;
}

}  // namespace cubesolve::detail
