#pragma once
// Colour-mapped previews and a small PNG writer.

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

struct Image {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes a pixel
};

enum class Colormap { Viridis, RdBu };
/// The 256-entry RGB table of a colour map.
const std::uint8_t* colormap_table(Colormap map);

/// The 2nd and 98th percentiles of the finite values (symmetric about 0 when
/// `symmetric`); {0, 1} when there is none.
std::pair<double, double> robust_range(const double* values, std::size_t count, bool symmetric);

/// Maps a (height, width) plane of values to colours; values outside
/// [lo, hi] are clamped, NaN is drawn mid-grey. When `colorbar` is true a
/// vertical colour bar is added on the right.
Image colorize(const double* values, std::size_t height, std::size_t width, Colormap map, double lo, double hi,
               bool colorbar = true);

/// Writes an 8-bit RGB PNG. Throws IoError when the stream fails.
void write_png(std::ostream& out, const Image& image);

}  // namespace cubesolve
