// The engine: a planner that sends every pixel to the cheapest path that is
// safe for it, the paths themselves, and the exact fallback. See engine.hpp
// for the contract and the design notes for the mathematics.
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/data/mask.hpp>

#include "cuda/backend.hpp"
#include "engine/exact.hpp"
#include "engine/factors.hpp"
#include "engine/kernels.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>

namespace cubesolve {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t kMaxSmall = 512;   // largest system the deletion and dual paths factor
constexpr std::size_t kMinGroup = 32;    // smallest mask group worth its own factorization
constexpr double kSmallTau = 1e-4;       // smallest relative pivot of I - H_II, Q_II or C_VV
constexpr double kGramTau = 1e-6;        // smallest relative pivot of a Gram matrix
constexpr double kMaxGrowth = 1e6;       // largest |x - x0| / |x0| a correction may have
constexpr double kMaxFastCondition = 1e4;  // cond(A) above which only SVD-based paths run
constexpr double kGemmSpeed = 4;         // a BLAS-3 flop costs this many times less than a scalar one

enum class Kind : std::uint8_t { Skip, Full, Deletion, DualSchur, DualGather, Gram, Exact, Group };

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

/// The device's names for the paths it takes (everything else: kSkip).
constexpr std::pair<Kind, std::uint8_t> kDeviceKinds[] = {{Kind::Full, detail::gpu::kFull},
                                                           {Kind::Deletion, detail::gpu::kDeletion},
                                                           {Kind::DualSchur, detail::gpu::kDual},
                                                           {Kind::DualGather, detail::gpu::kGather},
                                                           {Kind::Gram, detail::gpu::kGram}};

std::uint8_t device_kind(Kind k) {
  for (const auto& [kind, device] : kDeviceKinds)
    if (kind == k) return device;
  return detail::gpu::kSkip;
}

Kind host_kind(std::uint8_t d) {
  for (const auto& [kind, device] : kDeviceKinds)
    if (device == d) return kind;
  return Kind::Skip;
}

/// The rank a fast path vouches for: what A_V has when its factorization held.
std::size_t fast_rank(Kind k, std::size_t nv, const detail::DesignFactors& f) {
  if (k == Kind::Full) return f.rank;
  return k == Kind::DualSchur || k == Kind::DualGather ? nv : f.m;
}

void check_options(const SolveOptions& o) {
  if (o.min_valid < 1) throw InputError("--min-valid: expected an integer >= 1, found " + std::to_string(o.min_valid));
  if (!(o.ridge >= 0) || !std::isfinite(o.ridge))
    throw InputError("--ridge: expected a finite value >= 0, found " + std::to_string(o.ridge));
  if (!std::isfinite(o.rcond)) throw InputError("--rcond: expected a finite value, found " + std::to_string(o.rcond));
  if (o.threads < 0) throw InputError("--threads: expected an integer >= 0, found " + std::to_string(o.threads));
}

/// Chooses each pixel's path from its valid-row count and a flop-count cost model.
struct Planner {
  const detail::DesignFactors& f;
  bool weighted = false, ridge = false, exact_only = false, fast_ok = false;
  std::size_t min_valid = 1;

  double exact_cost(std::size_t nv) const {
    const double n = static_cast<double>(nv), m = static_cast<double>(f.m);
    return 4 * n * m * m + 8 * m * m * m + 200 * m;
  }
  double x0_cost() const { return 2.0 * static_cast<double>(f.m * f.n) / kGemmSpeed; }
  double small_cost(std::size_t k) const {
    const double s = static_cast<double>(k);
    return s * s * s / 3 + s * s;
  }
  double gram_cost() const {
    const double m = static_cast<double>(f.m), n = static_cast<double>(f.n);
    return 2 * (static_cast<double>(f.packed()) + m) * n / kGemmSpeed + m * m * m / 3 + 2 * m * m;
  }

  std::pair<Kind, double> choose(std::size_t nv) const {
    if (nv == 0 || nv < min_valid) return {Kind::Skip, 0.0};
    std::pair<Kind, double> best{Kind::Exact, exact_cost(nv)};
    if (exact_only) return best;
    auto consider = [&](Kind k, double c) {
      if (c < best.second) best = {k, c};
    };
    const bool can_gram = !f.outer.empty() && (ridge || nv >= f.m);
    if (weighted || ridge) {
      if (can_gram) consider(Kind::Gram, gram_cost());
      return best;
    }
    const std::size_t m = f.n - nv, M = f.m, N = f.n;
    if (m == 0) return {Kind::Full, x0_cost()};
    if (fast_ok && f.full_column_rank() && !f.hat.empty() && nv >= M && m <= kMaxSmall)
      consider(Kind::Deletion, x0_cost() + small_cost(m) + 2.0 * static_cast<double>(m * M));
    if (fast_ok && f.full_row_rank() && m <= kMaxSmall && m <= nv)
      consider(Kind::DualSchur, x0_cost() + small_cost(m) + 2.0 * static_cast<double>(m * (N + M)));
    // A_V of full row rank (checked by the Cholesky of C_VV) needs no more of A.
    if (fast_ok && !f.gram_rows.empty() && nv <= M && nv <= kMaxSmall)
      consider(Kind::DualGather, small_cost(nv) + 2.0 * static_cast<double>(nv * M));
    if (can_gram) consider(Kind::Gram, gram_cost());
    return best;
  }
};

/// Whether pixels share masks often enough for grouping to be worth a full
/// pass: the share of a sample (runs of neighbouring pixels, where clouds and
/// patches make masks repeat) whose mask occurs more than once in it.
bool masks_repeat(const Array& cube) {
  const std::size_t N = cube.dim(0), P = cube.dim(1) * cube.dim(2), words = (N + 63) / 64;
  constexpr std::size_t kRuns = 64, kRun = 64;
  std::vector<std::vector<std::uint64_t>> keys;
  for (std::size_t r = 0; r < kRuns; ++r) {
    const std::size_t start = P > kRun ? (r * (P - kRun)) / kRuns : 0;
    const std::size_t len = std::min(kRun, P - start);
    const std::size_t base = keys.size();
    keys.resize(base + len, std::vector<std::uint64_t>(words, 0));
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < len; ++k)
        if (std::isfinite(cube.value(i * P + start + k))) keys[base + k][i / 64] |= std::uint64_t{1} << (i % 64);
  }
  std::sort(keys.begin(), keys.end());
  std::size_t repeated = 0;
  for (std::size_t k = 0; k < keys.size(); ++k)
    repeated += (k > 0 && keys[k] == keys[k - 1]) || (k + 1 < keys.size() && keys[k] == keys[k + 1]);
  return repeated * 20 >= keys.size();
}

