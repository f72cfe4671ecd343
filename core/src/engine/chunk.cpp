// The chunk kernels: gather a chunk of the cube, give each pixel its path,
// run the paths (paths.cpp), write X and the diagnostics.
#include "engine/chunk.hpp"

#include "engine/kernels.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"
#include "engine/paths.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

// Vec4 only lives in the inlined kernels of this file: no ABI crosses a call.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace cubesolve::detail {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

SolveResult allocate_result(const Array& cube, const Design& design, const SolveOptions& options) {
  const std::size_t H = cube.dim(1), W = cube.dim(2);
  SolveResult r;
  r.x = Array::uninitialized(options.output.value_or(cube.dtype()), {design.cols(), H, W});
  r.n_valid = Array::uninitialized(DType::Int32, {H, W});
  r.rank = Array::uninitialized(DType::Int32, {H, W});
  r.rss = Array::uninitialized(DType::Float64, {H, W});
  r.status = Array::uninitialized(DType::UInt8, {H, W});
  r.cond = Array::uninitialized(DType::Float64, {H, W});
  r.threads = thread_count(options.threads);
  return r;
}

Job::Job(const Array& c, const Design& d, const Array* w, const SolveOptions& o, const Planner& p, SolveResult& res)
    : cube(c), design(d), f(d.factors()), weights(w), options(o), planner(p), r(res), N(c.dim(0)), M(d.cols()),
      P(c.dim(1) * c.dim(2)), kinds(N + 1) {
  for (std::size_t nv = 0; nv <= N; ++nv) kinds[nv] = planner.choose(nv).first;
}

bool Job::all_taken(std::size_t begin, std::size_t end) const {
  return !taken.empty() && std::all_of(taken.begin() + static_cast<std::ptrdiff_t>(begin),
                                       taken.begin() + static_cast<std::ptrdiff_t>(end), [](char t) { return t != 0; });
}

void Job::write_pixel(std::size_t p, const double* x, PixelStatus status, int rank, double cond, double rss, int nv) {
  if (r.x.dtype() == DType::Float32) {
    float* out = r.x.data<float>();
    for (std::size_t j = 0; j < M; ++j) out[j * P + p] = static_cast<float>(x[j]);
  } else {
    double* out = r.x.data<double>();
    for (std::size_t j = 0; j < M; ++j) out[j * P + p] = x[j];
  }
  write_diagnostics(p, status, rank, cond, rss, nv);
}

void Job::write_diagnostics(std::size_t p, PixelStatus status, int rank, double cond, double rss, int nv) {
  r.status.data<std::uint8_t>()[p] = static_cast<std::uint8_t>(status);
  r.rank.data<std::int32_t>()[p] = rank;
  r.cond.data<double>()[p] = cond;
  r.rss.data<double>()[p] = rss;
  r.n_valid.data<std::int32_t>()[p] = nv;
}

namespace {

/// Tiles of 64 pixels, so that both sides stay in cache; blocks of 4 x 4
/// are transposed in registers.
template <class T>
CUBESOLVE_SIMD_CLONES void write_tiles(T* out, std::size_t M, std::size_t P, std::size_t begin, std::size_t B, const double* x,
                 const std::vector<char>& skip) {
  constexpr std::size_t kTile = 64;
  out += begin;
  auto one = [&](std::size_t j, std::size_t k) {
    if (!skip[k]) out[j * P + k] = static_cast<T>(x[k * M + j]);
  };
  for (std::size_t k0 = 0; k0 < B; k0 += kTile) {
    const std::size_t k1 = std::min(B, k0 + kTile);
    std::size_t j = 0;
    for (; j + 4 <= M; j += 4) {
      T* row = out + j * P;
      std::size_t k = k0;
      for (; k + 4 <= k1; k += 4) {
        if (skip[k] | skip[k + 1] | skip[k + 2] | skip[k + 3]) {
          for (std::size_t t = 0; t < 16; ++t) one(j + t / 4, k + t % 4);
          continue;
        }
        Vec4 v0 = load4(x + k * M + j), v1 = load4(x + (k + 1) * M + j), v2 = load4(x + (k + 2) * M + j),
             v3 = load4(x + (k + 3) * M + j);
        transpose4(v0, v1, v2, v3);
        store4(row + k, v0);
        store4(row + P + k, v1);
        store4(row + 2 * P + k, v2);
        store4(row + 3 * P + k, v3);
      }
      for (; k < k1; ++k)
        for (std::size_t t = 0; t < 4; ++t) one(j + t, k);
    }
    for (; j < M; ++j)
      for (std::size_t k = k0; k < k1; ++k) one(j, k);
  }
}

}  // namespace

