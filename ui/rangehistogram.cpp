#include "rangehistogram.hpp"

#include <cubesolve/image/image.hpp>

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {
constexpr double kGrab = 6;  // how near a handle a press takes it (pixels)
}

RangeHistogram::RangeHistogram(QWidget* parent) : QWidget(parent) {
  setObjectName("range-histogram");
  setMinimumHeight(44);
  setMaximumHeight(56);
  setMouseTracking(true);
  setToolTip(tr("The values of the channel shown (filled) and of all channels (line): drag a handle to move that end of "
                "the colour range, or drag across to set both"));
  hide();
}

void RangeHistogram::setCounts(std::vector<std::size_t> current, std::vector<std::size_t> all, double axis_lo, double axis_hi) {
  current_ = std::move(current);
  all_ = std::move(all);
  axis_lo_ = axis_lo;
  axis_hi_ = axis_hi > axis_lo ? axis_hi : axis_lo + 1;
  setVisible(!current_.empty());
  update();
}

void RangeHistogram::setRange(double lo, double hi) {
  lo_ = lo;
  hi_ = hi;
  update();
}

QRectF RangeHistogram::plot() const { return QRectF(8, 4, std::max(1, width() - 16), std::max(1, height() - 18)); }

double RangeHistogram::valueAt(double x) const {
  const QRectF r = plot();
  return axis_lo_ + (x - r.left()) / r.width() * (axis_hi_ - axis_lo_);
}

double RangeHistogram::xOf(double value) const {
  const QRectF r = plot();
  return r.left() + (value - axis_lo_) / (axis_hi_ - axis_lo_) * r.width();
}

void RangeHistogram::paintEvent(QPaintEvent*) {
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing);
  const QRectF r = plot();
  p.fillRect(rect(), palette().base());
  // Each histogram on a square-root scale (small bins stay visible), to its own largest bin.
  auto outline = [&](const std::vector<std::size_t>& counts) {
    QPainterPath path(QPointF(r.left(), r.bottom()));
    const double top = std::sqrt(static_cast<double>(*std::max_element(counts.begin(), counts.end())));
    const double w = r.width() / static_cast<double>(counts.size());
    for (std::size_t k = 0; k < counts.size(); ++k) {
      const double y = r.bottom() - (top > 0 ? std::sqrt(static_cast<double>(counts[k])) / top : 0) * r.height();
      path.lineTo(r.left() + static_cast<double>(k) * w, y);
      path.lineTo(r.left() + static_cast<double>(k + 1) * w, y);
    }
    path.lineTo(r.right(), r.bottom());
    return path;
  };
  if (!all_.empty()) {
    p.setPen(QPen(QColor(120, 120, 120), 1));
    p.drawPath(outline(all_));
  }
  if (!current_.empty()) {
    p.setPen(Qt::NoPen);
    p.setBrush(QColor(33, 145, 140, 150));
    p.drawPath(outline(current_));
  }
  // The range: shaded beyond it, a handle at each end.
  const double x0 = std::clamp(xOf(lo_), r.left(), r.right()), x1 = std::clamp(xOf(hi_), r.left(), r.right());
  p.fillRect(QRectF(r.left(), r.top(), x0 - r.left(), r.height()), QColor(0, 0, 0, 40));
  p.fillRect(QRectF(x1, r.top(), r.right() - x1, r.height()), QColor(0, 0, 0, 40));
  p.setPen(QPen(palette().text().color(), 2));
  for (double x : {x0, x1}) p.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
  QFont font = p.font();
  font.setPixelSize(10);
  p.setFont(font);
  p.setPen(palette().text().color());
  const double step = (axis_hi_ - axis_lo_) / 4;
  for (double v : nice_ticks(axis_lo_, axis_hi_, 5))
    p.drawText(QRectF(xOf(v) - 30, r.bottom() + 1, 60, 12), Qt::AlignHCenter | Qt::AlignTop, QString::fromStdString(tick_label(v, step)));
  p.drawText(r.adjusted(4, 0, -4, 0), Qt::AlignTop | Qt::AlignRight, tr("filled: this channel · line: all channels"));
}

void RangeHistogram::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  const double x = e->position().x();
  if (std::fabs(x - xOf(lo_)) <= kGrab) drag_ = Drag::Lo;
  else if (std::fabs(x - xOf(hi_)) <= kGrab) drag_ = Drag::Hi;
  else drag_ = Drag::Span, anchor_ = valueAt(x);
}

void RangeHistogram::mouseMoveEvent(QMouseEvent* e) {
  const double x = e->position().x();
  const bool near = std::fabs(x - xOf(lo_)) <= kGrab || std::fabs(x - xOf(hi_)) <= kGrab;
  setCursor(near || drag_ == Drag::Lo || drag_ == Drag::Hi ? Qt::SizeHorCursor : Qt::ArrowCursor);
  if (drag_ == Drag::None) return;
  const double v = valueAt(x);
  double lo = lo_, hi = hi_;
  if (drag_ == Drag::Lo) lo = v;
  else if (drag_ == Drag::Hi) hi = v;
  else lo = std::min(anchor_, v), hi = std::max(anchor_, v);
  if (lo > hi) std::swap(lo, hi), drag_ = drag_ == Drag::Lo ? Drag::Hi : drag_ == Drag::Hi ? Drag::Lo : drag_;
  if (!(hi > lo)) return;
  setRange(lo, hi);
  emit rangeChanged(lo, hi);
}

void RangeHistogram::mouseReleaseEvent(QMouseEvent* e) {
  if (drag_ != Drag::None) mouseMoveEvent(e);
  drag_ = Drag::None;
}

}  // namespace cubesolve::ui
