#pragma once
// The small systems of the fast paths, batched in lanes: shared by the
// pixel-major (systems.cpp) and observation-major (systems_rows.cpp) forms.
// Everything here is inlined into the CUBESOLVE_SIMD_CLONES function that
// uses it (see kernels.hpp).

#include "engine/chunk.hpp"
#include "engine/kernels.hpp"
#include "engine/paths.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace cubesolve::detail::lanes {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr std::size_t L = kLanes;
inline constexpr std::size_t kMaxGroups = 4;  // of L lanes, in one float32 factorization

/// Row i of A times v, over the row's nonzeros (a design of sparse rows).
CUBESOLVE_KERNEL double sparse_row_dot(const DesignFactors& f, std::size_t i, const double* v) {
  double s = 0;
  for (std::size_t e = f.row_start[i]; e < f.row_start[i + 1]; ++e) s += f.nz_val[e] * v[f.nz_col[e]];
  return s;
}

/// A pixel whose small system failed: a split network's to the band Gram
/// path (see Planner::network_gram), any other's to gelsd.
inline void leave_small_path(const Job& job, Workspace& ws, std::size_t k) {
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


}  // namespace cubesolve::detail::lanes
