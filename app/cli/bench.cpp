// cubesolve-cli bench: the engine against its floors and the per-pixel
// methods it replaces, on a synthetic cube, in one process.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/workflow/bench.hpp>

#include <cstdio>
#include <ctime>
#include <iostream>

namespace cubesolve::cli {

namespace {

const char* weights_name(bench::BenchWeights w) {
  return w == bench::BenchWeights::Random ? "random" : w == bench::BenchWeights::Coherence ? "coherence" : "none";
}

const char* design_name(SyntheticDesign d) { return d == SyntheticDesign::Sbas ? "sbas" : "gaussian"; }

void print_json(const bench::BenchSettings& b, const bench::BenchReport& r) {
  const char* masks = b.masks == MaskPattern::Blobs ? "blobs" : "random";
  Json j;
  j.begin_object().field("command", "bench").field("n", b.n).field("m", b.m).field("size", b.size).field("pixels", r.pixels)
      .field("missing", b.missing).field("masks", masks).field("design", design_name(b.design)).field("threads", r.threads).field("engine_seconds", r.engine)
      .field("engine_seconds_float64_output", r.engine_float64).field("engine_seconds_with_rss", r.engine_rss)
      .field("gemm_floor_seconds", r.floor_gemm).field("read_seconds", r.floor_read)
      .field("engine_over_floor", r.engine / r.floor_gemm).field("exact_seconds", r.exact)
      .field("engine_rss_seconds", r.engine_rss).field("engine_stderr_seconds", r.engine_stderr)
      .field("stderr_over_rss", r.engine_stderr / r.engine_rss)
      .field("loss", loss_name(b.loss)).field("robust_seconds", r.engine_robust)
      .field("robust_over_engine", r.engine_robust > 0 ? r.engine_robust / r.engine : 0.0)
      .field("robust_iterations_p50", r.robust_iterations[0]).field("robust_iterations_p90", r.robust_iterations[1])
      .field("robust_iterations_p99", r.robust_iterations[2]).field("robust_iterations_max", r.robust_iterations[3])
      .field("robust_not_converged", r.robust_not_converged)
      .field("exact_speedup", r.exact / r.engine).field("sample", r.check.pixels)
      .field("device_precision", b.options.device_float64 ? "float64" : "mixed").field("weights", weights_name(b.weights));
  if (r.floor_gram > 0) j.field("gram_floor_seconds", r.floor_gram).field("engine_over_gram_floor", r.engine / r.floor_gram);
  if (r.normal > 0) j.field("normal_equations_seconds", r.normal).field("normal_equations_speedup", r.normal / r.engine);
  if (r.device == Device::Cuda) {
    j.field("device_gemm_floor_seconds", r.floor_device_gemm).field("upload_seconds", r.floor_upload)
        .field("download_seconds", r.floor_download)
        .field("engine_over_device_floor", r.engine / r.device_floor());
    if (r.normal_device > 0)
      j.field("normal_equations_device_seconds", r.normal_device)
          .field("normal_equations_device_speedup", r.normal_device / r.engine);
  }
  json_tuning(j, tuning_state());
  j.field("max_rel_error", r.check.max_error).field("device", device_name(r.device)).field("device_pixels", r.device_pixels);
  j.field("options_rcond", bench::kBenchRcond).key("options").begin_array();
  for (const auto& o : r.options) {
    j.begin_object().field("options", o.label).field("engine_seconds", o.seconds).field("engine_seconds_rcond", o.seconds_rcond)
        .field("rcond_over_default", o.seconds_rcond / o.seconds);
    json_paths(j, o.paths_rcond);
    j.end_object();
  }
  j.end_array();
  json_paths(j, r.paths);
  j.end_object();
  std::cout << j.str() << "\n";
}

void print_text(const bench::BenchSettings& b, const bench::BenchReport& r) {
  const char* masks = b.masks == MaskPattern::Blobs ? "blobs" : "random";
  const bool cuda = r.device == Device::Cuda;
  std::printf("bench: N=%zu M=%zu (%s design), %zux%zu = %zu pixels, %.0f%% missing (%s), %s%s, %d threads%s%s\n", b.n,
              b.m, b.design == SyntheticDesign::Sbas ? "SBAS" : "Gaussian", b.size, b.size, r.pixels, 100 * b.missing,
              masks, device_name(r.device),
              !cuda ? "" : b.options.device_float64 ? " (float64)" : " (mixed precision)", r.threads,
              b.weights == bench::BenchWeights::None ? "" : ", weights ", b.weights == bench::BenchWeights::None ? "" : weights_name(b.weights));
  const TuningState tuned = tuning_state();
  std::printf("  parameters: %s\n              %s\n", tuned.tuning.describe().c_str(), tuned.origin().c_str());
  std::printf("  engine                %9.4f s   (best of %d; X in float32 like the cube)\n", r.engine, b.repeat);
  std::printf("  engine, X in float64  %9.4f s   (one run; the errors below are from it)\n", r.engine_float64);
  std::printf("  engine, with rss      %9.4f s   %.2fx the engine (best of %d; as --diag and the desktop solve)\n",
              r.engine_rss, r.engine_rss / r.engine, b.repeat);
  std::printf("  engine, with stderr   %9.4f s   %.2fx the engine with rss (best of %d; --stderr, each pixel's own rows)\n",
              r.engine_stderr, r.engine_stderr / r.engine_rss, b.repeat);
  if (r.engine_robust > 0)
    std::printf("  engine, --loss %-6s %9.4f s   %.1fx the engine (one run); iterations p50 %d, p90 %d, p99 %d, max %d; %zu not converged\n",
                loss_name(b.loss), r.engine_robust, r.engine_robust / r.engine, r.robust_iterations[0], r.robust_iterations[1],
                r.robust_iterations[2], r.robust_iterations[3], r.robust_not_converged);
  std::printf("  floor: GEMM P*Y       %9.4f s   engine/floor %.2f%s\n", r.floor_gemm, r.engine / r.floor_gemm,
              cuda ? " (on the host's cores)" : "");
  std::printf("  floor: read Y once    %9.4f s\n", r.floor_read);
  if (cuda) {
    std::printf("  floor: device GEMM    %9.4f s   (P*Y in float64 on the device)\n", r.floor_device_gemm);
    std::printf("  floor: upload Y       %9.4f s   (the cube as stored, from the host's memory)\n", r.floor_upload);
    std::printf("  floor: download X     %9.4f s   (in the cube's type, to the host's memory)\n", r.floor_download);
    std::printf("  engine/device floor   %9.2f     (against the largest of the three; the device overlaps them)\n",
                r.engine / r.device_floor());
  }
  if (r.floor_gram > 0)
    std::printf("  floor: Gram GEMM      %9.4f s   engine/floor %.2f (packed row products times the weights)\n", r.floor_gram,
                r.engine / r.floor_gram);
  std::printf("  exact engine (gelsd)  %9.3f s   engine is %.0fx faster (%zu pixels timed, scaled)\n", r.exact,
              r.exact / r.engine, r.check.pixels);
  if (r.normal > 0)
    std::printf("  normal equations      %9.3f s   engine is %.0fx faster (per-pixel normal equations, LU)\n", r.normal,
                r.normal / r.engine);
  if (cuda && r.normal_device > 0)
    std::printf("  normal equations, GPU %9.3f s   engine is %.0fx faster (the same loop on the device)\n",
                r.normal_device, r.normal_device / r.engine);
  std::printf("  max relative error vs gelsd: %.3g over %zu sampled pixels\n", r.check.max_error, r.check.compared);
  if (cuda)
    std::printf("  pixels solved on the device: %zu of %zu (%s)\n", r.device_pixels, r.pixels,
                describe_devices().back().c_str());
  std::printf("  paths:%s\n", paths_text(r.paths).c_str());
  std::printf("  options (engine, best of %d; then with --rcond %g, and over the engine without it):\n", std::min(b.repeat, 3),
              bench::kBenchRcond);
  for (const auto& o : r.options)
    std::printf("    %-32s %8.4f s   %8.4f s  %5.2fx  %s\n", o.label.c_str(), o.seconds, o.seconds_rcond,
                o.seconds_rcond / o.seconds, paths_text(o.paths_rcond).c_str());
}

/// Today's date (UTC), YYYY-MM-DD.
std::string today() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &tm);
  return text;
}