PixelStatus rank_status(std::size_t rank, std::size_t m) { return rank == m ? PixelStatus::Ok : PixelStatus::MinNorm; }

Progress part(const Progress& p, double lo, double hi) {
  if (!p) return {};
  return [p, lo, hi](double f) { return p(lo + (hi - lo) * f); };
}

/// The mask groups worth one SVD each: big enough, and cheaper that way
/// than the path each of their pixels would take alone. Pixels a device
/// left (`left_by_device`) failed their fast path there, so alone they
/// would most likely go to gelsd.
std::vector<char> choose_groups(const MaskStats& masks, const Planner& planner, const SolveOptions& options,
                                bool left_by_device = false) {
  std::vector<char> chosen(masks.distinct_masks(), 0);
  std::vector<std::size_t> first(masks.distinct_masks(), 0);
  for (std::size_t p = masks.pixels(); p-- > 0;) first[static_cast<std::size_t>(masks.group_of[p])] = p;
  for (std::size_t g = 0; g < chosen.size(); ++g) {
    const std::size_t size = masks.group_size[g];
    if (size < kMinGroup) continue;
    const auto nv = static_cast<std::size_t>(masks.n_valid[first[g]]);
    const auto [kind, fast_cost] = planner.choose(nv);
    if (kind == Kind::Skip || kind == Kind::Full) continue;
    const double cost = left_by_device ? planner.exact_cost(nv) : fast_cost;
    const double group_cost = planner.exact_cost(nv) / static_cast<double>(size) +
                              2.0 * static_cast<double>(planner.f.m * nv) / kGemmSpeed;
    chosen[g] = options.rcond >= 0 || group_cost < cost;
  }
  return chosen;
}

Planner make_planner(const Design& design, bool weighted, const SolveOptions& options) {
  const auto& f = design.factors();
  Planner planner{f};
  planner.weighted = weighted;
  planner.ridge = options.ridge > 0;
  planner.min_valid = static_cast<std::size_t>(options.min_valid);
  // Custom rcond changes rank decisions that only an SVD of A_V can make.
  planner.exact_only = options.method == Method::Exact || options.rcond >= 0;
  planner.fast_ok = f.rank > 0 && f.sigma.front() / f.sigma[f.rank - 1] <= kMaxFastCondition;
  return planner;
}

bool use_groups(const SolveOptions& options, bool weighted) {
  return options.method == Method::Auto && !weighted && options.ridge == 0;
}

/// The state every chunk and group task writes into.
struct Job {
  const Array& cube;
  const Design& design;
  const detail::DesignFactors& f;
  const Array* weights;
  const SolveOptions& options;
  const Planner& planner;
  SolveResult& r;
  std::vector<char> taken;  // pixels already solved by the device or the group pass
  std::size_t N, M, P;
  bool rows_mode = false;  // deletion mode: chunks kept observation-major (see solve_chunk)
  detail::gpu::Solver* gpu = nullptr;  // the device for the paths it takes (see device_kind)
  std::atomic<std::size_t> gpu_short{0};  // pixels the device had no memory for (solved on the CPU)

  void write_pixel(std::size_t p, const double* x, PixelStatus status, int rank, double cond, double rss, int nv) {
    if (r.x.dtype() == DType::Float32) {
      float* out = r.x.data<float>();
      for (std::size_t j = 0; j < M; ++j) out[j * P + p] = static_cast<float>(x[j]);
    } else {
      double* out = r.x.data<double>();
      for (std::size_t j = 0; j < M; ++j) out[j * P + p] = x[j];
    }
    write_diagnostics(p, status, rank, cond, rss, nv);
  }

  /// Writes x for pixels [begin, begin + B) from pixel-major `x` (M values a
  /// pixel), skipping those marked in `skip`, in tiles so that both sides
  /// stay in cache.
  template <class T>
  void write_block(T* out, std::size_t begin, std::size_t B, const double* x, const std::vector<char>& skip) {
    constexpr std::size_t kTile = 64;
    for (std::size_t k0 = 0; k0 < B; k0 += kTile) {
      const std::size_t k1 = std::min(B, k0 + kTile);
      for (std::size_t j = 0; j < M; ++j) {
        T* row = out + j * P + begin;
        for (std::size_t k = k0; k < k1; ++k)
          if (!skip[k]) row[k] = static_cast<T>(x[k * M + j]);
      }
    }
  }

  void write_diagnostics(std::size_t p, PixelStatus status, int rank, double cond, double rss, int nv) {
    r.status.data<std::uint8_t>()[p] = static_cast<std::uint8_t>(status);
    r.rank.data<std::int32_t>()[p] = rank;
    r.cond.data<double>()[p] = cond;
    r.rss.data<double>()[p] = rss;
    r.n_valid.data<std::int32_t>()[p] = nv;
  }
};

/// Writes the indices i < n with flags[i] == want (flags are 0 or 1) to out,
/// eight flags at a time through a bit mask.
int row_list(const std::uint8_t* flags, std::size_t n, bool want, int* out) {
  int count = 0;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, flags + i, 8);
    // Gather the low bit of each byte into one byte (byte b -> bit b).
    unsigned bits = static_cast<unsigned>(((w & 0x0101010101010101ULL) * 0x0102040810204080ULL) >> 56);
    if (!want) bits = ~bits & 0xffu;
    while (bits) {
      out[count++] = static_cast<int>(i) + __builtin_ctz(bits);
      bits &= bits - 1;
    }
  }
  for (; i < n; ++i)
    if (static_cast<bool>(flags[i]) == want) out[count++] = static_cast<int>(i);
  return count;
}

