#pragma once
// Small dense kernels for the many small systems of the fast paths.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

// Hot loops get an AVX2/FMA clone chosen at load time where the processor
// has it, and stay portable where it does not; where it has 512-bit vectors
// (x86-64-v4), their clone runs, and the float32 factorization takes twice
// the lanes (see wide_lanes).
// Sanitizer builds (CUBESOLVE_ONE_TARGET) compile one portable copy; with
// GCC they run the 512-bit lanes' code on every processor, emulated by
// narrower vectors, so that its memory accesses are checked where no clone
// of a release build would run it (clang, the fuzzers' compiler, takes
// minutes over that emulation, and leaves it out).
#if defined(CUBESOLVE_ONE_TARGET)
#define CUBESOLVE_SIMD_CLONES
#define CUBESOLVE_WIDE_CLONE 0
#if !defined(__clang__)
#define CUBESOLVE_WIDE_EMULATED 1
#endif
#elif defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define CUBESOLVE_SIMD_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#define CUBESOLVE_WIDE_CLONE 1
#else
#define CUBESOLVE_SIMD_CLONES
#define CUBESOLVE_WIDE_CLONE 0
#endif

// The kernels below, and the helpers that call them, are inlined into the
// CUBESOLVE_SIMD_CLONES function that uses them, so that they are compiled
// for its target (a call out of it would run the portable code).
#if defined(__GNUC__)
#define CUBESOLVE_KERNEL inline __attribute__((always_inline))
#else
#define CUBESOLVE_KERNEL inline
#endif

namespace cubesolve::detail {

// Vec4 only lives in inline functions: no ABI crosses a call (the warning
// about its ABI is off for this header alone).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/// Four doubles: one AVX register in the AVX2 clone, two SSE2 registers otherwise.
typedef double Vec4 __attribute__((vector_size(32)));
CUBESOLVE_KERNEL Vec4 load4(const double* p) {
  Vec4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
CUBESOLVE_KERNEL void store4(double* p, Vec4 v) { std::memcpy(p, &v, sizeof v); }
CUBESOLVE_KERNEL double sum4(Vec4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }
typedef long long Mask4 __attribute__((vector_size(32)));
typedef float Float4 __attribute__((vector_size(16)));

/// Four values from p as doubles (float input is widened).
CUBESOLVE_KERNEL Vec4 load4(const float* p) {
  Float4 v;
  std::memcpy(&v, p, sizeof v);
  return __builtin_convertvector(v, Vec4);
}
/// Stores v at p, narrowed to float.
CUBESOLVE_KERNEL void store4(float* p, Vec4 v) {
  const Float4 f = __builtin_convertvector(v, Float4);
  std::memcpy(p, &f, sizeof f);
}

/// Transposes the 4 x 4 block whose rows are r0..r3, in registers.
CUBESOLVE_KERNEL void transpose4(Vec4& r0, Vec4& r1, Vec4& r2, Vec4& r3) {
  const Vec4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 2, 6), t1 = __builtin_shufflevector(r0, r1, 1, 5, 3, 7);
  const Vec4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 2, 6), t3 = __builtin_shufflevector(r2, r3, 1, 5, 3, 7);
  r0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);
  r1 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);
  r2 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);
  r3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);
}

/// v with its first 4 - r lanes 0 (0 < r <= 4): the last r entries of a row
/// whose last four v holds, the others summed already.
CUBESOLVE_KERNEL Vec4 tail_of(Vec4 v, std::size_t r) {
  const Mask4 keep = Mask4{0, 1, 2, 3} >= static_cast<long long>(4 - r);
  return keep ? v : Vec4{};
}

/// Four independent vector sums: bound by throughput, not by the latency of
/// one chain of additions.
CUBESOLVE_KERNEL double dot(const double* a, const double* b, std::size_t n) {
  Vec4 s0 = {}, s1 = {}, s2 = {}, s3 = {};
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 += load4(a + i) * load4(b + i);
    s1 += load4(a + i + 4) * load4(b + i + 4);
    s2 += load4(a + i + 8) * load4(b + i + 8);
    s3 += load4(a + i + 12) * load4(b + i + 12);
  }
  for (; i + 4 <= n; i += 4) s0 += load4(a + i) * load4(b + i);
  if (i < n && n >= 4) {  // the last n - i: the last four, less those already summed
    s1 += load4(a + n - 4) * tail_of(load4(b + n - 4), n - i);
    i = n;
  }
  double s = sum4((s0 + s1) + (s2 + s3));
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