/// bench --tune: the search's trials, what it chose, where it stored it.
int run_tune(const Args& args, int threads) {
  const double budget = args.number("tune-seconds", 50);
  const bool json = args.flag("json");
  const std::string file = tuning_file();
  if (!json) std::printf("bench --tune: searching the engine's parameters on this machine (about %.0f s)\n", budget);
  const bench::TuneReport r = bench::run_tune(threads, budget, [&](const std::string& line) {
    if (!json) std::printf("  %s\n", line.c_str()), std::fflush(stdout);
  });
  store_tuning(file, r.key, r.best, today());
  if (json) {
    Json j;
    j.begin_object().field("command", "bench").field("tune", true).field("machine", r.key.text())
        .field("machine_parameters", r.machine.describe()).field("parameters", r.best.describe())
        .field("kept_machine", r.kept_machine).field("check_machine_seconds", r.check_machine)
        .field("check_best_seconds", r.check_best).field("seconds", r.seconds).field("stored", file);
    j.key("shapes").begin_array();
    for (const auto& s : r.shapes) j.value(s);
    j.end_array().key("trials").begin_array();
    for (const auto& t : r.trials) {
      j.begin_object().field("parameters", t.tuning.describe()).field("score", t.score).key("seconds").begin_array();
      for (double v : t.seconds) j.value(v);
      j.end_array().end_object();
    }
    j.end_array().end_object();
    std::cout << j.str() << "\n";
    return 0;
  }
  std::printf("  shapes: %s; %s; %s\n", r.shapes[0].c_str(), r.shapes[1].c_str(), r.shapes[2].c_str());
  if (r.check_machine > 0)
    std::printf("  check, alternating runs: the machine's %.4f s, the best found %.4f s (%.3fx)%s\n", r.check_machine,
                r.check_best, r.check_best / r.check_machine, r.kept_machine ? ": not 2% faster, the machine's kept" : "");
  std::printf("  machine: %s\n  parameters: %s\n  stored in %s (%.0f s); bench, solve, the desktop and Python use them\n",
              r.key.text().c_str(), r.best.describe().c_str(), file.c_str(), r.seconds);
  return 0;
}

