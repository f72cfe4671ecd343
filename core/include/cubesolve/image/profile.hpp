#pragma once
// Values along a line drawn on a map (a profile), and over an area of it.

#include <array>
#include <cstddef>
#include <limits>
#include <vector>

namespace cubesolve {

/// One point of a profile: where it lies (row, col; pixel centres are whole
/// numbers), how far along the line from its first vertex (in pixels), and
/// the values across the line there.
struct ProfilePoint {
  double row = 0, col = 0, distance = 0;
  /// The mean and the standard deviation (population, 0 for a single value)
  /// of the finite values across the line; NaN where there is none.
  double mean = std::numeric_limits<double>::quiet_NaN(), std = std::numeric_limits<double>::quiet_NaN();
  std::size_t count = 0;  // how many finite values that is
};

/// A profile of a (height, width) plane of values (row-major) along the
/// polyline `vertices` (row, col): a point at every vertex and at most one
/// pixel apart between them. At each point the values of the `band` pixels
/// across the line, one pixel apart and centred on it (perpendicular to its
/// segment; at a vertex, to the segment that starts there), each at the
/// nearest pixel; band 1 is the line's own pixel. Pixels off the plane count
/// as missing. Throws InputError for fewer than two distinct vertices, a
/// vertex that is not finite, or a band below 1.
std::vector<ProfilePoint> profile(const double* values, std::size_t height, std::size_t width,
                                  const std::vector<std::array<double, 2>>& vertices, int band = 1);

/// The mean of the finite values of a (height, width) plane in rows r0..r1
/// and columns c0..c1 (inclusive, in either order, clipped to the plane);
/// NaN where there is none.
double area_mean(const double* values, std::size_t height, std::size_t width, long r0, long c0, long r1, long c1);

}  // namespace cubesolve
