#include "timeline.hpp"

#include "document.hpp"

#include <cubesolve/data/designs.hpp>

#include <QMouseEvent>
#include <QPainter>
#include <QSlider>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {
constexpr int kMargin = 12;  // left and right of the axis
constexpr int kAxisY = 18;   // the axis, from the top
}  // namespace

Timeline::Timeline(QSlider* slider, QWidget* parent) : QWidget(parent), slider_(slider) {
  setObjectName("timeline");
  setMouseTracking(true);
  setMinimumHeight(sizeHint().height());
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setToolTip(tr("The dates of the time series: a tick per acquisition, missing acquisitions shaded; click or drag to show a date"));
  connect(slider_, &QSlider::valueChanged, this, qOverload<>(&QWidget::update));
  setVisible(false);
}

QSize Timeline::sizeHint() const { return {400, kAxisY + fontMetrics().height() * 2 + 6}; }

void Timeline::setDates(std::vector<std::string> dates) {
  if (dates == dates_) return;
  dates_ = std::move(dates);
  days_.clear();
  for (const auto& d : dates_) days_.push_back(day_number(d));
  setVisible(dates_.size() > 1);
  update();
}

double Timeline::xOf(long day) const {
  const double span = days_.size() > 1 ? static_cast<double>(days_.back() - days_.front()) : 1.0;
  return kMargin + (width() - 2 * kMargin) * static_cast<double>(day - days_.front()) / std::max(span, 1.0);
}

std::vector<double> Timeline::tickPositions() const {
  std::vector<double> x;
  for (long d : days_) x.push_back(xOf(d));
  return x;
}

int Timeline::dateAt(double x) const {
  if (days_.empty()) return -1;
  const std::vector<double> ticks = tickPositions();
  const auto after = std::lower_bound(ticks.begin(), ticks.end(), x);
  if (after == ticks.begin()) return 0;
  if (after == ticks.end()) return static_cast<int>(ticks.size()) - 1;
  const auto k = static_cast<int>(after - ticks.begin());
  return x - ticks[static_cast<std::size_t>(k) - 1] <= *after - x ? k - 1 : k;
}

std::vector<int> Timeline::gaps() const {
  std::vector<long> steps;
  for (std::size_t k = 1; k < days_.size(); ++k) steps.push_back(days_[k] - days_[k - 1]);
  std::vector<int> out;
  if (steps.size() < 2) return out;
  std::vector<long> sorted = steps;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median = static_cast<double>(sorted[sorted.size() / 2]);
  for (std::size_t k = 0; k < steps.size(); ++k)
    if (static_cast<double>(steps[k]) > 1.5 * median) out.push_back(static_cast<int>(k));
  return out;
}

void Timeline::paintEvent(QPaintEvent*) {
  if (days_.empty()) return;
  QPainter p(this);
  p.setRenderHint(QPainter::Antialiasing, false);
  const QPalette& pal = palette();
  const int h = fontMetrics().height();
  // Missing acquisitions: their interval shaded.
  const std::vector<double> x = tickPositions();
  for (int k : gaps()) {
    const QRectF band(x[static_cast<std::size_t>(k)] + 2, kAxisY - 6, x[static_cast<std::size_t>(k) + 1] - x[static_cast<std::size_t>(k)] - 4, 12);
    p.fillRect(band, QColor(230, 140, 40, 90));
  }
  p.setPen(pal.color(QPalette::WindowText));
  p.drawLine(QPointF(kMargin, kAxisY), QPointF(width() - kMargin, kAxisY));
  // Months (short marks) and years (long marks, labelled) along the axis.
  const int first_year = std::stoi(dates_.front().substr(0, 4)), last_year = std::stoi(dates_.back().substr(0, 4));
  const bool months = (width() - 2 * kMargin) / std::max(1, 12 * (last_year - first_year + 1)) >= 4;
  for (int y = first_year; y <= last_year + 1; ++y)
    for (int m = 1; m <= 12; ++m) {
      char d[9];
      std::snprintf(d, sizeof d, "%04d%02d01", y, m);
      const long day = day_number(d);
      if (day < days_.front() || day > days_.back() || (m > 1 && !months)) continue;
      const double at = xOf(day);
      p.drawLine(QPointF(at, kAxisY + 1), QPointF(at, kAxisY + (m == 1 ? 8 : 4)));
      if (m == 1) p.drawText(QPointF(at + 2, kAxisY + 8 + h * 0.8), QString::number(y));
    }
  if (dates_.front().substr(4) != "0101")  // the first year named at the start
    p.drawText(QPointF(kMargin, kAxisY + 8 + h * 0.8), QString::number(first_year));
  // A tick per acquisition above the axis; the date shown marked and named.
  p.setPen(QColor(40, 110, 190));
  for (double t : x) p.drawLine(QPointF(t, kAxisY - 6), QPointF(t, kAxisY - 1));
  const int shown = std::clamp(slider_->value(), 0, static_cast<int>(x.size()) - 1);
  const double at = x[static_cast<std::size_t>(shown)];
  p.setRenderHint(QPainter::Antialiasing, true);
  p.setBrush(QColor(220, 60, 40));
  p.setPen(Qt::NoPen);
  p.drawPolygon(QPolygonF{QPointF(at - 5, kAxisY - 12), QPointF(at + 5, kAxisY - 12), QPointF(at, kAxisY - 2)});
  p.setPen(pal.color(QPalette::WindowText));
  const QString label = iso_day(dates_[static_cast<std::size_t>(shown)]) + (hovered_.isEmpty() ? QString() : tr("   (pointer: %1)").arg(hovered_));
  const double lx = std::clamp(at - fontMetrics().horizontalAdvance(label) / 2.0, 0.0, std::max(0.0, width() - fontMetrics().horizontalAdvance(label) - 1.0));
  p.drawText(QPointF(lx, kAxisY + 8 + h * 1.8), label);
}

void Timeline::mousePressEvent(QMouseEvent* e) {
  if (e->button() == Qt::LeftButton && !days_.empty()) slider_->setValue(dateAt(e->position().x()));
}

void Timeline::mouseMoveEvent(QMouseEvent* e) {
  if (days_.empty()) return;
  const int k = dateAt(e->position().x());
  if (e->buttons() & Qt::LeftButton) slider_->setValue(k);
  const QString h = iso_day(dates_[static_cast<std::size_t>(k)]);
  if (h != hovered_) {
    hovered_ = h;
    update();
  }
}

void Timeline::leaveEvent(QEvent*) {
  hovered_.clear();
  update();
}

}  // namespace cubesolve::ui