void Job::write_block(std::size_t begin, std::size_t B, const double* x, const std::vector<char>& skip) {
  if (r.x.dtype() == DType::Float32) write_tiles(r.x.data<float>(), M, P, begin, B, x, skip);
  else write_tiles(r.x.data<double>(), M, P, begin, B, x, skip);
}

void Workspace::reset(std::size_t N, std::size_t M, std::size_t B, bool weighted) {
  y.resize(N * B);
  valid.resize(N * B);
  if (weighted) w.resize(N * B);
  x0.resize(M * B);
  x.resize(M * B);  // every path writes its pixels; the others are set as they are classified
  kind.assign(B, Kind::Skip);
  nv.assign(B, 0);
  deficit.assign(B, 0);
  rss.assign(B, kNaN);
  gram.clear();
  exact_list.clear();
}

namespace {

/// Pixels [k0, k1) of the rows 0..N-1 of a row-major (N, P) array (`in` at
/// the chunk's first pixel), read 4 rows at a time and transposed to
/// pixel-major in 4 x 4 blocks in registers: block(i, k, v) takes v[t], rows
/// i..i+3 of pixel k + t; one(i, k) each value outside whole blocks.
template <class T, class Block, class One>
CUBESOLVE_KERNEL void transpose_tile(const T* in, std::size_t N, std::size_t P, std::size_t k0, std::size_t k1, Block block,
                                     One one) {
  const std::size_t k4 = k0 + (k1 - k0) / 4 * 4;
  std::size_t i = 0;
  for (; i + 4 <= N; i += 4) {
    const T* r = in + i * P;
    for (std::size_t k = k0; k < k4; k += 4) {
      Vec4 v[4] = {load4(r + k), load4(r + P + k), load4(r + 2 * P + k), load4(r + 3 * P + k)};
      transpose4(v[0], v[1], v[2], v[3]);
      block(i, k, v);
    }
    for (std::size_t k = k4; k < k1; ++k)
      for (std::size_t t = 0; t < 4; ++t) one(i + t, k);
  }
  for (; i < N; ++i)
    for (std::size_t k = k0; k < k1; ++k) one(i, k);
}

/// The weights of pixels [k0, k1) into ws.w, pixel-major (any type of
/// weights); then a value without a positive finite weight becomes missing.
CUBESOLVE_KERNEL void gather_weights(const Array& weights, std::size_t N, std::size_t P, std::size_t begin, std::size_t k0,
                                     std::size_t k1, Workspace& ws) {
  double* w = ws.w.data();
  auto copy = [&](const auto* in) {
    transpose_tile(
        in + begin, N, P, k0, k1,
        [&](std::size_t i, std::size_t k, const Vec4* v) {
          for (std::size_t t = 0; t < 4; ++t) store4(w + (k + t) * N + i, v[t]);
        },
        [&](std::size_t i, std::size_t k) { w[k * N + i] = static_cast<double>(in[begin + i * P + k]); });
  };
  if (weights.dtype() == DType::Float32) copy(weights.data<float>());
  else if (weights.dtype() == DType::Float64) copy(weights.data<double>());
  else
    for (std::size_t k = k0; k < k1; ++k)
      for (std::size_t i = 0; i < N; ++i) w[k * N + i] = weights.value(i * P + begin + k);
  const std::size_t words = (N + 63) / 64;
  for (std::size_t k = k0; k < k1; ++k)
    for (std::size_t i = 0; i < N; ++i) {
      const double wt = w[k * N + i];
      const bool ok = ws.valid[k * N + i] && wt > 0 && std::isfinite(wt);
      ws.valid[k * N + i] = ok;
      w[k * N + i] = ok ? wt : 0.0;
      if (ok) continue;
      ws.y[k * N + i] = 0.0;
      ws.bits[k * words + i / 64] &= ~(std::uint64_t{1} << (i % 64));
    }
}

template <class T>
CUBESOLVE_SIMD_CLONES void gather_typed(const T* cube, const Array* weights, std::size_t N, std::size_t P,
                                        std::size_t begin, std::size_t B, Workspace& ws) {
  // Tiles of 64 pixels: their pixel-major side stays in cache.
  constexpr std::size_t kPixels = 64;
  const T* in = cube + begin;
  double* y = ws.y.data();
  std::uint8_t* valid = ws.valid.data();
  const std::size_t words = (N + 63) / 64;
  ws.bits.assign(B * words, 0);
  std::uint64_t* bits = ws.bits.data();
  auto block = [&](std::size_t i, std::size_t k, const Vec4* v) {
    for (std::size_t t = 0; t < 4; ++t) {
      const Mask4 ok = (v[t] - v[t]) == 0;  // finite: inf - inf and NaN are not 0
      store4(y + (k + t) * N + i, (Vec4)((Mask4)v[t] & ok));
      for (std::size_t u = 0; u < 4; ++u) valid[(k + t) * N + i + u] = static_cast<std::uint8_t>(ok[u] & 1);
      const auto four = static_cast<std::uint64_t>((ok[0] & 1) | (ok[1] & 2) | (ok[2] & 4) | (ok[3] & 8));
      bits[(k + t) * words + i / 64] |= four << (i % 64);  // i % 4 == 0: the four share a word
    }
  };
  auto one = [&](std::size_t i, std::size_t k) {
    const double v = static_cast<double>(in[i * P + k]);
    const bool ok = std::isfinite(v);
    valid[k * N + i] = ok;
    bits[k * words + i / 64] |= std::uint64_t{ok} << (i % 64);
    y[k * N + i] = ok ? v : 0.0;
  };
  for (std::size_t k0 = 0; k0 < B; k0 += kPixels) {
    const std::size_t k1 = std::min(B, k0 + kPixels);
    transpose_tile(in, N, P, k0, k1, block, one);
    if (weights) gather_weights(*weights, N, P, begin, k0, k1, ws);
  }
}

template <class T, bool kSquares>
CUBESOLVE_SIMD_CLONES void gather_rows_typed(const T* cube, std::size_t N, std::size_t P, std::size_t begin,
                                             std::size_t B, Workspace& ws) {
  const std::size_t words = (N + 63) / 64;
  ws.bits.resize(B * words);
  if constexpr (kSquares) ws.yy.resize(B);
  // Tiles of 256 pixels: each word of their masks is built in registers
  // over its 64 rows, then stored once.
  constexpr std::size_t kPixels = 256;
  std::uint64_t acc[kPixels];
  double squares[kPixels];  // the tile's |y~|^2
  for (std::size_t k0 = 0; k0 < B; k0 += kPixels) {
    const std::size_t kn = std::min(kPixels, B - k0);
    if constexpr (kSquares) std::fill(squares, squares + kn, 0.0);
    for (std::size_t w = 0; w < words; ++w) {
      std::fill(acc, acc + kn, 0);
      for (std::size_t i = w * 64; i < std::min(N, w * 64 + 64); ++i) {
        const T* row = cube + i * P + begin + k0;
        if (i + 2 < N)  // rows lie far apart: each row's tile is a new stream the prefetcher has not seen
          for (std::size_t k = 0; k < kn; k += 64 / sizeof(T)) __builtin_prefetch(row + 2 * P + k);
        double* out = ws.yo.data() + i * B + k0;
        const unsigned shift = static_cast<unsigned>(i % 64);
        for (std::size_t k = 0; k < kn; ++k) {
          const double v = static_cast<double>(row[k]);
          const bool ok = v - v == 0;  // finite: inf - inf and NaN are not 0
          out[k] = ok ? v : 0.0;
          acc[k] |= static_cast<std::uint64_t>(ok) << shift;
        }
        if constexpr (kSquares)  // a loop of its own: a product in the one above would keep it scalar
          for (std::size_t k = 0; k < kn; ++k) squares[k] += out[k] * out[k];
      }
      for (std::size_t k = 0; k < kn; ++k) ws.bits[(k0 + k) * words + w] = acc[k];
    }
    if constexpr (kSquares) std::copy(squares, squares + kn, ws.yy.data() + k0);
  }
}

/// ws.nv from the masks' bits.
CUBESOLVE_SIMD_CLONES void count_valid(Workspace& ws, std::size_t N, std::size_t B) {
  const std::size_t words = (N + 63) / 64;
  for (std::size_t k = 0; k < B; ++k) ws.nv[k] = bit_count(ws.bits.data() + k * words, words);
}

}  // namespace

