#include <cubesolve/device.hpp>
#include <cubesolve/error.hpp>

#include "parallel.hpp"

namespace cubesolve {

const char* version() { return CUBESOLVE_VERSION; }

Device parse_device(const std::string& text, const std::string& what) {
  if (text == "auto") return Device::Auto;
  if (text == "cpu") return Device::Cpu;
  if (text == "cuda" || text == "gpu") return Device::Cuda;
  throw InputError(what + ": expected auto, cpu or cuda, found '" + text + "'");
}

const char* device_name(Device device) {
  switch (device) {
    case Device::Auto: return "auto";
    case Device::Cpu: return "cpu";
    case Device::Cuda: return "cuda";
  }
  return "?";
}

Device resolve_device(Device requested) {
  // This build computes on the CPU only.
  if (requested == Device::Cuda)
    throw NumericalError("--device cuda: this build of CubeSolve has no CUDA backend; use --device cpu or auto");
  return Device::Cpu;
}

std::vector<std::string> describe_devices() {
  return {"cpu: " + std::to_string(detail::thread_count(0)) + " threads"};
}

}  // namespace cubesolve
