#pragma once
// The CUDA backend seen from the C++ engine: no CUDA type crosses this header.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace cubesolve::detail {
struct DesignFactors;
}

namespace cubesolve::detail::gpu {

struct DeviceInfo {
  bool available = false;
  std::string name;    // e.g. "NVIDIA H200"
  std::string reason;  // why none is usable
  std::size_t memory = 0;
};

/// The first CUDA device, or why there is none. Never throws; an error from
/// the first query (no driver, no device) means "none".
DeviceInfo query();

/// Per-pixel kinds the GPU takes; everything else stays on the CPU.
enum : std::uint8_t { kSkip = 0, kFull = 1, kDeletion = 2, kDual = 3 };

/// The full, deletion and dual (Schur) paths on the device, in float64:
/// per pixel the small Cholesky that fills its missing rows, then one cuBLAS
/// GEMM X = P·Y^ for the chunk. Not thread-safe: one chunk at a time.
class Solver {
public:
  /// Uploads P, H and Q. Throws NumericalError when the device fails.
  explicit Solver(const DesignFactors& f, double tau, double max_growth);
  ~Solver();
  Solver(const Solver&) = delete;
  Solver& operator=(const Solver&) = delete;

  /// y: B pixels x N values (pixel-major, zero where missing); valid: the
  /// same layout, 1 = valid; kind: per pixel. Writes x (B x M, pixel-major)
  /// for the pixels of kinds full/deletion/dual and ok[k] = 1 where the
  /// device vouches for it (0: solve it on the CPU). Throws NumericalError.
  void solve(const double* y, const std::uint8_t* valid, const std::uint8_t* kind, std::size_t B, double* x,
             std::uint8_t* ok);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace cubesolve::detail::gpu
