#pragma once
// The device pipeline's kernels, one element or one system per call, written
// once for both backends: nvcc compiles them into CUDA kernels (gpu.cu), the
// host compiler into the loops of the reference backend (host_backend.cpp).
// Nothing here allocates, throws or calls a library.

#include <cstdint>

#ifdef __CUDACC__
#define CUBESOLVE_HD __host__ __device__ inline
#else
#define CUBESOLVE_HD inline
#endif

namespace cubesolve::detail::gpu {

/// Per-pixel kinds the device takes; everything else stays on the CPU.
enum : std::uint8_t { kSkip = 0, kFull = 1, kDeletion = 2, kDual = 3 };

/// One batch of small systems of one kind, padded to one size qb with the
/// identity. System j belongs to pixel pix[j] (its column in the chunk) and
/// has q[j] <= qb missing rows, rows[roff[j] ...]. With y~ the pixel's values
/// (its missing rows to be filled in) and x = P y~, the filled rows satisfy
///   deletion  ((I - H) y~)_I = 0     residual  y~_I - A_I t,  t = P y~
///   dual      (Q y~)_I = 0           residual  t_I,           t = Q y~
/// Each pass takes the residual r, solves S z = r with S = (I - H)_II or
/// Q_II and sets y~_I -= z: from y~_I = 0 that is the solution, and a second
/// pass with the residual in float64 refines a float32 one. Systems and their
/// solutions are in the work precision T, everything else in float64.
template <class T> struct Batch {
  int n = 0, m = 0, qb = 0, count = 0, kind = kDeletion;
  const int* pix = nullptr;
  const int* roff = nullptr;
  const int* q = nullptr;
  const int* rows = nullptr;
  const T* K = nullptr;       // H (deletion) or Q (dual), n x n, symmetric
  const double* A = nullptr;  // the design, row-major (n, m)
  const double* t = nullptr;  // P y~ (m x B) or Q y~ (n x B), a column per pixel
  T* S = nullptr;             // count systems, qb x qb column-major each
  T* z = nullptr;             // count right-hand sides / solutions, qb each
  double* y = nullptr;        // y~, n x B
  const int* info = nullptr;  // the factorization's status per system
  std::uint8_t* ok = nullptr;  // per pixel of the chunk: 1 = the device vouches for it
  double tau = 0;     // smallest relative pivot
  double growth = 0;  // largest |z| / |y~|
};

template <class T> CUBESOLVE_HD T abs_of(T v) { return v < T(0) ? -v : v; }

/// Element e of the batch's systems (count * qb * qb of them).
template <class T> CUBESOLVE_HD void build_entry(const Batch<T>& b, long long e) {
  const long long size = static_cast<long long>(b.qb) * b.qb;
  const int j = static_cast<int>(e / size);
  const int rem = static_cast<int>(e % size), a = rem % b.qb, c = rem / b.qb;
  const int q = b.q[j];
  T v = a == c ? T(1) : T(0);
  if (a < q && c < q) {
    const int* I = b.rows + b.roff[j];
    const T k = b.K[static_cast<long long>(I[a]) * b.n + I[c]];
    v = b.kind == kDeletion ? v - k : k;
  }
  b.S[e] = v;
}

/// Element e of the batch's residuals (count * qb of them), in float64.
template <class T> CUBESOLVE_HD void rhs_entry(const Batch<T>& b, long long e) {
  const int j = static_cast<int>(e / b.qb), a = static_cast<int>(e % b.qb);
  double v = 0;
  if (a < b.q[j]) {
    const int row = b.rows[b.roff[j] + a];
    const long long k = b.pix[j];
    if (b.kind == kDeletion) {  // y~_I - A_I t
      const double* ar = b.A + static_cast<long long>(row) * b.m;
      const double* tk = b.t + k * b.m;
      for (int i = 0; i < b.m; ++i) v -= ar[i] * tk[i];
      v += b.y[k * b.n + row];
    } else {
      v = b.t[k * b.n + row];
    }
  }
  b.z[e] = static_cast<T>(v);
}

/// After the factorization of system j: the CPU's pivot rule, every pivot
/// L_aa^2 > tau * (the largest diagonal entry of the system). Sets ok.
template <class T> CUBESOLVE_HD void check_system(const Batch<T>& b, int j) {
  const int q = b.q[j];
  const int* I = b.rows + b.roff[j];
  const T* L = b.S + static_cast<long long>(j) * b.qb * b.qb;
  double dmax = 0;
  for (int a = 0; a < q; ++a) {
    const double k = static_cast<double>(b.K[static_cast<long long>(I[a]) * b.n + I[a]]);
    const double d = b.kind == kDeletion ? 1.0 - k : k;
    dmax = d > dmax ? d : dmax;
  }
  bool good = b.info[j] == 0 && dmax > 0;
  for (int a = 0; a < q && good; ++a) {
    const double l = static_cast<double>(L[static_cast<long long>(a) * b.qb + a]);
    good = l * l > b.tau * dmax;
  }
  b.ok[b.pix[j]] = good ? 1 : 0;
}

/// After the solve of system j: y~_I -= z. With `bounded` (the first pass),
/// a solution that grows beyond `growth` times the pixel's largest value is
/// refused (ok = 0) and not applied.
template <class T> CUBESOLVE_HD void scatter_system(const Batch<T>& b, int j, bool bounded) {
  const long long k = b.pix[j];
  if (!b.ok[k]) return;
  const int q = b.q[j];
  const int* I = b.rows + b.roff[j];
  const T* z = b.z + static_cast<long long>(j) * b.qb;
  double* y = b.y + k * b.n;
  if (bounded) {
    double ymax = 0, zmax = 0;
    for (int i = 0; i < b.n; ++i) ymax = abs_of(y[i]) > ymax ? abs_of(y[i]) : ymax;
    for (int a = 0; a < q; ++a) zmax = abs_of(static_cast<double>(z[a])) > zmax ? abs_of(static_cast<double>(z[a])) : zmax;
    // Written so that NaN fails.
    if (!(zmax <= b.growth * (ymax > 1e-300 ? ymax : 1e-300))) {
      b.ok[k] = 0;
      return;
    }
  }
  for (int a = 0; a < q; ++a) y[I[a]] -= static_cast<double>(z[a]);
}

/// The values as float64, from the float32 they travelled in.
CUBESOLVE_HD void widen_entry(const float* src, double* dst, long long e) { dst[e] = static_cast<double>(src[e]); }

}  // namespace cubesolve::detail::gpu
