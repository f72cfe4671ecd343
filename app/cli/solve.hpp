#pragma once
// The solve command's request and report, shared by the one-process and the
// MPI solve.

#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <string>
#include <vector>

namespace cubesolve::cli {

struct SolveRequest {
  std::string cube;
  DesignSpec design;
  std::string weights;
  InputOptions input;
  ResultPaths out;
  SolveOptions options;
  bool json = false;
};

/// One MPI rank's share of a solve.
struct RankReport {
  std::size_t blocks = 0, pixels = 0;
  double seconds = 0;         // wall time from the start of the work to the rank's last block
  double engine_seconds = 0;  // of which in the engine
};

struct SolveReport {
  StreamedSolve run;
  Shape x_shape;
  DType x_type = DType::Float32;
  double peak_memory_mb = 0;
  Loss loss = Loss::L2;
  std::vector<RankReport> ranks;  // under MPI
};

void print_json(const SolveReport& r);
void print_text(const SolveReport& r);

}  // namespace cubesolve::cli
