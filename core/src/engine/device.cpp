#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>

#include "cuda/gpu.hpp"
#include "engine/parallel.hpp"

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
  if (requested == Device::Cpu) return Device::Cpu;
  const auto gpu = detail::gpu::query();
  if (gpu.available) return Device::Cuda;
  if (requested == Device::Cuda)
    throw NumericalError("no usable CUDA device (" + gpu.reason + ")");
  return Device::Cpu;
}

std::vector<std::string> describe_devices() {
  std::vector<std::string> d{"cpu: " + std::to_string(detail::thread_count(0)) + " threads"};
  const auto gpu = detail::gpu::query();
  if (gpu.available) d.push_back("cuda: " + gpu.name + ", " + std::to_string(gpu.memory >> 20) + " MiB");
  else d.push_back("cuda: none (" + gpu.reason + ")");
  return d;
}

}  // namespace cubesolve
