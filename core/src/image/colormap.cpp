#include <cubesolve/image/image.hpp>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <iterator>
#include <cstdio>
#include <string>

namespace cubesolve {
namespace detail {
#define CUBESOLVE_TABLE(name) extern const std::array<unsigned char, 768> k_##name;
CUBESOLVE_TABLE(viridis) CUBESOLVE_TABLE(rdbu) CUBESOLVE_TABLE(twilight) CUBESOLVE_TABLE(grey) CUBESOLVE_TABLE(cividis)
CUBESOLVE_TABLE(batlow) CUBESOLVE_TABLE(vik) CUBESOLVE_TABLE(roma) CUBESOLVE_TABLE(broc) CUBESOLVE_TABLE(balance)
CUBESOLVE_TABLE(romao) CUBESOLVE_TABLE(broco)
#undef CUBESOLVE_TABLE
}  // namespace detail

namespace {
struct MapEntry {
  const char* name;
  ColormapKind kind;
  const std::array<unsigned char, 768>* table;
};
// In the enumeration's order.
const MapEntry kMaps[kColormapCount] = {
    {"viridis", ColormapKind::Sequential, &detail::k_viridis}, {"rdbu", ColormapKind::Diverging, &detail::k_rdbu},
    {"twilight", ColormapKind::Cyclic, &detail::k_twilight},   {"grey", ColormapKind::Sequential, &detail::k_grey},
    {"cividis", ColormapKind::Sequential, &detail::k_cividis}, {"batlow", ColormapKind::Sequential, &detail::k_batlow},
    {"vik", ColormapKind::Diverging, &detail::k_vik},          {"roma", ColormapKind::Diverging, &detail::k_roma},
    {"broc", ColormapKind::Diverging, &detail::k_broc},        {"balance", ColormapKind::Diverging, &detail::k_balance},
    {"romaO", ColormapKind::Cyclic, &detail::k_romao},         {"brocO", ColormapKind::Cyclic, &detail::k_broco},
};
const MapEntry& entry(Colormap map) {
  const auto k = static_cast<std::size_t>(map);
  return kMaps[k < std::size(kMaps) ? k : 0];
}
}  // namespace

const std::uint8_t* colormap_table(Colormap map) { return entry(map).table->data(); }
const char* colormap_name(Colormap map) { return entry(map).name; }
ColormapKind colormap_kind(Colormap map) { return entry(map).kind; }

std::optional<Colormap> colormap_by_name(std::string_view name) {
  for (int k = 0; k < kColormapCount; ++k) {
    const std::string_view n = kMaps[k].name;
    if (n.size() == name.size() &&
        std::equal(n.begin(), n.end(), name.begin(), [](unsigned char a, unsigned char b) { return std::tolower(a) == std::tolower(b); }))
      return static_cast<Colormap>(k);
  }
  return std::nullopt;
}

int ColorScale::index(double v) const {
  if (!std::isfinite(v)) return -1;
  const double scale = hi > lo ? 255.0 / (hi - lo) : 0.0;
  const int k = std::min(255, static_cast<int>(std::clamp((v - lo) * scale, 0.0, 255.0) + 0.5));
  return reversed ? 255 - k : k;
}

std::array<std::uint8_t, 3> ColorScale::color(double v) const {
  const int k = index(v);
  if (k < 0) return {128, 128, 128};
  const std::uint8_t* t = colormap_table(map) + 3 * k;
  return {t[0], t[1], t[2]};
}

std::vector<double> nice_ticks(double lo, double hi, int count, bool integers) {
  std::vector<double> ticks;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi) || count < 1) return ticks;
  const double raw = (hi - lo) / count, mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double f : {1.0, 2.0, 5.0, 10.0})
    if (f * mag >= raw) {
      step = f * mag;
      break;
    }
  if (integers) step = std::max(1.0, std::round(step));
  for (double t = std::ceil(lo / step - 1e-9) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::string tick_label(double value, double step) {
  const int digits = step > 0 ? std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9))) : 0;
  char buf[64];
  if (value != 0 && (std::fabs(value) >= 1e6 || std::fabs(value) < 1e-4)) std::snprintf(buf, sizeof buf, "%.3g", value);
  else std::snprintf(buf, sizeof buf, "%.*f", std::min(digits, 10), value);
  return buf;
}

std::pair<double, double> robust_range(const double* values, std::size_t count, bool symmetric, double tail) {
  // A strided sample of at most 2^20 values: a tail's quantile from it is
  // within about 1.5e-4 of the map's (the binomial spread at 2 %), and a
  // map of any size costs 8 MB and a few milliseconds here.
  constexpr std::size_t kMost = std::size_t{1} << 20;
  const std::size_t every = (count + kMost - 1) / kMost;
  std::vector<double> v;
  v.reserve(std::min(count, kMost));
  for (std::size_t i = 0; i < count; i += std::max<std::size_t>(every, 1))
    if (std::isfinite(values[i])) v.push_back(symmetric ? std::fabs(values[i]) : values[i]);
  if (v.empty()) return {0.0, 1.0};
  auto at = [&](double q) {
    const auto k = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
  };
  double lo, hi;
  if (symmetric) {
    hi = at(1 - tail);
    lo = -hi;
  } else {
    lo = at(tail);
    hi = at(1 - tail);
  }
  if (!(hi > lo)) {
    lo -= 0.5;
    hi += 0.5;
  }
  return {lo, hi};
}

std::vector<std::size_t> histogram(const double* values, std::size_t count, double lo, double hi, int bins) {
  std::vector<std::size_t> counts(static_cast<std::size_t>(std::max(bins, 0)), 0);
  if (!(hi > lo) || counts.empty()) return counts;
  const double per = bins / (hi - lo);
  for (std::size_t i = 0; i < count; ++i) {
    const double v = values[i];
    if (!(v >= lo && v <= hi)) continue;  // (NaN fails both)
    ++counts[std::min(static_cast<std::size_t>((v - lo) * per), counts.size() - 1)];
  }
  return counts;
}

Image colorize(const double* values, std::size_t height, std::size_t width, const ColorScale& scale, bool colorbar) {
  const std::size_t gap = colorbar ? std::max<std::size_t>(4, width / 40) : 0;
  const std::size_t bar = colorbar ? std::max<std::size_t>(8, width / 20) : 0;
  Image img;
  img.width = width + gap + bar;
  img.height = height;
  img.rgb.assign(img.width * img.height * 3, 255);
  const std::uint8_t* lut = colormap_table(scale.map);
  for (std::size_t r = 0; r < height; ++r) {
    std::uint8_t* row = img.rgb.data() + r * img.width * 3;
    for (std::size_t c = 0; c < width; ++c) {
      const auto rgb = scale.color(values[r * width + c]);
      std::copy(rgb.begin(), rgb.end(), row + c * 3);
    }
    if (colorbar) {  // high values at the top
      int k = height > 1 ? static_cast<int>(255.0 * static_cast<double>(height - 1 - r) / static_cast<double>(height - 1) + 0.5)
                         : 255;
      if (scale.reversed) k = 255 - k;
      for (std::size_t c = width + gap; c < img.width; ++c) std::copy(lut + 3 * k, lut + 3 * k + 3, row + c * 3);
    }
  }
  return img;
}

}  // namespace cubesolve
