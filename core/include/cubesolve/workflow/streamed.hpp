#pragma once
// The streamed solve: reader → engine → writer a block of rows at a time,
// so that a cube larger than memory is solved within a memory budget.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/progress.hpp>
#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/results.hpp>

#include <array>
#include <string>
#include <vector>

namespace cubesolve {

/// What a solve did, over all its blocks.
struct SolveTotals {
  PathCounts paths{};
  std::array<std::size_t, 5> status{};  // pixels per PixelStatus
  double engine_seconds = 0;
  std::size_t pixels = 0;
  int threads = 1;
  Device device = Device::Cpu;
  std::size_t device_pixels = 0;
  std::vector<std::string> warnings;

  void add(const SolveResult& r);
};

struct StreamedSolve {
  SolveTotals totals;
  std::size_t blocks = 0, rows_per_block = 0;
  std::vector<std::string> outputs;  // the files written
};

/// Solves `in` into the files of `out`, a block of rows at a time: a
/// block's data take three quarters of options.memory, the engine's chunks
/// the rest. The files appear when all is written, or none does. Throws as
/// solve() (Cancelled when `progress` returns false), IoError, InputError.
StreamedSolve solve_streamed(const Inputs& in, const ResultPaths& out, SolveOptions options,
                             const Progress& progress = {});

}  // namespace cubesolve