/// The indices i < n whose bit in `bits` equals `want`.
int bit_list(const std::uint64_t* bits, std::size_t n, bool want, int* out) {
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

/// Per-thread buffers for the chunk pass.
struct Workspace {
  explicit Workspace(const Design& d, std::size_t max_rows, bool ridge) : exact(d, max_rows, ridge) {}
  detail::ExactSolver exact;
  std::vector<double> y, w, x0, x, s, rhs, model, wm, wy, g;
  std::vector<std::uint8_t> valid;
  std::vector<double> yo;            // deletion mode: observation-major values
  std::vector<std::uint64_t> bits;   // deletion mode: masks, bits per pixel
  std::vector<std::vector<std::size_t>> buckets;  // small-system pixels by system size
  std::vector<Kind> kind;
  std::vector<char> skip;
  std::vector<int> rows, nv;
  std::vector<std::size_t> gram, exact_list;
  std::vector<double> rss;
  std::vector<std::uint8_t> gpu_kind, gpu_done;  // the device's answers for a chunk
  std::vector<std::size_t> gpu_sample;  // pixels the device solved, for the check
  PathCounts paths{};
  std::size_t device_pixels = 0;
};

template <class T>
CUBESOLVE_SIMD_CLONES void gather(const T* cube, const Array* weights, std::size_t N, std::size_t P, std::size_t begin, std::size_t B,
            Workspace& ws) {
  // Pixel-major copies: ws.y[k*N + i], zero where missing.
  // Tiles of 8 rows x 256 pixels: long reads along each row (which the
  // prefetcher follows), then each pixel gets 8 consecutive values.
  constexpr std::size_t kRows = 8, kPixels = 256;
  double tile[kRows][kPixels];
  for (std::size_t k0 = 0; k0 < B; k0 += kPixels) {
    const std::size_t kn = std::min(kPixels, B - k0);
    for (std::size_t i0 = 0; i0 < N; i0 += kRows) {
      const std::size_t in = std::min(kRows, N - i0);
      for (std::size_t i = 0; i < in; ++i) {
        const T* row = cube + (i0 + i) * P + begin + k0;
        for (std::size_t k = 0; k < kn; ++k) tile[i][k] = static_cast<double>(row[k]);
      }
      for (std::size_t k = 0; k < kn; ++k) {
        double* y = ws.y.data() + (k0 + k) * N + i0;
        std::uint8_t* valid = ws.valid.data() + (k0 + k) * N + i0;
        for (std::size_t i = 0; i < in; ++i) {
          const double v = tile[i][k];
          const bool ok = std::isfinite(v);
          valid[i] = ok;
          y[i] = ok ? v : 0.0;
        }
      }
    }
  }
  if (!weights) return;
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t k = 0; k < B; ++k) {
      const double wt = weights->value(i * P + begin + k);
      const bool ok = ws.valid[k * N + i] && wt > 0 && std::isfinite(wt);
      ws.valid[k * N + i] = ok;
      ws.w[k * N + i] = ok ? wt : 0.0;
      if (!ok) ws.y[k * N + i] = 0.0;
    }
}

/// Observation-major copy of a chunk for the deletion mode: ws.yo[i*B + k]
/// (zero where missing), masks as bits per pixel in ws.bits, valid counts.
template <class T>
CUBESOLVE_SIMD_CLONES void gather_rows(const T* cube, std::size_t N, std::size_t P, std::size_t begin, std::size_t B,
                                       Workspace& ws) {
  const std::size_t words = (N + 63) / 64;
  ws.bits.assign(B * words, 0);
  for (std::size_t i = 0; i < N; ++i) {
    const T* row = cube + i * P + begin;
    double* out = ws.yo.data() + i * B;
    const std::uint64_t bit = std::uint64_t{1} << (i % 64);
    std::uint64_t* bits = ws.bits.data() + i / 64;
    for (std::size_t k = 0; k < B; ++k) {
      const double v = static_cast<double>(row[k]);
      const bool ok = std::isfinite(v);
      out[k] = ok ? v : 0.0;
      bits[k * words] |= bit & (std::uint64_t{0} - ok);
    }
  }
  for (std::size_t k = 0; k < B; ++k) {
    int nv = 0;
    for (std::size_t w = 0; w < words; ++w) nv += __builtin_popcountll(ws.bits[k * words + w]);
    ws.nv[k] = nv;
  }
}

/// The pixel-major values and flags of pixel k from the observation-major copy.
void unpack(Workspace& ws, std::size_t k, std::size_t N, std::size_t B) {
  const std::size_t words = (N + 63) / 64;
  for (std::size_t i = 0; i < N; ++i) {
    ws.y[k * N + i] = ws.yo[i * B + k];
    ws.valid[k * N + i] = static_cast<std::uint8_t>((ws.bits[k * words + i / 64] >> (i % 64)) & 1);
  }
}

