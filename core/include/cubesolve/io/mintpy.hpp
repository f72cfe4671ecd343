#pragma once
// MintPy interferogram stacks (ifgramStack.h5), read through HDF5.

#include <cubesolve/data/array.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>

#include <memory>
#include <string>
#include <vector>

namespace cubesolve {

/// An InSAR interferogram stack as MintPy stores it (ifgramStack.h5).
struct InsarStack {
  Array cube;                   // unwrapPhase (N, H, W)
  std::vector<DatePair> pairs;  // date (N x 2, YYYYMMDD)
  std::vector<bool> keep;       // dropIfgram (N): true = used, false = dropped
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
/// The kept interferograms of a MintPy stack as `options` say, read a block
/// of rows at a time (HDF5 hyperslabs); `pairs` receives their date pairs,
/// `weights` (with a weight function) a reader of their weights. Throws as
/// read_mintpy_stack.
std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>* pairs,
                                              const StackOptions& options = {},
                                              std::unique_ptr<CubeReader>* weights = nullptr);

}  // namespace cubesolve
