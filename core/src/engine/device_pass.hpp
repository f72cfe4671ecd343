#pragma once
// The device pass of a solve: the pixels of the paths a CUDA device takes
// (full, deletion, dual, gathered and Gram systems), straight from the cube,
// before the CPU passes take what it leaves.

#include "engine/chunk.hpp"

#include <cubesolve/progress.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cubesolve::detail {

namespace gpu {
class Solver;
}

/// A device solver for the job, or null with a warning in job.r.warnings
/// when the device cannot be set up (the CPU then solves everything).
std::unique_ptr<gpu::Solver> make_device_solver(Job& job);

/// Runs the device on every pixel, a few large chunks at a time; the pixels
/// it solved are marked in job.taken and written with their diagnostics.
void device_pass(Job& job, std::vector<Workspace>& ws, const Progress& progress);

/// Warnings about pieces cut short for lack of device memory.
void device_warnings(const Job& job, std::vector<std::string>& warnings);

/// Whether the device's answers on a sample of its pixels agree with the
/// exact path (within what its precision promises).
bool device_results_hold(const Job& job, const std::vector<Workspace>& ws);

}  // namespace cubesolve::detail