/// Four dot products of rows r[0..3] with the same x, sharing its loads;
/// two sums a row, so that eight chains of additions overlap.
CUBESOLVE_KERNEL void dot4(const double* const r[4], const double* x, std::size_t n, double out[4]) {
  Vec4 s0 = {}, s1 = {}, s2 = {}, s3 = {}, t0 = {}, t1 = {}, t2 = {}, t3 = {};
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const Vec4 xv = load4(x + i), xw = load4(x + i + 4);
    s0 += load4(r[0] + i) * xv;
    s1 += load4(r[1] + i) * xv;
    s2 += load4(r[2] + i) * xv;
    s3 += load4(r[3] + i) * xv;
    t0 += load4(r[0] + i + 4) * xw;
    t1 += load4(r[1] + i + 4) * xw;
    t2 += load4(r[2] + i + 4) * xw;
    t3 += load4(r[3] + i + 4) * xw;
  }
  for (; i + 4 <= n; i += 4) {
    const Vec4 xv = load4(x + i);
    s0 += load4(r[0] + i) * xv;
    s1 += load4(r[1] + i) * xv;
    s2 += load4(r[2] + i) * xv;
    s3 += load4(r[3] + i) * xv;
  }
  if (i < n && n >= 4) {  // the last n - i, as in dot
    const Vec4 xv = tail_of(load4(x + n - 4), n - i);
    t0 += load4(r[0] + n - 4) * xv;
    t1 += load4(r[1] + n - 4) * xv;
    t2 += load4(r[2] + n - 4) * xv;
    t3 += load4(r[3] + n - 4) * xv;
    i = n;
  }
  out[0] = sum4(s0 + t0);
  out[1] = sum4(s1 + t1);
  out[2] = sum4(s2 + t2);
  out[3] = sum4(s3 + t3);
  for (; i < n; ++i)
    for (std::size_t q = 0; q < 4; ++q) out[q] += r[q][i] * x[i];
}

/// out[a * stride] = mat[rows[a], :] · v for a < q, where `mat` is row-major
/// with rows of length n; four rows at a time share the loads of v.
CUBESOLVE_KERNEL void row_dots(const double* mat, std::size_t n, const int* rows, std::size_t q, const double* v, double* out,
                     std::size_t stride) {
  std::size_t a = 0;
  for (; a + 4 <= q; a += 4) {
    const double* r[4];
    for (std::size_t t = 0; t < 4; ++t) r[t] = mat + static_cast<std::size_t>(rows[a + t]) * n;
    double d[4];
    dot4(r, v, n, d);
    for (std::size_t t = 0; t < 4; ++t) out[(a + t) * stride] = d[t];
  }
  for (; a < q; ++a) out[a * stride] = dot(mat + static_cast<std::size_t>(rows[a]) * n, v, n);
}

/// max |a[i]|
CUBESOLVE_KERNEL double max_abs(const double* a, std::size_t n) {
  double m = 0;
#ifdef CUBESOLVE_OPENMP_SIMD
#pragma omp simd reduction(max : m)
#endif
  for (std::size_t i = 0; i < n; ++i) m = std::fabs(a[i]) > m ? std::fabs(a[i]) : m;
  return m;
}

/// In-place Cholesky S = L L^T of a symmetric positive definite n x n
/// row-major matrix (the lower triangle is read and overwritten). Returns
/// false when a pivot is not above `tau` times the largest diagonal entry:
/// the system is too close to singular for this path to be trusted.
CUBESOLVE_KERNEL bool cholesky(double* s, std::size_t n, double tau) {
  double dmax = 0;
  for (std::size_t i = 0; i < n; ++i) dmax = s[i * n + i] > dmax ? s[i * n + i] : dmax;
  const double floor = tau * dmax;
  for (std::size_t j = 0; j < n; ++j) {
    double* rj = s + j * n;
    double d = rj[j] - dot(rj, rj, j);
    if (!(d > floor)) return false;
    d = std::sqrt(d);
    rj[j] = d;
    const double inv = 1.0 / d;
    for (std::size_t i = j + 1; i < n; ++i) {
      double* ri = s + i * n;
      ri[j] = (ri[j] - dot(ri, rj, j)) * inv;
    }
  }
  return true;
}

/// Solves L L^T x = b in place, L from cholesky().
CUBESOLVE_KERNEL void cholesky_solve(const double* l, std::size_t n, double* b) {
  for (std::size_t i = 0; i < n; ++i) b[i] = (b[i] - dot(l + i * n, b, i)) / l[i * n + i];
  for (std::size_t i = n; i-- > 0;) {
    double v = b[i];
    for (std::size_t k = i + 1; k < n; ++k) v -= l[k * n + i] * b[k];
    b[i] = v / l[i * n + i];
  }
}

