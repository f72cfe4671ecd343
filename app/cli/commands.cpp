#include "commands.hpp"

#include "args.hpp"
#include "json.hpp"

#include <cubesolve/workflow/bench.hpp>
#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/data/mask.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <cstring>
#include <optional>
#include <sys/resource.h>
#include <unistd.h>

namespace cubesolve::cli {
namespace {

std::atomic<bool> g_interrupted{false};
extern "C" void on_sigint(int) { g_interrupted = true; }

/// A progress bar on stderr, shown only on a terminal and only once the work
/// has taken more than a second. Ctrl-C cancels through it.
class ProgressBar {
public:
  explicit ProgressBar(std::string label)
      : label_(std::move(label)), tty_(::isatty(2) != 0), start_(std::chrono::steady_clock::now()) {
    std::signal(SIGINT, on_sigint);
  }
  ~ProgressBar() {
    if (shown_) std::fprintf(stderr, "\r%*s\r", 72, "");
    std::signal(SIGINT, SIG_DFL);
  }
  bool operator()(double f) {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (tty_ && t > 1.0) {
      const int width = 40, filled = static_cast<int>(f * width + 0.5);
      std::fprintf(stderr, "\r%-10s [%s%s] %3d%% %6.1fs", label_.c_str(), std::string(filled, '#').c_str(),
                   std::string(width - filled, ' ').c_str(), static_cast<int>(f * 100 + 0.5), t);
      std::fflush(stderr);
      shown_ = true;
    }
    return !g_interrupted;
  }
  Progress callback() {
    return [this](double f) { return (*this)(f); };
  }

private:
  std::string label_;
  bool tty_, shown_ = false;
  std::chrono::steady_clock::time_point start_;
};


bool has_extension(const std::string& path, const std::string& ext) {
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

// The design matrix for a cube of n bands: a file (.npy, .csv), or built:
// sbas (pairs from --pairs), poly:D, harmonic:K[:P] (times from --times, else band index).
Array design_for(const std::string& design_arg, std::size_t n, const Args& args) {
  if (design_arg == "sbas") {
    const auto p = args.get("pairs");
    if (!p) throw InputError("sbas: expected --pairs FILE (YYYYMMDD_YYYYMMDD lines) or a MintPy ifgramStack.h5 cube");
    return sbas_design(read_pairs(*p), nullptr, *p);
  }
  if (is_design_spec(design_arg)) {
    const auto t = args.get("times");
    return build_design(design_arg, n, t ? read_times(*t) : std::vector<double>{});
  }
  return read_array(design_arg);
}

bool is_stack(const std::string& cube_path, const std::string& design_arg) {
  return design_arg == "sbas" && (has_extension(cube_path, ".h5") || has_extension(cube_path, ".he5"));
}


// What a solve did, over all its blocks.
struct Totals {
  PathCounts paths{};
  std::array<std::size_t, 5> status{};
  double engine_seconds = 0;
  std::size_t pixels = 0;
  int threads = 1;
  Device device = Device::Cpu;
  std::size_t device_pixels = 0;
  std::vector<std::string> warnings;

  void add(const SolveResult& r) {
    device = r.device;
    device_pixels += r.device_pixels;
    warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
    for (std::size_t i = 0; i < kPathCount; ++i) paths[i] += r.paths[i];
    for (std::size_t s = 0; s < status.size(); ++s) status[s] += r.count(static_cast<PixelStatus>(s));
    engine_seconds += r.engine_seconds;
    pixels += r.status.size();
    threads = r.threads;
  }
};

SolveOptions solve_options(const Args& args) {
  SolveOptions o;
  o.rcond = args.number("rcond", -1.0);
  o.min_valid = static_cast<int>(args.integer("min-valid", 1, 1, 1 << 30));
  o.ridge = args.number("ridge", 0.0);
  if (o.ridge < 0) throw InputError("--ridge: expected a value >= 0, found " + args.get("ridge", ""));
  o.threads = static_cast<int>(args.integer("threads", 0, 0, 4096));
  if (const auto d = args.get("dtype")) o.output = parse_dtype(*d, "--dtype");
  o.memory = static_cast<std::size_t>(args.integer("memory", 256, 16, 1 << 20)) << 20;
  const std::string method = args.get("method", "auto");
  if (method == "exact") o.method = Method::Exact;
  else if (method != "auto") throw InputError("--method: expected auto or exact, found '" + method + "'");
  return o;
}

/// --device, --device-precision and --device-memory.
void device_options(const Args& args, SolveOptions& o, const char* fallback) {
  o.device_memory = static_cast<std::size_t>(args.integer("device-memory", 0, 0, 1 << 24)) << 20;
  o.device = resolve_device(parse_device(args.get("device", fallback)));
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

void json_status(Json& j, const Totals& t) {
  j.key("status").begin_object();
  for (std::size_t s = 0; s < t.status.size(); ++s) j.field(status_name(static_cast<PixelStatus>(s)), t.status[s]);
  j.end_object();
}

std::string summary(const Totals& t) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%zu pixels in %.3f s on %d threads: %zu ok, %zu min-norm, %zu no-data, %zu too-few, %zu failed",
                t.pixels, t.engine_seconds, t.threads, t.status[0], t.status[1], t.status[2], t.status[3], t.status[4]);
  return buf;
}

Totals totals_of(const SolveResult& r) {
  Totals t;
  t.add(r);
  return t;
}

// The peak resident memory of this program: VmHWM (which, unlike ru_maxrss,
// does not inherit the peak of the process that started it).
double peak_memory_mb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;  // kB
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// Outputs are .npy, or GeoTIFF (.tif, .tiff) where GDAL is built in.
void require_output(const std::string& path, const std::string& what) {
  if (has_extension(path, ".npy") || (raster_support() && is_geotiff_path(path))) return;
  throw InputError(path + ": expected " + what + " ending in .npy" + (raster_support() ? " or .tif" : "") +
                   ", found another extension");
}


}  // namespace

// The inputs of solve and verify, opened to be read a block of rows at a time.
struct Streams {
  std::unique_ptr<CubeReader> cube, weights;
  Array design_array;
  Design design;
  std::string cube_name, design_name, weights_name;
};

Streams open_inputs(const std::string& cube_path, const std::string& design_arg, const Args& args) {
  Streams in;
  in.cube_name = cube_path;
  in.design_name = design_arg;
  if (is_stack(cube_path, design_arg)) {
    std::vector<DatePair> pairs;
    in.cube = open_mintpy_stack(cube_path, &pairs);
    in.design_array = sbas_design(pairs, nullptr, cube_path);
  } else {
    in.cube = open_cube(cube_path);
    in.design_array = design_for(design_arg, in.cube->shape()[0], args);
  }
  in.design = Design(in.design_array, design_arg);
  if (const auto w = args.get("weights")) {
    in.weights = open_cube(*w);
    in.weights_name = *w;
  }
  check_shapes(in.cube->shape(), in.design, in.weights ? &in.weights->shape() : nullptr, in.cube_name, in.design_name,
               in.weights_name);
  return in;
}

int cmd_solve(const std::vector<std::string>& argv) {
  const Args args("solve", argv, {"json"},
                  {"output", "weights", "device", "rcond", "min-valid", "ridge", "diag", "threads", "dtype", "model",
                   "residual", "method", "memory", "pairs", "times", "device-precision",
                   "device-memory"});
  args.expect_positional(2, 2, "CUBE DESIGN");
  const auto output = args.get("output");
  if (!output) throw InputError("solve: expected -o X.npy for the solution, found none");
  require_output(*output, "an output path");
  for (const char* k : {"model", "residual"})
    if (const auto p = args.get(k)) require_output(*p, std::string("a --") + k + " path");
  SolveOptions options = solve_options(args);
  options.residuals = args.get("diag").has_value();
  device_options(args, options, "auto");

  // The cube is read, solved and written a block of rows at a time.
  const std::string cube_path = args.positional()[0], design_arg = args.positional()[1];
  Streams in = open_inputs(cube_path, design_arg, args);
  auto& cube = in.cube;
  auto& weights = in.weights;
  const Design& design = in.design;
  const auto weights_path = args.get("weights");
  const Shape shape = cube->shape();
  const std::size_t N = shape[0], H = shape[1], W = shape[2], M = design.cols();
  const DType out_type = options.output.value_or(cube->dtype());
  const GeoReference& geo = cube->geo();

  OutputSet out;
  struct Target {
    std::unique_ptr<CubeWriter> writer;
    int what;  // 0 x, 1-5 diagnostics, 6 model, 7 residual
  };
  std::vector<Target> targets;
  auto add = [&](const std::string& path, int what, std::size_t bands, DType type, const std::string& name) {
    const std::string temp = out.add_external(path);
    if (is_geotiff_path(path)) {
      std::vector<std::string> names;
      for (std::size_t b = 0; b < bands; ++b) names.push_back(bands == 1 ? name : name + std::to_string(b));
      targets.push_back({geotiff_writer(temp, {bands, H, W}, geo, names), what});
    } else {
      const Shape header = what >= 1 && what <= 5 ? Shape{H, W} : Shape{};
      targets.push_back({npy_writer(temp, type, {bands, H, W}, header), what});
    }
  };
  add(*output, 0, M, out_type, "x");
  if (const auto prefix = args.get("diag")) {
    const std::string ext = is_geotiff_path(*output) ? ".tif" : ".npy";
    add(*prefix + "_nvalid" + ext, 1, 1, DType::Int32, "n_valid");
    add(*prefix + "_rank" + ext, 2, 1, DType::Int32, "rank");
    add(*prefix + "_rss" + ext, 3, 1, DType::Float64, "rss");
    add(*prefix + "_status" + ext, 4, 1, DType::UInt8, "status");
    add(*prefix + "_cond" + ext, 5, 1, DType::Float64, "cond");
  }
  if (const auto p = args.get("model")) add(*p, 6, N, out_type, "model");
  if (const auto p = args.get("residual")) add(*p, 7, N, cube->dtype(), "residual");

  // Three quarters of the memory budget for a block's data, a quarter for the engine's chunks.
  const std::size_t budget = options.memory, out_size = dtype_size(out_type);
  const std::size_t per_row = W * (N * dtype_size(cube->dtype()) + (weights ? N * dtype_size(weights->dtype()) : 0) +
                                   M * out_size + 34 +
                                   (args.get("model") || args.get("residual") ? 2 * N * out_size : 0));
  const std::size_t rows = std::clamp<std::size_t>(budget / 4 * 3 / std::max<std::size_t>(per_row, 1), 1, std::max<std::size_t>(H, 1));
  options.memory = budget / 4;

  ProgressBar bar("solving");
  Totals totals;
  std::size_t blocks = 0;
  for (std::size_t r0 = 0; r0 < H || (H == 0 && blocks == 0); r0 += rows) {
    const std::size_t r1 = std::min(H, r0 + rows);
    const Array block = cube->rows(r0, r1);
    std::optional<Array> wblock;
    if (weights) wblock = weights->rows(r0, r1);
    check_inputs(block, design, wblock ? &*wblock : nullptr, cube_path, design_arg, weights_path.value_or(""), r0);
    const double done = H ? static_cast<double>(r0) / H : 0, share = H ? static_cast<double>(r1 - r0) / H : 1;
    const SolveResult r = solve(block, design, wblock ? &*wblock : nullptr, options,
                                [&](double f) { return bar(done + share * f); });
    totals.add(r);
    ++blocks;
    std::optional<Array> model;
    for (auto& t : targets) {
      auto plane = [&](const Array& a) {
        Array b = a;
        b.reshape({1, a.dim(0), a.dim(1)});
        return b;
      };
      switch (t.what) {
        case 0: t.writer->rows(r0, r.x); break;
        case 1: t.writer->rows(r0, plane(r.n_valid)); break;
        case 2: t.writer->rows(r0, plane(r.rank)); break;
        case 3: t.writer->rows(r0, plane(r.rss)); break;
        case 4: t.writer->rows(r0, plane(r.status)); break;
        case 5: t.writer->rows(r0, plane(r.cond)); break;
        default:
          if (!model) model = model_cube(design, r.x);
          t.writer->rows(r0, t.what == 6 ? *model : residual_cube(block, *model));
      }
    }
    if (H == 0) break;
  }
  for (auto& t : targets) t.writer->finish();
  const auto written = out.paths();
  out.commit();
  for (const auto& w : totals.warnings) std::cerr << "cubesolve-cli: warning: " << w << "\n";

  if (args.flag("json")) {
    Json j;
    j.begin_object()
        .field("command", "solve")
        .field("engine_seconds", totals.engine_seconds)
        .field("pixels", totals.pixels)
        .field("device", device_name(totals.device))
        .field("device_pixels", totals.device_pixels)
        .field("threads", totals.threads)
        .field("blocks", blocks)
        .field("rows_per_block", rows)
        .field("peak_memory_mb", peak_memory_mb());
    json_paths(j, totals.paths);
    json_status(j, totals);
    j.key("shape").begin_array().value(M).value(H).value(W).end_array().field("dtype", dtype_name(out_type));
    j.key("outputs").begin_array();
    for (const auto& p : written) j.value(p);
    j.end_array().end_object();
    std::cout << j.str() << "\n";
  } else {
    std::cout << "solved " << summary(totals) << "\n";
    for (const auto& p : written) std::cout << "wrote " << p << "\n";
  }
  return 0;
}

int cmd_info(const std::vector<std::string>& argv) {
  const Args args("info", argv, {"json"}, {"weights", "min-valid", "pairs", "times"});
  args.expect_positional(1, 2, "CUBE [DESIGN]");
  const std::string cube_path = args.positional()[0];
  const auto min_valid = static_cast<std::size_t>(args.integer("min-valid", 1, 1, 1 << 30));
  // The whole cube: the mask statistics need every pixel.
  std::optional<Streams> in;
  Array cube;
  std::optional<Array> weights;
  if (args.positional().size() == 2) {
    in = open_inputs(cube_path, args.positional()[1], args);
    const std::size_t H = in->cube->shape()[1];
    cube = in->cube->rows(0, H);
    if (in->weights) weights = in->weights->rows(0, H);
    check_inputs(cube, in->design, weights ? &*weights : nullptr, in->cube_name, in->design_name, in->weights_name);
  } else {
    const auto reader = open_cube(cube_path);
    cube = reader->rows(0, reader->shape()[1]);
    if (const auto w = args.get("weights")) {
      weights = read_npy(*w);
      if (weights->shape() != cube.shape())
        throw InputError(*w + ": expected the cube's shape " + shape_string(cube.shape()) + ", found " +
                         shape_string(weights->shape()));
    }
  }
  const Design* design = in ? &in->design : nullptr;
  ProgressBar bar("analysing");
  const MaskStats s = analyze_masks(cube, weights ? &*weights : nullptr, bar.callback());
  const auto valid_hist = s.valid_histogram();
  const auto groups = s.group_histogram();
  const std::size_t P = s.pixels();
  const std::size_t M = design ? design->cols() : 0;
  std::size_t under = 0;  // solvable pixels with fewer valid rows than unknowns
  for (std::size_t k = std::max<std::size_t>(1, min_valid); k < std::min(M, valid_hist.size()); ++k) under += valid_hist[k];
  SolveOptions plan_options;
  plan_options.min_valid = static_cast<int>(min_valid);
  const PathCounts planned = design ? plan(s, *design, weights.has_value(), plan_options) : PathCounts{};

  if (args.flag("json")) {
    Json j;
    j.begin_object().field("command", "info").field("cube", cube_path);
    j.key("shape").begin_array().value(s.n).value(s.height).value(s.width).end_array();
    j.field("dtype", dtype_name(cube.dtype()))
        .field("pixels", P)
        .field("missing_fraction", s.missing_fraction())
        .field("nan", s.nan_count)
        .field("inf", s.inf_count)
        .field("zero_weight", s.zero_weight)
        .field("no_data_pixels", valid_hist[0])
        .field("distinct_masks", s.distinct_masks())
        .field("pixels_in_groups_ge_2", s.pixels_in_groups_of_at_least(2))
        .field("pixels_in_groups_ge_16", s.pixels_in_groups_of_at_least(16))
        .field("pixels_in_groups_ge_256", s.pixels_in_groups_of_at_least(256));
    j.key("valid_count_histogram").begin_array();
    for (std::size_t v : valid_hist) j.value(v);
    j.end_array();
    j.key("group_size_histogram").begin_array();
    for (const auto& b : groups)
      j.begin_object().field("lo", b.lo).field("hi", b.hi).field("groups", b.groups).field("pixels", b.pixels).end_object();
    j.end_array();
    if (design) {
      j.key("design").begin_object();
      j.field("rows", design->rows()).field("cols", design->cols()).field("rank", design->rank()).field("condition", design->condition());
      j.end_object();
      json_paths(j, planned);
      j.field("underdetermined", under);
    }
    j.end_object();
    std::cout << j.str() << "\n";
    return 0;
  }

  std::printf("cube        %s  %s %s\n", cube_path.c_str(), shape_string(cube.shape()).c_str(), dtype_name(cube.dtype()));
  std::printf("missing     %.2f %% of values (%zu NaN, %zu Inf, %zu zero weight)\n", 100.0 * s.missing_fraction(),
              s.nan_count, s.inf_count, s.zero_weight);
  std::printf("no data     %zu of %zu pixels\n", valid_hist[0], P);
  std::printf("masks       %zu distinct; pixels in groups of >= 2: %zu, >= 16: %zu, >= 256: %zu\n", s.distinct_masks(),
              s.pixels_in_groups_of_at_least(2), s.pixels_in_groups_of_at_least(16),
              s.pixels_in_groups_of_at_least(256));
  std::printf("valid rows per pixel (count: pixels)\n");
  const std::size_t step = std::max<std::size_t>(1, (valid_hist.size() + 15) / 16);
  for (std::size_t k = 0; k < valid_hist.size(); k += step) {
    std::size_t c = 0;
    for (std::size_t q = k; q < std::min(valid_hist.size(), k + step); ++q) c += valid_hist[q];
    if (step == 1) std::printf("  %5zu: %zu\n", k, c);
    else std::printf("  %5zu-%-5zu: %zu\n", k, std::min(valid_hist.size(), k + step) - 1, c);
  }
  std::printf("mask group sizes (size range: groups, pixels)\n");
  for (const auto& b : groups)
    if (b.groups) std::printf("  %7zu-%-7zu: %zu groups, %zu pixels\n", b.lo, b.hi - 1, b.groups, b.pixels);
  if (design) {
    std::printf("design      %zu x %zu, rank %zu, condition %.3g\n", design->rows(), design->cols(), design->rank(),
                design->condition());
    std::printf("plan       ");
    for (std::size_t i = 0; i < kPathCount; ++i)
      if (planned[i]) std::printf(" %s %zu", path_name(static_cast<SolvePath>(i)), planned[i]);
    std::printf("\n            %zu pixels underdetermined (minimum norm)\n", under);
  }
  return 0;
}

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

