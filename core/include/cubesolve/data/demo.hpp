#pragma once
// Deterministic demo cubes, generated in memory (same bytes on every machine).

#include <cubesolve/data/array.hpp>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

struct DemoCube {
  std::string name;
  std::string description;
  Array cube;    // (N, H, W) float32 with NaN gaps
  Array design;  // (N, M) float64
  /// For the InSAR demo: each observation's pair of dates YYYYMMDD (the
  /// acquisitions 12 days apart from 2020-01-01); empty for the others.
  std::vector<std::pair<std::string, std::string>> pairs;
};

/// "insar" and "seed".
std::vector<std::string> demo_names();

/// - "seed": the setting of a per-pixel PyTorch loop (normal equations
///   pixel by pixel) that this tool replaces. N = 50 observations, M = 100 unknowns, a random Gaussian A, 20 % of the values
///   missing at random; every pixel is underdetermined (minimum norm).
///   Default size 500 x 500.
/// - "insar": a small-baseline InSAR stack. 30 acquisition dates, every pair
///   up to 4 dates apart is an interferogram (N = 110), unknowns are the
///   displacements at dates 2..30 relative to the first (M = 29). Smooth
///   subsidence plus a seasonal term; interferograms lose decorrelated
///   patches, a lake is never observed, and in one area every interferogram
///   across one date gap is lost, so the network splits there (rank 28).
///   Default size 300 x 300.
/// `size` sets H = W (0 = the default). Throws InputError for an unknown name
/// or a size outside 1..8192.
DemoCube make_demo(const std::string& name, std::size_t size = 0);

}  // namespace cubesolve

namespace cubesolve {

/// How missing values are laid out in a synthetic cube.
enum class MaskPattern { Random, Blobs };

/// The design of a synthetic cube: Gaussian entries, or a small-baseline
/// InSAR network (m + 1 dates, every date linked to the next, the other
/// n - m interferograms between dates a few apart; two nonzeros a row).
enum class SyntheticDesign { Gaussian, Sbas };

/// A synthetic cube for benchmarks and tests: A (n, m), Y (n, size, size)
/// float32 Gaussian, with about `missing` of the values NaN, either
/// independently at random or as discs (clouds, decorrelated patches) that
/// each observation loses. Deterministic for a given seed. Throws
/// InputError for an SBAS design unless m <= n <= m(m+1)/2.
DemoCube make_synthetic(std::size_t n, std::size_t m, std::size_t size, double missing, MaskPattern pattern,
                        SyntheticDesign design = SyntheticDesign::Gaussian, std::uint64_t seed = 1);

}  // namespace cubesolve
