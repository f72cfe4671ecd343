// Built without CUDA: the same API, and no device.
#include "gpu.hpp"

#include <cubesolve/error.hpp>

namespace cubesolve::detail::gpu {

DeviceInfo query() {
  DeviceInfo info;
  info.reason = "this build of CubeSolve has no CUDA backend (configure with CUBESOLVE_CUDA=ON where nvcc is found)";
  return info;
}

struct Solver::Impl {};

Solver::Solver(const DesignFactors&, double, double) { throw NumericalError(query().reason); }
Solver::~Solver() = default;
void Solver::solve(const double*, const std::uint8_t*, const std::uint8_t*, std::size_t, double*, std::uint8_t*) {}

}  // namespace cubesolve::detail::gpu
