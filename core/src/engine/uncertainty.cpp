// Standard errors of every pixel's coefficients on its own valid rows: the
// diagonal of s² (A_V^T W_V A_V)^+, s² = rss / (|V| - rank).
//
// Two ways to the diagonal of C_V = (A_V^T W_V A_V)^+:
// - Deletion (unweighted, A of full column rank and well conditioned, the
//   pixel of full rank, few rows missing): with D the missing rows and
//   G^-1 = (A^T A)^-1 = P P^T (P = A^+), Woodbury gives
//       C_V = G^-1 + P_D S^-1 P_D^T,  S = I - H_DD  (H = A A^+),
//   so diag(C_V) = diag(G^-1) + the column norms² of R^-T P_D^T, R^T R = S:
//   a d×d Cholesky and a triangular solve for d missing rows. Four pixels
//   at a time, one in each vector lane, pixels of like d together.
// - SVD of the pixel's weighted rows, W_V^1/2 A_V = U Σ V^T: diag(C_V)_j =
//   Σ_k<rank V_jk² / σ_k² (with a ridge λ: Σ_k V_jk² σ_k² / (σ_k² + λ)²).
// Unweighted pixels that share a mask share the diagonal (kept per thread).
// The full covariance (packed) comes from the SVD: C_V = Σ_k<rank v_k v_k^T / σ_k².
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>

#include "engine/band.hpp"
#include "engine/exact.hpp"
#include "engine/factors.hpp"
#include "engine/kernels.hpp"
#include "engine/lanes.hpp"
#include "engine/lapack.hpp"
#include "engine/parallel.hpp"
#include "engine/planner.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>

