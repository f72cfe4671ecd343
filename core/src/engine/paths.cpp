#include "engine/paths.hpp"

#include "engine/kernels.hpp"
#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

// Vec4 only lives in the inlined kernels of this file: no ABI crosses a call.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace cubesolve::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr std::size_t L = kLanes;
constexpr std::size_t kMaxGroups = 4;  // of L lanes, in one float32 factorization

/// Row i of A times v, over the row's nonzeros (a design of sparse rows).
CUBESOLVE_KERNEL double sparse_row_dot(const DesignFactors& f, std::size_t i, const double* v) {
  double s = 0;
  for (std::size_t e = f.row_start[i]; e < f.row_start[i + 1]; ++e) s += f.nz_val[e] * v[f.nz_col[e]];
  return s;
}

/// A pixel whose small system failed: a split network's to the band Gram
/// path (see Planner::network_gram), any other's to gelsd.
void leave_small_path(const Job& job, Workspace& ws, std::size_t k) {
  if (!job.planner.network_gram) return ws.exact_list.push_back(k);
  ws.kind[k] = Kind::Gram;
  ws.gram.push_back(k);
}

/// Where a lane's system comes from: the lower triangle of sign·K[I, I]
/// (K of n x n), plus the identity for a deletion's I - H_II.
struct LaneSystem {
  const double* K = nullptr;  // none: a padding lane, the identity
  const int* I = nullptr;
  std::size_t q = 0;  // its size: the rows after it, to the batch's size, are the identity's
  bool deletion = false;
  double shift = 0;  // with a custom rcond: the system less shift·I must stay positive definite (see Planner)
  bool packed = false;  // K's lower triangle packed by rows (DesignFactors::hat_lower)
  /// A gathered C_VV with a ridge: ridge / w_i on the diagonal (w: the
  /// pixel's weights by row, null for none), the dual form of the ridge
  /// solution x = A_V^T (A_V A_V^T + ridge W^-1)^-1 y_V.
  double ridge = 0;
  const double* w = nullptr;
  /// Its solution refined once against the system's own residual (a
  /// gathered C_VV, conditioned like A_V squared; see factor_in_lanes).
  bool refine = false;
  /// Row i of K, from its first entry (its entries up to i where packed).
  const double* row(std::size_t i, std::size_t n) const { return K + (packed ? tri(i) : i * n); }
  /// What row a's diagonal entry gains beyond K's.
  double extra(std::size_t a) const { return ridge > 0 ? ridge / (w ? w[I[a]] : 1.0) : 0.0; }
};

/// Fills the packed systems of all lanes (q rows: the batch's largest
/// system), row by row: each entry's four lanes are written together, so S
/// is written in order, whole lines at a time, while the four lanes' reads
/// of K overlap. A padding lane reads lane 0's entries times 0 (its system
/// is the identity). A lane's rows after its own size are the identity's
/// times its largest diagonal entry: its solution is its own system's, and
/// its pivots are judged as its own.
CUBESOLVE_KERNEL void put_systems(const LaneSystem* sys, std::size_t n, std::size_t q, double* S) {
  static_assert(L == 4, "four lanes");
  const LaneSystem& s0 = sys[0];
  const LaneSystem s1 = sys[1].K ? sys[1] : s0, s2 = sys[2].K ? sys[2] : s0, s3 = sys[3].K ? sys[3] : s0;
  Vec4 sign, diag;
  std::size_t common = q;  // rows every lane has
  bool ridged = false;
  for (std::size_t l = 0; l < L; ++l) {
    sign[l] = sys[l].K ? (sys[l].deletion ? -1.0 : 1.0) : 0.0;
    diag[l] = sys[l].K ? (sys[l].deletion ? 1.0 : 0.0) : 1.0;
    if (sys[l].K) common = std::min(common, sys[l].q);
    ridged = ridged || (sys[l].K && sys[l].ridge > 0);
  }
  const int *I0 = s0.I, *I1 = s1.I, *I2 = s2.I, *I3 = s3.I;
  for (std::size_t a = 0; a < common; ++a) {
    const double *r0 = s0.row(static_cast<std::size_t>(I0[a]), n), *r1 = s1.row(static_cast<std::size_t>(I1[a]), n),
                 *r2 = s2.row(static_cast<std::size_t>(I2[a]), n), *r3 = s3.row(static_cast<std::size_t>(I3[a]), n);
    // The rows' addresses as values of their own: folded back into
    // K + I[a]·n + I[c], the loop would need twice the registers it has.
    __asm__("" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3));
    double* Srow = S + tri(a) * L;
    for (std::size_t c = 0; c <= a; ++c)
      store4(Srow + c * L, sign * Vec4{r0[I0[c]], r1[I1[c]], r2[I2[c]], r3[I3[c]]});
    store4(Srow + a * L, load4(Srow + a * L) + diag);
    if (ridged)
      for (std::size_t l = 0; l < L; ++l) Srow[a * L + l] += sys[l].K ? sys[l].extra(a) : 0.0;
  }
  for (std::size_t l = 0; l < L; ++l) {  // the rows after `common`, lane by lane
    const LaneSystem& s = sys[l];
    double dmax = 0;
    for (std::size_t a = 0; a < common; ++a) dmax = std::max(dmax, S[(tri(a) + a) * L + l]);
    for (std::size_t a = common; a < q; ++a) {
      double* Srow = S + tri(a) * L + l;
      if (!s.K || a >= s.q) {  // after the lane's own rows: dmax is its largest diagonal entry
        for (std::size_t c = 0; c < a; ++c) Srow[c * L] = 0.0;
        Srow[a * L] = dmax > 0 ? dmax : 1.0;
        continue;
      }
      const double* r = s.row(static_cast<std::size_t>(s.I[a]), n);
      for (std::size_t c = 0; c <= a; ++c) Srow[c * L] = sign[l] * r[s.I[c]];
      Srow[a * L] += diag[l] + s.extra(a);
      dmax = std::max(dmax, Srow[a * L]);
    }
  }
}

