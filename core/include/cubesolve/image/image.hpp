#pragma once
// Colour-mapped previews and a small PNG writer.

#include <cstddef>
#include <array>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cubesolve {

struct Image {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // row-major, 3 bytes a pixel
};

/// The colour maps, from their published tables (resources/colormaps, with
/// sources and licences): sequential for magnitudes (viridis, cividis,
/// batlow, grey), diverging for signed data (rdbu, vik, roma, broc, balance),
/// cyclic for phase (twilight, romaO, brocO).
enum class Colormap { Viridis, RdBu, Twilight, Grey, Cividis, Batlow, Vik, Roma, Broc, Balance, RomaO, BrocO };
constexpr int kColormapCount = 12;
enum class ColormapKind { Sequential, Diverging, Cyclic };
/// The 256-entry RGB table of a colour map.
const std::uint8_t* colormap_table(Colormap map);
/// Its name as the tables spell it: "viridis", "rdbu", "twilight", "grey",
/// "cividis", "batlow", "vik", "roma", "broc", "balance", "romaO", "brocO".
const char* colormap_name(Colormap map);
ColormapKind colormap_kind(Colormap map);
/// The map of a name (any case); nullopt for none.
std::optional<Colormap> colormap_by_name(std::string_view name);

/// How values become colours: a map, possibly reversed, over [lo, hi];
/// values beyond the range take the colour of its end, NaN is mid-grey.
struct ColorScale {
  Colormap map = Colormap::Viridis;
  bool reversed = false;
  double lo = 0, hi = 1;
  /// Entry 0..255 of the table for v (reversal applied); -1 for NaN.
  int index(double v) const;
  /// The RGB of v.
  std::array<std::uint8_t, 3> color(double v) const;
};

/// About `count` round tick values (1, 2 or 5 times a power of ten apart)
/// within [lo, hi]; whole numbers only with `integers`.
std::vector<double> nice_ticks(double lo, double hi, int count, bool integers = false);

/// A tick's label: as few digits as tell the ticks `step` apart.
std::string tick_label(double value, double step);

/// The `tail` and 1 - `tail` quantiles of the finite values (by default the
/// 2nd and 98th percentiles; symmetric about 0 when `symmetric`); {0, 1}
/// when there is none. Of more than 2^20 values, those of every k-th value
/// (k the fewest that leaves 2^20 or fewer): a colour range, not a statistic.
std::pair<double, double> robust_range(const double* values, std::size_t count, bool symmetric, double tail = 0.02);

/// How many of the finite values fall in each of `bins` equal bins over
/// [lo, hi] (hi in the last); values outside it are not counted. All zero
/// when hi <= lo.
std::vector<std::size_t> histogram(const double* values, std::size_t count, double lo, double hi, int bins);

/// Maps a (height, width) plane of values to colours; values outside
/// [lo, hi] are clamped, NaN is drawn mid-grey. When `colorbar` is true a
/// vertical colour bar (without labels) is added on the right.
Image colorize(const double* values, std::size_t height, std::size_t width, const ColorScale& scale,
               bool colorbar = true);

/// Writes an 8-bit RGB PNG. Throws IoError when the stream fails.
void write_png(std::ostream& out, const Image& image);

}  // namespace cubesolve
