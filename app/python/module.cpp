// cubesolve._core: the engine for Python. Arrays come in without a copy
// (C-contiguous float32/float64, as the Python layer hands them over) and go
// out without one (NumPy arrays over the result's own memory). The GIL is
// released while the engine works; the progress report takes it back a few
// times a second to run the callback and to notice Ctrl-C.
#include <cubesolve/data/designs.hpp>
#include <cubesolve/data/mask.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>
#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>

namespace nb = nanobind;
using namespace nb::literals;
using namespace cubesolve;

namespace {

using Input = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;

/// A dict of (name, value) pairs.
nb::dict fields(std::initializer_list<std::pair<const char*, nb::object>> items) {
  nb::dict d;
  for (const auto& [name, value] : items) d[name] = value;
  return d;
}

/// A C-contiguous float32/float64 array as an Array over its memory (no
/// copy; the caller keeps it alive for the call).
Array borrow(const Input& a, const std::string& what) {
  DType t;
  if (a.dtype() == nb::dtype<float>())
    t = DType::Float32;
  else if (a.dtype() == nb::dtype<double>())
    t = DType::Float64;
  else
    throw InputError(what + ": expected float32 or float64 values, found another type (convert it with .astype)");
  Shape shape(a.shape_ptr(), a.shape_ptr() + a.ndim());
  return Array::borrow(t, std::move(shape), const_cast<void*>(a.data()), nullptr);
}

/// A NumPy array of `shape` over an Array's memory, which it keeps alive.
nb::object to_numpy(const Array& a, const std::vector<std::size_t>& shape) {
  auto* keep = new std::shared_ptr<void>(a.storage());
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<std::shared_ptr<void>*>(p); });
  void* data = const_cast<void*>(a.raw());
  switch (a.dtype()) {
    case DType::Float32:
      return nb::ndarray<nb::numpy, float>(data, shape.size(), shape.data(), owner).cast();
    case DType::Float64:
      return nb::ndarray<nb::numpy, double>(data, shape.size(), shape.data(), owner).cast();
    case DType::Int32:
      return nb::ndarray<nb::numpy, std::int32_t>(data, shape.size(), shape.data(), owner).cast();
    case DType::UInt8:
      return nb::ndarray<nb::numpy, std::uint8_t>(data, shape.size(), shape.data(), owner).cast();
  }
  return nb::none();
}

nb::object to_numpy(const Array& a) {
  return to_numpy(a, a.shape());
}

/// The progress report the engine calls on the calling thread: with the GIL
/// taken back, Python's signal handlers run (Ctrl-C) and the callback, if
/// any, is called; an error from either cancels the solve and is raised
/// once the engine has stopped.
struct Report {
  nb::object callback;
  std::optional<nb::python_error> error;

  bool operator()(double f) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      error.emplace();  // takes the pending exception (KeyboardInterrupt)
      return false;
    }
    if (callback.is_none()) return true;
    try {
      const nb::object go_on = callback(f);
      if (go_on.is_none()) return true;
      const int truth = PyObject_IsTrue(go_on.ptr());  // as Python's `if` takes it (1, numpy.bool_, ...)
      if (truth < 0) throw nb::python_error();
      return truth != 0;
    } catch (nb::python_error& e) {
      error.emplace(std::move(e));
      return false;
    }
  }
};

/// The solve's options as the Python layer passes them.
SolveOptions make_options(double rcond, int min_valid, double ridge, const std::string& device, bool device_float64, int threads,
                          const std::optional<std::string>& dtype, std::optional<std::size_t> memory_mb, bool std_errors,
                          bool covariance, const std::string& loss, double tolerance, int max_iterations) {
  SolveOptions o;
  o.rcond = rcond;
  o.min_valid = min_valid;
  o.ridge = ridge;
  o.device = resolve_device(parse_device(device, "device"));
  o.device_float64 = device_float64;
  o.threads = threads;
  if (dtype) o.output = parse_dtype(*dtype, "dtype");
  if (memory_mb) o.memory = *memory_mb << 20;
  o.std_errors = std_errors;
  o.covariance = covariance;
  o.loss = parse_loss(loss, o.huber_delta, "loss");
  o.tolerance = tolerance;
  o.max_iterations = max_iterations;
  return o;
}

