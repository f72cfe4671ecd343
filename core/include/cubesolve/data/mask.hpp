#pragma once
// Where data is missing: per-pixel valid counts, packed masks and the groups
// of pixels that share the same mask. A value is missing when it is NaN or
// ±Inf, or when its weight is 0 (or not finite).

#include <cubesolve/data/array.hpp>
#include <cubesolve/progress.hpp>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cubesolve {

/// One bin of a logarithmic histogram: items with lo <= value < hi.
struct LogBin {
  std::size_t lo = 0, hi = 0;
  std::size_t groups = 0;  // distinct masks whose group size falls in the bin
  std::size_t pixels = 0;  // pixels in those groups
};

struct MaskStats {
  std::size_t n = 0, height = 0, width = 0;  // cube shape (N, H, W)
  std::size_t missing = 0;      // missing values in all
  std::size_t nan_count = 0;    // of which NaN
  std::size_t inf_count = 0;    // of which ±Inf
  std::size_t zero_weight = 0;  // of which finite but weight 0 (or weight not finite)

  /// Valid rows per pixel, (H, W) flattened.
  std::vector<std::int32_t> n_valid;
  /// 64-bit words per pixel mask: ceil(N / 64).
  std::size_t words = 0;
  /// Packed masks, pixel after pixel: bit i of pixel p (word p*words + i/64,
  /// bit i%64) is set when row i of p is valid; once compact (compact_masks),
  /// group after group (group g's at g*words). Read them through mask(p).
  std::vector<std::uint64_t> masks;
  bool compact = false;
  /// Group (distinct mask) of each pixel; groups are numbered in order of
  /// their first pixel.
  std::vector<std::int32_t> group_of;
  /// Pixels per group.
  std::vector<std::size_t> group_size;

  std::size_t pixels() const { return n_valid.size(); }
  /// Pixel p's packed mask (`words` words).
  const std::uint64_t* mask(std::size_t p) const {
    return masks.data() + (compact ? static_cast<std::size_t>(group_of[p]) : p) * words;
  }
  /// Whether observation i of pixel p is valid.
  bool valid(std::size_t p, std::size_t i) const { return (mask(p)[i / 64] >> (i % 64)) & 1; }
  /// The first pixel of each group.
  std::vector<std::size_t> first_pixels() const;
  /// 1 for the pixels whose group size falls in `bin` (a group_histogram() bin), else 0.
  std::vector<std::uint8_t> pixels_in(const LogBin& bin) const;
  std::size_t distinct_masks() const { return group_size.size(); }
  /// valid_histogram[k]: pixels with exactly k valid rows, k = 0..N.
  std::vector<std::size_t> valid_histogram() const;
  /// Group sizes in bins [1,2), [2,4), [4,8), ... up to the largest group.
  std::vector<LogBin> group_histogram() const;
  /// Pixels whose mask is shared by at least k pixels (themselves included).
  std::size_t pixels_in_groups_of_at_least(std::size_t k) const;
  /// Fraction of all values that are missing.
  double missing_fraction() const;
};

/// Group sizes in bins [1,2), [2,4), [4,8), ... up to the largest.
std::vector<LogBin> group_histogram(const std::vector<std::size_t>& group_size);
/// Pixels in groups of at least k pixels.
std::size_t pixels_in_groups_of_at_least(const std::vector<std::size_t>& group_size, std::size_t k);

/// Analyses a cube (N, H, W) and optional weights of the same shape.
/// Throws InputError on a shape that is not 3-D or weights of another shape,
/// Cancelled when `progress` returns false.
MaskStats analyze_masks(const Array& cube, const Array* weights = nullptr, const Progress& progress = {});

/// analyze_masks a block of rows at a time (the cube need not be in
/// memory): masks_for() shapes the statistics for a cube (N, H, W), then
/// pack_rows() adds each block of rows [r0, r0 + R), (N, R, W), with its
/// weights, and group_masks() groups the masks once all rows are in.
MaskStats masks_for(std::size_t n, std::size_t height, std::size_t width);
void pack_rows(MaskStats& s, std::size_t r0, const Array& rows, const Array* weights = nullptr);
void group_masks(MaskStats& s, const Progress& progress = {});
/// Keeps one mask per group instead of one per pixel (after group_masks):
/// the same answers from mask() and valid(), in the memory of the distinct
/// masks (a cube with large groups of shared masks needs far less).
void compact_masks(MaskStats& s);

}  // namespace cubesolve