/// The scale of each of W lanes' pivots (see kSmallTau): 1 for a deletion,
/// else 0 (the system's own largest diagonal entry decides).
template <class V>
CUBESOLVE_KERNEL V deletion_scale(const LaneSystem* sys) {
  V least = {};
  for (std::size_t l = 0; l < Lanes<V>::W; ++l) least[l] = sys[l].K && sys[l].deletion ? 1.0 : 0.0;
  return least;
}

/// One group of L lanes (S and z as put_systems and the lanes leave them)
/// factored and solved in float64, in place; ok[l]: lane l's pivots held.
CUBESOLVE_KERNEL void factor_group(Workspace& ws, const LaneSystem* sys, std::size_t q, double* S, double* z,
                                   bool* ok) {
  bool held[L];
  for (std::size_t l = 0; l < L; ++l) ok[l] = true;
  if (sys[0].shift > 0 || sys[1].shift > 0 || sys[2].shift > 0 || sys[3].shift > 0) {
    ws.shifted.assign(S, S + tri(q) * L);
    for (std::size_t a = 0; a < q; ++a)
      for (std::size_t l = 0; l < L; ++l) ws.shifted[(tri(a) + a) * L + l] -= sys[l].shift;
    batched_cholesky(ws.shifted.data(), q, 0.0, ok);
  }
  batched_cholesky(S, q, kSmallTau, held, deletion_scale<Vec4>(sys));
  for (std::size_t l = 0; l < L; ++l) ok[l] = ok[l] && held[l];
  batched_cholesky_solve(S, q, z);
}

/// Two groups of L lanes (sys: their 2L systems, S: their packed systems one
/// after the other, z[g]: group g's right-hand sides, as put_systems and the
/// lanes leave them)
/// factored and solved in float64 side by side in the eight lanes of 512-bit
/// vectors: one pivot's latency serves both groups. Their systems are
/// interleaved into ws.pair, their right-hand sides too, and z[g] becomes
/// the solutions; ok[g * L + l]: lane l of group g's pivots held.
CUBESOLVE_KERNEL void factor_pair(Workspace& ws, const LaneSystem* sys, std::size_t q, const double* S,
                                  double* const z[2], bool* ok) {
  constexpr std::size_t W = 2 * L;
  const std::size_t T = tri(q);
  ws.pair.resize((T + q) * W);
  double *P = ws.pair.data(), *b = P + T * W;
  side_by_side(S, T, 2, P);
  for (std::size_t a = 0; a < q; ++a)
    for (std::size_t g = 0; g < 2; ++g) store4(b + a * W + g * L, load4(z[g] + a * L));
  batched_cholesky<Vec8d>(P, q, kSmallTau, ok, deletion_scale<Vec8d>(sys));
  batched_cholesky_solve<Vec8d>(P, q, b);
  for (std::size_t a = 0; a < q; ++a)
    for (std::size_t g = 0; g < 2; ++g) store4(z[g] + a * L, load4(b + a * W + g * L));
}

