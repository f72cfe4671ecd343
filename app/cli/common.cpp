#include "common.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sys/resource.h>
#include <unistd.h>

namespace cubesolve::cli {

namespace {
volatile std::sig_atomic_t g_signal = 0;
extern "C" void on_signal(int sig) { g_signal = sig; }
}  // namespace

int interrupt_signal() { return g_signal; }

Failure failure_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const Cancelled&) {
    const int sig = g_signal ? g_signal : SIGINT;
    return {128 + sig, std::string("interrupted") + (sig == SIGTERM ? " (SIGTERM)" : sig == SIGHUP ? " (SIGHUP)" : "") +
                           "; no output written"};
  } catch (const std::bad_alloc& x) {
    return {exit_code(x), "out of memory"};
  } catch (const Error& x) {
    return {exit_code(x), x.what()};
  } catch (const std::exception& x) {
    return {exit_code(x), std::string("internal error: ") + x.what()};
  }
}

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), tty_(::isatty(2) != 0), start_(std::chrono::steady_clock::now()) {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  for (std::size_t k = 0; k < kSignals.size(); ++k) sigaction(kSignals[k], &sa, &saved_[k]);
}

ProgressBar::~ProgressBar() {
  if (shown_) std::fprintf(stderr, "\r%*s\r", 72, "");
  for (std::size_t k = 0; k < kSignals.size(); ++k) sigaction(kSignals[k], &saved_[k], nullptr);
}

bool ProgressBar::operator()(double f) {
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (tty_ && t > 1.0) {
    const int width = 40, filled = static_cast<int>(f * width + 0.5);
    std::fprintf(stderr, "\r%-10s [%s%s] %3d%% %6.1fs", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, ' ').c_str(), static_cast<int>(f * 100 + 0.5), t);
    std::fflush(stderr);
    shown_ = true;
  }
  return g_signal == 0;
}

Inputs open_command_inputs(const Args& args) {
  const std::string cube = args.positional()[0], design = args.positional()[1];
  return open_inputs(cube, {design, args.get("pairs", ""), args.get("times", "")}, args.get("weights", ""),
                     input_options(args, is_stack(cube, design)));
}

void device_options(const Args& args, SolveOptions& o, const char* fallback) {
  o.device_memory = static_cast<std::size_t>(args.integer("device-memory", 0, 0, 1 << 24)) << 20;
  const std::string device = args.get("device", fallback);
  try {
    o.device = resolve_device(parse_device(device, "--device"));
  } catch (const NumericalError& e) {
    throw NumericalError("--device " + device + ": " + e.what() + "; use --device cpu or auto");
  }
  const std::string precision = args.get("device-precision", "mixed");
  if (precision != "mixed" && precision != "float64")
    throw InputError("--device-precision: expected mixed or float64, found '" + precision + "'");
  o.device_float64 = precision == "float64";
}

void json_paths(Json& j, const PathCounts& paths) {
  j.key("paths").begin_object();
  for (std::size_t i = 0; i < kPathCount; ++i) j.field(path_name(static_cast<SolvePath>(i)), paths[i]);
  j.end_object();
}

void json_tuning(Json& j, const TuningState& t) {
  j.key("tuning").begin_object().field("chunk_kib", t.tuning.chunk_bytes / 1024).field("mixed_min", t.tuning.mixed_min)
      .field("wide", t.tuning.wide).field("origin", t.origin()).end_object();
}

void json_status(Json& j, const SolveTotals& t) {
  j.key("status").begin_object();
  for (std::size_t s = 0; s < t.status.size(); ++s) j.field(status_name(static_cast<PixelStatus>(s)), t.status[s]);
  j.end_object();
  j.field("no_stderr", t.no_std_error);
}

std::string summary(const SolveTotals& t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu pixels in %.3f s on %d threads: %zu ok, %zu min-norm, %zu no-data, %zu too-few, %zu failed",
                t.pixels, t.engine_seconds, t.threads, t.status[0], t.status[1], t.status[2], t.status[3], t.status[4]);
  const std::size_t stuck = t.status[static_cast<std::size_t>(PixelStatus::NotConverged)];
  return stuck ? std::string(buf) + ", " + std::to_string(stuck) + " not converged (NaN)" : std::string(buf);
}

std::string paths_text(const PathCounts& paths) {
  std::string s;
  for (std::size_t i = 0; i < kPathCount; ++i)
    if (paths[i]) s += std::string(" ") + path_name(static_cast<SolvePath>(i)) + " " + std::to_string(paths[i]);
  return s;
}

void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) std::cerr << "cubesolve-cli: warning: " << w << "\n";
}

}  // namespace cubesolve::cli