/// On a device, the pixels of the device's paths straight from the cube;
/// those it solved are marked in job.taken.
void solve_chunk_on_device(Job& job, Workspace& ws, std::size_t begin, std::size_t B) {
  const std::size_t M = job.M;
  ws.nv.assign(B, 0);
  ws.gpu_kind.assign(B, detail::gpu::kSkip);
  ws.rss.assign(B, kNaN);
  std::vector<std::uint8_t>& done = ws.gpu_done;
  done.assign(B, 0);
  detail::gpu::Chunk in;
  in.cube = job.cube.raw();
  in.float32 = job.cube.dtype() == DType::Float32;
  in.stride = job.P;
  in.begin = begin;
  in.count = B;
  in.rss = job.options.residuals;
  if (job.weights) {
    in.weights = job.weights->raw();
    in.weights_float32 = job.weights->dtype() == DType::Float32;
  }
  detail::gpu::ChunkResult out;
  out.x_float32 = job.r.x.dtype() == DType::Float32;
  out.x = static_cast<char*>(job.r.x.raw()) + begin * (out.x_float32 ? sizeof(float) : sizeof(double));
  out.x_stride = job.P;
  out.nv = ws.nv.data();
  out.kind = ws.gpu_kind.data();
  out.done = done.data();
  out.rss = ws.rss.data();
  try {
    job.gpu->solve(in, out);
  } catch (const detail::gpu::OutOfMemory&) {
    job.gpu_short += B;  // the CPU does the chunk
    return;
  }
  for (std::size_t k = 0; k < B; ++k) {
    if (!done[k]) continue;
    job.taken[begin + k] = 1;
    const Kind kind = host_kind(ws.gpu_kind[k]);
    const std::size_t rank = fast_rank(kind, static_cast<std::size_t>(ws.nv[k]), job.f);
    job.write_diagnostics(begin + k, rank_status(rank, M), static_cast<int>(rank), kNaN, ws.rss[k], ws.nv[k]);
    ++ws.paths[static_cast<std::size_t>(path_of(kind))];
    ++ws.device_pixels;
    if (ws.gpu_sample.size() < 8 && kind != Kind::Full) ws.gpu_sample.push_back(begin + k);
  }
}

