// cubesolve-cli solve: the streamed solve of a cube into result files.
#include "commands.hpp"
#include "common.hpp"
#include "distributed.hpp"
#include "solve.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <cstdio>
#include <iostream>

namespace cubesolve::cli {

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
      .field("peak_memory_mb", r.peak_memory_mb)
      .field("loss", loss_name(r.loss))
      .field("wall_seconds", r.run.wall_seconds)
      .field("bytes_read", r.run.bytes_read)
      .field("read_seconds", r.run.read_seconds)
      .field("read_rate_mb_s", r.run.read_seconds > 0 ? static_cast<double>(r.run.bytes_read) / 1e6 / r.run.read_seconds : 0.0)
      .field("read_ahead", r.run.read_ahead)
      .field("wait_seconds", r.run.wait_seconds);
  if (!r.ranks.empty()) {
    double slowest = 0;
    j.field("ranks", r.ranks.size()).key("per_rank").begin_array();
    for (std::size_t k = 0; k < r.ranks.size(); ++k) {
      const RankReport& q = r.ranks[k];
      slowest = std::max(slowest, q.seconds);
      j.begin_object().field("rank", k).field("blocks", q.blocks).field("pixels", q.pixels).field("seconds", q.seconds)
          .field("engine_seconds", q.engine_seconds).end_object();
    }
    j.end_array().field("slowest_rank_seconds", slowest);
  }
  json_paths(j, t.paths);
  json_status(j, t);
  json_tuning(j, tuning_state());
  j.key("shape").begin_array();
  for (std::size_t d : r.x_shape) j.value(d);
  j.end_array().field("dtype", dtype_name(r.x_type));
  j.key("outputs").begin_array();
  for (const auto& p : r.run.outputs) j.value(p);
  j.end_array().end_object();
  std::cout << j.str() << "\n";
}

void print_text(const SolveReport& r) {
  std::cout << "solved " << summary(r.run.totals);
  if (!r.ranks.empty()) std::cout << " (" << r.ranks.size() << " MPI ranks)";
  std::cout << "\n";
  if (r.run.bytes_read > 0 && r.run.read_seconds > 0) {  // the solve against reading the file once
    char ahead[96] = "";
    if (r.run.read_ahead) std::snprintf(ahead, sizeof ahead, ", beside the solve, which waited %.2f s for it", r.run.wait_seconds);
    std::printf("read %.1f MB in %.2f s (%.0f MB/s%s); %.2f s in all\n", static_cast<double>(r.run.bytes_read) / 1e6,
                r.run.read_seconds, static_cast<double>(r.run.bytes_read) / 1e6 / r.run.read_seconds, ahead, r.run.wall_seconds);
    std::fflush(stdout);
  }
  for (const auto& p : r.run.outputs) std::cout << "wrote " << p << "\n";
}

int cmd_solve(const std::vector<std::string>& argv) {
  const Args args("solve", argv, with_inputs({"json", "stderr", "cov"}, kInputFlags),
                  with_inputs({"output", "weights", "device", "rcond", "min-valid", "ridge", "diag", "threads", "dtype",
                               "model", "residual", "method", "memory", "pairs", "times", "device-precision",
                               "device-memory", "unit", "ref-date", "loss", "tol", "max-iter"},
                              kInputOptions));
  args.expect_positional(2, 2, "CUBE DESIGN");
  ResultPaths out;
  out.x = args.get("output", "");
  if (out.x.empty()) throw InputError("solve: expected -o X.npy for the solution, found none");
  out.diagnostics = args.get("diag", "");
  out.model = args.get("model", "");
  out.residual = args.get("residual", "");
  out.unit = args.get("unit", "m");
  out.ref_date = args.get("ref-date", "");
  if (!out.ref_date.empty() && !out.mintpy())
    throw InputError("--ref-date: expected an output in MintPy's layout (-o timeseries.h5, every date of the series), found " + out.x +
                     ", whose channels are the dates after the first, relative to the first");
  SolveOptions options = solve_options(args);
  options.residuals = !out.diagnostics.empty();
  out.std_error = options.std_errors = args.flag("stderr");
  out.robust = options.loss != Loss::L2 && !out.diagnostics.empty();
  out.covariance = options.covariance = args.flag("cov");
  if (out.std_error && out.diagnostics.empty())
    throw InputError("--stderr: expected --diag PREFIX to name where the standard errors go (PREFIX_stderr), found no --diag");
  if (out.covariance && out.diagnostics.empty())
    throw InputError("--cov: expected --diag PREFIX to name where the covariances go (PREFIX_cov), found no --diag");
  device_options(args, options, "auto");

  const std::string cube = args.positional()[0], design = args.positional()[1];
  if (design == "sbas" && !args.get("pairs") && !is_stack(cube, design))
    throw InputError("sbas: expected --pairs FILE (YYYYMMDD_YYYYMMDD lines) or a MintPy ifgramStack.h5 cube");
  const DesignSpec spec{design, args.get("pairs", ""), args.get("times", "")};
  out.temporal_coherence = !out.diagnostics.empty() && is_stack(cube, design);  // a phase stack's quality measure
  const InputOptions input = input_options(args, is_stack(cube, design));
  out.provenance = run_provenance(cube, spec, args.get("weights", ""), options, &input, out.mintpy() ? out.unit : "");
  const SolveRequest request{cube, spec, args.get("weights", ""), input, out, options, args.flag("json")};
  if (mpi::launched()) return mpi::solve(request);
  const Inputs in = open_inputs(request.cube, request.design, request.weights, request.input);
  describe_outputs(out, in);
  ProgressBar bar("solving");
  SolveReport report;
  report.run = solve_streamed(in, out, options, bar.callback());
  const Shape shape = in.cube->shape();
  report.x_shape = {in.design.cols(), shape[1], shape[2]};
  report.x_type = options.output.value_or(in.cube->dtype());
  report.peak_memory_mb = peak_memory_mb();
  report.loss = options.loss;
  print_warnings(tuning_state().warnings);  // (a stored parameters' line passed over)
  print_warnings(report.run.totals.warnings);
  if (request.json) print_json(report);
  else print_text(report);
  return 0;
}

}  // namespace cubesolve::cli
