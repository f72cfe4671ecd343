#include <cubesolve/workflow/inputs.hpp>

#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve {

bool is_stack(const std::string& cube_path, const std::string& design) {
  return design == "sbas" && is_stack_path(cube_path);
}

namespace {

/// Opens the weights (when `weights` is not empty) and checks the shapes of the inputs.
void open_weights(Inputs& in, const std::string& weights) {
  if (!weights.empty()) {
    in.weights = open_cube(weights);
    in.weights_name = weights;
  }
  check_shapes(in.cube->shape(), in.design, in.weights ? &in.weights->shape() : nullptr, in.cube_name, in.design_name,
               in.weights_name);
}

}  // namespace

Inputs open_inputs(const std::string& cube, const DesignSpec& design, const std::string& weights,
                   const InputOptions& options) {
  Inputs in;
  in.cube_name = cube;
  in.design_name = design.spec;
  in.nodata = options.nodata;
  if (is_stack(cube, design.spec)) {
    if (!weights.empty() && options.stack.weight != "no")
      throw InputError(weights + ": expected weights from a file or from the stack's coherence, found both");
    std::vector<DatePair> pairs;
    auto info = std::make_shared<StackInfo>();
    in.cube = open_mintpy_stack(cube, &pairs, options.stack, &in.weights, info.get());
    if (in.weights) in.weights_name = cube + " (coherence)";
    in.design = Design(sbas_design(pairs, nullptr, cube), design.spec);
    // The perpendicular baseline of each date, as MintPy estimates it: the
    // minimum-norm least-squares fit of the interferograms' over the network.
    info->bperp.assign(info->dates.size(), 0.0f);
    if (info->pair_bperp.size() == pairs.size() && !pairs.empty()) {
      Array b(DType::Float64, {pairs.size(), 1, 1});
      for (std::size_t k = 0; k < pairs.size(); ++k) b.data<double>()[k] = info->pair_bperp[k];
      const SolveResult r = solve(b, in.design);
      for (std::size_t j = 0; j < in.design.cols(); ++j) {
        const double v = r.x.value(j);
        info->bperp[j + 1] = std::isfinite(v) ? static_cast<float>(v) : 0.0f;
      }
    }
    in.stack = info;
    in.pairs = pairs;
    if (options.velocity) {
      in.series = in.design;
      in.design = Design(sbas_velocity_design(pairs, &in.intervals, cube), "sbas (velocity)");
    }
  } else {
    in.cube = open_cube(cube);
    in.design = Design(make_design(design, in.cube->shape()[0]), design.spec);
    if (design.spec == "sbas") in.pairs = read_pairs(design.pairs);
  }
  in.x_names = unknown_names(in.pairs, in.pairs.empty() ? design_terms(design) : std::vector<std::string>{}, in.x_design().cols());
  in.files = {cube, weights, design.pairs, design.times};
  if (!is_design_spec(design.spec)) in.files.push_back(design.spec);
  open_weights(in, weights);
  return in;
}

Inputs open_inputs(const std::string& cube, const Design& design, const std::string& weights) {
  Inputs in;
  in.cube_name = cube;
  in.design_name = "the design matrix";
  in.cube = open_cube(cube);
  in.design = design;
  in.x_names = unknown_names({}, {}, design.cols());
  in.files = {cube, weights};
  open_weights(in, weights);
  return in;
}

Inputs maps_inputs(const std::vector<std::string>& names) {
  Inputs in;
  Array identity(DType::Float64, {names.size(), names.size()});
  for (std::size_t k = 0; k < names.size(); ++k) identity.data<double>()[k * names.size() + k] = 1.0;
  in.design = Design(identity, "maps");
  in.x_names = names;
  in.maps = true;
  return in;
}

void Inputs::to_series(Array& x) const {
  if (intervals.empty()) return;
  const std::size_t M = intervals.size(), P = x.size() / M;
  for (std::size_t p = 0; p < P; ++p) {
    double sum = 0;
    for (std::size_t j = 0; j < M; ++j) {
      sum += x.value(j * P + p) * intervals[j];
      x.set(j * P + p, sum);
    }
  }
}