namespace cubesolve::detail {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
/// Above this bound on cond(A_V)² (max_j C_jj·G_jj), the deletion form's
/// rounding could show: the pixel takes the SVD.
constexpr double kMaxDeletionCondition2 = 1e6;
constexpr std::size_t kMaxCached = 4096;  // masks kept per thread

struct Shared {
  const Array& cube;
  const Array* weights;
  const Design& design;
  const DesignFactors& f;
  double ridge;
  const std::vector<double>& intervals;  // x's series: cumulative sums of x_j·t_j (empty: x itself)
  bool deletion = false;                 // the deletion form may serve
  bool banded = false;                   // the band form may serve
  std::vector<double> ginv_diag, ginv_plain;  // diag(T (A^T A)^-1 T^T) and diag((A^T A)^-1) where it does
  std::vector<double> column_norm2;           // (A^T A)_jj
  std::vector<double> pinv_rows;              // P^T's rows, each padded to a multiple of four with 0
  bool packed = false;                        // the whole covariance, its upper triangle row by row
};

/// v (M entries `stride` apart) to the series T v: v_j <- Σ_k<=j t_k v_k.
void cumulate(const std::vector<double>& t, double* v, std::size_t M, std::size_t stride) {
  if (t.empty()) return;
  double sum = 0;
  for (std::size_t j = 0; j < M; ++j) {
    sum += t[j] * v[j * stride];
    v[j * stride] = sum;
  }
}

/// The diagonal (without s²) and the degrees of freedom it used.
struct Diagonal {
  std::vector<double> d;
  double dof = 0;
  std::size_t rank = 0;  // of the pixel's weighted rows (with a ridge: the SVD's count)
  bool ok = false;
};

/// The deletion form's sums for one pixel: with U^T U = S = I - H_DD (H's
/// entries, or A_D P_D^T's where H is not kept) and Z = U^-T P_D^T, worked in
/// `w` (d rows [U | Z] `ld` apart, ld at least d + M and a multiple of four),
/// adds Z's column norms² to `plain`. False where
/// S is not positive definite.
CUBESOLVE_SIMD_CLONES bool deletion_sums(const DesignFactors& f, const Design& design, const std::size_t* del, std::size_t d,
                                         double* w, std::size_t ld, double* plain) {
  const std::size_t N = f.n, M = f.m;
  const double *P = f.pinv.data(), *A = design.values().data(), *H = f.hat.empty() ? nullptr : f.hat.data();
  for (std::size_t a = 0; a < d; ++a) {
    double* row = w + a * ld;
    const double* h = H ? H + del[a] * N : nullptr;
    for (std::size_t c = a; c < d; ++c) row[c] = -(h ? h[del[c]] : dot(A + del[a] * M, P + del[c] * M, M));
    row[a] += 1.0;
    std::copy_n(P + del[a] * M, M, row + d);
    std::fill(row + d + M, row + ld, 0.0);
  }
  if (!cholesky_rows(w, d, ld, ld)) return false;
  for (std::size_t a = 0; a < d; ++a) {
    const double* z = w + a * ld + d;
    for (std::size_t j = 0; j < M; ++j) plain[j] += z[j] * z[j];
  }
  return true;
}

/// The four lanes' band Gram matrices A_V^T W A_V from their row weights
/// (see band_normal_equations), in this target's vectors.
CUBESOLVE_SIMD_CLONES void band_gram(const DesignFactors& f, const double* Wt, double* g) {
  band_normal_equations(f, Wt, nullptr, g, nullptr);
}

/// The diagonals of four band matrices' inverses at once, one in each lane
/// (g as band_gram fills it): g's band Cholesky L L^T,
/// then the band of the inverse Z by Takahashi's recurrence, from the last
/// row up: Z_ji = (δ_ij / L_ii - Σ_k L_ki Z_kj) / L_ii, k in (i, i + band]
/// (M band² in all). diag[j·4 + l] becomes Z_jj of lane l; ok[l] is false
/// where its pivot failed or C_jj·G_jj exceeds kMaxDeletionCondition2.
CUBESOLVE_SIMD_CLONES void band_inverse_diagonals(double* g, std::size_t M, std::size_t w, double* z, double* diag, bool* ok) {
  const std::size_t ld = w + 1;
  auto at = [ld](double* b, std::size_t i, std::size_t j) { return b + (i * ld + i - j) * kLanes; };
  for (std::size_t j = 0; j < M; ++j) store4(diag + j * kLanes, load4(at(g, j, j)));  // G_jj
  batched_cholesky_band(g, M, w, 0.0, ok);  // the diagonal as reciprocals
  Vec4 worst = {};
  for (std::size_t i = M; i-- > 0;) {
    const std::size_t hi = std::min(i + w, M - 1);
    const Vec4 inv = load4(at(g, i, i));
    for (std::size_t j = hi + 1; j-- > i;) {
      Vec4 sum = {};
      for (std::size_t k = i + 1; k <= hi; ++k) sum += load4(at(g, k, i)) * load4(k >= j ? at(z, k, j) : at(z, j, k));
      store4(at(z, j, i), ((i == j ? inv : Vec4{}) - sum) * inv);
    }
    const Vec4 zii = load4(at(z, i, i)), c = zii * load4(diag + i * kLanes);
    worst = c > worst ? c : worst;
    store4(diag + i * kLanes, zii);
  }
  for (std::size_t l = 0; l < kLanes; ++l) ok[l] = ok[l] && worst[l] <= kMaxDeletionCondition2;
}

/// Z = L^-1 B for lane l's factor L L^T in s (as batched_cholesky leaves
/// it: entry (a, b) at s[(tri(a) + b) 4 + l]), columns [j0, j0 + 4W) of Z
/// (q rows `ld` apart) and of B (row a at rows[a]); then sums[j] = Σ_a
/// Z_aj² for those columns.
template <std::size_t W>
CUBESOLVE_KERNEL void forward_columns(const double* s, std::size_t l, const double* const* rows, std::size_t q,
                                      std::size_t ld, std::size_t j0, double* z, double* sums) {
  for (std::size_t a = 0; a < q; ++a) {
    const double* ra = s + tri(a) * kLanes + l;
    double* za = z + a * ld + j0;
    Vec4 acc[W];
    for (std::size_t t = 0; t < W; ++t) acc[t] = load4(rows[a] + j0 + 4 * t);
    for (std::size_t b = 0; b < a; ++b) {
      const double u = ra[b * kLanes];  // (a scalar: broadcast from memory)
      const double* zb = z + b * ld + j0;
      for (std::size_t t = 0; t < W; ++t) acc[t] -= u * load4(zb + 4 * t);
    }
    const double inv = ra[a * kLanes];
    for (std::size_t t = 0; t < W; ++t) store4(za + 4 * t, inv * acc[t]);
  }
  Vec4 sq[W] = {};
  for (std::size_t a = 0; a < q; ++a)
    for (std::size_t t = 0; t < W; ++t) {
      const Vec4 v = load4(z + a * ld + j0 + 4 * t);
      sq[t] += v * v;
    }
  for (std::size_t t = 0; t < W; ++t) store4(sums + j0 + 4 * t, sq[t]);
}

/// forward_columns for columns [j0, ld), 13 vectors at most.
CUBESOLVE_KERNEL void forward_pass(const double* s, std::size_t l, const double* const* rows, std::size_t q,
                                   std::size_t ld, std::size_t j0, double* z, double* sums) {
  switch ((ld - j0) / 4) {
#define CUBESOLVE_PASS(W) \
  case W: return forward_columns<W>(s, l, rows, q, ld, j0, z, sums);
    CUBESOLVE_PASS(1) CUBESOLVE_PASS(2) CUBESOLVE_PASS(3) CUBESOLVE_PASS(4) CUBESOLVE_PASS(5) CUBESOLVE_PASS(6)
    CUBESOLVE_PASS(7) CUBESOLVE_PASS(8) CUBESOLVE_PASS(9) CUBESOLVE_PASS(10) CUBESOLVE_PASS(11) CUBESOLVE_PASS(12)
    CUBESOLVE_PASS(13)
#undef CUBESOLVE_PASS
    default: return;
  }
}

/// The deletion form for four pixels, their missing rows D in sys: the
/// systems S = I - H_DD factored together in s, one in each vector lane
/// (their sizes q at most); then for each pixel l, Z = L^-T P_D^T in z
/// (its rows `ld` apart, from l q ld on; P's rows from Shared::pinv_rows) and in
/// sums (2 ld from 2 l ld on) Σ_a Z_aj², then with the series' intervals t
/// Σ_a (Σ_k<=j t_k Z_ak)². ok[l]: lane l's pivots held. rows: room for q
/// pointers.
CUBESOLVE_SIMD_CLONES void deletion_lanes(const lanes::LaneSystem* sys, const Shared& sh, std::size_t q, double* s,
                                          double* z, std::size_t ld, double* sums, const double** rows, bool* ok) {
  const std::size_t M = sh.f.m;
  lanes::put_systems(sys, sh.f.n, q, s);
  batched_cholesky(s, q, 0.0, ok);
  const std::vector<double>& t = sh.intervals;
  for (std::size_t l = 0; l < kLanes && sys[l].K; ++l) {
    double *zl = z + l * q * ld, *sl = sums + 2 * l * ld;
    for (std::size_t a = 0; a < sys[l].q; ++a) rows[a] = sh.pinv_rows.data() + static_cast<std::size_t>(sys[l].I[a]) * ld;
    // The columns in as few passes as the vector registers allow (each
    // pass reads L and the earlier rows again), 12 or 13 vectors at most.
    std::size_t j = 0;
    for (; ld - j > 52; j += 48) forward_columns<12>(s, l, rows, sys[l].q, ld, j, zl, sl);
    forward_pass(s, l, rows, sys[l].q, ld, j, zl, sl);
    if (t.empty()) continue;
    std::fill(sl + ld, sl + 2 * ld, 0.0);
    for (std::size_t a = 0; a < sys[l].q; ++a) {
      double sum = 0;
      for (std::size_t c = 0; c < M; ++c) {
        sum += t[c] * zl[a * ld + c];
        sl[ld + c] += sum * sum;
      }
    }
  }
}

class Errors {
public:
  explicit Errors(std::size_t N) : rows_(N), sw_(N), valid_(N) {}

