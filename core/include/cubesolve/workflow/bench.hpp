#pragma once
// Reference timings the `bench` command prints beside the engine's: the
// floors no engine can beat and the per-pixel methods the engine replaces.

#include <cubesolve/data/array.hpp>
#include <cubesolve/engine/engine.hpp>

#include <cstddef>
#include <vector>

namespace cubesolve::bench {

/// Seconds for one GEMM of the size of P·Y~: (M, N) times (N, P), float64,
/// with the BLAS on all `threads` threads. Timed on at most 65536 columns and
/// scaled to P.
double gemm_floor_seconds(std::size_t m, std::size_t n, std::size_t pixels, int threads);

/// Seconds to read every value of the cube once (a sum over all threads).
double read_seconds(const Array& cube, int threads);

/// Seconds the question's method takes on the given pixels: per pixel,
/// solve(A_V^T A_V, A_V^T y_V) by LU (LAPACK dgesv), on all threads. Its
/// answers are discarded (they are wrong where A_V^T A_V is singular).
double normal_equations_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels,
                                int threads);

/// The same method on the CUDA device, pixel after pixel as the question's
/// loop runs it (Cholesky, float64). Throws NumericalError without a device.
double normal_equations_device_seconds(const Array& cube, const Design& design, const std::vector<std::size_t>& pixels);

/// K pixel indices spread evenly over P pixels (all of them when K >= P).
std::vector<std::size_t> spread(std::size_t pixels, std::size_t k);

}  // namespace cubesolve::bench
