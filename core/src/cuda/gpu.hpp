#pragma once
// The device seen from the C++ engine: no CUDA type crosses this header.

#include "device_kernels.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cubesolve {
class Design;
}
namespace cubesolve::detail {
struct DesignFactors;
}

namespace cubesolve::detail::gpu {

class Backend;

struct DeviceInfo {
  bool available = false;
  std::string name;    // e.g. "NVIDIA H200"
  std::string reason;  // why none is usable
  std::size_t memory = 0;
};

/// The first CUDA device (or the backend set for tests), or why there is
/// none. Never throws; an error from the first query (no driver, no device)
/// means "none".
DeviceInfo query();

/// A chunk of the cube for the device: pixels [begin, begin + count) of a
/// cube stored observation-major (value i of pixel p at i * stride + p).
struct Chunk {
  const void* cube = nullptr;
  bool float32 = true;  // else float64
  std::size_t stride = 0, begin = 0, count = 0;
  bool rss = false;            // also each pixel's residual sum of squares
  const void* weights = nullptr;  // laid out like the cube, or null
  bool weights_float32 = true;
};

struct Settings {
  double tau = 0;       // smallest relative pivot of I - H_II, Q_II and C_VV
  double gram_tau = 0;  // smallest relative pivot of a Gram matrix
  double gram_step = 0; // largest |step| / |x| of the Gram solutions' refinement
  double gather_step = 0;  // largest |step| / |w| of a gathered C_VV's float64 refinement
  double growth = 0;    // largest |correction| / |y| of a deletion or dual fill
  double ridge = 0;     // added to the Gram matrices' diagonal
  bool float32 = true;  // float32 systems refined once; else float64
  std::size_t memory = 0;  // device bytes to use at most; 0: what is free
};

/// What the device found, per pixel of the chunk (host arrays).
struct ChunkResult {
  /// The solutions, written for the pixels marked done only: M rows of
  /// `count` values, row j at x + j * x_stride, float32 or float64 (an
  /// output cube's rows, say).
  void* x = nullptr;
  bool x_float32 = false;
  std::size_t x_stride = 0;
  std::int32_t* nv = nullptr;    // valid values
  std::uint8_t* kind = nullptr;  // kSkip, kFull, kDeletion, kDual, kGather, kGram
  std::uint8_t* done = nullptr;  // 1: x (and rss) are the device's answer; 0: solve it on the CPU
  double* rss = nullptr;         // when asked for
};

/// A design's factors on one backend, each uploaded (in float32 or
/// float64) when a solver first needs it and kept while this lives.
class DeviceFactors {
public:
  enum Which : int { Pinv, A, Hat, Qinv, Gram, Outer, Count };
  explicit DeviceFactors(std::shared_ptr<Backend> dev) : dev_(std::move(dev)) {}
  ~DeviceFactors();
  DeviceFactors(const DeviceFactors&) = delete;
  DeviceFactors& operator=(const DeviceFactors&) = delete;

  struct Upload {
    const void* p = nullptr;  // null where the factor is empty (not kept for this design)
    std::size_t bytes = 0;
  };
  /// The n `values` (the factor `which`) on the device; uploaded on first
  /// use. Throws OutOfMemory, NumericalError.
  Upload get(Which which, bool float32, const double* values, std::size_t n);

private:
  std::mutex mutex_;
  std::shared_ptr<Backend> dev_;
  Upload arrays_[Count][2];
  std::size_t* uploads_ = nullptr;
  friend class FactorCache;
};

/// The device copies of a design's factors, kept while the Design lives (a
/// streamed solve of many row blocks uploads them once): those on the
/// backend last asked for. Held by DesignFactors; thread-safe.
class FactorCache {
public:
  /// The factors on `dev` (a solver keeps them while it lives, even when a
  /// later solver asks for another backend).
  std::shared_ptr<DeviceFactors> on(const std::shared_ptr<Backend>& dev);
  /// Factors uploaded through this cache so far.
  std::size_t uploads() const;

private:
  mutable std::mutex mutex_;
  std::shared_ptr<DeviceFactors> current_;
  std::size_t uploads_ = 0;
};

/// The device paths: full, deletion, dual (Schur and gathered) and Gram.
/// Per piece of the cube: the values go up as they are stored (float32 or
/// float64); the device finds each pixel's missing rows and, from its valid
/// count, its path (the planner's choice, given as a table); the small
/// systems of each kind and size are solved in batches (Cholesky): deletion
/// and dual fill the missing rows and one GEMM gives X = P·Y~; gather solves
/// C_VV w = y_V and X = A^T w; Gram matrices (weights, ridge) come from one
/// GEMM of A's packed row products. In float32 mode the deletion and dual
/// systems are float32 and one step of iterative refinement against float64
/// residuals follows (the same factors, applied to the residual of the
/// filled rows); Gram systems and float64 mode are float64 throughout.
///
/// Thread-safe: each call takes one of the backend's lanes (a stream with its
/// library handles, and buffers kept for it), so two callers' transfers and
/// kernels overlap. Work that does not fit the device's free memory is cut
/// into smaller pieces; when an allocation fails, the pieces shrink and the
/// call is repeated.
class Solver {
public:
  /// Uploads what the design's factors lack on the device. `table` (n + 1
  /// entries): the device kind for a pixel with that many valid values.
  /// Throws OutOfMemory, or NumericalError when the device fails.
  Solver(const Design& design, std::vector<std::uint8_t> table, const Settings& settings);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  /// Throws OutOfMemory when not even a small piece fits, NumericalError
  /// when the device fails.
  void solve(const Chunk& in, const ChunkResult& out);