  /// Pixels [b, e)'s masks (bit i: a finite value in row i; words_ words
  /// a pixel) and weights, pixel by pixel (read row by row).
  void load(const Shared& s, std::size_t b, std::size_t e) {
    const std::size_t N = s.cube.dim(0), P = s.cube.dim(1) * s.cube.dim(2), B = e - b;
    words_ = (N + 63) / 64;
    bits_.assign(B * words_, 0);
    if (s.weights) w_.resize(B * N);
    const auto mark = [&](const auto* from) {  // each word over its 64 rows in a tile of 256 pixels, then stored
      std::uint64_t acc[256];
      for (std::size_t k0 = 0; k0 < B; k0 += 256)
        for (std::size_t w = 0, kn = std::min<std::size_t>(256, B - k0); w < words_; ++w) {
          std::fill_n(acc, kn, 0);
          for (std::size_t i = w * 64; i < std::min(N, w * 64 + 64); ++i) {
            const auto* row = from + i * P + b + k0;
            for (std::size_t k = 0; k < kn; ++k) acc[k] |= static_cast<std::uint64_t>(row[k] - row[k] == 0) << (i % 64);
          }
          for (std::size_t k = 0; k < kn; ++k) bits_[(k0 + k) * words_ + w] = acc[k];
        }
    };
    if (s.cube.dtype() == DType::Float32) mark(s.cube.data<float>());
    else mark(s.cube.data<double>());
    for (std::size_t i = 0; i < N && s.weights; ++i)
      for (std::size_t k = 0; k < B; ++k) w_[k * N + i] = s.weights->value(i * P + b + k);
  }

  /// A buffer for the errors of B pixels.
  std::vector<double>& errors(std::size_t M, std::size_t B) {
    se_.resize(M * B);
    return se_;
  }

  /// How many valid rows the k-th pixel loaded has (gathered where there
  /// are weights).
  std::size_t count(const Shared& s, std::size_t k) {
    return s.weights ? gather(s, k) : static_cast<std::size_t>(bit_count(bits_.data() + k * words_, words_));
  }

  /// The valid rows (a finite value with a positive finite weight) of the
  /// k-th pixel loaded.
  std::size_t gather(const Shared& s, std::size_t k) {
    const std::size_t N = s.cube.dim(0);
    std::size_t nv = 0;
    for (std::size_t i = 0; i < N; ++i) {
      const double w = s.weights ? w_[k * N + i] : 1.0;
      valid_[i] = ((bits_[k * words_ + i / 64] >> (i % 64)) & 1) && std::isfinite(w) && w > 0;
      if (!valid_[i]) continue;
      rows_[nv] = static_cast<int>(i);
      sw_[nv++] = std::sqrt(w);
    }
    return nv;
  }