/// Runs `work` without the GIL, with `report` as its progress; raises what
/// the report caught (Ctrl-C, the callback's exception) when it cancelled.
template <class Work>
void run_reported(Report& report, Work&& work) {
  try {
    nb::gil_scoped_release release;
    work([&](double f) { return report(f); });
  } catch (const Cancelled&) {
    if (report.error) throw std::move(*report.error);
    throw;
  }
}

nb::dict paths_dict(const PathCounts& counts) {
  nb::dict paths;
  for (std::size_t i = 0; i < kPathCount; ++i) paths[path_name(static_cast<SolvePath>(i))] = counts[i];
  return paths;
}

nb::dict solve_py(const Input& cube, const Design& design, std::optional<Input> weights, double rcond, int min_valid,
                  double ridge, const std::string& device, bool device_float64, int threads,
                  std::optional<std::string> dtype, std::optional<std::size_t> memory_mb, bool std_errors,
                  bool covariance, bool coherence, const std::string& loss, double tolerance, int max_iterations, nb::object progress) {
  const Array y = borrow(cube, "Y");
  const std::optional<Array> w = weights ? std::optional<Array>(borrow(*weights, "weights")) : std::nullopt;
  const SolveOptions o = make_options(rcond, min_valid, ridge, device, device_float64, threads, dtype, memory_mb, std_errors, covariance,
                                      loss, tolerance, max_iterations);
  Report report{std::move(progress), {}};
  SolveResult r;
  run_reported(report, [&](const Progress& progress) {
    r = solve(y, design, w ? &*w : nullptr, o, progress);
    if (coherence) r.temporal_coherence = temporal_coherence(residual_cube(y, model_cube(design, r.x)));
  });
  return fields({{"x", nb::cast(to_numpy(r.x))},
                 {"n_valid", nb::cast(to_numpy(r.n_valid))},
                 {"rank", nb::cast(to_numpy(r.rank))},
                 {"rss", nb::cast(to_numpy(r.rss))},
                 {"status", nb::cast(to_numpy(r.status))},
                 {"cond", nb::cast(to_numpy(r.cond))},
                 {"stderr", r.std_error.empty() ? nb::none() : nb::cast(to_numpy(r.std_error))},
                 {"covariance", r.covariance.empty() ? nb::none() : nb::cast(to_numpy(r.covariance))},
                 {"iterations", r.iterations.empty() ? nb::none() : nb::cast(to_numpy(r.iterations))},
                 {"objective", r.objective.empty() ? nb::none() : nb::cast(to_numpy(r.objective))},
                 {"temporal_coherence", r.temporal_coherence.empty() ? nb::none() : nb::cast(to_numpy(r.temporal_coherence))},
                 {"paths", nb::cast(paths_dict(r.paths))},
                 {"engine_seconds", nb::cast(r.engine_seconds)},
                 {"warnings", nb::cast(r.warnings)},
                 {"device", nb::cast(device_name(r.device))},
                 {"device_pixels", nb::cast(r.device_pixels)},
                 {"threads", nb::cast(r.threads)}});
}

