#include <cubesolve/image/profile.hpp>

#include <cubesolve/error.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace cubesolve {

namespace {
/// The statistics of the values across the line at (r, c), whose normal is (nr, nc).
void across(ProfilePoint& p, const double* values, std::size_t height, std::size_t width, double nr, double nc, int band) {
  double sum = 0, sum2 = 0;
  const double first = -(band - 1) / 2.0;
  std::vector<double> seen;
  seen.reserve(static_cast<std::size_t>(band));
  for (int j = 0; j < band; ++j) {
    const double rr = std::round(p.row + (first + j) * nr), cc = std::round(p.col + (first + j) * nc);
    if (rr < 0 || cc < 0 || rr >= static_cast<double>(height) || cc >= static_cast<double>(width)) continue;
    const double v = values[static_cast<std::size_t>(rr) * width + static_cast<std::size_t>(cc)];
    if (!std::isfinite(v)) continue;
    seen.push_back(v);
    sum += v;
  }
  p.count = seen.size();
  if (seen.empty()) return;
  p.mean = sum / static_cast<double>(seen.size());
  for (double v : seen) sum2 += (v - p.mean) * (v - p.mean);  // (about the mean: no cancellation)
  p.std = std::sqrt(sum2 / static_cast<double>(seen.size()));
}
}  // namespace

std::vector<ProfilePoint> profile(const double* values, std::size_t height, std::size_t width,
                                  const std::vector<std::array<double, 2>>& vertices, int band) {
  if (band < 1) throw InputError("profile: expected a band of at least 1 pixel across, found " + std::to_string(band));
  for (const auto& v : vertices)
    if (!std::isfinite(v[0]) || !std::isfinite(v[1])) throw InputError("profile: expected finite vertices (row, col), found one that is not");
  std::vector<ProfilePoint> points;
  double start = 0, nr = 0, nc = 0;
  for (std::size_t i = 0; i + 1 < vertices.size(); ++i) {
    const double dr = vertices[i + 1][0] - vertices[i][0], dc = vertices[i + 1][1] - vertices[i][1];
    const double length = std::hypot(dr, dc);
    if (length == 0) continue;  // a repeated vertex
    nr = -dc / length;
    nc = dr / length;
    const auto steps = static_cast<std::size_t>(std::ceil(length - 1e-9));
    for (std::size_t k = 0; k < steps; ++k) {
      const double t = static_cast<double>(k) / static_cast<double>(steps);
      ProfilePoint p;
      p.row = vertices[i][0] + t * dr;
      p.col = vertices[i][1] + t * dc;
      p.distance = start + t * length;
      across(p, values, height, width, nr, nc, band);
      points.push_back(p);
    }
    start += length;
  }
  if (points.empty())
    throw InputError("profile: expected at least two distinct vertices, found " +
                     (vertices.size() < 2 ? std::to_string(vertices.size()) : std::string("all of them at one point")));
  ProfilePoint last;
  last.row = vertices.back()[0];
  last.col = vertices.back()[1];
  last.distance = start;
  across(last, values, height, width, nr, nc, band);
  points.push_back(last);
  return points;
}

double area_mean(const double* values, std::size_t height, std::size_t width, long r0, long c0, long r1, long c1) {
  if (r0 > r1) std::swap(r0, r1);
  if (c0 > c1) std::swap(c0, c1);
  r0 = std::max(r0, 0L), c0 = std::max(c0, 0L);
  r1 = std::min(r1, static_cast<long>(height) - 1), c1 = std::min(c1, static_cast<long>(width) - 1);
  double sum = 0;
  std::size_t n = 0;
  for (long r = r0; r <= r1; ++r)
    for (long c = c0; c <= c1; ++c) {
      const double v = values[static_cast<std::size_t>(r) * width + static_cast<std::size_t>(c)];
      if (std::isfinite(v)) sum += v, ++n;
    }
  return n ? sum / static_cast<double>(n) : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace cubesolve