/// The small-system pixels of ws.buckets, smallest systems first, through
/// the batched Cholesky: L at a time (2L side by side with 512-bit vectors,
/// see factor_pair), or 2L (4L with 512-bit vectors) at a time in float32
/// (batched_solve_mixed) where the systems are deletions of at least
/// ws.tune.mixed_min rows; each batch is as large as its largest system
/// (the others padded, see put_systems), so no lane idles where sizes
/// differ. lane(slot, k, z) writes pixel k's right-hand side at z[a * L]
/// (slot < kMaxGroups L: the lane's own scratch) and returns its system;
/// done(slot, k, q, z, ok) takes its solution from there (ok: its pivots held).
/// A lane whose system asks for it (LaneSystem::refine) is refined once:
/// residual(slot, k, sys, z, r) writes b - S z at r[a * L], the same
/// factor solves for the step, which is added where it is below
/// kGatherStep of the solution (else the lane fails).
template <class Lane, class Done, class Residual>
CUBESOLVE_KERNEL void factor_in_lanes(std::size_t n, Workspace& ws, Lane lane, Done done, Residual residual) {
  ws.order.clear();
  for (const auto& bucket : ws.buckets) ws.order.insert(ws.order.end(), bucket.begin(), bucket.end());
  const std::vector<std::size_t>& pixels = ws.order;
  const bool wide = wide_lanes() && ws.tune.wide;
  const std::size_t mixed_min = ws.tune.mixed_min;
  ws.rhs.resize(kMaxGroups * n * L);  // a system has fewer than n rows
  for (std::size_t b0 = 0; b0 < pixels.size();) {
    LaneSystem sys[kMaxGroups * L];
    double* z[kMaxGroups];
    std::size_t lanes[kMaxGroups] = {}, q = 0, G = 1;
    bool ok[kMaxGroups * L], mixed = true;
    for (std::size_t g = 0; g < G; ++g) {
      const std::size_t first = std::min(pixels.size(), b0 + g * L);
      lanes[g] = std::min(L, pixels.size() - first);
      if (lanes[g] == 0) continue;
      z[g] = ws.rhs.data() + g * n * L;
      for (std::size_t l = 0; l < lanes[g]; ++l) {
        sys[g * L + l] = lane(g * L + l, pixels[first + l], z[g] + l);
        q = std::max(q, sys[g * L + l].q);
        mixed = mixed && sys[g * L + l].deletion && sys[g * L + l].shift == 0;
      }
      if (g == 0)  // groups in one factorization; the first system is the batch's smallest
        G = sys[0].q >= mixed_min ? (wide ? 4 : 2) : (wide ? 2 : 1);
    }
    const std::size_t T = tri(q);
    mixed = mixed && sys[0].q >= mixed_min && G > 1 && lanes[G - 1] > 0;
    ws.s.resize(std::max(ws.s.size(), G * T * L));
    for (std::size_t g = 0; g < G; ++g) {
      if (lanes[g] == 0) continue;
      for (std::size_t l = 0; l < L; ++l)  // padding: a zero right-hand side
        for (std::size_t a = l < lanes[g] ? sys[g * L + l].q : 0; a < q; ++a) z[g][a * L + l] = 0.0;
      put_systems(sys + g * L, n, q, ws.s.data() + g * T * L);
    }
    if (mixed) {
      ws.s32.resize((T + q) * G * L);
      ws.refine.resize(3 * G * q * L);
      if (G == 4)
        batched_solve_mixed<4>(ws.s.data(), q, z, ws.s32.data(), ws.refine.data(), kSmallTau, ok);
      else
        batched_solve_mixed<2>(ws.s.data(), q, z, ws.s32.data(), ws.refine.data(), kSmallTau, ok);
    } else {
      for (std::size_t g = 0; g < G; ++g) {
        if (lanes[g] == 0) continue;
        const LaneSystem* two = sys + g * L;  // this group and the next
        if (wide && g + 1 < G && lanes[g + 1] > 0 &&
            std::none_of(two, two + 2 * L, [](const LaneSystem& s) { return s.shift > 0 || s.refine; })) {
          factor_pair(ws, two, q, ws.s.data() + g * T * L, z + g, ok + g * L);
          ++g;
          continue;
        }
        factor_group(ws, two, q, ws.s.data() + g * T * L, z[g], ok + g * L);
        if (std::none_of(two, two + L, [](const LaneSystem& s) { return s.refine; })) continue;
        ws.refine.assign(q * L, 0.0);  // the step, from the residual
        for (std::size_t l = 0; l < lanes[g]; ++l)
          if (two[l].refine && ok[g * L + l]) residual(g * L + l, pixels[b0 + g * L + l], two[l], z[g] + l, ws.refine.data() + l);
        batched_cholesky_solve(ws.s.data() + g * T * L, q, ws.refine.data());
        for (std::size_t l = 0; l < lanes[g]; ++l) {
          if (!two[l].refine || !ok[g * L + l]) continue;
          double dd = 0, zz = 0;
          for (std::size_t a = 0; a < two[l].q; ++a) {
            const double d = ws.refine[a * L + l], v = z[g][a * L + l] + d;
            z[g][a * L + l] = v;
            dd += d * d;
            zz += v * v;
          }
          ok[g * L + l] = dd <= kGatherStep * kGatherStep * zz;
        }
      }
    }
    std::size_t taken = 0;
    for (std::size_t g = 0; g < G; ++g) {
      for (std::size_t l = 0; l < lanes[g]; ++l)
        done(g * L + l, pixels[b0 + g * L + l], sys[g * L + l].q, z[g] + l, ok[g * L + l]);
      taken += lanes[g];
    }
    b0 += taken;
  }
}

/// Pixel-major: the system of a deletion or dual pixel k, in lane slot l
/// (its right-hand side at z[a * L], see factor_in_lanes).
CUBESOLVE_KERNEL LaneSystem pixel_lane(const Job& job, Workspace& ws, std::size_t l, std::size_t k, double* z) {
  const std::size_t N = job.N;
  const Kind kind = ws.kind[k];
  const bool use_valid = kind == Kind::DualGather;
  int* I = ws.rows.data() + l * N;
  const auto q = static_cast<std::size_t>(bit_list(ws.bits.data() + k * ((N + 63) / 64), N, use_valid, I));
  const LargeDoubles& K = kind == Kind::Deletion    ? job.f.hat
                          : kind == Kind::DualSchur ? job.f.gram_rows_inv
                                                    : job.f.gram_rows;
  // Right-hand side first: it streams the rows K[I, :] into cache for the system after it.
  const double* yk = ws.y.data() + k * N;
  if (use_valid) {
    for (std::size_t a = 0; a < q; ++a) z[a * L] = yk[I[a]];
  } else {
    row_dots(K.data(), N, I, q, yk, z, L);
  }
  double shift = kind == Kind::Deletion     ? job.planner.shift_deletion
                 : kind == Kind::DualGather ? job.planner.shift_gather
                                            : 0.0;  // Schur: A of full row rank, cond(A) vouches
  LaneSystem sys{K.data(), I, q, kind == Kind::Deletion, shift};
  sys.refine = kind == Kind::DualGather;
  if (kind == Kind::DualGather && job.options.ridge > 0) {
    sys.ridge = job.options.ridge;
    sys.w = job.weights ? ws.w.data() + k * N : nullptr;
    sys.shift = 0;  // the ridge makes it positive definite whatever A_V's rank
    if (job.planner.gram_shift > 0) {
      // The stacked system [W^1/2 A_V; sqrt(ridge) I] keeps its singular
      // values above sqrt(ridge), and its largest squared is at most the
      // trace of W^1/2 C_VV W^1/2 + ridge I: a ridge above gram_shift times
      // that trace shows them all above 2 rcond of the largest (see Planner).
      double trace = static_cast<double>(q) * sys.ridge;
      for (std::size_t a = 0; a < q; ++a) trace += (sys.w ? sys.w[I[a]] : 1.0) * K[static_cast<std::size_t>(I[a]) * (N + 1)];
      if (!(sys.ridge > job.planner.gram_shift * trace)) sys.shift = HUGE_VAL;  // not shown: the pixel leaves
    }
  } else if (kind == Kind::DualGather && job.planner.custom_rcond && job.weights) {
    sys.shift *= weight_ratio(ws, k, N);
  }
  return sys;
}