void gather(const Job& job, Workspace& ws, std::size_t begin, std::size_t B) {
  if (job.cube.dtype() == DType::Float32) gather_typed(job.cube.data<float>(), job.weights, job.N, job.P, begin, B, ws);
  else gather_typed(job.cube.data<double>(), job.weights, job.N, job.P, begin, B, ws);
  count_valid(ws, job.N, B);
}

void gather_rows(const Job& job, Workspace& ws, std::size_t begin, std::size_t B) {
  ws.yo.resize(job.N * B);
  const bool f32 = job.cube.dtype() == DType::Float32, squares = job.options.residuals && job.f.rss_identity();
  if (f32 && squares) gather_rows_typed<float, true>(job.cube.data<float>(), job.N, job.P, begin, B, ws);
  else if (f32) gather_rows_typed<float, false>(job.cube.data<float>(), job.N, job.P, begin, B, ws);
  else if (squares) gather_rows_typed<double, true>(job.cube.data<double>(), job.N, job.P, begin, B, ws);
  else gather_rows_typed<double, false>(job.cube.data<double>(), job.N, job.P, begin, B, ws);
  count_valid(ws, job.N, B);
}

void fill_unsolved(Workspace& ws, std::size_t k, std::size_t M) {
  std::fill(ws.x.data() + k * M, ws.x.data() + (k + 1) * M, ws.kind[k] == Kind::Skip ? kNaN : 0.0);
}

