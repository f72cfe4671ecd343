#include <cubesolve/workflow/inputs.hpp>

#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>

namespace cubesolve {

bool is_stack(const std::string& cube_path, const std::string& design) {
  return design == "sbas" && is_stack_path(cube_path);
}

Inputs open_inputs(const std::string& cube, const DesignSpec& design, const std::string& weights) {
  Inputs in;
  in.cube_name = cube;
  in.design_name = design.spec;
  if (is_stack(cube, design.spec)) {
    std::vector<DatePair> pairs;
    in.cube = open_mintpy_stack(cube, &pairs);
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
  if (weights) *weights_rows = weights->rows(r0, r1);
  check_inputs(block, design, weights ? weights_rows : nullptr, cube_name, design_name, weights_name, r0);
  return block;
}

}  // namespace cubesolve