/// Solves the cube file `cube` into files a block of rows at a time within
/// the memory budget, as `cubesolve-cli solve` does: the design is `spec`
/// (a file, or built, with `pairs` and `times`), else `design`.
nb::dict solve_file_py(const std::string& cube, std::optional<std::string> spec, const Design* design, const std::string& pairs,
                       const std::string& times, const std::string& weights, const std::string& x, const std::string& diag,
                       const std::string& model, const std::string& residual, double rcond, int min_valid, double ridge,
                       const std::string& device, bool device_float64, int threads, std::optional<std::string> dtype,
                       std::optional<std::size_t> memory_mb, bool std_errors, bool covariance, const std::string& loss,
                       double tolerance, int max_iterations, nb::object progress) {
  SolveOptions o = make_options(rcond, min_valid, ridge, device, device_float64, threads, dtype, memory_mb, std_errors, covariance,
                                loss, tolerance, max_iterations);
  if (std_errors && diag.empty()) throw InputError("stderr: expected diag=PREFIX to name where the standard errors go, found none");
  if (covariance && diag.empty()) throw InputError("cov: expected diag=PREFIX to name where the covariances go, found none");
  if (!spec && !design) throw InputError("design: expected a design matrix or its description, found none");
  ResultPaths out;
  out.x = x;
  out.diagnostics = diag;
  out.model = model;
  out.residual = residual;
  o.residuals = !diag.empty();
  out.std_error = std_errors;
  out.covariance = covariance;
  out.robust = o.loss != Loss::L2 && !diag.empty();
  const DesignSpec d{spec.value_or("a design matrix from Python"), pairs, times};
  const InputOptions input;
  Report report{std::move(progress), {}};
  StreamedSolve s;
  Shape x_shape;
  run_reported(report, [&](const Progress& progress) {
    const Inputs in = spec ? open_inputs(cube, d, weights, input) : open_inputs(cube, *design, weights);
    out.temporal_coherence = !diag.empty() && in.stack;  // a phase stack's quality measure
    describe_outputs(out, in);
    out.provenance = run_provenance(cube, d, weights, o, in.stack ? &input : nullptr, out.mintpy() ? out.unit : "");
    s = solve_streamed(in, out, o, progress);
    x_shape = {in.x_design().cols(), in.cube->shape()[1], in.cube->shape()[2]};
  });
  nb::dict status;
  for (std::size_t k = 0; k < kStatusCount; ++k) status[status_name(static_cast<PixelStatus>(k))] = s.totals.status[k];
  return fields({{"outputs", nb::cast(s.outputs)},
                 {"x_shape", nb::cast(x_shape)},
                 {"blocks", nb::cast(s.blocks)},
                 {"rows_per_block", nb::cast(s.rows_per_block)},
                 {"paths", nb::cast(paths_dict(s.totals.paths))},
                 {"status", nb::cast(status)},
                 {"engine_seconds", nb::cast(s.totals.engine_seconds)},
                 {"warnings", nb::cast(s.totals.warnings)}});
}

nb::dict plan_py(const Input& cube, const Design& design, std::optional<Input> weights, int min_valid) {
  const Array y = borrow(cube, "Y");
  const std::optional<Array> w = weights ? std::optional<Array>(borrow(*weights, "weights")) : std::nullopt;
  check_inputs(y, design, w ? &*w : nullptr, "Y", "A", "weights");
  MaskStats s;
  {
    nb::gil_scoped_release release;
    s = analyze_masks(y, w ? &*w : nullptr);
  }
  SolveOptions o;
  o.min_valid = min_valid;
  const PathCounts planned = plan(s, design, w.has_value(), o);
  nb::list groups;
  for (const LogBin& b : s.group_histogram())
    groups.append(fields({{"lo", nb::cast(b.lo)},
                          {"hi", nb::cast(b.hi)},
                          {"groups", nb::cast(b.groups)},
                          {"pixels", nb::cast(b.pixels)}}));
  const auto valid = s.valid_histogram();
  std::size_t under = 0;
  for (std::size_t k = static_cast<std::size_t>(std::max(1, min_valid)); k < std::min(design.cols(), valid.size()); ++k)
    under += valid[k];
  return fields({{"paths", nb::cast(paths_dict(planned))},
                 {"missing_fraction", nb::cast(s.missing_fraction())},
                 {"nan", nb::cast(s.nan_count)},
                 {"inf", nb::cast(s.inf_count)},
                 {"zero_weight", nb::cast(s.zero_weight)},
                 {"no_data_pixels", nb::cast(valid[0])},
                 {"distinct_masks", nb::cast(s.distinct_masks())},
                 {"valid_count_histogram", nb::cast(valid)},
                 {"group_size_histogram", nb::cast(groups)},
                 {"underdetermined", nb::cast(under)}});
}