void unpack(Workspace& ws, std::size_t k, std::size_t N, std::size_t B) {
  const std::size_t words = (N + 63) / 64;
  for (std::size_t i = 0; i < N; ++i) {
    ws.y[k * N + i] = ws.yo[i * B + k];
    ws.valid[k * N + i] = static_cast<std::uint8_t>((ws.bits[k * words + i / 64] >> (i % 64)) & 1);
  }
}

bool use_rows_kernel(const Job& job) {
  const auto& f = job.f;
  return job.planner.steer.rows_kernel && !job.weights && job.options.ridge == 0 && job.planner.fast_ok &&
         !job.planner.exact_only &&
         f.full_column_rank() && job.N > job.M && !f.hat_lower.empty() &&
         std::find(job.kinds.begin(), job.kinds.end(), Kind::Deletion) != job.kinds.end();
}

namespace {

/// Puts each pixel the planner gave a path into its list: the small systems
/// by size, Gram, exact; pixels with no path get NaN, those another pass
/// took are left alone. Returns whether any pixel needs x0 = P·y~.
bool sort_into_paths(const Job& job, Workspace& ws, std::size_t B) {
  const std::size_t N = job.N, M = job.M;
  bool need_product = false;
  for (auto& bucket : ws.buckets) bucket.clear();
  ws.buckets.resize(kMaxSmall + 1);
  for (std::size_t k = 0; k < B; ++k) {
    Kind& kind = ws.kind[k];
    // A weighted dual pixel with a custom rcond: cond(A) vouches for the
    // Schur form only up to the weights' spread (see Planner).
    if (kind == Kind::DualSchur && job.planner.custom_rcond && job.weights &&
        !(job.planner.rcond_t * std::sqrt(weight_ratio(ws, k, N)) < 1))
      kind = Kind::Exact;
    if (kind == Kind::Skip || kind == Kind::Group) fill_unsolved(ws, k, M);
    need_product = need_product || kind == Kind::Full || kind == Kind::Deletion || kind == Kind::DualSchur;
    if (kind == Kind::Gram) ws.gram.push_back(k);
    else if (kind == Kind::Exact) ws.exact_list.push_back(k);
    else if (kind == Kind::Deletion || kind == Kind::DualSchur || kind == Kind::DualGather)
      ws.buckets[kind == Kind::DualGather ? static_cast<std::size_t>(ws.nv[k]) : N - static_cast<std::size_t>(ws.nv[k])]
          .push_back(k);
  }
  return need_product;
}

/// Counts the paths and writes X and the diagnostics of every pixel of the
/// chunk but those of the exact path (written as they are solved) and of
/// other passes.
void write_chunk(Job& job, Workspace& ws, std::size_t begin, std::size_t B) {
  ws.skip.assign(B, 0);
  for (std::size_t k = 0; k < B; ++k) {
    const Kind kind = ws.kind[k];
    ws.skip[k] = kind == Kind::Group;
    if (kind == Kind::Group) continue;
    ++ws.paths[static_cast<std::size_t>(path_of(kind))];
    if (kind == Kind::Exact) continue;
    const auto nv = static_cast<std::size_t>(ws.nv[k]);
    std::size_t rank = 0;
    PixelStatus st = PixelStatus::Ok;
    if (kind == Kind::Skip) {
      st = nv == 0 ? PixelStatus::NoData : PixelStatus::TooFew;
    } else {
      rank = fast_rank(kind, nv, job.f, job.options.ridge > 0) - static_cast<std::size_t>(ws.deficit[k]);
      st = rank_status(rank, job.M);
    }
    job.write_diagnostics(begin + k, st, static_cast<int>(rank), kNaN, ws.rss[k], ws.nv[k]);
  }
  job.write_block(begin, B, ws.x.data(), ws.skip);
}

}  // namespace