  Json j;
  j.begin_object().field("command", "demo").field("folder", dir).key("demos").begin_array();
  for (const auto& name : names) {
    const DemoCube d = make_demo(name, size);
    const Design design(d.design, name);
    ProgressBar bar(name);
    const SolveResult r = solve(d.cube, design, nullptr, options, bar.callback());
    const std::string base = dir + "/" + name;
    OutputSet out;
    out.add_npy(base + "_cube.npy", d.cube);
    out.add_npy(base + "_design.npy", d.design);
    out.add_npy(base + "_x.npy", r.x);
    out.add_npy(base + "_status.npy", r.status);
    const std::size_t H = d.cube.dim(1), W = d.cube.dim(2), P = H * W, M = design.cols();
    std::vector<double> plane(P);
    for (std::size_t p = 0; p < P; ++p) plane[p] = r.n_valid.value(p);
    write_png(out.add(base + "_validcount.png"),
              colorize(plane.data(), H, W, Colormap::Viridis, 0, static_cast<double>(design.rows())));
    for (std::size_t ch : {std::size_t{0}, M / 2, M - 1}) {
      for (std::size_t p = 0; p < P; ++p) plane[p] = r.x.value(ch * P + p);
      const auto [lo, hi] = robust_range(plane.data(), P, true);
      write_png(out.add(base + "_x" + std::to_string(ch) + ".png"), colorize(plane.data(), H, W, Colormap::RdBu, lo, hi));
      if (M == 1) break;
    }
    const auto written = out.paths();
    out.commit();
    if (!args.flag("json")) {
      std::cout << name << ": " << d.description << "\n  solved " << summary(totals_of(r)) << "\n";
      for (const auto& p : written) std::cout << "  wrote " << p << "\n";
    }
    j.begin_object().field("name", name).field("engine_seconds", r.engine_seconds).field("pixels", P);
    json_paths(j, r.paths);
    json_status(j, totals_of(r));
    j.key("outputs").begin_array();
    for (const auto& p : written) j.value(p);
    j.end_array().end_object();
  }
  j.end_array().end_object();
  if (args.flag("json")) std::cout << j.str() << "\n";
  return 0;
}

