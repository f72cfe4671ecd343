#pragma once
#include <string>
#include <vector>

namespace cubesolve {

enum class Device { Auto, Cpu, Cuda };

/// Parses "auto", "cpu" or "cuda". Throws InputError naming `what`.
Device parse_device(const std::string& text, const std::string& what = "device");

/// Resolves a request to the device that will run: Auto takes a CUDA device
/// when one is usable, else the CPU. Throws NumericalError when Cuda is asked
/// for and none is usable, with the reason.
Device resolve_device(Device requested);

const char* device_name(Device device);

/// One line per usable compute device ("cpu: 2 threads", ...).
std::vector<std::string> describe_devices();

/// The library version, e.g. "0.1.0".
const char* version();

}  // namespace cubesolve