/// The CPU paths for pixels [begin, end), but those another pass solved
/// (job.taken).
CUBESOLVE_SIMD_CLONES void solve_chunk(Job& job, Workspace& ws, std::size_t begin, std::size_t end) {
  const std::size_t N = job.N, M = job.M, B = end - begin;
  if (!job.taken.empty() && std::all_of(job.taken.begin() + static_cast<std::ptrdiff_t>(begin),
                                        job.taken.begin() + static_cast<std::ptrdiff_t>(end), [](char t) { return t != 0; }))
    return;
  const auto& f = job.f;
  const double* A = job.design.values().data();
  ws.y.resize(N * B);
  ws.valid.resize(N * B);
  if (job.weights) ws.w.resize(N * B);
  ws.x0.resize(M * B);
  ws.x.resize(M * B);  // every path writes its pixels; the others are set as they are classified
  ws.kind.assign(B, Kind::Skip);
  ws.nv.assign(B, 0);
  ws.rss.assign(B, kNaN);
  ws.gram.clear();
  ws.exact_list.clear();
  // Deletion mode (A of full column rank, no weights, residuals or device):
  // the chunk stays observation-major; x0 = P·y~ comes first, and each
  // deletion corrects it, x = x0 + P[:, I] z with (I - H_II) z = A_I x0.
  // Only pixels of the other paths are copied out pixel by pixel.
  const bool rows_mode = job.rows_mode;
  if (rows_mode) {
    ws.yo.resize(N * B);
    if (job.cube.dtype() == DType::Float32) gather_rows(job.cube.data<float>(), N, job.P, begin, B, ws);
    else gather_rows(job.cube.data<double>(), N, job.P, begin, B, ws);
  } else if (job.cube.dtype() == DType::Float32) {
    gather(job.cube.data<float>(), job.weights, N, job.P, begin, B, ws);
  } else {
    gather(job.cube.data<double>(), job.weights, N, job.P, begin, B, ws);
  }

  for (std::size_t k = 0; k < B; ++k) {
    if (!job.taken.empty() && job.taken[begin + k]) {
      ws.kind[k] = Kind::Group;  // written by another pass
      continue;
    }
    if (!rows_mode) {
      int nv = 0;
      for (std::size_t i = 0; i < N; ++i) nv += ws.valid[k * N + i];
      ws.nv[k] = nv;
    }
    ws.kind[k] = job.planner.choose(static_cast<std::size_t>(ws.nv[k])).first;
    if (rows_mode && ws.kind[k] != Kind::Full && ws.kind[k] != Kind::Deletion && ws.kind[k] != Kind::Skip)
      unpack(ws, k, N, B);
  }
  if (rows_mode) {  // x0 = P·y~ for the whole chunk, from the observation-major copy
    lapack::gemm('N', 'T', static_cast<int>(M), static_cast<int>(B), static_cast<int>(N), 1.0, f.pinv.data(),
                 static_cast<int>(M), ws.yo.data(), static_cast<int>(B), 0.0, ws.x0.data(), static_cast<int>(M));
  }
  for (std::size_t k = 0; k < B; ++k)  // unsolved pixels are NaN; group pixels are written by their pass
    if (ws.kind[k] == Kind::Skip || ws.kind[k] == Kind::Group)
      std::fill(ws.x.data() + k * M, ws.x.data() + (k + 1) * M, ws.kind[k] == Kind::Skip ? kNaN : 0.0);
  // The small-system paths are bucketed by system size.
  bool need_product = false;
  for (auto& bucket : ws.buckets) bucket.clear();
  ws.buckets.resize(kMaxSmall + 1);
  for (std::size_t k = 0; k < B; ++k) {
    const Kind kind = ws.kind[k];
    need_product = need_product || kind == Kind::Full || kind == Kind::Deletion || kind == Kind::DualSchur;
    if (rows_mode && kind == Kind::Full) std::copy(ws.x0.data() + k * M, ws.x0.data() + (k + 1) * M, ws.x.data() + k * M);
    if (kind == Kind::Gram) ws.gram.push_back(k);
    else if (kind == Kind::Exact) ws.exact_list.push_back(k);
    else if (kind == Kind::Deletion || kind == Kind::DualSchur || kind == Kind::DualGather)
      ws.buckets[kind == Kind::DualGather ? static_cast<std::size_t>(ws.nv[k]) : N - static_cast<std::size_t>(ws.nv[k])]
          .push_back(k);
  }
  // kLanes systems of one size at a time through the batched Cholesky:
  //   deletion   (I - H_II) z = H_I y~      x = x0 + P[:, I] z = P (y~ + z at I)
  //   dual       Q_II t = Q_I y~            x = x0 - P[:, I] t = P (y~ - t at I)
  //   dual       C_VV z = y_V               x = A_V^T z
  // where x0 = P y~. The first two only fill the missing rows of y~ (with
  // the model's values there): one GEMM then gives every pixel's x.
  constexpr std::size_t L = detail::kLanes;
  ws.rows.resize(N * L);
  for (std::size_t q = 1; q <= kMaxSmall; ++q) {
    const auto& list = ws.buckets[q];
    if (list.empty()) continue;
    ws.s.resize(q * q * L);
    ws.rhs.resize(q * L);
    for (std::size_t b0 = 0; b0 < list.size(); b0 += L) {
      const std::size_t lanes = std::min(L, list.size() - b0);
      double* S = ws.s.data();
      double* z = ws.rhs.data();
      std::fill(S, S + q * q * L, 0.0);
      std::fill(z, z + q * L, 0.0);
      for (std::size_t l = 0; l < L; ++l) {
        if (l >= lanes) {  // padding: the identity
          for (std::size_t a = 0; a < q; ++a) S[(a * q + a) * L + l] = 1.0;
          continue;
        }
        const std::size_t k = list[b0 + l];
        const Kind kind = ws.kind[k];
        const bool use_valid = kind == Kind::DualGather;
        int* I = ws.rows.data() + l * N;
        if (rows_mode && kind == Kind::Deletion) bit_list(ws.bits.data() + k * ((N + 63) / 64), N, false, I);
        else row_list(ws.valid.data() + k * N, N, use_valid, I);
        const std::vector<double>& K =
            kind == Kind::Deletion ? f.hat : kind == Kind::DualSchur ? f.gram_rows_inv : f.gram_rows;
        // Right-hand side first: it streams the rows K[I, :] into cache for the gather after it.
        const double* yk = ws.y.data() + k * N;
        if (use_valid) {
          for (std::size_t a = 0; a < q; ++a) z[a * L + l] = yk[I[a]];
        } else if (rows_mode) {  // A_I x0 (= H_I y~)
          detail::row_dots(A, M, I, q, ws.x0.data() + k * M, z + l, L);
        } else {  // K[I, :] y~
          detail::row_dots(K.data(), N, I, q, yk, z + l, L);
        }
        // The system: K[I, I], or I - H[I, I] for a deletion.
        const double sign = kind == Kind::Deletion ? -1.0 : 1.0;
        for (std::size_t a = 0; a < q; ++a) {
          const double* Krow = K.data() + static_cast<std::size_t>(I[a]) * N;
          double* Srow = S + a * q * L + l;
          for (std::size_t c = 0; c <= a; ++c) Srow[c * L] = sign * Krow[I[c]];
          if (kind == Kind::Deletion) Srow[a * L] += 1.0;
        }
      }
      bool ok[L];
      detail::batched_cholesky(S, q, kSmallTau, ok);
      detail::batched_cholesky_solve(S, q, z);
      for (std::size_t l = 0; l < lanes; ++l) {
        const std::size_t k = list[b0 + l];
        if (!ok[l]) {
          if (rows_mode) unpack(ws, k, N, B);
          ws.exact_list.push_back(k);
          continue;
        }
        const Kind kind = ws.kind[k];
        const int* I = ws.rows.data() + l * N;
        if (kind == Kind::DualGather) {
          double* x = ws.x.data() + k * M;
          std::fill(x, x + M, 0.0);
          for (std::size_t a = 0; a < q; ++a) detail::axpy(z[a * L + l], A + static_cast<std::size_t>(I[a]) * M, x, M);
          continue;
        }
        if (rows_mode) {  // x = x0 + P[:, I] z; a correction out of all proportion to x0 is not trusted
          double* x = ws.x.data() + k * M;
          const double* x0 = ws.x0.data() + k * M;
          std::fill(x, x + M, 0.0);
          for (std::size_t a = 0; a < q; ++a)
            detail::axpy(z[a * L + l], f.pinv.data() + static_cast<std::size_t>(I[a]) * M, x, M);
          const double dx = detail::dot(x, x, M), nx = detail::dot(x0, x0, M);
          detail::axpy(1.0, x0, x, M);
          if (!(dx <= kMaxGrowth * kMaxGrowth * std::max(nx, 1e-300))) {
            unpack(ws, k, N, B);
            ws.exact_list.push_back(k);
          }
          continue;
        }
        // Fill the missing rows; a fill out of all proportion to the data is not trusted.
        double* yk = ws.y.data() + k * N;
        const double ymax = detail::max_abs(yk, N);
        double zmax = 0;
        const double sign = kind == Kind::Deletion ? 1.0 : -1.0;
        for (std::size_t a = 0; a < q; ++a) {
          yk[I[a]] = sign * z[a * L + l];
          zmax = std::fabs(z[a * L + l]) > zmax ? std::fabs(z[a * L + l]) : zmax;
        }
        if (!(zmax <= kMaxGrowth * std::max(ymax, 1e-300))) {
          for (std::size_t a = 0; a < q; ++a) yk[I[a]] = 0.0;
          ws.exact_list.push_back(k);
        }
      }
    }
  }
  // x = P·y^ for every pixel of the full, deletion and dual paths: one GEMM.
  if (need_product && !rows_mode) {
    lapack::gemm('N', 'N', static_cast<int>(M), static_cast<int>(B), static_cast<int>(N), 1.0, f.pinv.data(),
                 static_cast<int>(M), ws.y.data(), static_cast<int>(N), 0.0, ws.x0.data(), static_cast<int>(M));
    for (std::size_t k = 0; k < B; ++k)
      if (ws.kind[k] == Kind::Full || ws.kind[k] == Kind::Deletion || ws.kind[k] == Kind::DualSchur)
        std::copy(ws.x0.data() + k * M, ws.x0.data() + (k + 1) * M, ws.x.data() + k * M);
  }

  // Gram path: every pixel's A_V^T W A_V and A_V^T W y from two GEMMs, then Cholesky.
  if (!ws.gram.empty()) {
    const std::size_t G = ws.gram.size(), T = f.packed();
    ws.wm.assign(N * G, 0.0);
    ws.wy.assign(N * G, 0.0);
    for (std::size_t c = 0; c < G; ++c) {
      const std::size_t k = ws.gram[c];
      for (std::size_t i = 0; i < N; ++i) {
        const double wt = job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
        ws.wm[c * N + i] = wt;
        ws.wy[c * N + i] = wt * ws.y[k * N + i];
      }
    }
    ws.g.resize(T * G);
    ws.s.resize(M * M);
    ws.model.resize(M * G);
    lapack::gemm('N', 'N', static_cast<int>(T), static_cast<int>(G), static_cast<int>(N), 1.0, f.outer.data(),
                 static_cast<int>(T), ws.wm.data(), static_cast<int>(N), 0.0, ws.g.data(), static_cast<int>(T));
    lapack::gemm('N', 'N', static_cast<int>(M), static_cast<int>(G), static_cast<int>(N), 1.0, A,
                 static_cast<int>(M), ws.wy.data(), static_cast<int>(N), 0.0, ws.model.data(), static_cast<int>(M));
    for (std::size_t c = 0; c < G; ++c) {
      const std::size_t k = ws.gram[c];
      const double* gp = ws.g.data() + c * T;
      double* S = ws.s.data();
      for (std::size_t a = 0; a < M; ++a)
        for (std::size_t b = a; b < M; ++b) S[b * M + a] = *gp++;
      for (std::size_t a = 0; a < M; ++a) S[a * M + a] += job.options.ridge;
      double* x = ws.x.data() + k * M;
      std::copy(ws.model.data() + c * M, ws.model.data() + (c + 1) * M, x);
      if (!detail::cholesky(S, M, kGramTau)) {
        std::fill(x, x + M, kNaN);
        ws.exact_list.push_back(k);
        ws.kind[k] = Kind::Exact;
        continue;
      }
      detail::cholesky_solve(S, M, x);
    }
  }

  // Exact path: per-pixel SVD on the weighted valid rows.
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
    const auto out = ws.exact.solve(ws.rows.data(), job.weights ? sw.data() : nullptr, yv.data(), q,
                                    job.options.rcond, job.options.ridge, ws.x.data() + k * M);
    double* x = ws.x.data() + k * M;
    const std::size_t p = begin + k;
    if (out.failed) {
      job.write_diagnostics(p, PixelStatus::Failed, out.rank, kNaN, kNaN, ws.nv[k]);
    } else {
      double rss = 0;
      for (std::size_t a = 0; a < q; ++a) {
        const double e = (detail::dot(A + static_cast<std::size_t>(ws.rows[a]) * M, x, M) - yv[a]) * sw[a];
        rss += e * e;
      }
      const PixelStatus st = job.options.ridge > 0 ? PixelStatus::Ok : rank_status(static_cast<std::size_t>(out.rank), M);
      job.write_diagnostics(p, st, out.rank, out.cond, rss, ws.nv[k]);
    }
  }

  // Residuals of the fast paths: one product A·X for the chunk.
  if (job.options.residuals) {
    ws.model.resize(N * B);
    lapack::gemm('T', 'N', static_cast<int>(N), static_cast<int>(B), static_cast<int>(M), 1.0, A, static_cast<int>(M),
                 ws.x.data(), static_cast<int>(M), 0.0, ws.model.data(), static_cast<int>(N));
    for (std::size_t k = 0; k < B; ++k) {
      if (ws.kind[k] == Kind::Skip || ws.kind[k] == Kind::Group || ws.kind[k] == Kind::Exact) continue;
      double rss = 0;
      for (std::size_t i = 0; i < N; ++i)
        if (ws.valid[k * N + i]) {
          const double e = ws.model[k * N + i] - ws.y[k * N + i];
          rss += (job.weights ? ws.w[k * N + i] : 1.0) * e * e;
        }
      ws.rss[k] = rss;
    }
  }

  ws.skip.assign(B, 0);
  for (std::size_t k = 0; k < B; ++k) {
    const Kind kind = ws.kind[k];
    ws.skip[k] = kind == Kind::Group;
    if (kind == Kind::Group) continue;
    ++ws.paths[static_cast<std::size_t>(path_of(kind))];
    if (kind == Kind::Exact) continue;  // written above
    const std::size_t p = begin + k;
    const auto nv = static_cast<std::size_t>(ws.nv[k]);
    std::size_t rank = 0;
    PixelStatus st = PixelStatus::Ok;
    if (kind == Kind::Skip) {
      st = nv == 0 ? PixelStatus::NoData : PixelStatus::TooFew;
    } else {
      rank = fast_rank(kind, nv, f);
      st = rank_status(rank, M);
    }
    job.write_diagnostics(p, st, static_cast<int>(rank), kNaN, ws.rss[k], ws.nv[k]);
  }
  if (job.r.x.dtype() == DType::Float32) job.write_block(job.r.x.data<float>(), begin, B, ws.x.data(), ws.skip);
  else job.write_block(job.r.x.data<double>(), begin, B, ws.x.data(), ws.skip);
}

