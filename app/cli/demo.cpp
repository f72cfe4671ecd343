// cubesolve-cli demo: the embedded demo cubes, solved, with PNG previews.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/io/files.hpp>

#include <algorithm>
#include <filesystem>
#include <iostream>

namespace cubesolve::cli {

namespace {

struct DemoRun {
  std::string name, description;
  SolveTotals totals;
  std::vector<std::string> outputs;
};

/// Solves one demo cube and writes it, its design, X, the status map and
/// PNG previews (valid counts; first, middle and last channel) under `base`.
DemoRun run_demo(const std::string& name, std::size_t size, const std::string& base, const SolveOptions& options) {
  const DemoCube d = make_demo(name, size);
  const Design design(d.design, name);
  ProgressBar bar(name);
  const SolveResult r = solve(d.cube, design, nullptr, options, bar.callback());
  OutputSet out;
  out.add_npy(base + "_cube.npy", d.cube);
  out.add_npy(base + "_design.npy", d.design);
  out.add_npy(base + "_x.npy", r.x);
  out.add_npy(base + "_status.npy", r.status);
  const std::size_t H = d.cube.dim(1), W = d.cube.dim(2), M = design.cols();
  const std::vector<double> counts = plane(r.n_valid);
  write_png(out.add(base + "_validcount.png"),
            colorize(counts.data(), H, W, ColorScale{Colormap::Viridis, false, 0, static_cast<double>(design.rows())}));
  for (std::size_t ch : {std::size_t{0}, M / 2, M - 1}) {
    const std::vector<double> x = plane(r.x, ch);
    const auto [lo, hi] = robust_range(x.data(), x.size(), true);
    write_png(out.add(base + "_x" + std::to_string(ch) + ".png"), colorize(x.data(), H, W, ColorScale{Colormap::RdBu, false, lo, hi}));
    if (M == 1) break;
  }
  DemoRun run{name, d.description, {}, out.paths()};
  run.totals.add(r);
  out.commit();
  return run;
}

void print_json(const std::string& folder, const std::vector<DemoRun>& runs) {
  Json j;
  j.begin_object().field("command", "demo").field("folder", folder).key("demos").begin_array();
  for (const DemoRun& r : runs) {
    j.begin_object().field("name", r.name).field("engine_seconds", r.totals.engine_seconds).field("pixels", r.totals.pixels);
    json_paths(j, r.totals.paths);
    json_status(j, r.totals);
    j.key("outputs").begin_array();
    for (const auto& p : r.outputs) j.value(p);
    j.end_array().end_object();
  }
  j.end_array().end_object();
  std::cout << j.str() << "\n";
}

void print_text(const std::vector<DemoRun>& runs) {
  for (const DemoRun& r : runs) {
    std::cout << r.name << ": " << r.description << "\n  solved " << summary(r.totals) << "\n";
    for (const auto& p : r.outputs) std::cout << "  wrote " << p << "\n";
  }
}

}  // namespace

int cmd_demo(const std::vector<std::string>& argv) {
  const Args args("demo", argv, {"json"}, {"output", "size", "name", "threads"});
  args.expect_positional(0, 0, "no positional arguments");
  const std::string dir = args.get("output", "cubesolve-demo");
  const auto size = static_cast<std::size_t>(args.integer("size", 0, 0, 8192));
  std::vector<std::string> names = demo_names();
  if (const auto n = args.get("name")) {
    if (std::find(names.begin(), names.end(), *n) == names.end())
      throw InputError("--name: expected insar or seed, found '" + *n + "'");
    names = {*n};
  }
  SolveOptions options;
  options.threads = static_cast<int>(args.integer("threads", 0, 0, 4096));
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw IoError(dir + ": cannot create the output folder: " + ec.message());
  std::vector<DemoRun> runs;
  for (const auto& name : names) runs.push_back(run_demo(name, size, dir + "/" + name, options));
  if (args.flag("json")) print_json(dir, runs);
  else print_text(runs);
  return 0;
}

}  // namespace cubesolve::cli