SolveOptions Inputs::engine_options(const SolveOptions& options) const {
  SolveOptions o = options;
  if ((options.std_errors || options.covariance) && !intervals.empty()) {  // those of the series, in finish
    o.std_errors = o.covariance = false;
    o.residuals = true;
  }
  return o;
}

void Inputs::finish(SolveResult& r, const Array& rows, const Array* rows_weights, const SolveOptions& options, std::size_t r0) const {
  if (options.covariance && !intervals.empty()) r.covariance = covariances(rows, design, rows_weights, r, options, intervals);
  if (options.std_errors && !intervals.empty())
    r.std_error = options.covariance ? covariance_errors(r.covariance, design.cols())
                                     : standard_errors(rows, design, rows_weights, r, options, intervals);
  to_series(r.x);
  if (maps)  // a map the pixel lacks is missing, not 0
    for (std::size_t i = 0; i < r.x.size() && i < rows.size(); ++i)
      if (std::isnan(rows.value(i))) r.x.set(i, std::numeric_limits<double>::quiet_NaN());
  if (stack && options.residuals) r.temporal_coherence = temporal_coherence(residual_cube(rows, model_cube(x_design(), r.x)));
  mark_reference(r0, r);
}

void Inputs::to_velocity(Array& x) const {
  if (intervals.empty()) return;
  const std::size_t M = intervals.size(), P = x.size() / M;
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t j = M; j-- > 0;) x.set(j * P + p, (x.value(j * P + p) - (j ? x.value((j - 1) * P + p) : 0.0)) / intervals[j]);
}

void Inputs::mark_reference(std::size_t r0, SolveResult& r) const {
  if (!stack || !stack->pixel_reference()) return;
  const std::size_t R = r.status.dim(0), W = r.status.dim(1), y = static_cast<std::size_t>(stack->ref_y);
  if (y < r0 || y >= r0 + R) return;
  const std::size_t p = (y - r0) * W + static_cast<std::size_t>(stack->ref_x), P = R * W, M = r.x.size() / std::max<std::size_t>(P, 1);
  for (std::size_t j = 0; j < M; ++j) r.x.set(j * P + p, 0.0);
  for (std::size_t j = 0; j < M && !r.std_error.empty(); ++j) r.std_error.set(j * P + p, 0.0);  // exact by definition
  for (std::size_t j = 0; j < r.covariance.size() / std::max<std::size_t>(P, 1); ++j) r.covariance.set(j * P + p, 0.0);
  if (!r.temporal_coherence.empty()) r.temporal_coherence.set(p, 1.0);                              // as MintPy's
  r.status.data<std::uint8_t>()[p] = static_cast<std::uint8_t>(PixelStatus::Reference);
  r.n_valid.data<std::int32_t>()[p] = static_cast<std::int32_t>(stack->interferograms);
  r.rank.data<std::int32_t>()[p] = static_cast<std::int32_t>(M);
  r.rss.data<double>()[p] = 0;
  r.cond.data<double>()[p] = std::numeric_limits<double>::quiet_NaN();
}

Array Inputs::rows(std::size_t r0, std::size_t r1, Array* weights_rows) const {
  Array block = cube->rows(r0, r1);
  if (nodata && block.dtype() == DType::Float32) {  // the no-data value is missing, as NaN is (in the cube's precision)
    const float v = static_cast<float>(*nodata);
    float* x = block.data<float>();
    for (std::size_t i = 0; i < block.size(); ++i) x[i] = x[i] == v ? NAN : x[i];
  } else if (nodata) {
    double* x = block.data<double>();
    for (std::size_t i = 0; i < block.size(); ++i) x[i] = x[i] == *nodata ? NAN : x[i];
  }
  if (weights) *weights_rows = weights->rows(r0, r1);
  check_inputs(block, design, weights ? weights_rows : nullptr, cube_name, design_name, weights_name, r0);
  return block;
}

}  // namespace cubesolve
