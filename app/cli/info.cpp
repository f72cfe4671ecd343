// cubesolve-cli info: missing values, valid-count and mask-group
// histograms, and the plan for a design.
#include "commands.hpp"
#include "common.hpp"

#include <cubesolve/data/mask.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/stream.hpp>
#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/stats.hpp>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
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
  std::size_t memory_mb = 0;
  CubeStats stats;
  std::size_t in_groups[3] = {};  // pixels in groups of >= 2, 16, 256
  std::vector<LogBin> group_histogram;
  std::optional<DesignInfo> design;
};

/// One pass over the cube a block of rows at a time, within --memory, and
/// its summary.
InfoReport analyse(const Args& args) {
  const std::string cube_path = args.positional()[0];
  const auto min_valid = static_cast<std::size_t>(args.integer("min-valid", 1, 1, 1 << 30));
  InfoReport r;
  r.memory_mb = static_cast<std::size_t>(args.integer("memory", 256, 16, 1 << 20));
  std::optional<Inputs> in;
  std::unique_ptr<CubeReader> cube, weights;
  RowSource rows;
  if (args.positional().size() == 2) {
    in = open_command_inputs(args);
    rows = [&](std::size_t r0, std::size_t r1, Array* w) { return in->rows(r0, r1, w); };
  } else {
    cube = open_cube(cube_path);
    if (const auto w = args.get("weights")) {
      weights = open_cube(*w);
      check_like_cube(weights->shape(), cube->shape(), *w);
    }
    rows = [&](std::size_t r0, std::size_t r1, Array* w) {
      if (w) *w = weights->rows(r0, r1);
      return cube->rows(r0, r1);
    };
  }
  const CubeReader& reader = in ? *in->cube : *cube;
  const bool weighted = args.get("weights").has_value() || (in && in->weights);
  ProgressBar bar("analysing");
  r.stats = stream_stats(cube_path, reader.shape(), rows, weighted, r.memory_mb << 20, bar.callback());
  const CubeStats& s = r.stats;
  r.cube = cube_path;
  r.shape = reader.shape();
  r.dtype = reader.dtype();
  r.in_groups[0] = pixels_in_groups_of_at_least(s.sizes, 2);
  r.in_groups[1] = pixels_in_groups_of_at_least(s.sizes, 16);
  r.in_groups[2] = pixels_in_groups_of_at_least(s.sizes, 256);
  r.group_histogram = group_histogram(s.sizes);
  if (in) {
    const Design& d = in->design;
    DesignInfo di{d.rows(), d.cols(), d.rank(), d.condition()};
    SolveOptions plan_options;
    plan_options.min_valid = static_cast<int>(min_valid);
    di.planned = plan(s, d, weighted, plan_options);
    for (std::size_t k = std::max<std::size_t>(1, min_valid); k < std::min(d.cols(), s.valid_histogram.size()); ++k)
      di.underdetermined += s.valid_histogram[k];
    r.design = di;
  }
  return r;
}

void print_json(const InfoReport& r) {
  const CubeStats& s = r.stats;
  Json j;
  j.begin_object().field("command", "info").field("cube", r.cube);
  j.key("shape").begin_array();
  for (std::size_t d : r.shape) j.value(d);
  j.end_array();
  j.field("dtype", dtype_name(r.dtype))
      .field("memory_mb", r.memory_mb)
      .field("peak_memory_mb", peak_memory_mb())
      .field("pixels", s.pixels())
      .field("missing_fraction", s.missing_fraction())
      .field("nan", s.nan_count)
      .field("inf", s.inf_count)
      .field("zero_weight", s.zero_weight)
      .field("no_data_pixels", s.valid_histogram[0])
      .field("distinct_masks", s.distinct)
      .field("groups_exact", s.exact)
      .field("group_sample", s.sample)
      .field("unresolved_group_pixels", s.unresolved)
      .field("exact_mask_limit", s.limit)
      .field("pixels_in_groups_ge_2", r.in_groups[0])
      .field("pixels_in_groups_ge_16", r.in_groups[1])
      .field("pixels_in_groups_ge_256", r.in_groups[2]);
  j.key("valid_count_histogram").begin_array();
  for (std::size_t v : s.valid_histogram) j.value(v);
  j.end_array();
  j.key("valid_per_observation").begin_array();
  for (std::size_t v : s.valid_per_observation) j.value(v);
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
  const CubeStats& s = r.stats;
  std::printf("cube        %s  %s %s\n", r.cube.c_str(), shape_string(r.shape).c_str(), dtype_name(r.dtype));
  std::printf("missing     %.2f %% of values (%zu NaN, %zu Inf, %zu zero weight)\n", 100.0 * s.missing_fraction(), s.nan_count,
              s.inf_count, s.zero_weight);
  std::printf("no data     %zu of %zu pixels\n", s.valid_histogram[0], s.pixels());
  if (s.exact)
    std::printf("masks       %zu distinct; pixels in groups of >= 2: %zu, >= 16: %zu, >= 256: %zu\n", s.distinct, r.in_groups[0],
                r.in_groups[1], r.in_groups[2]);
  else
    std::printf("masks       more than %zu distinct; groups estimated from a sample of %zu pixels: in groups of >= 2: "
                "%zu, >= 16: %zu, >= 256: %zu; %zu pixels in groups too small for the sample to tell (mostly alone)\n",
                s.limit, s.sample, r.in_groups[0], r.in_groups[1], r.in_groups[2], s.unresolved);
  std::printf("valid rows per pixel (count: pixels)\n");
  const auto& h = s.valid_histogram;
  const std::size_t step = std::max<std::size_t>(1, (h.size() + 15) / 16);
  for (std::size_t k = 0; k < h.size(); k += step) {
    std::size_t c = 0;
    for (std::size_t q = k; q < std::min(h.size(), k + step); ++q) c += h[q];
    if (step == 1) std::printf("  %5zu: %zu\n", k, c);
    else std::printf("  %5zu-%-5zu: %zu\n", k, std::min(h.size(), k + step) - 1, c);
  }
  std::printf("valid pixels per observation: from %zu to %zu of %zu\n",
              *std::min_element(s.valid_per_observation.begin(), s.valid_per_observation.end()),
              *std::max_element(s.valid_per_observation.begin(), s.valid_per_observation.end()), s.pixels());
  std::printf("mask group sizes (size range: groups, pixels%s)\n", s.exact ? "" : "; estimated");
  for (const auto& b : r.group_histogram)
    if (b.groups) std::printf("  %7zu-%-7zu: %zu groups, %zu pixels\n", b.lo, b.hi - 1, b.groups, b.pixels);
  if (r.design) {
    const DesignInfo& d = *r.design;
    std::printf("design      %zu x %zu, rank %zu, condition %.3g\n", d.rows, d.cols, d.rank, d.condition);
    std::printf("plan       %s%s\n", paths_text(d.planned).c_str(), s.exact ? "" : " (groups estimated)");
    std::printf("            %zu pixels underdetermined (minimum norm)\n", d.underdetermined);
  }
}

}  // namespace

int cmd_info(const std::vector<std::string>& argv) {
  const Args args("info", argv, with_inputs({"json"}, kInputFlags),
                  with_inputs({"weights", "min-valid", "pairs", "times", "memory"}, kInputOptions));
  args.expect_positional(1, 2, "CUBE [DESIGN]");
  const InfoReport report = analyse(args);
  if (args.flag("json")) print_json(report);
  else print_text(report);
  return 0;
}

}  // namespace cubesolve::cli