void solve_chunk(Job& job, Workspace& ws, std::size_t begin, std::size_t end) {
  if (job.all_taken(begin, end)) return;
  const std::size_t N = job.N, B = end - begin;
  ws.reset(N, job.M, B, job.weights != nullptr);
  gather(job, ws, begin, B);
  for (std::size_t k = 0; k < B; ++k)
    ws.kind[k] = !job.taken.empty() && job.taken[begin + k] ? Kind::Group  // written by another pass
                                                            : job.kinds[static_cast<std::size_t>(ws.nv[k])];
  const bool need_product = sort_into_paths(job, ws, B);
  solve_systems(job, ws);
  if (need_product) solve_product(job, ws, B);
  solve_gram(job, ws);
  solve_exact(job, ws, begin);
  if (job.options.residuals) chunk_residuals(job, ws, B);
  write_chunk(job, ws, begin, B);
}

void solve_chunk_rows(Job& job, Workspace& ws, std::size_t begin, std::size_t end) {
  if (job.all_taken(begin, end)) return;
  const std::size_t N = job.N, M = job.M, B = end - begin;
  ws.reset(N, M, B, false);
  gather_rows(job, ws, begin, B);
  // Only the pixels of paths other than full and deletion are copied out
  // pixel by pixel.
  for (std::size_t k = 0; k < B; ++k) {
    if (!job.taken.empty() && job.taken[begin + k]) {
      ws.kind[k] = Kind::Group;
      continue;
    }
    ws.kind[k] = job.kinds[static_cast<std::size_t>(ws.nv[k])];
    if (ws.kind[k] != Kind::Full && ws.kind[k] != Kind::Deletion && ws.kind[k] != Kind::Skip) unpack(ws, k, N, B);
  }
  // x0 = P·y~ for the whole chunk, from the observation-major copy.
  lapack::gemm('N', 'T', static_cast<int>(M), static_cast<int>(B), static_cast<int>(N), 1.0, job.f.pinv.data(),
               static_cast<int>(M), ws.yo.data(), static_cast<int>(B), 0.0, ws.x0.data(), static_cast<int>(M));
  sort_into_paths(job, ws, B);
  for (std::size_t k = 0; k < B; ++k)
    if (ws.kind[k] == Kind::Full) std::copy(ws.x0.data() + k * M, ws.x0.data() + (k + 1) * M, ws.x.data() + k * M);
  solve_systems_rows(job, ws, B);
  solve_gram(job, ws);
  solve_exact(job, ws, begin);
  if (job.options.residuals) chunk_residuals_rows(job, ws, B);
  write_chunk(job, ws, begin, B);
}

}  // namespace cubesolve::detail
