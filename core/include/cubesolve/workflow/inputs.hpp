#pragma once
// A solve's inputs as both front ends name them: a cube file (or a MintPy
// stack), a design (a file or a description), optional weights.

#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/stream.hpp>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cubesolve {

/// Whether the cube at `cube_path` with design `design` is a MintPy stack
/// that brings its own SBAS design (a .h5/.he5 cube and the design "sbas").
bool is_stack(const std::string& cube_path, const std::string& design);

/// How the inputs are read.
struct InputOptions {
  StackOptions stack;            // a MintPy stack's rules (referencing, zero, masks, weights)
  std::optional<double> nodata;  // a cube value that means missing, besides NaN and ±Inf
  /// For a MintPy stack: solve for the minimum-norm velocity between dates
  /// (MintPy's default) instead of the minimum-norm phase; x is the time
  /// series either way.
  bool velocity = false;
};

/// The inputs, opened to be read a block of rows at a time.
struct Inputs {
  std::unique_ptr<CubeReader> cube, weights;
  Design design;
  std::string cube_name, design_name, weights_name;  // as the messages name them (the paths)
  std::vector<std::string> files;  // every file the run reads (cube, design, pairs, times, weights)
  std::optional<double> nodata;
  /// What a MintPy stack says about itself (null for other cubes).
  std::shared_ptr<const StackInfo> stack;
  /// The date pairs of the design's rows: a MintPy stack's kept
  /// interferograms, or an SBAS design's pairs file.
  std::vector<DatePair> pairs;
  /// What x's channels are: the dates after the first of an SBAS design
  /// (YYYYMMDD), or the design's terms (design_terms); empty otherwise.
  std::vector<std::string> x_names;
  /// With the velocity formulation: the design solved is the velocity
  /// design, `intervals` the dates' intervals in years, `series` the design
  /// of the time series x is given as (for the model and the residuals).
  std::vector<double> intervals;
  Design series;

  /// The cube is a product's maps read as they are (maps_inputs): a channel
  /// whose band a pixel lacks is NaN there, not the minimum norm's 0.
  bool maps = false;

  /// The design x is given in: `series` with the velocity formulation, else `design`.
  const Design& x_design() const { return intervals.empty() ? design : series; }
  /// A solve's x (M, ...) from velocities to the time series, in place (no-op without).
  void to_series(Array& x) const;
  /// The options to solve a block of these inputs with: the standard errors
  /// of a velocity formulation's series come after (finish()), from rss.
  SolveOptions engine_options(const SolveOptions& options) const;
  /// A block's solve (rows from r0 of the cube, their weights, solved with
  /// engine_options(options)) as these inputs give it: x as the time series
  /// with its standard errors, a stack's temporal coherence (with
  /// options.residuals), the reference pixel as it is by definition.
  void finish(SolveResult& r, const Array& rows, const Array* rows_weights, const SolveOptions& options, std::size_t r0) const;
  /// The inverse: time series to velocities (verify compares the solve itself).
  void to_velocity(Array& x) const;

  /// A MintPy stack referenced at a pixel: that pixel of a solve of rows
  /// from r0 set to what it is by definition, x = 0 (its values are all 0,
  /// which the stack's rule reads as missing), with every interferogram
  /// used, rank M, rss 0 and status Reference. No-op for other cubes.
  void mark_reference(std::size_t r0, SolveResult& r) const;

  /// Rows [r0, r1) of the cube (and the weights), checked against the design.
  /// Throws IoError, InputError naming the file and the row.
  Array rows(std::size_t r0, std::size_t r1, Array* weights_rows) const;
};

/// Opens the cube (a MintPy stack with its SBAS design when is_stack(),
/// read by options.stack, weighted from its coherence when that says so),
/// makes the design, opens the weights (when `weights` is not empty), and
/// checks that their shapes agree. Throws IoError, InputError naming the file.
Inputs open_inputs(const std::string& cube, const DesignSpec& design, const std::string& weights = "",
                   const InputOptions& options = {});
/// A cube file with a design given as it is (no stack's rules), and its
/// weights (when `weights` is not empty). Throws as open_inputs.
Inputs open_inputs(const std::string& cube, const Design& design, const std::string& weights = "");

/// The inputs that show K maps as they are: the identity design (K, K)
/// named `names`, x_names those, maps set; no cube reader (the maps are
/// read whole, read_mintpy_maps).
Inputs maps_inputs(const std::vector<std::string>& names);

}  // namespace cubesolve