int cmd_verify(const std::vector<std::string>& argv) {
  const Args args("verify", argv, {"json"},
                  {"sample", "weights", "rcond", "min-valid", "ridge", "threads", "pairs", "times"});
  args.expect_positional(3, 3, "CUBE DESIGN X.npy");
  const std::string x_path = args.positional()[2];
  Streams in = open_inputs(args.positional()[0], args.positional()[1], args);
  const auto xr = open_cube(x_path);
  const Shape shape = in.cube->shape();
  const std::size_t N = shape[0], H = shape[1], W = shape[2], P = H * W, M = in.design.cols();
  if (xr->shape() != Shape{M, H, W})
    throw InputError(x_path + ": expected the solution's shape " + shape_string({M, H, W}) + ", found " +
                     shape_string(xr->shape()));
  const auto sample = static_cast<std::size_t>(args.integer("sample", 1000, 0, std::numeric_limits<int>::max()));
  const std::vector<std::size_t> pick = bench::spread(P, sample == 0 ? P : sample);
  const std::size_t K = pick.size();

  // The sampled pixels, evenly spread, gathered a block of rows at a time
  // into a (N, 1, K) cube, with their x, and solved on the exact path.
  Array sub(DType::Float64, {N, 1, K}), xs(DType::Float64, {M, 1, K});
  std::optional<Array> sub_w;
  if (in.weights) sub_w = Array(DType::Float64, {N, 1, K});
  const std::size_t rows = std::clamp<std::size_t>((std::size_t{64} << 20) / std::max<std::size_t>(1, W * (N + M) * 8), 1,
                                                   std::max<std::size_t>(H, 1));
  std::size_t next = 0;
  for (std::size_t r0 = 0; r0 < H && next < K; r0 += rows) {
    const std::size_t r1 = std::min(H, r0 + rows), B = (r1 - r0) * W;
    const Array block = in.cube->rows(r0, r1), xb = xr->rows(r0, r1);
    std::optional<Array> wb;
    if (in.weights) wb = in.weights->rows(r0, r1);
    for (; next < K && pick[next] < r1 * W; ++next) {
      const std::size_t p = pick[next] - r0 * W;
      for (std::size_t i = 0; i < N; ++i) {
        sub.data<double>()[i * K + next] = block.value(i * B + p);
        if (wb) sub_w->data<double>()[i * K + next] = wb->value(i * B + p);
      }
      for (std::size_t j = 0; j < M; ++j) xs.data<double>()[j * K + next] = xb.value(j * B + p);
    }
  }
  SolveOptions o = solve_options(args);
  o.method = Method::Exact;
  o.output = DType::Float64;
  ProgressBar bar("verifying");
  check_inputs(sub, in.design, sub_w ? &*sub_w : nullptr, in.cube_name, in.design_name, in.weights_name);
  const SolveResult ref = solve(sub, in.design, sub_w ? &*sub_w : nullptr, o, bar.callback());

  // Well-conditioned pixels must agree to 1e-9 (float64 X) or 1e-6 (float32 X).
  const double tol = xr->dtype() == DType::Float32 ? 1e-6 : 1e-9, kWellConditioned = 1e8;
  double worst_all = 0, worst_well = 0;
  std::size_t nan_mismatch = 0, judged = 0, failed = 0;
  for (std::size_t k = 0; k < K; ++k) {
    const bool ref_nan = std::isnan(ref.x.value(k));
    double diff = 0, norm = 0;
    bool any_nan = false, all_nan = true;
    for (std::size_t j = 0; j < M; ++j) {
      const double a = xs.value(j * K + k), b = ref.x.value(j * K + k);
      any_nan = any_nan || std::isnan(a);
      all_nan = all_nan && std::isnan(a);
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    if (ref_nan) {
      if (!all_nan) ++nan_mismatch;
      continue;
    }
    if (any_nan) {
      ++nan_mismatch;
      continue;
    }
    const double rel = std::sqrt(diff) / std::max(std::sqrt(norm), std::numeric_limits<double>::min());
    worst_all = std::max(worst_all, rel);
    if (ref.cond.value(k) <= kWellConditioned) {
      ++judged;
      worst_well = std::max(worst_well, rel);
      if (rel > tol) ++failed;
    }
  }
  const bool ok = nan_mismatch == 0 && failed == 0;
  if (args.flag("json")) {
    Json j;
    j.begin_object()
        .field("command", "verify")
        .field("pixels", K)
        .field("judged", judged)
        .field("max_rel_error", worst_all)
        .field("max_rel_error_well_conditioned", worst_well)
        .field("tolerance", tol)
        .field("nan_mismatches", nan_mismatch)
        .field("failed", failed)
        .field("ok", ok)
        .end_object();
    std::cout << j.str() << "\n";
  } else {
    std::printf("verify %s: %zu pixels compared with per-pixel gelsd (%zu well-conditioned)\n", x_path.c_str(), K, judged);
    std::printf("  max relative error %.3g (well-conditioned: %.3g, tolerance %.0e)\n", worst_all, worst_well, tol);
    std::printf("  NaN mismatches %zu, pixels over tolerance %zu: %s\n", nan_mismatch, failed, ok ? "OK" : "FAILED");
  }
  if (!ok)
    throw NumericalError(x_path + ": expected agreement with gelsd, found " + std::to_string(failed) +
                         " pixels over tolerance and " + std::to_string(nan_mismatch) + " NaN mismatches");
  return 0;
}

int cmd_bench(const std::vector<std::string>& argv) {
  const Args args("bench", argv, {"json"},
                  {"size", "n", "m", "nan", "masks", "threads", "sample", "repeat", "memory", "device", "device-precision",
                   "device-memory"});
  args.expect_positional(0, 0, "no positional arguments");
  const auto size = static_cast<std::size_t>(args.integer("size", 500, 1, 8192));
  const auto n = static_cast<std::size_t>(args.integer("n", 50, 1, 100000));
  const auto m = static_cast<std::size_t>(args.integer("m", 100, 1, 100000));
  const double nan = args.number("nan", 0.2);
  const std::string masks = args.get("masks", "random");
  if (masks != "random" && masks != "blobs") throw InputError("--masks: expected random or blobs, found '" + masks + "'");
  const auto sample = static_cast<std::size_t>(args.integer("sample", 500, 1, 1 << 24));
  const int repeat = static_cast<int>(args.integer("repeat", 5, 1, 100));
  SolveOptions options;
  options.threads = static_cast<int>(args.integer("threads", 0, 0, 4096));
  options.memory = static_cast<std::size_t>(args.integer("memory", 256, 16, 1 << 20)) << 20;
  options.residuals = false;
  device_options(args, options, "cpu");

  const DemoCube d = make_synthetic(n, m, size, nan, masks == "blobs" ? MaskPattern::Blobs : MaskPattern::Random);
  const Design design(d.design, "A");
  const std::size_t P = size * size;
  // Timed as `solve` runs by default (X in the cube's float32); the accuracy
  // is read from one more run that keeps X in float64.
  double engine = 1e300;
  for (int k = 0; k < repeat; ++k) engine = std::min(engine, solve(d.cube, design, nullptr, options).engine_seconds);
  options.output = DType::Float64;
  const SolveResult r = solve(d.cube, design, nullptr, options);
  const double engine64 = r.engine_seconds;
  const int threads = r.threads;
  for (const auto& w : r.warnings) std::cerr << "cubesolve-cli: warning: " << w << "\n";
  const double floor_gemm = bench::gemm_floor_seconds(m, n, P, threads);
  const double floor_read = bench::read_seconds(d.cube, threads);

  // The exact engine and the question's method on an evenly spread sample, scaled to all pixels.
  const auto pick = bench::spread(P, sample);
  const Array sub = take_pixels(d.cube, pick);
  SolveOptions exact = options;
  exact.method = Method::Exact;
  const SolveResult ref = solve(sub, design, nullptr, exact);
  const double scale = static_cast<double>(P) / static_cast<double>(pick.size());
  const double exact_seconds = ref.engine_seconds * scale;
  const double normal_seconds = bench::normal_equations_seconds(d.cube, design, pick, threads) * scale;
  // On a device, the question's loop also runs there (it is what the question ran).
  const double normal_device_seconds =
      r.device == Device::Cuda ? bench::normal_equations_device_seconds(d.cube, design, pick) * scale : 0.0;
  double worst = 0;
  std::size_t compared = 0;
  for (std::size_t k = 0; k < pick.size(); ++k) {
    double diff = 0, norm = 0;
    for (std::size_t j = 0; j < m; ++j) {
      const double a = r.x.value(j * P + pick[k]), b = ref.x.value(j * pick.size() + k);
      diff += (a - b) * (a - b);
      norm += b * b;
    }
    if (std::isnan(norm)) continue;
    ++compared;
    worst = std::max(worst, std::sqrt(diff / std::max(norm, 1e-300)));
  }

  if (args.flag("json")) {
    Json j;
    j.begin_object().field("command", "bench").field("n", n).field("m", m).field("size", size).field("pixels", P)
        .field("missing", nan).field("masks", masks).field("threads", threads).field("engine_seconds", engine)
        .field("engine_seconds_float64_output", engine64)
        .field("gemm_floor_seconds", floor_gemm).field("read_seconds", floor_read)
        .field("engine_over_floor", engine / floor_gemm).field("exact_seconds", exact_seconds)
        .field("exact_speedup", exact_seconds / engine).field("normal_equations_seconds", normal_seconds)
        .field("normal_equations_speedup", normal_seconds / engine).field("sample", pick.size())
        .field("device_precision", options.device_float64 ? "float64" : "mixed");
    if (r.device == Device::Cuda)
      j.field("normal_equations_device_seconds", normal_device_seconds)
          .field("normal_equations_device_speedup", normal_device_seconds / engine);
    j
        .field("max_rel_error", worst).field("device", device_name(r.device)).field("device_pixels", r.device_pixels);
    json_paths(j, r.paths);
    j.end_object();
    std::cout << j.str() << "\n";
    return 0;
  }
  std::printf("bench: N=%zu M=%zu, %zux%zu = %zu pixels, %.0f%% missing (%s), %s%s, %d threads\n", n, m, size, size, P,
              100 * nan, masks.c_str(), device_name(r.device),
              r.device != Device::Cuda ? "" : options.device_float64 ? " (float64)" : " (mixed precision)", threads);
  std::printf("  engine                %9.4f s   (best of %d; X in float32 like the cube)\n", engine, repeat);
  std::printf("  engine, X in float64  %9.4f s   (one run; the errors below are from it)\n", engine64);
  std::printf("  floor: GEMM P*Y       %9.4f s   engine/floor %.2f\n", floor_gemm, engine / floor_gemm);
  std::printf("  floor: read Y once    %9.4f s\n", floor_read);
  std::printf("  exact engine (gelsd)  %9.3f s   engine is %.0fx faster (%zu pixels timed, scaled)\n", exact_seconds,
              exact_seconds / engine, pick.size());
  std::printf("  normal equations      %9.3f s   engine is %.0fx faster (the question's per-pixel solve)\n",
              normal_seconds, normal_seconds / engine);
  if (r.device == Device::Cuda)
    std::printf("  normal equations, GPU %9.3f s   engine is %.0fx faster (the same loop on the device)\n",
                normal_device_seconds, normal_device_seconds / engine);
  std::printf("  max relative error vs gelsd: %.3g over %zu sampled pixels\n", worst, compared);
  if (r.device == Device::Cuda) {
    const auto devices = describe_devices();
    std::printf("  pixels solved on the device: %zu of %zu (%s)\n", r.device_pixels, P, devices.back().c_str());
  }
  std::printf("  paths:");
  for (std::size_t i = 0; i < kPathCount; ++i)
    if (r.paths[i]) std::printf(" %s %zu", path_name(static_cast<SolvePath>(i)), r.paths[i]);
  std::printf("\n");
  return 0;
}

}  // namespace cubesolve::cli