  /// The diagonal of the pixel last gathered (the k-th loaded), from the
  /// cache where its mask was seen before; null where it is queued for the
  /// deletion lanes instead (see flush_deletions).
  const Diagonal* diagonal(const Shared& s, std::size_t k, std::size_t nv, int rank) {
    const bool lane = laned(s, nv, rank);
    if (!lane && !s.weights) gather(s, k);  // (count gathered it where there are weights)
    if (s.weights || unique_) return lane ? queue_deletion(k, nv) : &compute(s, nv, rank, scratch_);
    if (auto it = cache_.find(key(k, rank)); it != cache_.end()) {
      ++hits_;
      return &it->second;
    }
    unique_ = ++misses_ > kMaxCached && hits_ < misses_ / 16;  // masks do not repeat: the cache is left
    if (lane) return queue_deletion(k, nv);
    if (unique_) return &compute(s, nv, rank, scratch_);
    return &remember(k, rank, compute(s, nv, rank, scratch_));
  }

  /// The queued pixels' diagonals by the deletion form in lanes, pixels of
  /// like size together, each handed to done(k, nv, diagonal); a pixel the
  /// form refuses takes compute's way.
  template <class Done>
  void flush_deletions(const Shared& s, Done&& done) {
    std::sort(pending_.begin(), pending_.end(), [](const Lane& a, const Lane& b) { return a.nv > b.nv; });
    const std::size_t N = s.f.n, M = s.f.m, ld = (M + 3) / 4 * 4;
    std::array<lanes::LaneSystem, kLanes> sys;
    rows4_.resize(N * kLanes);
    for (std::size_t b0 = 0; b0 < pending_.size(); b0 += kLanes) {
      const std::size_t n = std::min(kLanes, pending_.size() - b0);
      std::size_t q = 0;
      for (std::size_t l = 0; l < kLanes; ++l) {
        sys[l] = {};
        if (l >= n) continue;
        int* I = rows4_.data() + l * N;
        const auto d = static_cast<std::size_t>(bit_list(bits_.data() + pending_[b0 + l].k * words_, N, false, I));
        sys[l] = {s.f.hat_lower.empty() ? s.f.hat.data() : s.f.hat_lower.data(), I, d, true};
        sys[l].packed = !s.f.hat_lower.empty();
        q = std::max(q, d);
      }
      z4_.resize(q * ld * kLanes);
      s4_.resize(tri(q) * kLanes);
      d4_.resize(2 * ld * kLanes);
      bool ok[kLanes];
      rowp_.resize(q);
      deletion_lanes(sys.data(), s, q, s4_.data(), z4_.data(), ld, d4_.data(), rowp_.data(), ok);
      for (std::size_t l = 0; l < n; ++l) {
        const Lane& p = pending_[b0 + l];
        Diagonal& out = scratch_;
        if (!(ok[l] && lane_diagonal(s, l, out))) {
          gather(s, p.k);
          compute(s, p.nv, static_cast<int>(M), out);
        }
        done(p.k, p.nv, unique_ || s.weights ? out : remember(p.k, static_cast<int>(M), out));
      }
    }
    pending_.clear();
  }

  /// Queues the pixel last gathered (the k-th loaded, nv valid rows) for the
  /// band form, four at a time; true when four are queued.
  bool queue_band(const Shared& s, std::size_t k, std::size_t nv, int rank) {
    const std::size_t N = s.cube.dim(0), l = queued_++;
    gather(s, k);
    lanes_[l] = {k, nv, static_cast<std::size_t>(rank)};
    wt_.resize(N * kLanes);  // the lane's row weights, 0 where a row is not valid
    for (std::size_t i = 0; i < N; ++i) wt_[i * kLanes + l] = !valid_[i] ? 0.0 : s.weights ? w_[k * N + i] : 1.0;
    return queued_ == kLanes;
  }

  /// The queued pixels' diagonals by the band form (band_inverse_diagonals),
  /// each handed to done(k, nv, diagonal); a pixel the band form refuses
  /// takes the others.
  template <class Done>
  void flush_band(const Shared& s, Done&& done) {
    if (queued_ == 0) return;
    const DesignFactors& f = s.f;
    const std::size_t M = f.m, entries = M * (f.band + 1);
    for (std::size_t i = 0; i < f.n; ++i)  // an idle lane has no rows (its pivots fail, unused)
      for (std::size_t l = queued_; l < kLanes; ++l) wt_[i * kLanes + l] = 0.0;
    g_.resize(entries * kLanes);
    band_gram(f, wt_.data(), g_.data());
    std::size_t free[kLanes] = {};
    tie_split(s, free);
    z_.resize(entries * kLanes);
    d4_.resize(M * kLanes);
    bool ok[kLanes];
    band_inverse_diagonals(g_.data(), M, f.band, z_.data(), d4_.data(), ok);
    null_solves(s, free);
    for (std::size_t l = 0; l < queued_; ++l) {
      const Lane& q = lanes_[l];
      Diagonal& out = scratch_;
      out.d.resize(M);
      for (std::size_t j = 0; j < M; ++j) out.d[j] = d4_[j * kLanes + l];
      if (ok[l] && M - free[l] == q.rank && (free[l] == 0 || untie(s, l, free[l], out.d.data()))) {
        out.dof = static_cast<double>(q.rank);
        out.rank = q.rank;
        out.ok = true;
      } else {
        gather(s, q.k);
        compute(s, q.nv, static_cast<int>(q.rank), out);
      }
      done(q.k, q.nv, out);
    }
    queued_ = 0;
  }