/// The scaling table (bench --scaling), as JSON or text.
void print_scaling(const bench::BenchSettings& b, const std::vector<bench::ScalingRow>& rows, bool json) {
  if (json) {
    Json j;
    j.begin_object().field("command", "bench").field("scaling", true).key("rows").begin_array();
    for (const auto& r : rows) {
      j.begin_object().field("n", r.n).field("m", r.m).field("pixels", r.pixels).field("missing", r.missing)
          .field("engine_seconds", r.engine).field("gemm_floor_seconds", r.floor_gemm)
          .field("engine_over_floor", r.engine / r.floor_gemm);
      json_paths(j, r.paths);
      j.end_object();
    }
    j.end_array().end_object();
    std::cout << j.str() << "\n";
  } else {
    std::printf("bench --scaling: the engine as one of pixels, N, M, missing share grows (%s masks, best of %d)\n",
                b.masks == MaskPattern::Blobs ? "blob" : "random", b.repeat);
    std::printf("  %9s %6s %6s %8s %10s %10s %8s  paths\n", "pixels", "N", "M", "missing", "engine s", "floor s", "ratio");
    for (const auto& r : rows)
      std::printf("  %9zu %6zu %6zu %7.0f%% %10.4f %10.4f %8.2f %s\n", r.pixels, r.n, r.m, 100 * r.missing, r.engine, r.floor_gemm,
                  r.engine / r.floor_gemm, paths_text(r.paths).c_str());
  }
}

}  // namespace

int cmd_bench(const std::vector<std::string>& argv) {
  const Args args("bench", argv, {"json", "scaling", "tune"},
                  {"size", "n", "m", "nan", "masks", "design", "threads", "sample", "repeat", "memory", "device", "device-precision",
                   "device-memory", "weights", "loss", "tune-seconds"});
  args.expect_positional(0, 0, "no positional arguments");
  bench::BenchSettings b;
  b.size = static_cast<std::size_t>(args.integer("size", 500, 1, 8192));
  b.n = static_cast<std::size_t>(args.integer("n", 50, 1, 100000));
  b.m = static_cast<std::size_t>(args.integer("m", 100, 1, 100000));
  b.missing = args.number("nan", 0.2);
  if (!(b.missing >= 0 && b.missing < 1)) throw InputError("--nan: expected a fraction in [0, 1), found " + args.get("nan", ""));
  const std::string masks = args.get("masks", "random");
  if (masks != "random" && masks != "blobs") throw InputError("--masks: expected random or blobs, found '" + masks + "'");
  b.masks = masks == "blobs" ? MaskPattern::Blobs : MaskPattern::Random;
  const std::string design = args.get("design", "gaussian");
  if (design != "gaussian" && design != "sbas") throw InputError("--design: expected gaussian or sbas, found '" + design + "'");
  b.design = design == "sbas" ? SyntheticDesign::Sbas : SyntheticDesign::Gaussian;
  b.sample = static_cast<std::size_t>(args.integer("sample", 500, 1, 1 << 24));
  b.repeat = static_cast<int>(args.integer("repeat", 5, 1, 100));
  b.options.threads = static_cast<int>(args.integer("threads", 0, 0, 4096));
  b.options.memory = static_cast<std::size_t>(args.integer("memory", 256, 16, 1 << 20)) << 20;
  b.options.residuals = false;
  const std::string weights = args.get("weights", "none");
  if (weights != "none" && weights != "random" && weights != "coherence")
    throw InputError("--weights: expected none, random or coherence, found '" + weights + "'");
  b.weights = weights == "random" ? bench::BenchWeights::Random : weights == "coherence" ? bench::BenchWeights::Coherence
                                                                                          : bench::BenchWeights::None;
  device_options(args, b.options, "cpu");
  if (const auto loss = args.get("loss")) b.loss = parse_loss(*loss, b.huber_delta, "--loss");
  if (args.flag("tune")) return run_tune(args, b.options.threads);
  if (args.flag("scaling")) {  // the engine as the cube grows, a table
    if (b.weights != bench::BenchWeights::None) throw InputError("--scaling: expected no --weights (it times the unweighted engine)");
    if (!args.get("repeat")) b.repeat = 3;  // the first solves of a process run cold (heap, BLAS buffers)
    print_scaling(b, bench::run_scaling(b), args.flag("json"));
    return 0;
  }
  print_warnings(tuning_state().warnings);
  const bench::BenchReport r = bench::run_bench(b);
  print_warnings(r.warnings);
  if (args.flag("json")) print_json(b, r);
  else print_text(b, r);
  return 0;
}

}  // namespace cubesolve::cli
