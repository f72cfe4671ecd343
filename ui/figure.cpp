#include "figure.hpp"

#include <QBuffer>
#include <QPageSize>
#include <QPdfWriter>
#include <QCoreApplication>
#include <QFontMetrics>
#include <QPainter>
#include <QPolygon>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {

QColor colour(const std::array<std::uint8_t, 3>& rgb) { return QColor(rgb[0], rgb[1], rgb[2]); }

const QColor kNoValue(128, 128, 128);

/// A framed swatch and its label.
void swatch(QPainter& p, int x, int y, const QColor& fill, const QString& label, int right, const QColor& text) {
  p.fillRect(QRect(x, y, 16, 16), fill);
  p.setPen(text);
  p.drawRect(QRect(x, y, 16, 16));
  const QFontMetrics fm(p.font());
  p.drawText(QRect(x + 22, y, right - x - 22, 16), Qt::AlignVCenter | Qt::AlignLeft,
             fm.elidedText(label, Qt::ElideRight, right - x - 22));
}

}  // namespace

Extent extent_of(const std::vector<double>& values, const ColorScale& scale) {
  Extent e;
  for (double v : values) {
    e.nan = e.nan || !std::isfinite(v);
    e.below = e.below || v < scale.lo;
    e.above = e.above || v > scale.hi;
  }
  return e;
}

namespace {
/// Round ticks from lo (at the bottom of `rect`) to hi (its top), labelled to their right.
void paint_ticks(QPainter& p, const QRect& rect, double lo, double hi, bool integers) {
  const QFontMetrics fm(p.font());
  const int top = rect.top(), bottom = rect.bottom(), x = rect.left();
  const int count = std::clamp((bottom - top) / 45, 2, 8);
  const std::vector<double> ticks = nice_ticks(lo, hi, count, integers);
  const double step = ticks.size() > 1 ? ticks[1] - ticks[0] : hi - lo;
  for (double t : ticks) {
    const int y = bottom - static_cast<int>(std::lround((t - lo) / (hi - lo) * (bottom - top)));
    p.drawLine(x, y, x + 4, y);
    const QString label = QString::fromStdString(tick_label(t, step));
    p.drawText(QRect(x + 8, y - 8, rect.width() - 8, 16), Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(label, Qt::ElideRight, rect.width() - 8));
  }
}
}  // namespace

void paint_legend(QPainter& p, const QRect& rect, const MapStyle& style, const Extent& extent, const QColor& text) {
  p.save();
  QFont font = p.font();
  font.setPixelSize(12);
  p.setFont(font);
  const QFontMetrics fm(font);
  const int x0 = rect.left() + 10, right = rect.right() - 2;
  if (!style.categories.empty()) {
    int y = rect.top() + 10;
    for (const auto& [value, name] : style.categories) {
      swatch(p, x0, y, colour(style.scale.color(value)), QString("%1 %2").arg(value).arg(name), right, text);
      y += 22;
    }
    if (extent.nan) swatch(p, x0, y, kNoValue, QCoreApplication::translate("Figure", "no value"), right, text);
    p.restore();
    return;
  }
  const double lo = style.scale.lo, hi = style.scale.hi > lo ? style.scale.hi : lo + 1;
  constexpr int kBar = 18, kTriangle = 12;
  const int unit_height = style.unit.isEmpty() ? 0 : 20;
  if (unit_height) {
    p.setPen(text);
    p.drawText(QRect(x0, rect.top() + 4, right - x0, 16), Qt::AlignVCenter | Qt::AlignLeft, fm.elidedText(style.unit, Qt::ElideRight, right - x0));
  }
  const int top = rect.top() + 10 + kTriangle + unit_height;
  const int bottom = rect.bottom() - 10 - kTriangle - (extent.nan ? 26 : 0);
  if (bottom - top < 20) {
    p.restore();
    return;
  }
  // The bar, high values at the top, row by row in the map's own colours.
  for (int y = top; y <= bottom; ++y) {
    const double v = lo + (hi - lo) * (bottom - y) / static_cast<double>(bottom - top);
    p.setPen(colour(style.scale.color(v)));
    p.drawLine(x0, y, x0 + kBar - 1, y);
  }
  p.setPen(text);
  p.setBrush(Qt::NoBrush);
  p.drawRect(QRect(x0, top, kBar - 1, bottom - top));
  // A triangle beyond each end past which values were clipped.
  p.setRenderHint(QPainter::Antialiasing);
  auto triangle = [&](int base, int apex, double v) {
    p.setBrush(colour(style.scale.color(v)));
    p.drawPolygon(QPolygon({QPoint(x0, base), QPoint(x0 + kBar - 1, base), QPoint(x0 + (kBar - 1) / 2, apex)}));
  };
  if (extent.above) triangle(top - 1, top - kTriangle, hi);
  if (extent.below) triangle(bottom + 1, bottom + kTriangle, lo);
  p.setRenderHint(QPainter::Antialiasing, false);
  p.setBrush(Qt::NoBrush);
  paint_ticks(p, QRect(x0 + kBar, top, right - x0 - kBar, bottom - top), lo, hi, style.integers);
  if (extent.nan) swatch(p, x0, rect.bottom() - 20, kNoValue, QCoreApplication::translate("Figure", "no value"), right, text);
  p.restore();
}