/// Cholesky of an n x n symmetric positive definite S and the solve with
/// its factor, in one: the rows of w (n rows `ld` apart, m columns, m a
/// multiple of four and at least n) hold [S | B], S's upper triangle read;
/// they become [U | U^-T B], U^T U = S, from each row's diagonal on (the
/// entries left of it are left meaningless). Four rows at a time: their
/// 4 x 4 diagonal block first (what the rows above give it, then its own
/// factor), then the rest of them, two vectors of each row at once, taking
/// what the rows above give (each load of a finished row serves four) and
/// the block's factor in registers. False when a pivot is not positive.
CUBESOLVE_KERNEL bool cholesky_rows(double* w, std::size_t n, std::size_t m, std::size_t ld) {
  for (std::size_t a0 = 0; a0 < n; a0 += 4) {
    const std::size_t rows = n - a0 < 4 ? n - a0 : 4;
    double* r[4] = {w + a0 * ld, rows > 1 ? w + (a0 + 1) * ld : w + a0 * ld, rows > 2 ? w + (a0 + 2) * ld : w + a0 * ld,
                    rows > 3 ? w + (a0 + 3) * ld : w + a0 * ld};  // a missing row repeats row a0: computed, stored before it
    const std::size_t at[4] = {a0, rows > 1 ? a0 + 1 : a0, rows > 2 ? a0 + 2 : a0, rows > 3 ? a0 + 3 : a0};
    double u[4][4] = {}, inv[4] = {1, 1, 1, 1};  // the block's factor, its diagonal as reciprocals
    auto update = [&](std::size_t j, auto width, bool solve) __attribute__((always_inline)) {
      constexpr std::size_t V = decltype(width)::value;
      Vec4 x[4][V];
      for (std::size_t t = 0; t < 4; ++t)
        for (std::size_t v = 0; v < V; ++v) x[t][v] = load4(r[t] + j + 4 * v);
      for (std::size_t k = 0; k < a0; ++k) {
        const double* rk = w + k * ld;
        const double c[4] = {rk[at[0]], rk[at[1]], rk[at[2]], rk[at[3]]};
        for (std::size_t v = 0; v < V; ++v) {
          const Vec4 z = load4(rk + j + 4 * v);
          for (std::size_t t = 0; t < 4; ++t) x[t][v] -= c[t] * z;
        }
      }
      for (std::size_t v = 0; v < V && solve; ++v)
        for (std::size_t t = 0; t < 4; ++t) {
          for (std::size_t q = 0; q < t; ++q) x[t][v] -= u[q][t] * x[q][v];
          x[t][v] *= inv[t];
        }
      for (std::size_t t = 4; t-- > 0;)
        for (std::size_t v = 0; v < V; ++v) store4(r[t] + j + 4 * v, x[t][v]);
    };
    if (a0 > 0) update(a0, std::integral_constant<std::size_t, 1>{}, false);
    for (std::size_t t = 0; t < rows; ++t) {  // the diagonal block's factor
      double pivot = r[t][a0 + t];
      for (std::size_t q = 0; q < t; ++q) pivot -= u[q][t] * u[q][t];
      if (!(pivot > 0)) return false;
      u[t][t] = std::sqrt(pivot);
      inv[t] = 1.0 / u[t][t];
      for (std::size_t c = t + 1; c < rows; ++c) {
        double v = r[t][a0 + c];
        for (std::size_t q = 0; q < t; ++q) v -= u[q][t] * u[q][c];
        u[t][c] = v * inv[t];
      }
    }
    for (std::size_t t = 0; t < rows; ++t) {
      for (std::size_t c = t; c < rows; ++c) r[t][a0 + c] = u[t][c];
      for (std::size_t c = a0 + rows; c < a0 + 4; ++c) {  // B's first columns, where n is not a multiple of four
        for (std::size_t q = 0; q < t; ++q) r[t][c] -= u[q][t] * r[q][c];
        r[t][c] *= inv[t];
      }
    }
    std::size_t j = a0 + 4;
    for (; j + 8 <= m; j += 8) update(j, std::integral_constant<std::size_t, 2>{}, true);
    if (j < m) update(j, std::integral_constant<std::size_t, 1>{}, true);
  }
  return true;
}

/// Rewrites x[0, n) (n >= 4) four entries at a time, x[i, i + 4) becoming
/// part(i), made from x as it is: the last four first, then the others from
/// the start. Where the others' last four overlap them, part makes the same
/// values from the same x, so storing them after the loop holds and n need
/// not be a multiple of four.
template <class Part>
CUBESOLVE_KERNEL void store_by_fours(double* x, std::size_t n, Part part) {
  const Vec4 last = part(n - 4);
  for (std::size_t i = 0; i + 4 < n; i += 4) store4(x + i, part(i));
  store4(x + n - 4, last);
}

/// y += alpha * x
CUBESOLVE_KERNEL void axpy(double alpha, const double* x, double* y, std::size_t n) {
  if (n < 4) {
    for (std::size_t i = 0; i < n; ++i) y[i] += alpha * x[i];
    return;
  }
  store_by_fours(y, n, [&](std::size_t i) __attribute__((always_inline)) { return load4(y + i) + alpha * load4(x + i); });
}

/// x += sum over a < q of coef[a * stride] * mat[rows[a], :] (row-major,
/// rows of length n): four rows at a time share the loads and stores of x.
CUBESOLVE_KERNEL void row_axpys(const double* mat, std::size_t n, const int* rows, std::size_t q, const double* coef,
                                std::size_t stride, double* x) {
  std::size_t a = 0;
  for (; a + 4 <= q; a += 4) {
    const double* r0 = mat + static_cast<std::size_t>(rows[a]) * n;
    const double* r1 = mat + static_cast<std::size_t>(rows[a + 1]) * n;
    const double* r2 = mat + static_cast<std::size_t>(rows[a + 2]) * n;
    const double* r3 = mat + static_cast<std::size_t>(rows[a + 3]) * n;
    const double c0 = coef[a * stride], c1 = coef[(a + 1) * stride], c2 = coef[(a + 2) * stride],
                 c3 = coef[(a + 3) * stride];
    if (n < 4) {
      for (std::size_t i = 0; i < n; ++i) x[i] += c0 * r0[i] + c1 * r1[i] + c2 * r2[i] + c3 * r3[i];
      continue;
    }
    store_by_fours(x, n, [&](std::size_t i) __attribute__((always_inline)) {
      return load4(x + i) + c0 * load4(r0 + i) + c1 * load4(r1 + i) + c2 * load4(r2 + i) + c3 * load4(r3 + i);
    });
  }
  for (; a < q; ++a) axpy(coef[a * stride], mat + static_cast<std::size_t>(rows[a]) * n, x, n);
}

}  // namespace cubesolve::detail

