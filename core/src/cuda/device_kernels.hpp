#pragma once
// The device pipeline's kernels, one element or one system per call, written
// once for both backends: nvcc compiles them into CUDA kernels (gpu.cu), the
// host compiler into the loops of the reference backend (host_backend.cpp).
// Nothing here allocates, throws or calls a library. The cube's layout is
// kept: a piece of the cube is observation-major (value i of pixel k at
// i * ld + k), so that neighbouring threads read neighbouring values.

#include <cstdint>

#ifdef __CUDACC__
#define CUBESOLVE_HD __host__ __device__ inline
#else
#define CUBESOLVE_HD inline
#endif

namespace cubesolve::detail::gpu {

/// Per-pixel kinds the device takes; everything else stays on the CPU.
enum : std::uint8_t { kSkip = 0, kFull = 1, kDeletion = 2, kDual = 3, kGather = 4, kGram = 5 };

constexpr int kMaxQ = 1024;                 // larger systems stay on the CPU
constexpr int kSizes = kMaxQ / 8;           // systems are padded to a multiple of 8
constexpr int kBuckets = 4 * kSizes;        // (kind, padded size) of a batch

CUBESOLVE_HD int padded(int q) { return (q + 7) / 8 * 8; }
/// Batches: deletion, dual, gather and Gram systems, by padded size.
CUBESOLVE_HD int bucket_of(int kind, int q) { return (kind - kDeletion) * kSizes + padded(q) / 8 - 1; }
CUBESOLVE_HD bool finite(double v) { return v - v == 0.0; }  // false for NaN and +-Inf

/// Adds one to *p and returns the old value (atomically on the device; the
/// host backend runs its kernels on one thread).
CUBESOLVE_HD int bump(int* p) {
#ifdef __CUDA_ARCH__
  return atomicAdd(p, 1);
#else
  return (*p)++;
#endif
}

/// A piece of the cube on the device: `ld` pixels, observation-major as the
/// cube is (value i of pixel k at i * ld + k), in the type R it came in.
template <class R> struct Piece {
  int n = 0, m = 0, ld = 0, max_q = 0;  // max_q: the most rows a deletion, dual or gather system has
  const R* raw = nullptr;
  const double* weights = nullptr;      // like raw, or null
  const std::uint8_t* table = nullptr;  // n + 1: the device's kind for a pixel with that many valid values
  double* y = nullptr;     // y~, n x ld like raw, 0 where missing
  double* r = nullptr;     // a copy of y~ for the residuals, or null
  double* w = nullptr;     // weights, 0 where missing (1 without weights); null without Gram systems
  double* wy = nullptr;    // w y, likewise
  int* rows = nullptr;     // a system's rows (missing ones; valid ones for gather), a-th at a * ld + k
  int* q = nullptr;        // per pixel: its system's size
  int* nv = nullptr;       // per pixel: valid values
  double* ymax = nullptr;  // per pixel: its largest |value| (the growth limit's scale)
  std::uint8_t* kind = nullptr;
  std::uint8_t* done = nullptr;  // per pixel: 1 = solved here
  int* counts = nullptr;   // kBuckets: systems per batch
  std::uint64_t* key = nullptr;  // per pixel: its batch, then a hash of its system's rows (sort key)
  int* order = nullptr;          // per pixel: k (sorted along with the keys)
};

/// Mixes v into the hash h (splitmix64's finaliser).
CUBESOLVE_HD std::uint64_t mix(std::uint64_t h, std::uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

/// Pixel k of the piece: its values, valid count, kind, system rows and batch.
template <class R> CUBESOLVE_HD void prepare_pixel(const Piece<R>& p, int k) {
  auto valid = [&](long long e, double v) {
    return finite(v) && (!p.weights || (p.weights[e] > 0 && finite(p.weights[e])));
  };
  int nv = 0;
  for (int i = 0; i < p.n; ++i) {
    const long long e = static_cast<long long>(i) * p.ld + k;
    nv += valid(e, static_cast<double>(p.raw[e]));
  }
  int kd = p.table[nv];
  const int q = kd == kGather ? nv : kd == kGram ? p.m : p.n - nv;
  if (kd == kFull && nv != p.n) kd = kSkip;
  if ((kd == kDeletion || kd == kDual || kd == kGather) && (q == 0 || q > p.max_q)) kd = kSkip;
  int c = 0;
  double ymax = 0;
  for (int i = 0; i < p.n; ++i) {
    const long long e = static_cast<long long>(i) * p.ld + k;
    const double v = static_cast<double>(p.raw[e]);
    const bool ok = valid(e, v);
    p.y[e] = ok ? v : 0.0;
    if (ok) ymax = (v < 0 ? -v : v) > ymax ? (v < 0 ? -v : v) : ymax;
    if (p.r) p.r[e] = ok ? v : 0.0;
    if (p.w) {
      const double wt = ok ? (p.weights ? p.weights[e] : 1.0) : 0.0;
      p.w[e] = wt;
      p.wy[e] = ok ? wt * v : 0.0;
    }
    if ((kd == kDeletion || kd == kDual) ? !ok : (kd == kGather && ok)) p.rows[static_cast<long long>(c++) * p.ld + k] = i;
  }
  // The sort key: batch first, then what makes the system: its rows (pixels
  // with the same rows share one factorization), or the pixel itself for
  // Gram systems, which depend on the pixel's weights.
  std::uint64_t key = ~std::uint64_t{0};
  if (kd == kDeletion || kd == kDual || kd == kGather || kd == kGram) {
    const int b = bucket_of(kd, q);
    bump(p.counts + b);
    std::uint64_t h = static_cast<std::uint64_t>(q);
    if (kd == kGram) h = mix(h, static_cast<std::uint64_t>(k));
    else
      for (int a = 0; a < q; ++a) h = mix(h, static_cast<std::uint64_t>(p.rows[static_cast<long long>(a) * p.ld + k]));
    key = (static_cast<std::uint64_t>(b) << 54) | (h >> 10);
  }
  p.key[k] = key;
  p.order[k] = k;
  p.q[k] = q;
  p.nv[k] = nv;
  p.ymax[k] = ymax;
  p.kind[k] = static_cast<std::uint8_t>(kd);
  p.done[k] = kd == kFull ? 1 : 0;
}

/// After the sort: position j starts a group (a system of its own) when its
/// key differs from the one before.
CUBESOLVE_HD void mark_start(const std::uint64_t* key, int* start, int j) {
  start[j] = j == 0 || key[j] != key[j - 1] ? 1 : 0;
}

/// From the starts and their exclusive prefix sum: each position's group,
/// and each group's first position (its leader).
CUBESOLVE_HD void group_entry(const int* start, const int* before, int* gid, int* lead, int j) {
  gid[j] = before[j] + start[j] - 1;
  if (start[j]) lead[gid[j]] = j;
}

/// Where packed Gram entry (a, c) of the upper triangle sits (row after row).
CUBESOLVE_HD long long packed_index(int a, int c, int m) {
  if (a > c) {
    const int t = a;
    a = c;
    c = t;
  }
  return static_cast<long long>(a) * m - static_cast<long long>(a) * (a - 1) / 2 + (c - a);
}

/// One batch of small systems of one kind, padded to one size qb with the
/// identity. System j belongs to pixel pix[j] of the piece; its size is
/// q[pix[j]] <= qb. Each kind keeps an unknown u per pixel and has a residual:
///   deletion  u = y~_I (in y),   r = y~_I - A_I t,        t = P y~
///   dual      u = y~_I (in y),   r = t_I,                 t = Q y~
///   gather    u = w_V (in out),  r = t_V - y_V,           t = C w
///   gram      u = x (in out),    r = G x - A^T W y        (G packed in g)
/// and then x = P y~ (deletion, dual), A^T w (gather) or u (gram). Each pass
/// takes r, solves S z = r with S = (I - H)_II, Q_II, C_VV or G and sets
/// u -= z: from u = 0 that is the solution, and two more passes with r in
/// float64 refine a float32 one. Systems and their solutions are in the work
/// precision T, everything else in float64; Gram systems, whose condition is
/// that of A_V squared, are always float64, and their second pass refines
/// against the least-squares residual itself, r = ridge u - A^T W (y - A u)
/// (in `refine`, m x ld), as the CPU's Gram path does: the normal equations
/// lose cond(A_V)^2 eps, and the step leaves about cond(A_V) eps; a step
/// larger than `step` |u| leaves the pixel to the CPU.
template <class T> struct Batch {
  int n = 0, m = 0, ld = 0, qb = 0, count = 0, kind = kDeletion;
  // Pixels with the same rows share a system: position j (0 <= j < count)
  // uses system gid[j] - g0, whose leader is position lead[g0 + s] - first.
  int groups = 0, first = 0, g0 = 0;
  const int* gid = nullptr;   // from the batch's first position
  const int* lead = nullptr;  // of the whole piece
  const int* pix = nullptr;
  const int* q = nullptr;     // per pixel of the piece
  const int* rows = nullptr;  // per pixel of the piece, a-th at a * ld + k
  const T* K = nullptr;       // H, Q or C (n x n, symmetric); null for Gram
  const double* A = nullptr;  // the design, row-major (n, m)
  const double* t = nullptr;  // P y~ (m x ld), Q y~ or C w (n x ld), a column per pixel
  const double* g = nullptr;  // Gram: packed A^T W A, (m(m+1)/2) x ld observation-major
  const double* b = nullptr;  // Gram: A^T W y, m x ld observation-major
  double ridge = 0;           // Gram: added to the diagonal
  T* S = nullptr;             // count systems, qb x qb column-major each
  T* z = nullptr;             // count right-hand sides / solutions, qb each
  double* y = nullptr;        // y~, n x ld observation-major
  const double* ymax = nullptr;  // per pixel of the piece: its largest |y~|
  double* u = nullptr;        // the unknowns: y (deletion, dual), w (gather, n x ld) or x (gram, m x ld)
  const int* info = nullptr;  // the factorization's status per system
  std::uint8_t* done = nullptr;  // per pixel: 1 = the device vouches for it
  double tau = 0;     // smallest relative pivot
  double growth = 0;  // largest |z| / |y~|; 0: unbounded
  const double* refine = nullptr;  // Gram's refinement pass: A^T W (y - A u), m x ld observation-major
  double step = 0;                 // a refinement's last pass: largest |z| / |u|

  CUBESOLVE_HD int row(int j, int a) const {
    return kind == kGram ? a : rows[static_cast<long long>(a) * ld + pix[j]];
  }
  CUBESOLVE_HD int system_of(int j) const { return gid[j] - g0; }
  CUBESOLVE_HD int leader(int s) const { return lead[g0 + s] - first; }
  CUBESOLVE_HD double gram(long long k, int a, int c) const {
    return g[packed_index(a, c, m) * ld + k] + (a == c ? ridge : 0.0);
  }
  /// Entry (a, c) of system j, a, c < its size.
  CUBESOLVE_HD double entry(int j, int a, int c) const {
    if (kind == kGram) return gram(pix[j], a, c);
    const double k = static_cast<double>(K[static_cast<long long>(row(j, a)) * n + row(j, c)]);
    return kind == kDeletion ? (a == c ? 1.0 : 0.0) - k : k;
  }
};

template <class T> CUBESOLVE_HD T abs_of(T v) { return v < T(0) ? -v : v; }

/// Element e of the batch's systems (groups * qb * qb of them), from each
/// group's leader.
template <class T> CUBESOLVE_HD void build_entry(const Batch<T>& b, long long e) {
  const long long size = static_cast<long long>(b.qb) * b.qb;
  const int j = b.leader(static_cast<int>(e / size));
  const int rem = static_cast<int>(e % size), a = rem % b.qb, c = rem / b.qb;
  const int q = b.q[b.pix[j]];
  b.S[e] = a < q && c < q ? static_cast<T>(b.entry(j, a, c)) : (a == c ? T(1) : T(0));
}

/// Element e of the batch's residuals (count * qb of them), in float64.
template <class T> CUBESOLVE_HD void rhs_entry(const Batch<T>& b, long long e) {
  const int j = static_cast<int>(e / b.qb), a = static_cast<int>(e % b.qb);
  const long long k = b.pix[j];
  double v = 0;
  if (a < b.q[k]) {
    const int row = b.row(j, a);
    if (b.kind == kDeletion) {  // y~_I - A_I t
      const double* ar = b.A + static_cast<long long>(row) * b.m;
      const double* tk = b.t + k * b.m;
      for (int i = 0; i < b.m; ++i) v -= ar[i] * tk[i];
      v += b.y[static_cast<long long>(row) * b.ld + k];
    } else if (b.kind == kDual) {
      v = b.t[k * b.n + row];
    } else if (b.kind == kGather) {
      v = b.t[k * b.n + row] - b.y[static_cast<long long>(row) * b.ld + k];
    } else if (b.refine) {  // ridge u - A^T W (y - A u)
      v = b.ridge * b.u[static_cast<long long>(a) * b.ld + k] - b.refine[static_cast<long long>(a) * b.ld + k];
    } else {  // G x - b
      for (int c = 0; c < b.m; ++c) v += b.gram(k, a, c) * b.u[static_cast<long long>(c) * b.ld + k];
      v -= b.b[static_cast<long long>(a) * b.ld + k];
    }
  }
  b.z[e] = static_cast<T>(v);
}

/// After the factorization, for position j: the CPU's pivot rule on its
/// system, every pivot L_aa^2 > tau * its scale (the largest diagonal entry;
/// for a deletion's I - H_II at least 1, see kSmallTau), and that its rows
/// are its leader's (a hash can collide). Sets done.
template <class T> CUBESOLVE_HD void check_system(const Batch<T>& b, int j) {
  const int q = b.q[b.pix[j]], s = b.system_of(j), lead = b.leader(s);
  const T* L = b.S + static_cast<long long>(s) * b.qb * b.qb;
  double dmax = 0;
  bool good = b.info[s] == 0 && q == b.q[b.pix[lead]];
  for (int a = 0; a < q && good; ++a) {
    good = b.row(j, a) == b.row(lead, a);
    const double d = b.entry(j, a, a);
    dmax = d > dmax ? d : dmax;
  }
  good = good && dmax > 0;
  const double scale = b.kind == kDeletion && dmax < 1.0 ? 1.0 : dmax;
  for (int a = 0; a < q && good; ++a) {
    const double l = static_cast<double>(L[static_cast<long long>(a) * b.qb + a]);
    good = l * l > b.tau * scale;
  }
  b.done[b.pix[j]] = good ? 1 : 0;
}

/// After the solve of system j: u -= z. With `bounded` (the first pass) and
/// a growth limit, a solution that grows beyond `growth` times the pixel's
/// largest value is refused (done = 0) and not applied.
template <class T> CUBESOLVE_HD void scatter_system(const Batch<T>& b, int j, bool bounded) {
  const long long k = b.pix[j];
  if (!b.done[k]) return;
  const int q = b.q[k];
  const T* z = b.z + static_cast<long long>(j) * b.qb;
  if (bounded && b.growth > 0) {
    const double ymax = b.ymax[k];
    double zmax = 0;
    for (int a = 0; a < q; ++a) zmax = abs_of(static_cast<double>(z[a])) > zmax ? abs_of(static_cast<double>(z[a])) : zmax;
    // Written so that NaN fails.
    if (!(zmax <= b.growth * (ymax > 1e-300 ? ymax : 1e-300))) {
      b.done[k] = 0;
      return;
    }
  }
  if (b.step > 0) {  // a refinement's last step too large to trust: the pixel leaves
    double zz = 0, uu = 0;
    for (int a = 0; a < q; ++a) {
      const double u = b.u[static_cast<long long>(b.row(j, a)) * b.ld + k], d = static_cast<double>(z[a]);
      zz += d * d;
      uu += u * u;
    }
    if (!(zz <= b.step * b.step * uu || zz == 0)) {  // NaN fails
      b.done[k] = 0;
      return;
    }
  }
  for (int a = 0; a < q; ++a) b.u[static_cast<long long>(b.row(j, a)) * b.ld + k] -= static_cast<double>(z[a]);
}

/// t = w (y - t) at entry e: the weighted residual from the model t = A u.
CUBESOLVE_HD void weigh_entry(const double* w, const double* y, double* t, long long e) { t[e] = w[e] * (y[e] - t[e]); }

/// The solutions of one kind's pixels into X (both m x ld observation-major).
CUBESOLVE_HD void select_entry(const std::uint8_t* kind, int want, const double* from, double* x, int ld, long long e) {
  if (kind[e % ld] == want) x[e] = from[e];
}

/// The solutions in the output's float32.
CUBESOLVE_HD void narrow_entry(const double* src, float* dst, long long e) { dst[e] = static_cast<float>(src[e]); }

/// Pixel k's (weighted) residual sum of squares from r = y~ - A x
/// (observation-major), over its valid values: w holds the weights (0 where
/// missing), or is null and the values decide.
template <class R> CUBESOLVE_HD double rss_pixel(const R* raw, const double* w, const double* r, int n, int ld, int k) {
  double s = 0;
  for (int i = 0; i < n; ++i) {
    const long long e = static_cast<long long>(i) * ld + k;
    if (w) s += w[e] * r[e] * r[e];
    else if (finite(static_cast<double>(raw[e]))) s += r[e] * r[e];
  }
  return s;
}

}  // namespace cubesolve::detail::gpu
