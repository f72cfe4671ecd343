#pragma once
// The streamed solve: reader → engine → writer a block of rows at a time,
// so that a cube larger than memory is solved within a memory budget.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/progress.hpp>
#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/results.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace cubesolve {

/// What a solve did, over all its blocks.
struct SolveTotals {
  PathCounts paths{};
  std::array<std::size_t, kStatusCount> status{};  // pixels per PixelStatus
  double engine_seconds = 0;
  std::size_t pixels = 0;
  int threads = 1;
  Device device = Device::Cpu;
  std::size_t device_pixels = 0;
  std::size_t no_std_error = 0;  // solved pixels without standard errors (|V| <= rank)
  std::vector<std::string> warnings;

  void add(const SolveResult& r);
};

/// How a streamed solve cuts the cube: blocks of rows whose data take three
/// quarters of the memory budget; the engine's chunks get the rest.
struct StreamPlan {
  std::size_t height = 0, rows_per_block = 1, blocks = 1;
  /// Whether the next block is read while one is solved (two blocks' data
  /// in the budget): not where the cube or an output is HDF5, whose library
  /// takes one call at a time.
  bool read_ahead = false;
  SolveOptions engine;  // each block's solve
  DType x_type = DType::Float32;

  std::size_t first_row(std::size_t block) const { return block * rows_per_block; }
  std::size_t end_row(std::size_t block) const;
};
/// Throws InputError (naming the cube) where one row and its results do
/// not fit three quarters of options.memory.
StreamPlan plan_stream(const Inputs& in, const ResultPaths& out, const SolveOptions& options);

/// Block b of the plan, read and solved; `rows` gets the cube's rows (the
/// residuals need them). Throws as solve(), IoError, InputError.
SolveResult solve_block(const Inputs& in, const StreamPlan& plan, std::size_t block, Array& rows,
                        const Progress& progress = {});

/// The progress of block b's solve as a share of the whole cube's.
Progress block_progress(const StreamPlan& plan, std::size_t block, const Progress& progress);

struct StreamedSolve {
  SolveTotals totals;
  std::size_t blocks = 0, rows_per_block = 0;
  bool read_ahead = false;
  std::size_t bytes_read = 0;  // the cube's (and the weights') values, as read
  double read_seconds = 0;     // spent reading them (beside the solve where read ahead)
  double wait_seconds = 0;     // the solve waited for a read
  double wall_seconds = 0;     // the whole solve, reading and writing included
  std::vector<std::string> outputs;  // the files written
};

/// The masks of the cube `cube` reads (with `weights`, where not null), a
/// block of rows at a time within `memory` bytes: what analyze_masks gives
/// for the cube in memory (its masks compact: compact_masks), without
/// holding it. Throws as the reads, Cancelled.
MaskStats stream_masks(CubeReader& cube, CubeReader* weights, std::size_t memory, const Progress& progress = {});

/// A cube copied for the views, a block of rows at a time, into scratch
/// files of `folder` (see scratch_array): mapped, their pages let go as
/// they are written, so that a cube larger than memory is never held; with
/// its masks from the same pass (stream_masks' answer).
struct ScratchCopy {
  Array cube, weights;  // weights empty where not copied
  MaskStats masks;
};
/// The cube `cube` reads (one not mapped as it is: a raster, an HDF5
/// dataset, a .npy not in this machine's order), its masks under `weights`
/// (not copied), where not null. Throws as stream_masks, and IoError
/// (naming the folder) where the copy cannot be made.
ScratchCopy copy_to_scratch(CubeReader& cube, CubeReader* weights, std::size_t memory, const std::string& folder,
                            const Progress& progress = {});
/// `in`'s cube and weights as in.rows() gives them (a MintPy stack's
/// referenced and masked by its rules), both copied. Throws as the other.
ScratchCopy copy_to_scratch(const Inputs& in, std::size_t memory, const std::string& folder, const Progress& progress = {});

/// `in`'s whole result from a solve read a block of rows at a time as
/// solve_streamed cuts it (the next block read beside a block's solve): for
/// a cube larger than memory. Its parts (x, the diagnostics) are held in
/// memory while they stay within `in_memory` bytes in all (default: half of
/// the memory available now), the rest in scratch files of
/// `scratch_folder` (default: cache_folder()), mapped, so that a result
/// larger than memory is read back a channel at a time as it is shown. Its
/// values are solve_streamed's, to the bit. Throws as solve_streamed, and
/// IoError where a scratch file cannot be made.
SolveResult solve_in_blocks(const Inputs& in, const SolveOptions& options, const Progress& progress = {},
                            std::optional<std::size_t> in_memory = {}, const std::string& scratch_folder = {});

/// Tells `out` what `in` is: a stack's dates and attributes (MintPy's
/// layout), the names of the unknowns (dates, terms) and of the
/// observations (pairs).
void describe_outputs(ResultPaths& out, const Inputs& in);

/// Solves `in` into the files of `out`, a block of rows at a time: a
/// block's data take three quarters of options.memory (two blocks' where
/// the next is read while one is solved), the engine's chunks the rest. The files appear when all is written, or none does. Throws as
/// solve() (Cancelled when `progress` returns false), IoError, InputError.
StreamedSolve solve_streamed(const Inputs& in, const ResultPaths& out, SolveOptions options,
                             const Progress& progress = {});

}  // namespace cubesolve