#pragma GCC diagnostic pop

namespace cubesolve::detail {

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

/// Lanes of the batched kernels: kLanes systems of the same size side by
/// side, one Vec4 per element, lower triangles packed by rows: element
/// (a, c), c <= a, of system l at s[(tri(a) + c) * kLanes + l]. Every scalar
/// step of the algorithm is one vector operation across the systems, and a
/// system of 120 rows stays within a core's cache.
constexpr std::size_t kLanes = 4;
CUBESOLVE_KERNEL constexpr std::size_t tri(std::size_t a) { return a * (a + 1) / 2; }

/// Eight or sixteen floats: the lanes of the float32 factorization (see
/// factor_in_lanes), sixteen where the processor has 512-bit vectors, which
/// also factor two groups of float64 systems side by side (Vec8d).
typedef float Vec8f __attribute__((vector_size(32)));
typedef float Vec16f __attribute__((vector_size(64)));
typedef double Vec8d __attribute__((vector_size(64)));
/// Whether this processor runs the 512-bit clone: elsewhere a Vec16f or
/// Vec8d would be emulated by narrower vectors (which a sanitizer build
/// built by GCC does on purpose, see CUBESOLVE_ONE_TARGET).
inline bool wide_lanes() {
#if defined(CUBESOLVE_WIDE_EMULATED)
  return true;
#elif CUBESOLVE_WIDE_CLONE
  return __builtin_cpu_supports("x86-64-v4");
#else
  return false;
#endif
}
/// A lane vector's element type and width (Vec4, Vec8d, Vec8f, Vec16f).
template <class V>
struct Lanes {
  using E = std::remove_reference_t<decltype(std::declval<V&>()[0])>;
  static constexpr std::size_t W = sizeof(V) / sizeof(E);
};
template <class V>
CUBESOLVE_KERNEL V loadv(const typename Lanes<V>::E* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
CUBESOLVE_KERNEL void storev(typename Lanes<V>::E* p, V v) {
  std::memcpy(p, &v, sizeof v);
}

/// Rows i..i+R-1, columns j0..j0+jb-1 (jb <= 4) of the packed systems (W
/// lanes of V): subtracts the sum over c < j0 of L[i, c] L[j, c]. The R x 4
/// sums stay in registers, and each load of L[j, c] serves R rows, each of
/// L[i, c] four columns.
template <std::size_t R, class V>
CUBESOLVE_KERNEL void cholesky_update_tile(typename Lanes<V>::E* s, std::size_t i, std::size_t j0, std::size_t jb) {
  using E = typename Lanes<V>::E;
  constexpr std::size_t L = Lanes<V>::W;
  const E* li[R];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) li[r] = s + tri(i + r) * L;
  const E* l0 = s + tri(j0) * L;
  const E* l1 = s + tri(j0 + (jb > 1 ? 1 : 0)) * L;
  const E* l2 = s + tri(j0 + (jb > 2 ? 2 : 0)) * L;
  const E* l3 = s + tri(j0 + (jb > 3 ? 3 : 0)) * L;
  V acc[R][4];
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r) acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = V{};
  for (std::size_t c = 0; c < j0 * L; c += L) {
    const V y0 = loadv<V>(l0 + c), y1 = loadv<V>(l1 + c), y2 = loadv<V>(l2 + c), y3 = loadv<V>(l3 + c);
#pragma GCC unroll 8
    for (std::size_t r = 0; r < R; ++r) {
      const V x = loadv<V>(li[r] + c);
      acc[r][0] += x * y0;
      acc[r][1] += x * y1;
      acc[r][2] += x * y2;
      acc[r][3] += x * y3;
    }
  }
#pragma GCC unroll 8
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t t = 0; t < jb && j0 + t <= i + r; ++t) {
      E* p = s + (tri(i + r) + j0 + t) * L;
      storev<V>(p, loadv<V>(p) - acc[r][t]);
    }
}

/// tau times each lane's scale: its largest diagonal entry, or `least`
/// where that is larger; at(i, i) points to entry (i, i). A system whose
/// singularity is measured against a known scale (a deletion's I - H_II
/// against 1, see kSmallTau) passes it as `least`: its own entries may all
/// be tiny, and a floor relative to them would pass any pivot.
template <class V, class At>
CUBESOLVE_KERNEL V pivot_floor(At at, std::size_t n, typename Lanes<V>::E tau, V least = V{}) {
  V floor = least;
  for (std::size_t i = 0; i < n; ++i) {
    const V d = loadv<V>(at(i, i));
    floor = floor > d ? floor : d;
  }
  return floor * tau;
}