/// A gathered lane's residual y_V - (C_VV + ridge W^-1) z, as y_V - A_V x
/// - ridge z / w with x = A_V^T z: from A itself, so that the step also
/// takes out what forming C lost (see factor_in_lanes).
CUBESOLVE_KERNEL void pixel_residual(const Job& job, Workspace& ws, std::size_t k, const LaneSystem& sys, const double* z,
                                     double* r) {
  const std::size_t N = job.N, M = job.M;
  const double* A = job.design.values().data();
  ws.step.assign(M, 0.0);
  row_axpys(A, M, sys.I, sys.q, z, L, ws.step.data());
  row_dots(A, M, sys.I, sys.q, ws.step.data(), r, L);
  const double* yk = ws.y.data() + k * N;
  for (std::size_t a = 0; a < sys.q; ++a) r[a * L] = yk[sys.I[a]] - r[a * L] - sys.extra(a) * z[a * L];
}

/// Pixel-major: takes pixel k's solution from lane slot l: x = A_V^T z for a
/// gathered system; else the filled rows of y (x = P·y^ follows).
CUBESOLVE_KERNEL void pixel_done(const Job& job, Workspace& ws, std::size_t q, std::size_t l, std::size_t k,
                                 const double* z, bool ok) {
  const std::size_t N = job.N, M = job.M;
  if (!ok) return leave_small_path(job, ws, k);
  const int* I = ws.rows.data() + l * N;
  if (ws.kind[k] == Kind::DualGather) {
    double* x = ws.x.data() + k * M;
    std::fill(x, x + M, 0.0);
    const double* A = job.design.values().data();
    row_axpys(A, M, I, q, z, L, x);
    return;
  }
  // Fill the missing rows; a fill out of all proportion to the data is not trusted.
  double* yk = ws.y.data() + k * N;
  const double ymax = max_abs(yk, N);
  double zmax = 0;
  const double sign = ws.kind[k] == Kind::Deletion ? 1.0 : -1.0;
  for (std::size_t a = 0; a < q; ++a) {
    yk[I[a]] = sign * z[a * L];
    zmax = std::fabs(z[a * L]) > zmax ? std::fabs(z[a * L]) : zmax;
  }
  if (!(zmax <= kMaxGrowth * std::max(ymax, 1e-300))) {
    for (std::size_t a = 0; a < q; ++a) yk[I[a]] = 0.0;
    leave_small_path(job, ws, k);
  }
}

}  // namespace

double weight_ratio(const Workspace& ws, std::size_t k, std::size_t N) {
  double wmin = HUGE_VAL, wmax = 0;
  for (std::size_t i = 0; i < N; ++i)
    if (ws.valid[k * N + i]) wmin = std::min(wmin, ws.w[k * N + i]), wmax = std::max(wmax, ws.w[k * N + i]);
  return wmax / wmin;
}

CUBESOLVE_SIMD_CLONES void solve_systems(const Job& job, Workspace& ws) {
  ws.rows.resize(job.N * kMaxGroups * L);
  factor_in_lanes(
      job.N, ws,
      [&](std::size_t l, std::size_t k, double* z)
          __attribute__((always_inline)) { return pixel_lane(job, ws, l, k, z); },
      [&](std::size_t l, std::size_t k, std::size_t q, const double* z, bool ok)
          __attribute__((always_inline)) { pixel_done(job, ws, q, l, k, z, ok); },
      [&](std::size_t, std::size_t k, const LaneSystem& sys, const double* z, double* r) {
        pixel_residual(job, ws, k, sys, z, r);
      });
}

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

/// Whether a row has no weight in any lane.
CUBESOLVE_KERNEL bool no_rows(Vec4 wt) { return wt[0] == 0 && wt[1] == 0 && wt[2] == 0 && wt[3] == 0; }

/// The band systems A_V^T W A_V (S, lanes as in batched_cholesky_band) and
/// right-hand sides A_V^T W y (X) of kLanes pixels, from each row's weights
/// Wt[i * kLanes + l] and values Yv[i * kLanes + l], summed over A's nonzeros.
CUBESOLVE_KERNEL void band_normal_equations(const DesignFactors& f, const double* Wt, const double* Yv, double* S, double* X) {
  const std::size_t N = f.n, M = f.m, w = f.band + 1;
  const std::size_t* start = f.row_start.data();
  const std::size_t* col = f.nz_col.data();
  const double* val = f.nz_val.data();
  std::fill(S, S + M * w * L, 0.0);
  std::fill(X, X + M * L, 0.0);
  for (std::size_t i = 0; i < N; ++i) {
    const Vec4 wt = load4(Wt + i * L);
    if (no_rows(wt)) continue;
    const Vec4 wy = wt * load4(Yv + i * L);
    for (std::size_t e = start[i]; e < start[i + 1]; ++e) {
      const std::size_t p = col[e];
      store4(X + p * L, load4(X + p * L) + wy * val[e]);
      const Vec4 wa = wt * val[e];
      for (std::size_t g = start[i]; g <= e; ++g) {  // col[g] <= p
        double* sp = S + (p * w + (p - col[g])) * L;
        store4(sp, load4(sp) + wa * val[g]);
      }
    }
  }
}

