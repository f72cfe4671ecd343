#include <cubesolve/image/image.hpp>

#include <algorithm>
#include <array>
#include <cmath>

namespace cubesolve {
namespace detail {
extern const std::array<unsigned char, 768> k_viridis;
extern const std::array<unsigned char, 768> k_rdbu;
}  // namespace detail

const std::uint8_t* colormap_table(Colormap map) {
  return map == Colormap::Viridis ? detail::k_viridis.data() : detail::k_rdbu.data();
}

std::pair<double, double> robust_range(const double* values, std::size_t count, bool symmetric) {
  std::vector<double> v;
  v.reserve(count);
  for (std::size_t i = 0; i < count; ++i)
    if (std::isfinite(values[i])) v.push_back(symmetric ? std::fabs(values[i]) : values[i]);
  if (v.empty()) return {0.0, 1.0};
  auto at = [&](double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  double lo, hi;
  if (symmetric) {
    hi = at(0.98);
    lo = -hi;
  } else {
    lo = at(0.02);
    hi = at(0.98);
  }
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

Image colorize(const double* values, std::size_t height, std::size_t width, Colormap map, double lo, double hi,
               bool colorbar) {
  const std::size_t gap = colorbar ? std::max<std::size_t>(4, width / 40) : 0;
  const std::size_t bar = colorbar ? std::max<std::size_t>(8, width / 20) : 0;
  Image img;
  img.width = width + gap + bar;
  img.height = height;
  img.rgb.assign(img.width * img.height * 3, 255);
  const std::uint8_t* lut = colormap_table(map);
  const double scale = hi > lo ? 255.0 / (hi - lo) : 0.0;
  for (std::size_t r = 0; r < height; ++r) {
    std::uint8_t* row = img.rgb.data() + r * img.width * 3;
    for (std::size_t c = 0; c < width; ++c) {
      const double v = values[r * width + c];
      std::uint8_t* px = row + c * 3;
      if (!std::isfinite(v)) {
        px[0] = px[1] = px[2] = 128;
        continue;
      }
      const int k = static_cast<int>(std::clamp((v - lo) * scale, 0.0, 255.0) + 0.5);
      std::copy(lut + 3 * std::min(k, 255), lut + 3 * std::min(k, 255) + 3, px);
    }
    if (colorbar) {  // high values at the top
      const int k = height > 1 ? static_cast<int>(255.0 * static_cast<double>(height - 1 - r) /
                                                  static_cast<double>(height - 1) + 0.5)
                               : 255;
      for (std::size_t c = width + gap; c < img.width; ++c) std::copy(lut + 3 * k, lut + 3 * k + 3, row + c * 3);
    }
  }
  return img;
}

}  // namespace cubesolve