/// 1 / sqrt(d) in each lane. A lane whose pivot d is not above its floor
/// is marked in `bad` (its factor is not to be used) and takes 1.
template <class V, class Mask>
CUBESOLVE_KERNEL V pivot_inverse(V d, V floor, Mask& bad) {
  using E = typename Lanes<V>::E;
  constexpr std::size_t W = Lanes<V>::W;
  const V one = V{} + 1;
  const Mask good = d > floor;
  bad |= good == 0;
  d = good != 0 ? d : one;
  E r[W], dd[W];
  storev<V>(dd, d);
#ifdef CUBESOLVE_OPENMP_SIMD
#pragma omp simd
#endif
  for (std::size_t l = 0; l < W; ++l) r[l] = std::sqrt(dd[l]);
  return one / loadv<V>(r);
}

/// Batched in-place Cholesky of W SPD systems of size n (the lanes of V:
/// packed lower triangles, element (a, c), c <= a, of system l at
/// s[(tri(a) + c) * W + l]), left-looking by blocks of four columns; the
/// diagonal of the factor is stored as its reciprocals. ok[l] becomes false
/// for a system whose pivot falls below tau times its scale (its largest
/// diagonal entry, or least[l] where larger: see pivot_floor); that
/// system's factor is then not to be used.
template <class V = Vec4>
CUBESOLVE_KERNEL void batched_cholesky(typename Lanes<V>::E* s, std::size_t n, typename Lanes<V>::E tau, bool* ok,
                                       V least = V{}) {
  constexpr std::size_t L = Lanes<V>::W;
  auto at = [s](std::size_t a, std::size_t c) { return s + (tri(a) + c) * L; };
  const V floor = pivot_floor<V>(at, n, tau, least);
  decltype(V{} > V{}) bad = {};
  for (std::size_t j0 = 0; j0 < n; j0 += 4) {
    const std::size_t jb = n - j0 < 4 ? n - j0 : 4;
    if (j0 > 0) {  // the columns before the block, applied to it
      std::size_t i = j0;
      // Six rows a tile where 32 vector registers hold their 24 sums (the
      // 512-bit lanes come with them), else three.
      if constexpr (sizeof(V) == 64)
        for (; i + 6 <= n; i += 6) cholesky_update_tile<6, V>(s, i, j0, jb);
      for (; i + 3 <= n; i += 3) cholesky_update_tile<3, V>(s, i, j0, jb);
      if (i + 2 <= n) cholesky_update_tile<2, V>(s, i, j0, jb), i += 2;
      if (i < n) cholesky_update_tile<1, V>(s, i, j0, jb);
    }
    for (std::size_t j = j0; j < j0 + jb; ++j) {  // the block's own columns, within it
      V d = loadv<V>(at(j, j));
      for (std::size_t c = j0; c < j; ++c) d -= loadv<V>(at(j, c)) * loadv<V>(at(j, c));
      const V inv = pivot_inverse(d, floor, bad);
      storev<V>(at(j, j), inv);  // the reciprocal: the solve multiplies
      for (std::size_t i = j + 1; i < j0 + jb; ++i) {
        V v = loadv<V>(at(i, j));
        for (std::size_t c = j0; c < j; ++c) v -= loadv<V>(at(i, c)) * loadv<V>(at(j, c));
        storev<V>(at(i, j), v * inv);
      }
    }
    if (jb < 4) continue;  // the last block: no rows below it
    // The rows below the block, each on its own (their chains overlap): a
    // triangular solve with the block's factor, held in registers.
    const V i0 = loadv<V>(at(j0, j0)), i1 = loadv<V>(at(j0 + 1, j0 + 1)), i2 = loadv<V>(at(j0 + 2, j0 + 2)),
            i3 = loadv<V>(at(j0 + 3, j0 + 3));
    const V l10 = loadv<V>(at(j0 + 1, j0)), l20 = loadv<V>(at(j0 + 2, j0)), l21 = loadv<V>(at(j0 + 2, j0 + 1)),
            l30 = loadv<V>(at(j0 + 3, j0)), l31 = loadv<V>(at(j0 + 3, j0 + 1)), l32 = loadv<V>(at(j0 + 3, j0 + 2));
    for (std::size_t i = j0 + 4; i < n; ++i) {
      typename Lanes<V>::E* r = at(i, j0);
      const V x0 = loadv<V>(r) * i0;
      const V x1 = (loadv<V>(r + L) - x0 * l10) * i1;
      const V x2 = (loadv<V>(r + 2 * L) - x0 * l20 - x1 * l21) * i2;
      const V x3 = (loadv<V>(r + 3 * L) - x0 * l30 - x1 * l31 - x2 * l32) * i3;
      storev<V>(r, x0);
      storev<V>(r + L, x1);
      storev<V>(r + 2 * L, x2);
      storev<V>(r + 3 * L, x3);
    }
  }
  for (std::size_t l = 0; l < L; ++l) ok[l] = bad[l] == 0;
}