QImage map_image(const std::vector<double>& values, int height, int width, const ColorScale& scale) {
  QImage img(width, height, QImage::Format_RGB32);
  for (int r = 0; r < height; ++r) {
    auto* line = reinterpret_cast<QRgb*>(img.scanLine(r));
    for (int c = 0; c < width; ++c) {
      const auto rgb = scale.color(values[static_cast<std::size_t>(r) * static_cast<std::size_t>(width) + static_cast<std::size_t>(c)]);
      line[c] = qRgb(rgb[0], rgb[1], rgb[2]);
    }
  }
  return img;
}

int default_figure_scale(int height, int width) {
  const int side = std::max({height, width, 1});
  return std::clamp((600 + side - 1) / side, 1, 16);
}

namespace {
/// The figure's layout: its text scale (1 up to maps of 500 rows, then
/// growing with them, so that text keeps its size relative to the map),
/// margins, title band and legend.
struct FigureLayout {
  double text;
  int margin, gap, title, map_w, map_h, legend_w, legend_h, title_w;
  QFont font;
  QSize size() const { return {std::max(margin + map_w + gap + legend_w, 2 * margin + title_w), title + legend_h + margin}; }
};

FigureLayout layout_of(int height, int width, int scale, const QString& title) {
  FigureLayout f{};
  f.map_w = width * scale;
  f.map_h = height * scale;
  f.text = std::max(1.0, std::max(f.map_w, f.map_h) / 600.0);
  f.margin = static_cast<int>(std::lround(12 * f.text));
  f.gap = static_cast<int>(std::lround(8 * f.text));
  f.title = static_cast<int>(std::lround(32 * f.text));
  f.legend_w = static_cast<int>(std::lround(kLegendWidth * f.text));
  f.legend_h = std::max(f.map_h, static_cast<int>(std::lround(240 * f.text)));
  f.font.setPixelSize(static_cast<int>(std::lround(15 * f.text)));
  f.title_w = QFontMetrics(f.font).horizontalAdvance(title) + 2;  // a small map's figure is as wide as its title
  return f;
}

void paint_figure(QPainter& p, const FigureLayout& f, const std::vector<double>& values, int height, int width, const MapStyle& style) {
  p.fillRect(QRect(QPoint(0, 0), f.size()), Qt::white);
  p.setFont(f.font);
  p.setPen(Qt::black);
  p.drawText(QRect(f.margin, 0, f.size().width() - 2 * f.margin, f.title), Qt::AlignVCenter | Qt::AlignLeft, style.title);
  p.drawImage(QRect(f.margin, f.title, f.map_w, f.map_h), map_image(values, height, width, style.scale));  // nearest: no smoothing
  // The legend drawn at its own size, scaled as the text.
  p.save();
  p.translate(f.margin + f.map_w + f.gap, f.title);
  p.scale(f.text, f.text);
  paint_legend(p, QRect(0, 0, kLegendWidth, static_cast<int>(f.legend_h / f.text)), style, extent_of(values, style.scale), Qt::black);
  p.restore();
}
}  // namespace

QImage render_figure(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale) {
  const FigureLayout f = layout_of(height, width, std::max(1, scale), style.title);
  QImage img(f.size(), QImage::Format_RGB32);
  QPainter p(&img);
  paint_figure(p, f, values, height, width, style);
  return img;
}

QByteArray pdf_figure(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale) {
  const FigureLayout f = layout_of(height, width, std::max(1, scale), style.title);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter pdf(&buffer);
    pdf.setResolution(72);  // a figure pixel is a point
    pdf.setPageSize(QPageSize(QSizeF(f.size()), QPageSize::Point));
    pdf.setPageMargins(QMarginsF(0, 0, 0, 0));
    pdf.setCreator("CubeSolve");
    QPainter p(&pdf);
    if (!p.isActive()) return {};
    paint_figure(p, f, values, height, width, style);
  }
  return bytes;
}

QByteArray figure_bytes(const std::vector<double>& values, int height, int width, const MapStyle& style, int scale, const QString& format) {
  if (format == "pdf") return pdf_figure(values, height, width, style, scale);
  return png_bytes(render_figure(values, height, width, style, scale));
}

QByteArray png_bytes(const QImage& image) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!image.save(&buffer, "PNG")) bytes.clear();
  return bytes;
}

QColor pin_color(std::size_t k) {
  static const QRgb kColors[] = {0x1f77b4, 0xff7f0e, 0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf};
  return QColor(kColors[k % 10]);
}

std::optional<std::pair<double, double>> mapXY(const GeoReference& geo, double row, double col) {
  const auto& t = geo.transform;  // (GDAL's: a pixel's corner at whole numbers)
  if (t.size() != 6) return std::nullopt;
  return std::pair{t[0] + (col + 0.5) * t[1] + (row + 0.5) * t[2], t[3] + (col + 0.5) * t[4] + (row + 0.5) * t[5]};
}

QString mapCoordinates(const GeoReference& geo, int row, int col) {
  const auto at = mapXY(geo, row, col);
  if (!at) return {};
  const auto& t = geo.transform;
  const auto [x, y] = *at;
  const bool degrees = geo.projection.rfind("GEOGCS", 0) == 0 || (geo.projection.empty() && std::fabs(t[1]) < 0.1);
  return degrees ? QString(" (lon %1, lat %2)").arg(x, 0, 'f', 6).arg(y, 0, 'f', 6) : QString(" (x %1, y %2)").arg(x, 0, 'f', 2).arg(y, 0, 'f', 2);
}

}  // namespace cubesolve::ui
