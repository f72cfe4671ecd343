#pragma once
// What `info` reports of a cube, from one pass over it a block of rows at a
// time within a memory budget (a cube far larger than memory included):
// what is missing, the valid-count histogram, each observation's valid
// pixels, and the groups of pixels that share a mask, exact up to a number
// of distinct masks the budget sets, estimated from a sample past it.

#include <cubesolve/data/array.hpp>
#include <cubesolve/data/mask.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/progress.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace cubesolve {

struct CubeStats {
  std::size_t n = 0, height = 0, width = 0;  // the cube's shape (N, H, W)
  std::size_t missing = 0, nan_count = 0, inf_count = 0, zero_weight = 0;  // values, as MaskStats counts them
  std::vector<std::size_t> valid_histogram;        // N + 1: pixels with k valid values
  std::vector<std::size_t> valid_per_observation;  // N: pixels whose observation i is valid
  /// The groups of pixels that share a mask. Exact (`exact`) where the
  /// cube has at most `limit` distinct masks; past that, estimated from
  /// `sample` pixels spread evenly over the cube: a mask that c >= 2 of them
  /// share is a group of about c·pixels()/sample pixels, and the pixels whose
  /// mask the sample saw once stand for `unresolved` pixels in groups too
  /// small for the sample to tell (mostly alone); `distinct` is then only a
  /// lower bound.
  bool exact = true;
  std::size_t limit = 0, sample = 0, distinct = 0, unresolved = 0;
  std::size_t words = 1;              // 64-bit words of a mask (bit i: observation i valid)
  std::vector<std::uint64_t> masks;   // group g's mask at masks[g * words]
  std::vector<std::size_t> sizes;     // pixels per group

  std::size_t pixels() const { return height * width; }
  double missing_fraction() const;
};

/// Rows [r0, r1) of the cube, (N, r1 - r0, W), and of the weights where
/// `weights` is not null (a cube of weights like it); as Inputs::rows gives them.
using RowSource = std::function<Array(std::size_t r0, std::size_t r1, Array* weights)>;

/// One pass over the cube `name` of `shape` (N, H, W) through `rows`, a
/// block of rows at a time, in about `memory` bytes: every statistic of
/// CubeStats. Throws what `rows` throws (IoError, InputError), InputError
/// naming the cube for a shape that is not (N, H, W) with N >= 1 and for a
/// row that alone needs more than half of `memory`, Cancelled when
/// `progress` returns false.
CubeStats stream_stats(const std::string& name, const Shape& shape, const RowSource& rows, bool weighted, std::size_t memory,
                       const Progress& progress = {});

/// The paths the planner chooses for the pixels `stats` describes (by its
/// groups, estimated where they are), as plan() does for MaskStats: what
/// `info` prints as the plan.
PathCounts plan(const CubeStats& stats, const Design& design, bool weighted, const SolveOptions& options = {});

}  // namespace cubesolve