/// Solves the W systems L L^T x = b in place (L from batched_cholesky,
/// its diagonal as reciprocals); b[a*W + l] is entry a of system l.
template <class V = Vec4>
CUBESOLVE_KERNEL void batched_cholesky_solve(const typename Lanes<V>::E* s, std::size_t n, typename Lanes<V>::E* b) {
  constexpr std::size_t L = Lanes<V>::W;
  for (std::size_t i = 0; i < n; ++i) {  // four sums: the additions' latency overlaps
    const auto* ri = s + tri(i) * L;
    V a0 = loadv<V>(b + i * L), a1 = {}, a2 = {}, a3 = {};
    std::size_t c = 0;
    for (; c + 4 <= i; c += 4) {
      a0 -= loadv<V>(ri + c * L) * loadv<V>(b + c * L);
      a1 -= loadv<V>(ri + (c + 1) * L) * loadv<V>(b + (c + 1) * L);
      a2 -= loadv<V>(ri + (c + 2) * L) * loadv<V>(b + (c + 2) * L);
      a3 -= loadv<V>(ri + (c + 3) * L) * loadv<V>(b + (c + 3) * L);
    }
    for (; c < i; ++c) a0 -= loadv<V>(ri + c * L) * loadv<V>(b + c * L);
    storev<V>(b + i * L, ((a0 + a1) + (a2 + a3)) * loadv<V>(ri + i * L));
  }
  // L^T by rows of L: b[c] is final, then leaves b[i < c]. Four rows at a
  // time, so that each load and store of b[i] serves four of them (in the
  // same order as one at a time).
  std::size_t c = n;
  for (; c >= 4; c -= 4) {
    const auto *r3 = s + tri(c - 1) * L, *r2 = s + tri(c - 2) * L, *r1 = s + tri(c - 3) * L, *r0 = s + tri(c - 4) * L;
    const V v3 = loadv<V>(b + (c - 1) * L) * loadv<V>(r3 + (c - 1) * L);
    const V v2 = (loadv<V>(b + (c - 2) * L) - loadv<V>(r3 + (c - 2) * L) * v3) * loadv<V>(r2 + (c - 2) * L);
    const V v1 = (loadv<V>(b + (c - 3) * L) - loadv<V>(r3 + (c - 3) * L) * v3 - loadv<V>(r2 + (c - 3) * L) * v2) *
                 loadv<V>(r1 + (c - 3) * L);
    const V v0 = (loadv<V>(b + (c - 4) * L) - loadv<V>(r3 + (c - 4) * L) * v3 - loadv<V>(r2 + (c - 4) * L) * v2 -
                  loadv<V>(r1 + (c - 4) * L) * v1) *
                 loadv<V>(r0 + (c - 4) * L);
    storev<V>(b + (c - 1) * L, v3);
    storev<V>(b + (c - 2) * L, v2);
    storev<V>(b + (c - 3) * L, v1);
    storev<V>(b + (c - 4) * L, v0);
    for (std::size_t i = 0; i + 4 < c; ++i)
      storev<V>(b + i * L, loadv<V>(b + i * L) - loadv<V>(r3 + i * L) * v3 - loadv<V>(r2 + i * L) * v2 -
                               loadv<V>(r1 + i * L) * v1 - loadv<V>(r0 + i * L) * v0);
  }
  for (; c-- > 0;) {
    const auto* rc = s + tri(c) * L;
    const V v = loadv<V>(b + c * L) * loadv<V>(rc + c * L);
    storev<V>(b + c * L, v);
    for (std::size_t i = 0; i < c; ++i) storev<V>(b + i * L, loadv<V>(b + i * L) - loadv<V>(rc + i * L) * v);
  }
}