  /// The queued pixels whose network splits (rank < M): their free
  /// components (comp_, M + 1 a lane) tied down in g_, as the Gram path ties
  /// them; free[l] their number.
  void tie_split(const Shared& s, std::size_t* free) {
    const DesignFactors& f = s.f;
    const std::size_t M = f.m;
    comp_.resize((M + 1) * kLanes);
    for (std::size_t l = 0; l < queued_; ++l) {
      const Lane& q = lanes_[l];
      if (q.rank >= M) continue;
      free[l] = free_components(f, wt_.data(), l, comp_.data() + l * (M + 1));
      y_null_.resize(M * kLanes);  // tie_down's right-hand side: not used
      tie_down(comp_.data() + l * (M + 1), M, f.band, l, g_.data(), y_null_.data());
    }
  }

  /// Y_c = X v_c for the null vector v_c of each free component c of each
  /// lane (X: the tied system's inverse, 0 on the tied unknowns), by the
  /// band solve with g_'s factor: y_null_[(c M + j) 4 + l].
  void null_solves(const Shared& s, const std::size_t* free) {
    const DesignFactors& f = s.f;
    const std::size_t M = f.m, most = *std::max_element(free, free + kLanes);
    y_null_.assign(most * M * kLanes, 0.0);
    index_.resize(M + 1);
    for (std::size_t l = 0; l < queued_; ++l) {
      if (free[l] == 0) continue;
      const int* comp = comp_.data() + l * (M + 1);
      component_numbers(comp, M, index_.data());
      std::size_t c[2];
      double v[2];
      for (std::size_t j = 0; j < M; ++j)
        for (std::size_t a = 0, n = null_entries(f, comp, index_.data(), j, c, v); a < n; ++a)
          y_null_[(c[a] * M + j) * kLanes + l] = v[a];
    }
    for (std::size_t c = 0; c < most; ++c) {
      double* y = y_null_.data() + c * M * kLanes;
      batched_cholesky_band_solve(g_.data(), M, f.band, y);
      for (std::size_t l = 0; l < queued_; ++l)
        for (std::size_t j = 0; j < M && free[l]; ++j)
          if (comp_[l * (M + 1) + j + 1] == static_cast<int>(j + 1)) y[j * kLanes + l] = 0.0;
    }
  }

  /// Lane l's diagonal of the pseudo-inverse from the tied system's X
  /// (d: X's diagonal, made 0 on the tied unknowns here): with V the k null
  /// vectors and Π = I - V K V^T, K = (V^T V)^-1, the projector on A_V's row
  /// space, G^+ = Π X Π (G X G = G), so that with u_j = K v_j (v_j: row j of
  /// V) and Y = X V, G^+_jj = X_jj - 2 u_j·Y_j + u_j^T (V^T Y) u_j. False
  /// where V^T V is too close to singular or a value falls below 0.
  bool untie(const Shared& s, std::size_t l, std::size_t k, double* d) {
    const DesignFactors& f = s.f;
    const std::size_t M = f.m;
    const int* comp = comp_.data() + l * (M + 1);
    component_numbers(comp, M, index_.data());
    std::vector<double> vv(k * k, 0.0), h(k * k, 0.0), u(k);
    std::size_t c[2];
    double v[2];
    auto Y = [&](std::size_t b, std::size_t j) { return y_null_[(b * M + j) * kLanes + l]; };
    double largest = 0;
    for (std::size_t j = 0; j < M; ++j) {
      if (comp[j + 1] == static_cast<int>(j + 1)) d[j] = 0.0;
      largest = std::max(largest, d[j]);
      for (std::size_t a = 0, n = null_entries(f, comp, index_.data(), j, c, v); a < n; ++a)
        for (std::size_t b = 0; b < k; ++b) {
          if (b < n) vv[c[a] * k + c[b]] += v[a] * v[b];
          h[c[a] * k + b] += v[a] * Y(b, j);
        }
    }
    if (!cholesky(vv.data(), k, 1e-12)) return false;
    for (std::size_t j = 0; j < M; ++j) {
      std::fill(u.begin(), u.end(), 0.0);
      for (std::size_t a = 0, n = null_entries(f, comp, index_.data(), j, c, v); a < n; ++a) u[c[a]] = v[a];
      cholesky_solve(vv.data(), k, u.data());
      double g = d[j];
      for (std::size_t a = 0; a < k; ++a) {
        g -= 2 * u[a] * Y(a, j);
        for (std::size_t b = 0; b < k; ++b) g += u[a] * h[a * k + b] * u[b];
      }
      if (!(g >= -1e-12 * largest)) return false;
      d[j] = std::max(g, 0.0);
    }
    return true;
  }

private:
  /// Whether the pixel last gathered takes the deletion form in lanes (see
  /// by_deletion for its conditions).
  bool laned(const Shared& s, std::size_t nv, int rank) const {
    const std::size_t N = s.cube.dim(0), M = s.design.cols();
    const double d = static_cast<double>(N - nv), m = static_cast<double>(M);
    return s.deletion && rank == static_cast<int>(M) && d > 0 && (!s.f.hat.empty() || !s.f.hat_lower.empty()) &&
           d * d * (m + d / 3) <= 4 * static_cast<double>(nv) * m * m;
  }

