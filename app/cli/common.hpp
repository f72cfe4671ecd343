#pragma once
// What the commands share: the progress bar (and Ctrl-C), the solve options
// from the command line, and the report pieces every JSON and text report has.

#include "args.hpp"
#include "json.hpp"
#include "options.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/progress.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <array>
#include <chrono>
#include <csignal>
#include <set>
#include <string>

namespace cubesolve::cli {

/// The signal that interrupted the run, or 0.
int interrupt_signal();

/// What an exception means for the command line: the exit code (2 bad input,
/// 3 I/O, 4 numerical or device failure or out of memory, 128 + the signal
/// when interrupted) and the one line that says so.
struct Failure {
  int code = 0;
  std::string message;
};
Failure failure_of(std::exception_ptr e);

/// A progress bar on stderr, shown only on a terminal and only once the work
/// has taken more than a second. While it lives, SIGINT (Ctrl-C), SIGTERM
/// and SIGHUP only note the signal: the work stops at its next progress
/// report (Cancelled), and what it was writing is removed as that unwinds.
class ProgressBar {
public:
  explicit ProgressBar(std::string label);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  bool operator()(double fraction);
  Progress callback() {
    return [this](double f) { return (*this)(f); };
  }

private:
  static constexpr std::array<int, 3> kSignals{SIGINT, SIGTERM, SIGHUP};
  std::string label_;
  bool tty_, shown_ = false;
  struct sigaction saved_[3] {};
  std::chrono::steady_clock::time_point start_;
};

/// open_inputs for CUBE DESIGN as the command line names them (the first
/// two positional arguments, --pairs, --times, --weights, the input options).
Inputs open_command_inputs(const Args& args);
/// --device (default `fallback`), --device-precision and --device-memory.
/// Throws NumericalError (exit 4) for --device cuda without a usable device.
void device_options(const Args& args, SolveOptions& o, const char* fallback);

void json_paths(Json& j, const PathCounts& paths);
/// The engine's parameters and where they came from (see tuning.hpp).
void json_tuning(Json& j, const TuningState& t);
void json_status(Json& j, const SolveTotals& t);
/// "N pixels in S s on T threads: k ok, ..."
std::string summary(const SolveTotals& t);
/// " full 4 dual 249996": the paths that took pixels.
std::string paths_text(const PathCounts& paths);
/// Prints each warning on stderr.
void print_warnings(const std::vector<std::string>& warnings);

}  // namespace cubesolve::cli