/// r = b - S z for the kLanes packed symmetric systems S (lower triangles,
/// as batched_cholesky takes them); vectors as in batched_cholesky_solve.
/// Four rows at a time: each load and store of r[c] serves four of S's
/// entries (column c's contributions to those rows, and theirs to r[c]).
CUBESOLVE_KERNEL void batched_residual(const double* s, std::size_t n, const double* b, const double* z, double* r) {
  constexpr std::size_t L = kLanes;
  std::memcpy(r, b, n * L * sizeof(double));
  std::size_t a0 = 0;
  for (; a0 + 4 <= n; a0 += 4) {
    const double *s0 = s + tri(a0) * L, *s1 = s + tri(a0 + 1) * L, *s2 = s + tri(a0 + 2) * L, *s3 = s + tri(a0 + 3) * L;
    const Vec4 z0 = load4(z + a0 * L), z1 = load4(z + (a0 + 1) * L), z2 = load4(z + (a0 + 2) * L),
               z3 = load4(z + (a0 + 3) * L);
    Vec4 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
    for (std::size_t c = 0; c < a0; ++c) {
      const Vec4 e0 = load4(s0 + c * L), e1 = load4(s1 + c * L), e2 = load4(s2 + c * L), e3 = load4(s3 + c * L);
      const Vec4 zc = load4(z + c * L);
      acc0 += e0 * zc;
      acc1 += e1 * zc;
      acc2 += e2 * zc;
      acc3 += e3 * zc;
      store4(r + c * L, load4(r + c * L) - ((e0 * z0 + e1 * z1) + (e2 * z2 + e3 * z3)));
    }
    Vec4 acc[4] = {acc0, acc1, acc2, acc3};
    for (std::size_t a = a0; a < a0 + 4; ++a)  // the block on the diagonal
      for (std::size_t c = a0; c <= a; ++c) {
        const Vec4 e = load4(s + (tri(a) + c) * L);
        acc[a - a0] += e * load4(z + c * L);
        if (c < a) acc[c - a0] += e * load4(z + a * L);
      }
    for (std::size_t t = 0; t < 4; ++t) store4(r + (a0 + t) * L, load4(r + (a0 + t) * L) - acc[t]);
  }
  for (std::size_t a = a0; a < n; ++a) {  // the last rows, one at a time
    const double* row = s + tri(a) * L;
    const Vec4 za = load4(z + a * L);
    Vec4 acc = load4(row + a * L) * za;
    for (std::size_t c = 0; c < a; ++c) {  // row a's entries, and column a's above the diagonal
      const Vec4 sac = load4(row + c * L);
      acc += sac * load4(z + c * L);
      store4(r + c * L, load4(r + c * L) - sac * za);
    }
    store4(r + a * L, load4(r + a * L) - acc);
  }
}

/// G groups of kLanes lanes side by side in G kLanes lanes: entry e of
/// group g's lane l (at src[(g count + e) kLanes + l], the groups one after
/// the other) to out[(e G + g) kLanes + l], in out's type (float narrows).
template <class E>
CUBESOLVE_KERNEL void side_by_side(const double* src, std::size_t count, std::size_t G, E* out) {
  for (std::size_t e = 0; e < count; ++e)
    for (std::size_t g = 0; g < G; ++g) store4(out + (e * G + g) * kLanes, load4(src + (g * count + e) * kLanes));
}

/// The float32 factorization's refinement (batched_solve_mixed): at most
/// this many solves, and the error it leaves, relative to the solution, as
/// estimated from its steps.
constexpr int kMaxRefine = 8;
constexpr double kRefineTol = 1e-13;

/// G (2 or 4) groups of kLanes SPD systems (S: G packed systems of tri(q)
/// x kLanes, as batched_cholesky takes them, one after the other; z[g]:
/// group g's right-hand sides, q x kLanes) side by side in the 8 or 16 lanes
/// of one float32 factorization, at twice the float64 rate, and its
/// solutions refined against float64 residuals until each lane's step shows
/// an error below kRefineTol of its solution: the float64 Cholesky's
/// accuracy. A lane whose float32 pivots do not clear 4 tau, or whose steps
/// do not shrink fast, is solved in float64 (batched_cholesky with tau),
/// which has the last word: ok[l] as there. The systems are deletions
/// I - H_II (entries within [-1, 1], float32's range), their pivots judged
/// against 1 (see kSmallTau), padding lanes the identity. Scratch: f32 of (tri(q) + q) x 4G floats, work of 3 G q kLanes
/// doubles. S is kept but for the groups solved in float64, z[g] becomes the
/// solutions. Returns the lanes solved in float32, bit g * kLanes + l for
/// lane l of group g.
template <std::size_t G>
CUBESOLVE_KERNEL unsigned batched_solve_mixed(double* S, std::size_t q, double* const z[G], float* f32, double* work,
                                              double tau, bool* ok) {
  static_assert(G == 2 || G == 4, "eight or sixteen float lanes");
  using VF = std::conditional_t<G == 2, Vec8f, Vec16f>;
  constexpr std::size_t L = kLanes, W = G * L;
  const std::size_t T = tri(q), V = q * L;  // one group's system and vector
  float *F = f32, *r32 = f32 + T * W;
  double *b = work, *x = b + G * V, *r = x + G * V;
  side_by_side(S, T, G, F);
  bool held[W];
  batched_cholesky<VF>(F, q, static_cast<float>(4 * tau), held, VF{} + 1);
  for (std::size_t g = 0; g < G; ++g) {
    std::copy(z[g], z[g] + V, b + g * V);
    std::copy(z[g], z[g] + V, r + g * V);
  }
  std::fill(x, x + G * V, 0.0);
  // Per lane: 1 while refining, the size of the last step.
  Vec4 active[G], last[G];
  for (std::size_t g = 0; g < G; ++g)
    for (std::size_t l = 0; l < L; ++l) active[g][l] = held[g * L + l] ? 1.0 : 0.0, last[g][l] = 0.0;
  bool converged[W] = {};
  for (int it = 0; it < kMaxRefine; ++it) {
    side_by_side(r, q, G, r32);
    batched_cholesky_solve<VF>(F, q, r32);
    bool refining = false;
    for (std::size_t g = 0; g < G; ++g) {
      Vec4 dn = {}, xn = {};
      for (std::size_t a = 0; a < q; ++a) {
        const Vec4 d = load4(r32 + a * W + g * L) * active[g];
        const Vec4 xa = load4(x + g * V + a * L) + d;
        store4(x + g * V + a * L, xa);
        const Vec4 ad = d < 0 ? -d : d, ax = xa < 0 ? -xa : xa;
        dn = dn > ad ? dn : ad;
        xn = xn > ax ? xn : ax;
      }
      for (std::size_t l = 0; l < L; ++l) {
        if (active[g][l] == 0) continue;
        // The next step, about rate times this one, bounds this solution's error.
        const double rate = it > 0 ? dn[l] / last[g][l] : 1.0;
        if (dn[l] == 0 || (it > 0 && rate < 0.5 && rate * dn[l] <= kRefineTol * xn[l])) {
          converged[g * L + l] = true;
          active[g][l] = 0;
        } else if (it > 0 && !(rate < 0.5)) {
          active[g][l] = 0;  // not converging: float64 takes it
        }
        last[g][l] = dn[l];
        refining = refining || active[g][l] != 0;
      }
    }
    if (!refining) break;
    for (std::size_t g = 0; g < G; ++g)
      if (active[g][0] + active[g][1] + active[g][2] + active[g][3] > 0)
        batched_residual(S + g * T * L, q, b + g * V, x + g * V, r + g * V);
  }
  for (std::size_t g = 0; g < G; ++g) std::copy(x + g * V, x + (g + 1) * V, z[g]);
  unsigned refined = 0;
  for (std::size_t l = 0; l < W; ++l) refined |= converged[l] ? 1u << l : 0u;
  for (std::size_t g = 0; g < G; ++g) {
    bool redo = false;
    for (std::size_t l = 0; l < L; ++l) redo = redo || !converged[g * L + l];
    if (!redo) {
      for (std::size_t l = 0; l < L; ++l) ok[g * L + l] = true;
      continue;
    }
    double* zg = r + g * V;  // float64 from the right-hand sides, for the lanes that need it
    std::copy(b + g * V, b + (g + 1) * V, zg);
    bool ok64[L];
    batched_cholesky(S + g * T * L, q, tau, ok64, Vec4{} + 1);
    batched_cholesky_solve(S + g * T * L, q, zg);
    for (std::size_t l = 0; l < L; ++l) {
      ok[g * L + l] = converged[g * L + l] || ok64[l];
      if (converged[g * L + l]) continue;
      for (std::size_t a = 0; a < q; ++a) z[g][a * L + l] = zg[a * L + l];
    }
  }
  return refined;
}