  const Diagonal* queue_deletion(std::size_t k, std::size_t nv) {
    pending_.push_back({k, nv, 0});
    return nullptr;
  }

  /// The k-th pixel's mask (its bits) and the rank: the cache's key (kept:
  /// no allocation a pixel).
  const std::string& key(std::size_t k, int rank) {
    key_.assign(reinterpret_cast<const char*>(bits_.data() + k * words_), words_ * sizeof(std::uint64_t));
    key_.append(reinterpret_cast<const char*>(&rank), sizeof rank);
    return key_;
  }

  const Diagonal& remember(std::size_t k, int rank, const Diagonal& d) {
    if (cache_.size() >= kMaxCached) cache_.clear();
    return cache_.insert_or_assign(key(k, rank), d).first->second;
  }

  /// Lane l's diagonal from deletion_lanes' sums (d4_: Σ_a Z_aj², then
  /// the series' where there are intervals); false where C_jj (A^T A)_jj
  /// exceeds kMaxDeletionCondition2 for some j (see by_deletion).
  bool lane_diagonal(const Shared& s, std::size_t l, Diagonal& out) {
    const std::size_t M = s.f.m, ld = (M + 3) / 4 * 4;
    const double *plain = d4_.data() + 2 * l * ld, *series = plain + (s.intervals.empty() ? 0 : ld);
    out.d.resize(M);
    double worst = 0;
    for (std::size_t j = 0; j < M; ++j) {
      worst = std::max(worst, (s.ginv_plain[j] + plain[j]) * s.column_norm2[j]);
      out.d[j] = s.ginv_diag[j] + series[j];
    }
    out.dof = static_cast<double>(M);
    out.rank = M;
    out.ok = true;
    return worst <= kMaxDeletionCondition2;
  }

  const Diagonal& compute(const Shared& s, std::size_t nv, int rank, Diagonal& out) {
    const std::size_t M = s.design.cols();
    out.d.assign(M, 0.0);
    const bool full = rank == static_cast<int>(M) && s.ridge == 0 && !s.packed;
    out.ok = (full && s.deletion && by_deletion(s, nv, out)) || by_svd(s, nv, rank, out);
    return out;
  }

  bool by_deletion(const Shared& s, std::size_t nv, Diagonal& out) {
    const std::size_t N = s.cube.dim(0), M = s.design.cols(), d = N - nv;
    const double dd = static_cast<double>(d), m = static_cast<double>(M);
    if (dd * dd * (m + dd / 3) > 4 * static_cast<double>(nv) * m * m) return false;  // the SVD is cheaper
    out.dof = static_cast<double>(M);
    out.rank = M;
    std::copy(s.ginv_diag.begin(), s.ginv_diag.end(), out.d.begin());
    if (d == 0) return true;
    plain_.assign(s.ginv_plain.begin(), s.ginv_plain.end());
    del_.clear();
    for (std::size_t i = 0; i < N; ++i)
      if (!valid_[i]) del_.push_back(i);
    const std::size_t ld = (d + M + 3) / 4 * 4;
    b_.resize(d * ld);
    if (!deletion_sums(s.f, s.design, del_.data(), d, b_.data(), ld, plain_.data())) return false;
    double worst = 0;  // C_jj (A^T A)_jj, above C_jj (A_V^T A_V)_jj: a bound below cond(A_V)² it keeps in sight
    for (std::size_t j = 0; j < M; ++j) worst = std::max(worst, plain_[j] * s.column_norm2[j]);
    if (s.intervals.empty()) std::copy(plain_.begin(), plain_.end(), out.d.begin());
    else {
      for (std::size_t a = 0; a < d; ++a) {
        double* z = b_.data() + a * ld + d;
        cumulate(s.intervals, z, M, 1);
        for (std::size_t j = 0; j < M; ++j) out.d[j] += z[j] * z[j];
      }
    }
    return worst <= kMaxDeletionCondition2;
  }