/// Solves one block of a mask group: one SVD of A_V, one GEMM for its pixels.
void solve_group_block(Job& job, const std::uint64_t* mask, const std::vector<std::size_t>& pixels,
                       std::size_t begin, std::size_t end, PathCounts& paths) {
  const std::size_t N = job.N, M = job.M, G = end - begin;
  std::vector<std::size_t> rows;
  for (std::size_t i = 0; i < N; ++i)
    if ((mask[i / 64] >> (i % 64)) & 1) rows.push_back(i);
  const std::size_t nv = rows.size(), k = std::min(nv, M);
  const double* A = job.design.values().data();
  // A_V column-major (nv, M), kept for the residuals.
  std::vector<double> av(nv * M), work_a, s(k), u(nv * k), vt(k * M);
  for (std::size_t j = 0; j < M; ++j)
    for (std::size_t a = 0; a < nv; ++a) av[j * nv + a] = A[rows[a] * M + j];
  work_a = av;
  const int m_ = static_cast<int>(nv), n_ = static_cast<int>(M), ldu = m_;
  const int info = lapack::svd(m_, n_, work_a.data(), s.data(), u.data(), vt.data());

  std::vector<double> y(nv * G), x(M * G, kNaN);
  for (std::size_t c = 0; c < G; ++c)
    for (std::size_t a = 0; a < nv; ++a) y[c * nv + a] = job.cube.value(rows[a] * job.P + pixels[begin + c]);
  std::size_t rank = 0;
  double cond = kNaN;
  if (info == 0) {
    const double rcond = job.options.rcond < 0 ? detail::default_rcond(nv, M) : job.options.rcond;
    while (rank < k && s[rank] > rcond * s[0]) ++rank;
    // pinv = VT_r^T S_r^-1 U_r^T  (M, nv); X = pinv · Y.
    std::vector<double> vs(k * M, 0.0), pinv(M * nv, 0.0);
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t q = 0; q < rank; ++q) vs[j * k + q] = vt[j * k + q] / s[q];
    if (rank > 0) {
      lapack::gemm('T', 'T', n_, m_, static_cast<int>(rank), 1.0, vs.data(), static_cast<int>(k), u.data(), ldu, 0.0,
                   pinv.data(), n_);
    }
    lapack::gemm('N', 'N', n_, static_cast<int>(G), m_, 1.0, pinv.data(), n_, y.data(), m_, 0.0, x.data(), n_);
    cond = rank > 0 ? s[0] / s[rank - 1] : std::numeric_limits<double>::infinity();
  }
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
    const PixelStatus st = info != 0 ? PixelStatus::Failed : rank_status(rank, M);
    job.write_pixel(pixels[begin + c], x.data() + c * M, st, static_cast<int>(rank), cond, rss, static_cast<int>(nv));
  }
  paths[static_cast<std::size_t>(SolvePath::Group)] += G;
}

}  // namespace

