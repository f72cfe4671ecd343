// Built without CUDA: the same API, and no CUDA device.
#include "backend.hpp"

namespace cubesolve::detail::gpu {

namespace {
const char* const kNoCuda =
    "this build of CubeSolve has no CUDA backend (configure with CUBESOLVE_CUDA=ON where nvcc is found)";
}

DeviceInfo cuda_query() {
  DeviceInfo info;
  info.reason = kNoCuda;
  return info;
}

std::unique_ptr<Backend> make_cuda_backend() { throw NumericalError(kNoCuda); }

}  // namespace cubesolve::detail::gpu