/// With a custom rcond, whether a Gram pixel's system S (M x M, ridge on
/// its diagonal) shows that [W^1/2 A_V; sqrt(ridge) I] keeps every singular
/// value above 2 rcond of its largest: S less Planner::gram_shift times its
/// trace stays positive definite. A ridge above that shift shows it at
/// once; else `factor` must factor a copy of S less the shift.
template <class Factor>
bool gram_shows_rank(const Job& job, Workspace& ws, const double* S, std::size_t M, Factor factor) {
  if (job.planner.gram_shift == 0) return true;
  double trace = 0;
  for (std::size_t a = 0; a < M; ++a) trace += S[a * (M + 1)];
  const double shift = job.planner.gram_shift * trace;
  if (job.options.ridge > shift) return true;
  ws.shifted.assign(S, S + M * M);
  for (std::size_t a = 0; a < M; ++a) ws.shifted[a * (M + 1)] -= shift;
  return factor(ws.shifted.data());
}

/// A Gram pixel whose matrix is too close to singular: to the exact path.
void gram_to_exact(Workspace& ws, std::size_t k, std::size_t M) {
  std::fill(ws.x.data() + k * M, ws.x.data() + (k + 1) * M, kNaN);
  ws.exact_list.push_back(k);
  ws.kind[k] = Kind::Exact;
}

/// One step of iterative refinement of a dense Gram pixel k's solution x of
/// S x = A_V^T W y (S = A_V^T W A_V + ridge I, its factor applied by
/// solve_with): d = S^-1 (A_V^T W (y - A_V x) - ridge x), as the band form
/// takes it (see solve_gram_banded). The normal equations lose about
/// cond(A_V)^2 eps; the step estimates that error and, taken, leaves one of
/// the order of cond(A_V) eps, as a QR would. Its residual pass sums the
/// pixel's rss. Returns false, x unchanged, where the step exceeds
/// kGramStep |x|: the factor is too far off for one step to mend.
template <class Solve>
bool refine_gram(const Job& job, Workspace& ws, std::size_t k, double* x, Solve solve_with) {
  const std::size_t N = job.N, M = job.M, words = (N + 63) / 64;
  const double* A = job.design.values().data();
  const double ridge = job.options.ridge;
  ws.rows.resize(std::max(ws.rows.size(), N));
  ws.step.resize(N + 2 * M);
  double *r = ws.step.data(), *g = r + N, *d = g + M;
  const int* I = ws.rows.data();
  const auto q = static_cast<std::size_t>(bit_list(ws.bits.data() + k * words, N, true, ws.rows.data()));
  row_dots(A, M, I, q, x, r, 1);
  double rs = 0;
  for (std::size_t a = 0; a < q; ++a) {
    const std::size_t i = static_cast<std::size_t>(I[a]);
    const double w = job.weights ? ws.w[k * N + i] : 1.0, e = ws.y[k * N + i] - r[a];
    rs += w * e * e;
    r[a] = w * e;
  }
  for (std::size_t j = 0; j < M; ++j) g[j] = -ridge * x[j];
  row_axpys(A, M, I, q, r, 1, g);
  std::copy(g, g + M, d);
  solve_with(d);
  double dd = 0, xx = 0, dg = 0;
  for (std::size_t j = 0; j < M; ++j) {
    dd += d[j] * d[j];
    xx += x[j] * x[j];
    dg += d[j] * (g[j] + ridge * (2 * x[j] + d[j]));
  }
  if (!(dd <= kGramStep * kGramStep * xx)) return false;
  for (std::size_t j = 0; j < M; ++j) x[j] += d[j];
  ws.rss[k] = std::max(rs - dg, 0.0);
  return true;
}

/// The components of the dates that lane l's rows (weight not 0) link, for
/// a network design (see DesignFactors::link_from): comp[d] = -1 for the
/// dates linked to date 0, else the first date of d's component. Returns the
/// number of those free components: the dimension of A_V's null space.
/// `comp` has m + 1 entries.
std::size_t free_components(const DesignFactors& f, const double* Wt, std::size_t l, int* comp) {
  const std::size_t M = f.m;
  for (std::size_t d = 0; d <= M; ++d) comp[d] = static_cast<int>(d);
  auto find = [comp](int a) {
    while (comp[a] != a) a = comp[a] = comp[comp[a]];
    return a;
  };
  for (std::size_t i = 0; i < f.n; ++i) {
    if (Wt[i * L + l] == 0 || f.link_to[i] < 0) continue;
    const int a = find(f.link_from[i]), b = find(f.link_to[i]);
    comp[std::max(a, b)] = std::min(a, b);  // a root is its component's first date
  }
  std::size_t free = 0;
  for (std::size_t d = 0; d <= M; ++d) {
    const int r = find(static_cast<int>(d));
    free += r == static_cast<int>(d) && d > 0;
    comp[d] = r;
  }
  for (std::size_t d = 0; d <= M; ++d) comp[d] = comp[d] == 0 ? -1 : comp[d];
  return free;
}

