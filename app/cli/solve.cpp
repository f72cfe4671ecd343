// cubesolve-cli solve: the streamed solve of a cube into result files.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <iostream>

namespace cubesolve::cli {

namespace {

struct SolveReport {
  StreamedSolve run;
  Shape x_shape;
  DType x_type = DType::Float32;
  double peak_memory_mb = 0;
};

void print_json(const SolveReport& r) {
  const SolveTotals& t = r.run.totals;
  Json j;
  j.begin_object()
      .field("command", "solve")
      .field("engine_seconds", t.engine_seconds)
      .field("pixels", t.pixels)
      .field("device", device_name(t.device))
      .field("device_pixels", t.device_pixels)
      .field("threads", t.threads)
      .field("blocks", r.run.blocks)
      .field("rows_per_block", r.run.rows_per_block)
      .field("peak_memory_mb", r.peak_memory_mb);
  json_paths(j, t.paths);
  json_status(j, t);
  j.key("shape").begin_array();
  for (std::size_t d : r.x_shape) j.value(d);
  j.end_array().field("dtype", dtype_name(r.x_type));
  j.key("outputs").begin_array();
  for (const auto& p : r.run.outputs) j.value(p);
  j.end_array().end_object();
  std::cout << j.str() << "\n";
}

void print_text(const SolveReport& r) {
  std::cout << "solved " << summary(r.run.totals) << "\n";
  for (const auto& p : r.run.outputs) std::cout << "wrote " << p << "\n";
}

}  // namespace

int cmd_solve(const std::vector<std::string>& argv) {
  const Args args("solve", argv, {"json"},
                  {"output", "weights", "device", "rcond", "min-valid", "ridge", "diag", "threads", "dtype", "model",
                   "residual", "method", "memory", "pairs", "times", "device-precision", "device-memory"});
  args.expect_positional(2, 2, "CUBE DESIGN");
  ResultPaths out;
  out.x = args.get("output", "");
  if (out.x.empty()) throw InputError("solve: expected -o X.npy for the solution, found none");
  out.diagnostics = args.get("diag", "");
  out.model = args.get("model", "");
  out.residual = args.get("residual", "");
  SolveOptions options = solve_options(args);
  options.residuals = !out.diagnostics.empty();
  device_options(args, options, "auto");

  const std::string cube = args.positional()[0], design = args.positional()[1];
  if (design == "sbas" && !args.get("pairs") && !is_stack(cube, design))
    throw InputError("sbas: expected --pairs FILE (YYYYMMDD_YYYYMMDD lines) or a MintPy ifgramStack.h5 cube");
  const Inputs in = open_inputs(cube, {design, args.get("pairs", ""), args.get("times", "")}, args.get("weights", ""));
  ProgressBar bar("solving");
  SolveReport report;
  report.run = solve_streamed(in, out, options, bar.callback());
  const Shape shape = in.cube->shape();
  report.x_shape = {in.design.cols(), shape[1], shape[2]};
  report.x_type = options.output.value_or(in.cube->dtype());
  report.peak_memory_mb = peak_memory_mb();
  print_warnings(report.run.totals.warnings);
  if (args.flag("json")) print_json(report);
  else print_text(report);
  return 0;
}

}  // namespace cubesolve::cli
