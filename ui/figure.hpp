#pragma once
// How a map is drawn and explained, and the pictures made from it: the
// legend beside a map view (painted into the view) and the exported figure
// (the map at data resolution, its title and its legend). The view and the
// export paint with the same code, so they agree.

#include <cubesolve/image/image.hpp>
#include <cubesolve/io/raster.hpp>

#include <QColor>
#include <QImage>
#include <QString>

#include <optional>
#include <utility>

#include <utility>
#include <vector>

class QPainter;
class QRect;

namespace cubesolve::ui {

/// How a map is drawn and explained.
struct MapStyle {
  ColorScale scale;
  /// Non-empty: the values are categories, each with its name (a swatch each in the legend).
  std::vector<std::pair<double, QString>> categories;
  /// Whole-number ticks (counts, ranks).
  bool integers = false;
  /// Above the map: what it shows (file, channel or date, units).
  QString title;
  /// The values' unit (mm, mm/yr, rad), above the colour bar; empty: none.
  QString unit;
};

/// What a map's values hold beyond its scale: values below or above the
/// range (drawn in the colour of its ends), values that are no number.
struct Extent {
  bool below = false, above = false, nan = false;
};
Extent extent_of(const std::vector<double>& values, const ColorScale& scale);

/// The legend of `style` in `rect`: a swatch per category, or a colour bar
/// with round ticks and a triangle at each end beyond which values were
/// clipped; a grey swatch for "no value" where there are such pixels.
void paint_legend(QPainter& p, const QRect& rect, const MapStyle& style, const Extent& extent, const QColor& text);
/// The width a legend needs (pixels, at the painter's scale 1).
constexpr int kLegendWidth = 130;

/// The map as an image, one pixel per value.
QImage map_image(const std::vector<double>& values, int height, int width, const ColorScale& scale);

/// A figure for publication: the title, the map with every value as a
/// `scale` x `scale` block, its legend, on white; text and legend grow with
/// maps beyond 600 pixels, so that they keep their size in the figure.
QImage render_figure(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale);
/// The same figure as a PDF page (a figure pixel a point; vector text).
QByteArray pdf_figure(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale);
/// The figure encoded as `format` ("png" or "pdf"); empty on failure.
QByteArray figure_bytes(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale, const QString& format);
/// The block size that makes the map's longer side at least 600 pixels.
int default_figure_scale(int height, int width);

/// The centre of pixel (row, col) in a georeference's map coordinates, as
/// " (lon 12.345678, lat 45.678901)" in degrees or " (x 300070.00, y 4999950.00)"
/// in metres; empty without one.
QString mapCoordinates(const GeoReference& geo, int row, int col);
/// Where (row, col) lies in map coordinates (x, y), a pixel's centre at
/// whole numbers; none without a geotransform.
std::optional<std::pair<double, double>> mapXY(const GeoReference& geo, double row, double col);

/// Pinned pixel k's colour, on every map and chart (Tableau 10, matplotlib's
/// default cycle).
QColor pin_color(std::size_t k);

/// Encodes an image as PNG bytes (empty on failure).
QByteArray png_bytes(const QImage& image);

}  // namespace cubesolve::ui