  bool by_svd(const Shared& s, std::size_t nv, int rank, Diagonal& out) {
    const std::size_t M = s.design.cols(), k = std::min(nv, M);
    out.d.assign(s.packed ? M * (M + 1) / 2 : M, 0.0);
    out.dof = 0;
    if (nv == 0) return false;
    a_.resize(nv * M);
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t i = 0; i < nv; ++i) a_[i + j * nv] = s.design(static_cast<std::size_t>(rows_[i]), j) * sw_[i];
    sv_.resize(k);
    u_.resize(nv * k);
    vt_.resize(k * M);
    if (lapack::svd(static_cast<int>(nv), static_cast<int>(M), a_.data(), sv_.data(), u_.data(), vt_.data()) != 0)
      return false;
    const std::size_t used = s.ridge > 0 ? k : std::min<std::size_t>(k, static_cast<std::size_t>(std::max(rank, 0)));
    const double tol = default_rcond(nv, M) * sv_[0];
    out.rank = s.ridge > 0 ? static_cast<std::size_t>(std::count_if(sv_.begin(), sv_.end(), [&](double v) { return v > tol; }))
                           : used;
    for (std::size_t q = 0; q < used; ++q) {
      const double s2 = sv_[q] * sv_[q];
      const double scale = std::sqrt(s.ridge > 0 ? s2 / ((s2 + s.ridge) * (s2 + s.ridge)) : 1.0 / s2);
      out.dof += s.ridge > 0 ? s2 / (s2 + s.ridge) : 1.0;
      for (std::size_t j = 0; j < M; ++j) vt_[q + j * k] *= scale;
      cumulate(s.intervals, vt_.data() + q, M, k);
      if (s.packed) {
        for (std::size_t i = 0, at = 0; i < M; ++i)
          for (std::size_t j = i; j < M; ++j) out.d[at++] += vt_[q + i * k] * vt_[q + j * k];
      } else {
        for (std::size_t j = 0; j < M; ++j) out.d[j] += vt_[q + j * k] * vt_[q + j * k];
      }
    }
    return true;
  }

  std::vector<int> rows_;
  std::vector<double> sw_, w_, se_;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> bits_;
  std::vector<char> valid_;
  std::vector<std::size_t> del_;
  std::vector<double> b_, a_, sv_, u_, vt_, plain_, g_, z_, d4_, wt_, y_null_, s4_, z4_;
  std::vector<int> rows4_;
  std::vector<const double*> rowp_;
  std::vector<int> comp_;
  std::vector<std::size_t> index_;
  struct Lane {  // a pixel queued for the band form (its row weights in wt_)
    std::size_t k = 0, nv = 0, rank = 0;
  };
  std::array<Lane, kLanes> lanes_;
  std::vector<Lane> pending_;  // pixels for the deletion lanes
  std::size_t queued_ = 0;
  Diagonal scratch_;
  std::size_t hits_ = 0, misses_ = 0;
  bool unique_ = false;
  std::string key_;
  std::unordered_map<std::string, Diagonal> cache_;
};

template <class T>
void standard_errors_typed(const Shared& s, const SolveResult& r, T* out, int threads, const Progress& progress) {
  const std::size_t N = s.cube.dim(0), M = s.design.cols(), P = s.cube.dim(1) * s.cube.dim(2);
  const std::size_t K = s.packed ? M * (M + 1) / 2 : M;  // values per pixel
  std::vector<Errors> ws;
  for (int t = 0; t < threads; ++t) ws.emplace_back(N);
  const auto* st = r.status.data<std::uint8_t>();
  const auto* rank = r.rank.data<std::int32_t>();
  const auto* rss = r.rss.data<double>();
  parallel_for(
      P, 256, threads,
      [&](int t, std::size_t b, std::size_t e) {
        Errors& w = ws[static_cast<std::size_t>(t)];
        w.load(s, b, e);
        std::vector<double>& se = w.errors(K, e - b);  // pixel-major, written out channel by channel
        const auto finish = [&](std::size_t p, std::size_t nv, const Diagonal* d) {
          double* x = se.data() + (p - b) * K;
          if (!d || !d->ok || nv <= d->rank) {
            std::fill(x, x + K, kNaN);
            return;
          }
          const double s2 = rss[p] / (static_cast<double>(nv) - d->dof);
          for (std::size_t j = 0; j < K; ++j) x[j] = s2 * d->d[j];
          if (!s.packed)
            for (std::size_t j = 0; j < K; ++j) x[j] = std::sqrt(x[j]);
        };
        const auto banded = [&](std::size_t k, std::size_t nv, const Diagonal& d) { finish(b + k, nv, &d); };
        for (std::size_t p = b; p < e; ++p) {
          const bool solved = st[p] == static_cast<std::uint8_t>(PixelStatus::Ok) ||
                              st[p] == static_cast<std::uint8_t>(PixelStatus::MinNorm);
          const std::size_t nv = solved ? w.count(s, p - b) : 0;
          // Without a ridge the solve's rank decides (with one it counts the
          // ridge's rows: the SVD's count of the pixel's own rows does).
          const bool dof = solved && std::isfinite(rss[p]) && (s.ridge > 0 || nv > static_cast<std::size_t>(std::max(rank[p], 0)));
          if (dof && s.banded && (rank[p] == static_cast<int>(M) || (s.f.network() && rank[p] > 0))) {
            if (w.queue_band(s, p - b, nv, rank[p])) w.flush_band(s, banded);
            continue;
          }
          if (!dof) finish(p, nv, nullptr);
          else if (const Diagonal* d = w.diagonal(s, p - b, nv, rank[p])) finish(p, nv, d);
        }
        w.flush_band(s, banded);
        w.flush_deletions(s, banded);
        for (std::size_t j = 0; j < K; ++j)
          for (std::size_t p = b; p < e; ++p) out[j * P + p] = static_cast<T>(se[(p - b) * K + j]);
      },
      progress);
}

}  // namespace

}  // namespace cubesolve::detail