PathCounts plan(const MaskStats& masks, const Design& design, bool weighted, const SolveOptions& options) {
  check_options(options);
  const Planner planner = make_planner(design, weighted, options);
  std::vector<char> chosen;
  if (use_groups(options, weighted)) chosen = choose_groups(masks, planner, options);
  PathCounts counts{};
  for (std::size_t p = 0; p < masks.pixels(); ++p) {
    const auto g = static_cast<std::size_t>(masks.group_of[p]);
    const Kind kind = !chosen.empty() && chosen[g] ? Kind::Group : planner.choose(static_cast<std::size_t>(masks.n_valid[p])).first;
    ++counts[static_cast<std::size_t>(path_of(kind))];
  }
  return counts;
}

SolveResult solve(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
                  const Progress& progress) {
  check_inputs(cube, design, weights);
  check_options(options);
  const auto t0 = std::chrono::steady_clock::now();
  const std::size_t N = cube.dim(0), H = cube.dim(1), W = cube.dim(2), P = H * W, M = design.cols();
  const auto& f = design.factors();

  SolveResult r;
  // Every pixel of every output is written by exactly one path.
  r.x = Array::uninitialized(options.output.value_or(cube.dtype()), {M, H, W});
  r.n_valid = Array::uninitialized(DType::Int32, {H, W});
  r.rank = Array::uninitialized(DType::Int32, {H, W});
  r.rss = Array::uninitialized(DType::Float64, {H, W});
  r.status = Array::uninitialized(DType::UInt8, {H, W});
  r.cond = Array::uninitialized(DType::Float64, {H, W});
  r.threads = detail::thread_count(options.threads);

  const Planner planner = make_planner(design, weights != nullptr, options);

  Job job{cube, design, f, weights, options, planner, r, {}, N, M, P};
  std::vector<PathCounts> counts(static_cast<std::size_t>(r.threads), PathCounts{});
  lapack::SingleThreadedBlas single;

  // Chunks for the CPU paths: a chunk's values (B x N doubles) should stay
  // in a core's cache, and small chunks keep cancelling prompt (a chunk of
  // exact pixels takes milliseconds).
  const std::size_t per_pixel = 8 * (3 * N + 3 * M) + N + 64;
  const std::size_t budget = std::max<std::size_t>(options.memory / static_cast<std::size_t>(r.threads), 1 << 20);
  const std::size_t fair = (P + static_cast<std::size_t>(r.threads) * 4 - 1) / (static_cast<std::size_t>(r.threads) * 4);
  const std::size_t cached = std::clamp<std::size_t>((std::size_t{1} << 19) / (8 * N), 512, 2048);
  const std::size_t chunk = std::clamp<std::size_t>(std::min(budget / per_pixel, fair), 64, planner.exact_only ? 64 : cached);
  std::vector<Workspace> ws;
  for (int t = 0; t < r.threads; ++t) ws.emplace_back(design, N, options.ridge > 0);

  // On a device first: the pixels of its paths, straight from the cube.
  std::unique_ptr<detail::gpu::Solver> gpu;
  if (options.device == Device::Cuda && planner.fast_ok && !planner.exact_only) {
    try {
      std::vector<std::uint8_t> table(N + 1);  // the planner's choice by valid count, for the device
      for (std::size_t nv = 0; nv <= N; ++nv) table[nv] = device_kind(planner.choose(nv).first);
      detail::gpu::Settings settings;
      settings.tau = kSmallTau;
      settings.gram_tau = kGramTau;
      settings.growth = kMaxGrowth;
      settings.ridge = options.ridge;
      settings.float32 = !options.device_float64;
      settings.memory = options.device_memory;
      gpu = std::make_unique<detail::gpu::Solver>(f, design.values().data(), std::move(table), settings);
      job.gpu = gpu.get();
      r.device = Device::Cuda;
    } catch (const detail::gpu::OutOfMemory& e) {
      r.warnings.push_back(std::string("the CUDA device has too little free memory (") + e.what() + "); solved on the CPU");
    } catch (const NumericalError& e) {
      r.warnings.push_back(std::string("the CUDA device could not be set up (") + e.what() + "); solved on the CPU");
    }
  }
  double done = 0;
  if (gpu) {
    // Few, large chunks: each is one call with its transfers (the host keeps
    // only X's rows and a few flags a pixel); a few threads keep the
    // device's two lanes busy.
    const std::size_t feeders = std::min<std::size_t>(static_cast<std::size_t>(r.threads), 4);
    const std::size_t device_chunk = std::clamp<std::size_t>(
        std::min(options.memory / feeders / (8 * M + 32), (P + feeders - 1) / feeders), 64, std::size_t{1} << 16);
    job.taken.assign(P, 0);
    detail::parallel_for(
        P, device_chunk, static_cast<int>(feeders),
        [&](int t, std::size_t b, std::size_t e) { solve_chunk_on_device(job, ws[static_cast<std::size_t>(t)], b, e - b); },
        part(progress, 0, 0.5));
    done = 0.5;
  }

  // Mask groups among the pixels left: pixels sharing a mask share one SVD,
  // where that is cheaper than their own paths (and it keeps a mask that
  // breaks the rank, which the device leaves, on one SVD). After a device,
  // only the pixels it left are looked at.
  std::vector<std::size_t> left;  // after a device: the pixels it left
  Array left_cube;
  if (gpu) {
    for (std::size_t p = 0; p < P; ++p)
      if (!job.taken[p]) left.push_back(p);
    if (left.size() >= kMinGroup) left_cube = take_pixels(cube, left);
  }
  const Array& look = gpu ? left_cube : cube;
  const bool grouping = use_groups(options, weights != nullptr) && (gpu ? left.size() : P) >= kMinGroup &&
                        (options.rcond >= 0 || masks_repeat(look));
  if (grouping) {
    const MaskStats masks = analyze_masks(look, nullptr, part(progress, done, done + 0.1 * (1 - done)));
    done += 0.1 * (1 - done);
    const std::vector<char> chosen = choose_groups(masks, planner, options, gpu != nullptr);
    std::size_t grouped = 0;
    for (std::size_t g = 0; g < chosen.size(); ++g) grouped += chosen[g] ? masks.group_size[g] : 0;
    if (grouped > 0) {
      // Pixels of the chosen groups (indices into the cube), group after
      // group, cut into blocks that know their group's mask.
      std::vector<std::size_t> offset(chosen.size() + 1, 0), pixels(grouped);
      for (std::size_t g = 0; g < chosen.size(); ++g) offset[g + 1] = offset[g] + (chosen[g] ? masks.group_size[g] : 0);
      std::vector<std::size_t> fill(offset.begin(), offset.end() - 1);
      std::vector<const std::uint64_t*> mask_of(chosen.size(), nullptr);
      if (job.taken.empty()) job.taken.assign(P, 0);
      for (std::size_t q = 0; q < masks.pixels(); ++q) {
        const auto g = static_cast<std::size_t>(masks.group_of[q]);
        if (!chosen[g]) continue;
        const std::size_t p = gpu ? left[q] : q;
        if (!mask_of[g]) mask_of[g] = masks.masks.data() + q * masks.words;
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
      detail::parallel_for(
          blocks.size(), 1, r.threads,
          [&](int t, std::size_t b0, std::size_t b1) {
            for (std::size_t b = b0; b < b1; ++b)
              solve_group_block(job, blocks[b].mask, pixels, blocks[b].begin, blocks[b].end,
                                counts[static_cast<std::size_t>(t)]);
          },
          part(progress, done, share));
      done = share;
    }
  }

  // Everything else on the CPU paths, streamed in chunks sized to the memory budget.
  job.rows_mode = !weights && !options.residuals && options.ridge == 0 && planner.fast_ok && !planner.exact_only &&
                  f.full_column_rank() && N > M && !f.hat.empty();
  detail::parallel_for(
      P, chunk, r.threads, [&](int t, std::size_t b, std::size_t e) { solve_chunk(job, ws[static_cast<std::size_t>(t)], b, e); },
      part(progress, done, 1.0));
  for (const auto& w : ws) {
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += w.paths[i];
    r.device_pixels += w.device_pixels;
  }
  for (const auto& c : counts)
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += c[i];
  // A device's answers are checked against the exact path on a sample of
  // its pixels; if one disagrees, the whole solve is done again on the CPU.
  if (gpu && gpu->shrinks() > 0)
    r.warnings.push_back("the CUDA device ran short of memory; its work was cut into pieces of " +
                         std::to_string(gpu->piece_limit()) + " pixels");
  if (job.gpu_short > 0)
    r.warnings.push_back("the CUDA device had no memory left for " + std::to_string(job.gpu_short.load()) +
                         " pixels; they were solved on the CPU");
  if (gpu) {
    detail::ExactSolver exact(design, N, options.ridge > 0);
    std::vector<int> rows(N);
    std::vector<double> yv(N), sw(N), x(M);
    // float32 work with refinement is held to 1e-6 where A_V is well conditioned.
    const double tol = r.x.dtype() == DType::Float32 ? 1e-5 : options.device_float64 ? 1e-8 : 1e-6;
    const double max_cond = options.device_float64 ? 1e8 : 1e4;
    for (const auto& w : ws)
      for (std::size_t p : w.gpu_sample) {
        std::size_t q = 0;
        for (std::size_t i = 0; i < N; ++i) {
          const double v = cube.value(i * P + p), wt = weights ? weights->value(i * P + p) : 1.0;
          if (!std::isfinite(v) || !(wt > 0) || !std::isfinite(wt)) continue;
          rows[q] = static_cast<int>(i);
          sw[q] = std::sqrt(wt);
          yv[q++] = v;
        }
        const auto out = exact.solve(rows.data(), weights ? sw.data() : nullptr, yv.data(), q, options.rcond,
                                     options.ridge, x.data());
        double d = 0, n = 0;
        for (std::size_t j = 0; j < M; ++j) {
          const double g = r.x.value(j * P + p);
          d += (g - x[j]) * (g - x[j]);
          n += x[j] * x[j];
        }
        if (out.failed || out.cond > max_cond) continue;
        if (!(std::sqrt(d) <= tol * std::max(std::sqrt(n), 1e-300))) {
          SolveOptions cpu = options;
          cpu.device = Device::Cpu;
          SolveResult again = solve(cube, design, weights, cpu, progress);
          again.warnings.push_back("the CUDA results failed their check against the exact path; solved on the CPU");
          return again;
        }
      }
  }
  r.engine_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace cubesolve