nb::dict read_py(const std::string& path, long ref_y, long ref_x, bool reference, bool keep_zero, const std::string& mask,
                 std::optional<double> mask_threshold, const std::string& weight, std::optional<double> looks) {
  StackOptions o;
  o.reference = reference;
  o.ref_y = ref_y;
  o.ref_x = ref_x;
  o.zero_is_nodata = !keep_zero;
  o.mask = mask;
  o.mask_threshold = mask_threshold.value_or(o.mask_threshold);
  o.weight = weight;
  o.looks = looks.value_or(o.looks);
  if (stack_support() && is_stack_path(path)) {
    std::vector<DatePair> pairs;
    std::unique_ptr<CubeReader> weights;
    const auto reader = open_mintpy_stack(path, &pairs, o, &weights);
    const std::size_t H = reader->shape()[1];
    std::vector<std::string> dates;
    const Array a = sbas_design(pairs, &dates, path);
    nb::list pair_list;
    for (const auto& [first, second] : pairs) pair_list.append(nb::make_tuple(first, second));
    nb::dict out = fields({{"cube", nb::cast(to_numpy(reader->rows(0, H)))},
                           {"design", nb::cast(to_numpy(a))},
                           {"dates", nb::cast(dates)},
                           {"pairs", nb::cast(pair_list)}});
    if (weights) out["weights"] = to_numpy(weights->rows(0, H));
    return out;
  }
  const StackOptions plain;
  if (o.reference != plain.reference || o.ref_y != plain.ref_y || o.zero_is_nodata != plain.zero_is_nodata ||
      !o.mask.empty() || mask_threshold || o.weight != plain.weight || looks)
    throw InputError(path + ": the stack options (ref_yx, reference, keep_zero, mask_dataset, mask_threshold, "
                            "weight_func, looks) expected a MintPy stack (ifgramStack.h5), found another cube");
  GeoReference geo;
  const Array cube = read_cube(path, &geo);
  check_cube(cube, path);
  return fields({{"cube", nb::cast(to_numpy(cube))},
                 {"transform", nb::cast(geo.transform)},
                 {"projection", nb::cast(geo.projection)}});
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "CubeSolve's engine (see the cubesolve package for the documented API).";
  static nb::exception<Cancelled> cancelled(m, "Cancelled", PyExc_Exception);
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const IoError& e) {
      PyErr_SetString(PyExc_OSError, e.what());
    } catch (const NumericalError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  nb::class_<Design>(m, "Design")
      .def(
          "__init__", [](Design* d, const Input& a, const std::string& name) { new (d) Design(borrow(a, name), name); },
          "a"_a, "name"_a = "A")
      .def_prop_ro("rows", &Design::rows)
      .def_prop_ro("cols", &Design::cols)
      .def_prop_ro("rank", &Design::rank)
      .def_prop_ro("condition", &Design::condition)
      .def("values", [](const Design& d) {
        Array a(DType::Float64, {d.rows(), d.cols()});
        std::copy(d.values().begin(), d.values().end(), a.data<double>());
        return to_numpy(a);
      });

  m.def("solve", &solve_py, "cube"_a, "design"_a, "weights"_a.none(), "rcond"_a, "min_valid"_a, "ridge"_a, "device"_a,
        "device_float64"_a, "threads"_a, "dtype"_a.none(), "memory_mb"_a.none(), "stderr"_a, "covariance"_a, "temporal_coherence"_a, "loss"_a,
        "tolerance"_a, "max_iterations"_a, "progress"_a.none());
  m.def("solve_file", &solve_file_py, "cube"_a, "spec"_a.none(), "design"_a.none(), "pairs"_a, "times"_a, "weights"_a, "x"_a, "diag"_a,
        "model"_a, "residual"_a, "rcond"_a, "min_valid"_a, "ridge"_a, "device"_a, "device_float64"_a, "threads"_a, "dtype"_a.none(),
        "memory_mb"_a.none(), "stderr"_a, "covariance"_a, "loss"_a, "tolerance"_a, "max_iterations"_a, "progress"_a.none());
  m.def("plan", &plan_py, "cube"_a, "design"_a, "weights"_a.none(), "min_valid"_a);
  m.def("read", &read_py, "path"_a, "ref_y"_a, "ref_x"_a, "reference"_a, "keep_zero"_a, "mask"_a, "mask_threshold"_a.none(),
        "weight"_a, "looks"_a.none());
  m.def(
      "make_design",
      [](const std::string& spec, std::size_t n, const std::string& pairs, const std::string& times) {
        return to_numpy(make_design({spec, pairs, times}, n));
      },
      "spec"_a, "n"_a, "pairs"_a = "", "times"_a = "");
  m.def(
      "build_design",
      [](const std::string& spec, std::size_t n, const std::vector<double>& times) {
        return to_numpy(build_design(spec, n, times));
      },
      "spec"_a, "n"_a, "times"_a);
  m.def("devices", &describe_devices);
  m.def("tuning", [] {
    const TuningState t = tuning_state();
    nb::dict d;
    d["chunk_kib"] = t.tuning.chunk_bytes / 1024;
    d["mixed_min"] = t.tuning.mixed_min;
    d["wide"] = t.tuning.wide;
    d["origin"] = t.origin();
    d["warnings"] = t.warnings;
    return d;
  });
  m.def("version", &version);
}
