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

/// True when this build reads HDF5 (MintPy stacks).
bool stack_support();

/// Whether `path` names an HDF5 file (.h5, .he5), as MintPy stacks are.
bool is_stack_path(const std::string& path);

/// Reads unwrapPhase, date and dropIfgram (all kept when absent) from a
/// MintPy ifgramStack.h5. Throws IoError (cannot open) or InputError (not
/// HDF5, no unwrapPhase or no date, shapes that disagree), naming the file.
InsarStack read_mintpy_stack(const std::string& path);

/// The stack without its dropped interferograms.
InsarStack kept_only(const InsarStack& stack);

class CubeReader;
/// The kept interferograms of a MintPy stack, read a block of rows at a time
/// (HDF5 hyperslabs); `pairs` receives their date pairs. Throws as
/// read_mintpy_stack.
std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>* pairs);

}  // namespace cubesolve