  /// Pixels in the largest piece one call may send; shrinks after an
  /// allocation fails.
  std::size_t piece_limit() const { return limit_.load(); }
  /// How often an allocation failed and the pieces were made smaller.
  int shrinks() const { return shrinks_.load(); }
  /// Pieces sent to the device so far.
  std::size_t pieces() const { return pieces_.load(); }
  /// Systems factored so far (pixels with the same rows share one).
  std::size_t systems() const { return systems_.load(); }

  /// What a piece's work reads: the design's factors on the device (null
  /// where a kind is not taken), sizes and settings.
  struct Plan {
    std::size_t n = 0, m = 0;
    int max_q = 0;  // the largest system the table sends to the device
    std::vector<std::uint8_t> table;
    Settings settings;
    const double *pinv = nullptr, *a = nullptr, *qinv = nullptr, *gram = nullptr, *outer = nullptr;
    const void *hat_work = nullptr, *qinv_work = nullptr, *gram_work = nullptr;  // in the work precision
  };

private:
  template <class T, class R> friend class PieceWork;
  void run(int lane, const Chunk& in, const ChunkResult& out);

  std::shared_ptr<Backend> dev_;
  std::shared_ptr<DeviceFactors> factors_;
  Plan plan_;
  std::size_t budget_ = 0;              // device bytes a lane may take for a piece
  std::vector<double> sys_per_pixel_;  // per lane: systems' bytes a pixel took in the last piece (-1: none yet)
  std::atomic<std::size_t> limit_{0};
  std::atomic<int> shrinks_{0};
  std::atomic<std::size_t> pieces_{0};
  std::atomic<std::size_t> systems_{0};
};

/// A pixel's valid rows (indices into A's rows) and their values.
struct PixelRows {
  std::vector<int> rows;
  std::vector<double> y;
};

/// Per-pixel normal equations on the device, for comparison: pixel after
/// pixel (a per-pixel loop), upload A_V and y_V, G = A_V^T A_V and A_V^T y_V
/// by two GEMMs, Cholesky and solve, in float64. `a` is A row-major (n, m).
/// Returns the seconds from the first upload to the last result; x (pixels x
/// m) gets the solutions, NaN where G was not positive definite.
double normal_equations(const std::vector<double>& a, std::size_t m, const std::vector<PixelRows>& pixels,
                        std::vector<double>& x);

/// The device's own floors for a solve of `pixels` pixels of n values and m
/// unknowns: one float64 GEMM the size of P·Y on the device (timed on up to
/// 65,536 columns, best of 3, scaled to all), the upload of the cube's
/// `bytes` from the host's memory as stored, and the download of `x_bytes`
/// (X in the output's type) to the host's memory (each best of 2).
struct Floors {
  double gemm = 0, upload = 0, download = 0;  // seconds
};
Floors floors(std::size_t m, std::size_t n, std::size_t pixels, const void* cube, std::size_t bytes,
              std::size_t x_bytes);

}  // namespace cubesolve::detail::gpu
