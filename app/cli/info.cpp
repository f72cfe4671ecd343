// cubesolve-cli info: missing values, valid-count and mask-group
// histograms, and the plan for a design.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/data/mask.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <cstdio>
#include <iostream>
#include <optional>

namespace cubesolve::cli {

namespace {

struct DesignInfo {
  std::size_t rows = 0, cols = 0, rank = 0;
  double condition = 0;
  PathCounts planned{};
  std::size_t underdetermined = 0;  // solvable pixels with fewer valid rows than unknowns
};

struct InfoReport {
  std::string cube;
  Shape shape;
  DType dtype = DType::Float32;
  std::size_t pixels = 0, nan = 0, inf = 0, zero_weight = 0, distinct = 0;
  double missing_fraction = 0;
  std::size_t in_groups[3] = {};  // pixels in groups of >= 2, 16, 256
  std::vector<std::size_t> valid_histogram;
  std::vector<LogBin> group_histogram;
  std::optional<DesignInfo> design;
};

/// Reads the whole cube (the statistics need every pixel) and summarises it.
InfoReport analyse(const Args& args) {
  const std::string cube_path = args.positional()[0];
  const auto min_valid = static_cast<std::size_t>(args.integer("min-valid", 1, 1, 1 << 30));
  Array cube, weights;
  std::optional<Inputs> in;
  if (args.positional().size() == 2) {
    in = open_command_inputs(args);
    cube = in->rows(0, in->cube->shape()[1], &weights);
  } else {
    const auto reader = open_cube(cube_path);
    cube = reader->rows(0, reader->shape()[1]);
    if (const auto w = args.get("weights")) {
      weights = read_npy(*w);
      check_like_cube(weights.shape(), cube.shape(), *w);
    }
  }
  const bool weighted = args.get("weights").has_value();
  ProgressBar bar("analysing");
  const MaskStats s = analyze_masks(cube, weighted ? &weights : nullptr, bar.callback());
  InfoReport r;
  r.cube = cube_path;
  r.shape = cube.shape();
  r.dtype = cube.dtype();
  r.pixels = s.pixels();
  r.missing_fraction = s.missing_fraction();
  r.nan = s.nan_count;
  r.inf = s.inf_count;
  r.zero_weight = s.zero_weight;
  r.distinct = s.distinct_masks();
  r.in_groups[0] = s.pixels_in_groups_of_at_least(2);
  r.in_groups[1] = s.pixels_in_groups_of_at_least(16);
  r.in_groups[2] = s.pixels_in_groups_of_at_least(256);
  r.valid_histogram = s.valid_histogram();
  r.group_histogram = s.group_histogram();
  if (in) {
    const Design& d = in->design;
    DesignInfo di{d.rows(), d.cols(), d.rank(), d.condition()};
    SolveOptions plan_options;
    plan_options.min_valid = static_cast<int>(min_valid);
    di.planned = plan(s, d, weighted, plan_options);
    for (std::size_t k = std::max<std::size_t>(1, min_valid); k < std::min(d.cols(), r.valid_histogram.size()); ++k)
      di.underdetermined += r.valid_histogram[k];
    r.design = di;
  }
  return r;
}

void print_json(const InfoReport& r) {
  Json j;
  j.begin_object().field("command", "info").field("cube", r.cube);
  j.key("shape").begin_array();
  for (std::size_t d : r.shape) j.value(d);
  j.end_array();
  j.field("dtype", dtype_name(r.dtype))
      .field("pixels", r.pixels)
      .field("missing_fraction", r.missing_fraction)
      .field("nan", r.nan)
      .field("inf", r.inf)
      .field("zero_weight", r.zero_weight)
      .field("no_data_pixels", r.valid_histogram[0])
      .field("distinct_masks", r.distinct)
      .field("pixels_in_groups_ge_2", r.in_groups[0])
      .field("pixels_in_groups_ge_16", r.in_groups[1])
      .field("pixels_in_groups_ge_256", r.in_groups[2]);
  j.key("valid_count_histogram").begin_array();
  for (std::size_t v : r.valid_histogram) j.value(v);
  j.end_array();
  j.key("group_size_histogram").begin_array();
  for (const auto& b : r.group_histogram)
    j.begin_object().field("lo", b.lo).field("hi", b.hi).field("groups", b.groups).field("pixels", b.pixels).end_object();
  j.end_array();
  if (r.design) {
    const DesignInfo& d = *r.design;
    j.key("design").begin_object();
    j.field("rows", d.rows).field("cols", d.cols).field("rank", d.rank).field("condition", d.condition);
    j.end_object();
    json_paths(j, d.planned);
    j.field("underdetermined", d.underdetermined);
  }
  j.end_object();
  std::cout << j.str() << "\n";
}

void print_text(const InfoReport& r) {
  std::printf("cube        %s  %s %s\n", r.cube.c_str(), shape_string(r.shape).c_str(), dtype_name(r.dtype));
  std::printf("missing     %.2f %% of values (%zu NaN, %zu Inf, %zu zero weight)\n", 100.0 * r.missing_fraction, r.nan,
              r.inf, r.zero_weight);
  std::printf("no data     %zu of %zu pixels\n", r.valid_histogram[0], r.pixels);
  std::printf("masks       %zu distinct; pixels in groups of >= 2: %zu, >= 16: %zu, >= 256: %zu\n", r.distinct,
              r.in_groups[0], r.in_groups[1], r.in_groups[2]);
  std::printf("valid rows per pixel (count: pixels)\n");
  const auto& h = r.valid_histogram;
  const std::size_t step = std::max<std::size_t>(1, (h.size() + 15) / 16);
  for (std::size_t k = 0; k < h.size(); k += step) {
    std::size_t c = 0;
    for (std::size_t q = k; q < std::min(h.size(), k + step); ++q) c += h[q];
    if (step == 1) std::printf("  %5zu: %zu\n", k, c);
    else std::printf("  %5zu-%-5zu: %zu\n", k, std::min(h.size(), k + step) - 1, c);
  }
  std::printf("mask group sizes (size range: groups, pixels)\n");
  for (const auto& b : r.group_histogram)
    if (b.groups) std::printf("  %7zu-%-7zu: %zu groups, %zu pixels\n", b.lo, b.hi - 1, b.groups, b.pixels);
  if (r.design) {
    const DesignInfo& d = *r.design;
    std::printf("design      %zu x %zu, rank %zu, condition %.3g\n", d.rows, d.cols, d.rank, d.condition);
    std::printf("plan       %s\n", paths_text(d.planned).c_str());
    std::printf("            %zu pixels underdetermined (minimum norm)\n", d.underdetermined);
  }
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
  const Args args("info", argv, with_inputs({"json"}, kInputFlags),
                  with_inputs({"weights", "min-valid", "pairs", "times"}, kInputOptions));
  args.expect_positional(1, 2, "CUBE [DESIGN]");
  const InfoReport report = analyse(args);
  if (args.flag("json")) print_json(report);
  else print_text(report);
  return 0;
}

}  // namespace cubesolve::cli