namespace cubesolve {

namespace {

Array uncertainty(const Array& cube, const Design& design, const Array* weights, const SolveResult& r,
                  const SolveOptions& options, const std::vector<double>& intervals, const Progress& progress,
                  bool packed) {
  using namespace detail;
  const std::size_t M = design.cols(), P = cube.dim(1) * cube.dim(2);
  if (!intervals.empty() && intervals.size() != M)
    throw InputError(std::string(packed ? "covariance" : "standard errors") + " of a series: expected " +
                     std::to_string(M) + " intervals, found " + std::to_string(intervals.size()));
  Shared s{cube, weights, design, design.factors(), options.ridge, intervals, false, false, {}, {}, {}, {}, packed};
  const DesignFactors& f = s.f;
  s.deletion = !packed && !weights && options.ridge == 0 && f.full_column_rank() && !f.pinv.empty() &&
               f.sigma.front() <= kMaxFastCondition * f.sigma[f.m - 1];
  s.banded = !packed && options.ridge == 0 && f.banded_gram && intervals.empty() && !f.row_start.empty();
  if (s.deletion) {
    s.ginv_diag.assign(M, 0.0);
    s.ginv_plain.assign(M, 0.0);
    s.column_norm2.assign(M, 0.0);
    const std::size_t ld = (M + 3) / 4 * 4;
    s.pinv_rows.assign(f.n * ld, 0.0);
    for (std::size_t i = 0; i < f.n; ++i) std::copy_n(f.pinv.data() + i * M, M, s.pinv_rows.data() + i * ld);
    for (std::size_t i = 0; i < f.n; ++i)
      for (std::size_t j = 0; j < M; ++j) s.column_norm2[j] += design(i, j) * design(i, j);
    std::vector<double> column(M);
    for (std::size_t i = 0; i < f.n; ++i) {
      std::copy_n(f.pinv.data() + i * M, M, column.data());
      for (std::size_t j = 0; j < M; ++j) s.ginv_plain[j] += column[j] * column[j];
      cumulate(intervals, column.data(), M, 1);
      for (std::size_t j = 0; j < M; ++j) s.ginv_diag[j] += column[j] * column[j];
    }
  }
  Array out = Array::uninitialized(r.x.dtype(), {packed ? M * (M + 1) / 2 : M, cube.dim(1), cube.dim(2)});
  lapack::SingleThreadedBlas single;
  if (P > 0) {
    if (out.dtype() == DType::Float32) standard_errors_typed(s, r, out.data<float>(), r.threads, progress);
    else standard_errors_typed(s, r, out.data<double>(), r.threads, progress);
  }
  return out;
}

}  // namespace

Array standard_errors(const Array& cube, const Design& design, const Array* weights, const SolveResult& r,
                      const SolveOptions& options, const std::vector<double>& intervals, const Progress& progress) {
  return uncertainty(cube, design, weights, r, options, intervals, progress, false);
}

Array covariances(const Array& cube, const Design& design, const Array* weights, const SolveResult& r,
                  const SolveOptions& options, const std::vector<double>& intervals, const Progress& progress) {
  return uncertainty(cube, design, weights, r, options, intervals, progress, true);
}

Array covariance_errors(const Array& covariance, std::size_t M) {
  const std::size_t P = covariance.dim(1) * covariance.dim(2);
  Array out = Array::uninitialized(covariance.dtype(), {M, covariance.dim(1), covariance.dim(2)});
  for (std::size_t j = 0, at = 0; j < M; at += M - j, ++j)  // C_jj: row j's first entry of the upper triangle
    for (std::size_t p = 0; p < P; ++p) out.set(j * P + p, std::sqrt(covariance.value(at * P + p)));
  return out;
}

}  // namespace cubesolve