/// Ties each free component (see free_components) down at the unknown
/// before its first date d, d - 1: in both formulations the component's
/// null vector is not 0 there, and no earlier component's is, so the tied
/// system is positive definite and its solution is a least-squares
/// solution. Row and column d - 1 of lane l's band system S become the
/// identity's, scaled to the lane's largest diagonal entry, and x[d - 1] = 0.
void tie_down(const int* comp, std::size_t M, std::size_t b, std::size_t l, double* S, double* X) {
  const std::size_t w = b + 1;
  double dmax = 0;
  for (std::size_t p = 0; p < M; ++p) dmax = std::max(dmax, S[p * w * L + l]);
  for (std::size_t p = 0; p < M; ++p) {
    if (comp[p + 1] != static_cast<int>(p + 1)) continue;
    for (std::size_t d = 1; d <= b; ++d) {
      if (d <= p) S[(p * w + d) * L + l] = 0.0;           // (p, p - d)
      if (p + d < M) S[((p + d) * w + d) * L + l] = 0.0;  // (p + d, p)
    }
    S[p * w * L + l] = dmax > 0 ? dmax : 1.0;
    X[p * L + l] = 0.0;
  }
}

/// x less its projection on the null vectors of the k free components (see
/// DesignFactors::null_to): the minimum-norm solution. Their k x k Gram
/// matrix is diagonal for the phase formulation (divided), else factored.
/// Returns false where the vectors are nearly dependent or the projection
/// does not settle in two passes: the pixel then goes to gelsd.
bool minimum_norm(const DesignFactors& f, const int* comp, std::size_t k, double* x) {
  const std::size_t M = f.m;
  std::vector<double> G(k * k, 0.0), r(k), d(k);
  std::vector<std::size_t> index(M + 1);  // a free component's number, by its first date
  for (std::size_t date = 1, next = 0; date <= M; ++date)
    if (comp[date] == static_cast<int>(date)) index[date] = next++;
  // Unknown j's terms in the null vectors: of date j + 1's component and of
  // date j's (one component twice where both dates are in it: the terms add).
  // Added before they enter G: squared apart, a velocity's two terms
  // (1/t_j each) would bury a small entry of G in their rounding.
  auto entries = [&](std::size_t j, std::size_t* c, double* v) {
    std::size_t n = 0;
    if (comp[j + 1] >= 0) c[n] = index[static_cast<std::size_t>(comp[j + 1])], v[n++] = f.null_to[j];
    if (comp[j] >= 0) {
      const std::size_t cj = index[static_cast<std::size_t>(comp[j])];
      if (n == 1 && c[0] == cj) v[0] -= f.null_from[j];
      else c[n] = cj, v[n++] = -f.null_from[j];
    }
    return n;
  };
  std::size_t c[2];
  double v[2];
  for (std::size_t j = 0; j < M; ++j) {
    const std::size_t n = entries(j, c, v);
    for (std::size_t a = 0; a < n; ++a)
      for (std::size_t e = 0; e < n; ++e) G[c[a] * k + c[e]] += v[a] * v[e];
  }
  // Scaled to a unit diagonal, so that the pivot test sees how nearly the
  // null vectors are dependent, not how their lengths differ (intervals of
  // a velocity design decades apart). The phase formulation's do not overlap.
  bool diagonal = true;
  for (std::size_t a = 0; a < k * k && diagonal; ++a) diagonal = a % (k + 1) == 0 || G[a] == 0;
  for (std::size_t a = 0; a < k; ++a) {
    if (!(G[a * (k + 1)] > 0)) return false;
    d[a] = 1 / std::sqrt(G[a * (k + 1)]);
  }
  for (std::size_t a = 0; a < k; ++a)
    for (std::size_t e = 0; e < k; ++e) G[a * k + e] *= d[a] * d[e];
  if (!diagonal && !cholesky(G.data(), k, 1e-6)) return false;
  // x less its part in the null vectors' span, twice: the second pass takes
  // out what the first left by its rounding (eps·cond(G) of the part, which
  // may be far larger than x itself where the ties fell on unknowns of
  // small coefficients), and must be small, or gelsd decides.
  double last = 0;
  for (int pass = 0; pass < 2; ++pass) {
    std::fill(r.begin(), r.end(), 0.0);
    for (std::size_t j = 0; j < M; ++j) {
      const std::size_t n = entries(j, c, v);
      for (std::size_t a = 0; a < n; ++a) r[c[a]] += v[a] * x[j];
    }
    for (std::size_t a = 0; a < k; ++a) r[a] *= d[a];
    if (!diagonal) cholesky_solve(G.data(), k, r.data());
    for (std::size_t a = 0; a < k; ++a) r[a] *= d[a];
    last = 0;
    for (std::size_t j = 0; j < M; ++j) {
      const std::size_t n = entries(j, c, v);
      double dx = 0;
      for (std::size_t a = 0; a < n; ++a) dx += v[a] * r[c[a]];
      x[j] -= dx;
      last += dx * dx;
    }
  }
  return last <= 1e-20 * dot(x, x, M);
}