/// Batched band Cholesky of kLanes symmetric positive definite systems of
/// size n and half-bandwidth b that share their band: entry (i, j),
/// 0 <= i - j <= b, of system l at s[(i * (b + 1) + (i - j)) * kLanes + l];
/// overwritten by L, its diagonal stored as reciprocals. ok[l] as in
/// batched_cholesky().
CUBESOLVE_KERNEL void batched_cholesky_band(double* s, std::size_t n, std::size_t b, double tau, bool* ok) {
  constexpr std::size_t L = kLanes;
  const std::size_t w = b + 1;
  auto at = [s, w](std::size_t i, std::size_t j) { return s + (i * w + (i - j)) * L; };
  const Vec4 floor = pivot_floor<Vec4>(at, n, tau);
  Mask4 bad = {};
  for (std::size_t j = 0; j < n; ++j) {
    Vec4 d = load4(at(j, j));
    for (std::size_t k = j > b ? j - b : 0; k < j; ++k) d -= load4(at(j, k)) * load4(at(j, k));
    const Vec4 inv = pivot_inverse(d, floor, bad);
    store4(at(j, j), inv);
    for (std::size_t i = j + 1; i < n && i <= j + b; ++i) {
      Vec4 v = load4(at(i, j));
      for (std::size_t k = i > b ? i - b : 0; k < j; ++k) v -= load4(at(i, k)) * load4(at(j, k));
      store4(at(i, j), v * inv);
    }
  }
  for (std::size_t l = 0; l < L; ++l) ok[l] = bad[l] == 0;
}

/// Solves the kLanes systems L L^T x = b in place (L from
/// batched_cholesky_band); x[i * kLanes + l] is entry i of system l.
CUBESOLVE_KERNEL void batched_cholesky_band_solve(const double* s, std::size_t n, std::size_t b, double* x) {
  constexpr std::size_t L = kLanes;
  const std::size_t w = b + 1;
  for (std::size_t i = 0; i < n; ++i) {
    Vec4 v = load4(x + i * L);
    for (std::size_t k = i > b ? i - b : 0; k < i; ++k) v -= load4(s + (i * w + (i - k)) * L) * load4(x + k * L);
    store4(x + i * L, v * load4(s + i * w * L));
  }
  for (std::size_t i = n; i-- > 0;) {
    Vec4 v = load4(x + i * L);
    for (std::size_t k = i + 1; k < n && k <= i + b; ++k) v -= load4(s + (k * w + (k - i)) * L) * load4(x + k * L);
    store4(x + i * L, v * load4(s + i * w * L));
  }
}

#pragma GCC diagnostic pop

}  // namespace cubesolve::detail
