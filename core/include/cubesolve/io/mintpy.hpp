#pragma once
// MintPy interferogram stacks (ifgramStack.h5), read through HDF5.

#include <cubesolve/data/array.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/raster.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

/// An InSAR interferogram stack as MintPy stores it (ifgramStack.h5).
struct InsarStack {
  Array cube;                   // unwrapPhase (N, H, W)
  std::vector<DatePair> pairs;  // date (N x 2, YYYYMMDD)
  std::vector<bool> keep;       // dropIfgram (N): true = used, false = dropped
  bool referenced = false;      // whether the interferograms were referenced
  long ref_y = -1, ref_x = -1;  // at this pixel (-1: none, or by the file's refPhase)
};

/// How a stack's interferograms are read, by MintPy's rules (MintPy 1.6,
/// ifgram_inversion.py): referenced, zero as no data, masked per pixel,
/// weighted from the coherence.
struct StackOptions {
  /// Subtract from each interferogram its value at the reference pixel
  /// (ref_y/ref_x when set, else the file's REF_Y/REF_X, else its refPhase)
  /// wherever the value is not 0. A stack with none of them is refused
  /// unless this is false.
  bool reference = true;
  long ref_y = -1, ref_x = -1;
  /// A reference area instead of a pixel: the mean of each interferogram's
  /// valid values in the (2 R + 1)² pixels about the reference pixel (cut
  /// at the edges); 0: the pixel alone.
  long ref_radius = 0;
  /// A stack without any reference is read unreferenced instead of refused
  /// (InsarStack::referenced says which; the desktop application then
  /// offers to pick a reference pixel).
  bool unreferenced_if_none = false;
  /// An exact 0 (after referencing) is no data: "not unwrapped".
  bool zero_is_nodata = true;
  /// Per-pixel masking of interferograms: "connectComponent" (0 is masked),
  /// "coherence" (below mask_threshold is masked), or none ("").
  std::string mask;
  double mask_threshold = 0.4;
  /// Weights from the coherence dataset: "no", "var" (inverse phase
  /// variance of distributed scatterers), "fim" (Fisher information) or
  /// "coh" (the coherence itself); `looks` (0: NCORRLOOKS of the file, or
  /// ALOOKS·RLOOKS/1.94) independent looks.
  std::string weight = "no";
  double looks = 0;
};

/// MintPy's weight of an interferogram of spatial coherence `coherence`
/// under `weight` ("var", "fim", "coh") with L looks, as MintPy computes it
/// (coherence below 0.05 or NaN taken as 0.05; float32 as stored). Throws
/// InputError for another name.
double coherence_weight(const std::string& weight, double coherence, int looks);

/// True when this build reads HDF5 (MintPy stacks).
bool stack_support();

/// Whether `path` names an HDF5 file (.h5, .he5), as MintPy stacks are.
bool is_stack_path(const std::string& path);

/// Reads unwrapPhase (as `options` say), date and dropIfgram (all kept
/// when absent) from a MintPy ifgramStack.h5. Throws IoError (cannot open)
/// or InputError (not HDF5, no unwrapPhase or no date, shapes that
/// disagree, no reference), naming the file.
InsarStack read_mintpy_stack(const std::string& path, const StackOptions& options = {});

/// The stack without its dropped interferograms.
InsarStack kept_only(const InsarStack& stack);

class CubeReader;
/// What a stack says about itself that a time series in MintPy's layout
/// carries on.
struct StackInfo {
  std::vector<std::pair<std::string, std::string>> attributes;  // the file's root attributes, as text
  std::vector<std::string> dates;  // the acquisitions of the kept interferograms, sorted
  std::vector<float> pair_bperp;   // per kept interferogram (empty without a 'bperp' dataset)
  std::vector<float> bperp;        // per date, as MintPy estimates it from pair_bperp (zeros without)
  long ref_y = -1, ref_x = -1;     // the reference pixel used (an area's centre); -1 when none
  long ref_radius = 0;             // the reference area's half-width about it (0: the pixel)
  bool referenced = false;         // whether the interferograms were referenced (at ref_y/ref_x, or by refPhase)
  std::size_t interferograms = 0;  // kept
  /// Whether the reference is the one pixel (ref_y, ref_x), which is then 0
  /// in every output (not an area's centre, nor none).
  bool pixel_reference() const { return ref_y >= 0 && ref_x >= 0 && ref_radius == 0; }
  /// An attribute's text, or `fallback`.
  std::string attribute(const std::string& name, const std::string& fallback = "") const;
};