/// The Gram path for designs of sparse rows and a narrow band, kLanes pixels
/// at a time (their systems share A's band: one vector per entry across
/// them): each pixel's A_V^T W A_V and A_V^T W y summed row by row over the
/// nonzeros, factored in band form, and the solution refined once against
/// its residual. For a network design, a pixel whose matrix is singular
/// because its rows split the network (free components, see
/// free_components) is solved again with each free component tied down at
/// one unknown, and the solution's projection on the components' null
/// vectors taken out: the minimum-norm solution, as gelsd's.
CUBESOLVE_SIMD_CLONES void solve_gram_banded(const Job& job, Workspace& ws) {
  const std::size_t N = job.N, M = job.M, b = job.f.band, w = b + 1;
  const std::size_t* start = job.f.row_start.data();
  const std::size_t* col = job.f.nz_col.data();
  const double* val = job.f.nz_val.data();
  const double ridge = job.options.ridge;
  const bool retie = job.f.network() && ridge == 0 && !job.planner.custom_rcond;
  ws.s.resize(M * w * L);
  ws.rhs.resize(3 * M * L);  // x, the refinement's step and its right-hand side
  ws.wm.resize(2 * N * L);   // each row's weights, then its values
  std::vector<std::size_t> split;  // pixels to solve again, tied down
  std::vector<int> comp;  // each lane's free components (see free_components)
  auto batch = [&](const std::size_t* pixels, std::size_t lanes, bool tied) __attribute__((always_inline)) {
    double *S = ws.s.data(), *X = ws.rhs.data(), *D = X + M * L, *G = D + M * L, *Wt = ws.wm.data(), *Yv = Wt + N * L;
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t l = 0; l < L; ++l) {  // a padding lane has no rows (its pivots fail, unused)
        const std::size_t k = pixels[l < lanes ? l : 0];
        Wt[i * L + l] = l >= lanes ? 0.0 : job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
        Yv[i * L + l] = ws.y[k * N + i];
      }
    band_normal_equations(job.f, Wt, Yv, S, X);
    for (std::size_t a = 0; a < M; ++a) store4(S + a * w * L, load4(S + a * w * L) + ridge);
    std::size_t free[L] = {};
    if (tied) {
      comp.resize((M + 1) * L);
      for (std::size_t l = 0; l < lanes; ++l) {
        free[l] = free_components(job.f, Wt, l, comp.data() + l * (M + 1));
        tie_down(comp.data() + l * (M + 1), M, b, l, S, X);
      }
    }
    bool ok[L] = {true, true, true, true};
    if (job.planner.gram_shift > 0) {  // each lane's S less gram_shift times its trace (see gram_shows_rank)
      Vec4 shift = {};
      for (std::size_t a = 0; a < M; ++a) shift += load4(S + a * w * L);
      shift *= job.planner.gram_shift;
      if (!(ridge > shift[0] && ridge > shift[1] && ridge > shift[2] && ridge > shift[3])) {
        ws.shifted.assign(S, S + M * w * L);
        for (std::size_t a = 0; a < M; ++a) store4(ws.shifted.data() + a * w * L, load4(S + a * w * L) - shift);
        batched_cholesky_band(ws.shifted.data(), M, b, 0.0, ok);
      }
    }
    bool held[L];
    batched_cholesky_band(S, M, b, kGramTau, held);
    for (std::size_t l = 0; l < L; ++l) ok[l] = ok[l] && held[l];
    batched_cholesky_band_solve(S, M, b, X);
    // D = S^-1 (A_V^T W (y - A_V x) - ridge x): the step of one refinement,
    // about the error of x (cond(A_V)^2 eps). Taken, it leaves an error of
    // the order of cond(A_V) eps, as a QR would; a large one sends the
    // pixel to the exact path.
    // The same pass sums the rss of x, rs = |r|^2_W; that of x + D is then
    // rs - D·(G + 2 ridge x + ridge D), G the step's right-hand side
    // (S D = G, S = A_V^T W A_V + ridge I), without a pass of its own.
    for (std::size_t a = 0; a < M; ++a) store4(D + a * L, load4(X + a * L) * -ridge);
    Vec4 rs = {};
    for (std::size_t i = 0; i < N; ++i) {
      const Vec4 wt = load4(Wt + i * L);
      if (no_rows(wt)) continue;
      Vec4 r = load4(Yv + i * L);
      for (std::size_t e = start[i]; e < start[i + 1]; ++e) r -= load4(X + col[e] * L) * val[e];
      rs += wt * r * r;
      r *= wt;
      for (std::size_t e = start[i]; e < start[i + 1]; ++e) store4(D + col[e] * L, load4(D + col[e] * L) + r * val[e]);
    }
    if (tied)  // the tied unknowns stay 0
      for (std::size_t l = 0; l < lanes; ++l)
        for (std::size_t p = 0; p < M; ++p)
          if (comp[l * (M + 1) + p + 1] == static_cast<int>(p + 1)) D[p * L + l] = 0.0;
    std::copy(D, D + M * L, G);
    batched_cholesky_band_solve(S, M, b, D);
    Vec4 dd = {}, xx = {};
    for (std::size_t a = 0; a < M; ++a) {
      const Vec4 d = load4(D + a * L), x = load4(X + a * L);
      dd += d * d;
      xx += x * x;
      rs -= d * (load4(G + a * L) + ridge * (x + x + d));
    }
    for (std::size_t l = 0; l < lanes; ++l) {
      const std::size_t k = pixels[l];
      if (!ok[l] || !(dd[l] <= kGramStep * kGramStep * xx[l])) {
        if (retie && !tied) split.push_back(k);
        else gram_to_exact(ws, k, M);
        continue;
      }
      double* x = ws.x.data() + k * M;
      for (std::size_t a = 0; a < M; ++a) x[a] = X[a * L + l] + D[a * L + l];
      ws.rss[k] = std::max(rs[l], 0.0);  // the null vectors minimum_norm takes out leave A_V x as it is
      ws.deficit[k] = static_cast<int>(free[l]);
      if (free[l] && !minimum_norm(job.f, comp.data() + l * (M + 1), free[l], x)) gram_to_exact(ws, k, M);
    }
  };
  // Fewer rows than unknowns: a network's pixel is split for certain.
  std::vector<std::size_t> whole;
  for (std::size_t k : ws.gram) (retie && static_cast<std::size_t>(ws.nv[k]) < M ? split : whole).push_back(k);
  for (std::size_t b0 = 0; b0 < whole.size(); b0 += L) batch(whole.data() + b0, std::min(L, whole.size() - b0), false);
  for (std::size_t b0 = 0; b0 < split.size(); b0 += L) batch(split.data() + b0, std::min(L, split.size() - b0), true);
}

