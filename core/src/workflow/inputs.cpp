#include <cubesolve/workflow/inputs.hpp>

#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>

#include <cmath>

namespace cubesolve {

bool is_stack(const std::string& cube_path, const std::string& design) {
  return design == "sbas" && is_stack_path(cube_path);
}

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
    in.cube = open_mintpy_stack(cube, &pairs, options.stack, &in.weights);
    if (in.weights) in.weights_name = cube + " (coherence)";
    in.design = Design(sbas_design(pairs, nullptr, cube), design.spec);
  } else {
    in.cube = open_cube(cube);
    in.design = Design(make_design(design, in.cube->shape()[0]), design.spec);
  }
  if (!weights.empty()) {
    in.weights = open_cube(weights);
    in.weights_name = weights;
  }
  in.files = {cube, weights, design.pairs, design.times};
  if (!is_design_spec(design.spec)) in.files.push_back(design.spec);
  check_shapes(in.cube->shape(), in.design, in.weights ? &in.weights->shape() : nullptr, in.cube_name, in.design_name,
               in.weights_name);
  return in;
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