/// A geocoded stack's georeference from MintPy's X_FIRST, X_STEP, Y_FIRST
/// and Y_STEP (the first pixel's outer corner and the pixel size, as
/// GDAL's transform), its projection WGS 84 (EPSG:4326, as WKT) where the
/// coordinates are degrees; empty for a stack in radar coordinates.
GeoReference stack_geo(const StackInfo& stack);
/// Whether a stack's X and Y are degrees (X_UNIT, or a step below 0.1).
bool stack_degrees(const StackInfo& stack);

/// The factor from a stack's unwrapped phase (radians) to `unit`: 1 for
/// "radian"; for "m", "cm" and "mm" the line-of-sight displacement by
/// MintPy's sign, -WAVELENGTH/(4 pi) times the unit's count per metre.
/// Throws InputError for another unit, or (naming `path`) for a stack
/// without a usable WAVELENGTH.
double phase_unit_scale(const StackInfo& stack, const std::string& unit, const std::string& path);
/// Throws InputError (as phase_unit_scale) unless `unit` is radian, mm, cm or m.
void check_phase_unit(const std::string& unit);

/// The kept interferograms of a MintPy stack as `options` say, read a block
/// of rows at a time (HDF5 hyperslabs); `pairs` receives their date pairs,
/// `weights` (with a weight function) a reader of their weights, `info` what
/// the stack says about itself. Throws as read_mintpy_stack.
std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>* pairs,
                                              const StackOptions& options = {},
                                              std::unique_ptr<CubeReader>* weights = nullptr, StackInfo* info = nullptr);

/// MintPy's maps of one plane (velocity.h5: velocity, velocityStd, ...;
/// temporalCoherence.h5; any file without 'unwrapPhase' or 'timeseries'):
/// every 2-D numeric dataset at the file's root of the first one's shape,
/// as bands (K, H, W) float32 by name, the one FILE_TYPE names first
/// (velocity in velocity.h5), `names` their dataset
/// names, `units` their UNIT attribute (else the file's; "" without),
/// `info` the root attributes (REF_Y/REF_X, geocoding). Throws IoError, and
/// InputError (naming the file) when it holds no such dataset.
Array read_mintpy_maps(const std::string& path, std::vector<std::string>* names, std::vector<std::string>* units, StackInfo* info);
/// Whether `path` is an HDF5 file of maps (above): no 'unwrapPhase' or
/// 'timeseries' dataset but a 2-D one at its root. Never throws.
bool is_mintpy_maps(const std::string& path);

/// The parts of a time series in MintPy's layout.
enum class MintPyPart { TimeSeries, TemporalCoherence, NumInvIfgram };

class CubeWriter;
/// A MintPy HDF5 file at `path` (a temporary name of `name`) for rows of
/// (H, W) pixels: timeseries.h5 (the dates, bperp and `timeseries` (D, H, W)
/// float32, D = dates, the first zero), temporalCoherence.h5 or
/// numInvIfgram.h5, with the stack's attributes and FILE_TYPE, UNIT (`unit`)
/// and REF_DATE as MintPy writes them. The time series' rows are the
/// (D - 1, rows, W) unknowns, written scaled by `scale` after a zero first
/// date, then relative to `ref_date` (0 there; empty: the first date), as
/// MintPy's reference_date.py. Throws IoError, InputError for a ref_date
/// that is not one of the dates.
std::unique_ptr<CubeWriter> mintpy_writer(const std::string& path, MintPyPart part, const StackInfo& info,
                                          std::size_t height, std::size_t width, const std::string& unit,
                                          double scale, const std::string& name, const std::string& ref_date = "");

}  // namespace cubesolve