/// The Gram path for designs too wide for the packed outer products: each
/// pixel's B = W^1/2 A_V, then B^T B by the BLAS's SYRK and a blocked
/// Cholesky, with the same pivot test as the packed path.
void solve_gram_dense(const Job& job, Workspace& ws) {
  const std::size_t N = job.N, M = job.M;
  const double* A = job.design.values().data();
  const int m = static_cast<int>(M);
  ws.wm.resize(M * N);
  ws.wy.resize(N);
  ws.s.resize(M * M);
  for (std::size_t k : ws.gram) {
    std::size_t q = 0;
    for (std::size_t i = 0; i < N; ++i) {  // column q of the column-major B^T (M, q)
      const double wt = job.weights ? ws.w[k * N + i] : static_cast<double>(ws.valid[k * N + i]);
      if (wt == 0) continue;
      const double sw = std::sqrt(wt);
      for (std::size_t j = 0; j < M; ++j) ws.wm[q * M + j] = sw * A[i * M + j];
      ws.wy[q++] = sw * ws.y[k * N + i];
    }
    double* S = ws.s.data();
    double* x = ws.x.data() + k * M;
    lapack::syrk_upper(m, static_cast<int>(q), 1.0, ws.wm.data(), m, 0.0, S, m);
    lapack::gemv(m, static_cast<int>(q), ws.wm.data(), m, ws.wy.data(), x);
    double dmax = 0;
    for (std::size_t a = 0; a < M; ++a) {
      S[a * M + a] += job.options.ridge;
      dmax = std::max(dmax, S[a * M + a]);
    }
    // The pivots of U^T U are the squares of U's diagonal.
    bool ok = q > 0 && gram_shows_rank(job, ws, S, M, [&](double* c) { return lapack::cholesky_upper(m, c, m) == 0; }) &&
              lapack::cholesky_upper(m, S, m) == 0;
    for (std::size_t a = 0; ok && a < M; ++a) ok = S[a * M + a] * S[a * M + a] > kGramTau * dmax;
    if (ok) {
      lapack::cholesky_upper_solve(m, S, m, x);
      ok = refine_gram(job, ws, k, x, [&](double* b) { lapack::cholesky_upper_solve(m, S, m, b); });
    }
    if (!ok) gram_to_exact(ws, k, M);
  }
}

CUBESOLVE_SIMD_CLONES bool band_rank_holds(const DesignFactors& f, const std::uint64_t* mask) {
  const std::size_t N = f.n, M = f.m, w = f.band + 1;
  std::vector<double> wt(N * L, 0.0), yv(N * L, 0.0), s(M * w * L), x(M * L);
  for (std::size_t i = 0; i < N; ++i) wt[i * L] = static_cast<double>((mask[i / 64] >> (i % 64)) & 1);  // lane 0
  band_normal_equations(f, wt.data(), yv.data(), s.data(), x.data());
  if (f.network()) {  // as the Gram path solves a split network: its free components tied down
    std::vector<int> comp(M + 1);
    free_components(f, wt.data(), 0, comp.data());
    tie_down(comp.data(), M, f.band, 0, s.data(), x.data());
  }
  bool ok[L];
  batched_cholesky_band(s.data(), M, f.band, kGramTau, ok);
  return ok[0];
}

CUBESOLVE_SIMD_CLONES void solve_gram(const Job& job, Workspace& ws) {
  if (ws.gram.empty()) return;
  if (job.f.banded_gram) return solve_gram_banded(job, ws);
  if (job.f.outer.empty()) return solve_gram_dense(job, ws);
  const std::size_t N = job.N, M = job.M, G = ws.gram.size(), T = job.f.packed();
  const double* A = job.design.values().data();
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
  // Every pixel's packed A_V^T W A_V and A_V^T W y: two GEMMs.
  lapack::gemm('N', 'N', static_cast<int>(T), static_cast<int>(G), static_cast<int>(N), 1.0, job.f.outer.data(),
               static_cast<int>(T), ws.wm.data(), static_cast<int>(N), 0.0, ws.g.data(), static_cast<int>(T));
  lapack::gemm('N', 'N', static_cast<int>(M), static_cast<int>(G), static_cast<int>(N), 1.0, A, static_cast<int>(M),
               ws.wy.data(), static_cast<int>(N), 0.0, ws.model.data(), static_cast<int>(M));
  for (std::size_t c = 0; c < G; ++c) {
    const std::size_t k = ws.gram[c];
    const double* gp = ws.g.data() + c * T;
    double* S = ws.s.data();
    for (std::size_t a = 0; a < M; ++a)
      for (std::size_t b = a; b < M; ++b) S[b * M + a] = *gp++;
    for (std::size_t a = 0; a < M; ++a) S[a * M + a] += job.options.ridge;
    double* x = ws.x.data() + k * M;
    std::copy(ws.model.data() + c * M, ws.model.data() + (c + 1) * M, x);
    bool ok = gram_shows_rank(job, ws, S, M, [&](double* t) { return cholesky(t, M, 0.0); }) && cholesky(S, M, kGramTau);
    if (ok) {
      cholesky_solve(S, M, x);
      ok = refine_gram(job, ws, k, x, [&](double* b) { cholesky_solve(S, M, b); });
    }
    if (!ok) gram_to_exact(ws, k, M);
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
