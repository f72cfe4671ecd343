#pragma once
// The colour range set on histograms: the values of the channel shown
// (filled) beside those of all its layer's channels (outlined) over one
// axis, the range marked by two handles. Drag a handle to move that end,
// or drag across the histogram to set both.

#include <QWidget>

#include <cstddef>
#include <vector>

namespace cubesolve::ui {

class RangeHistogram : public QWidget {
  Q_OBJECT
public:
  explicit RangeHistogram(QWidget* parent = nullptr);

  /// Counts in equal bins over [axis_lo, axis_hi]: of the channel shown and
  /// of all channels; none hides it.
  void setCounts(std::vector<std::size_t> current, std::vector<std::size_t> all, double axis_lo, double axis_hi);
  /// The range marked (no signal).
  void setRange(double lo, double hi);
  double rangeLo() const { return lo_; }
  double rangeHi() const { return hi_; }
  /// The value at a widget x, and the x of a value.
  double valueAt(double x) const;
  double xOf(double value) const;

signals:
  /// The user dragged the range to [lo, hi].
  void rangeChanged(double lo, double hi);

protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;

private:
  QRectF plot() const;
  std::vector<std::size_t> current_, all_;
  double axis_lo_ = 0, axis_hi_ = 1, lo_ = 0, hi_ = 1;
  enum class Drag { None, Lo, Hi, Span } drag_ = Drag::None;
  double anchor_ = 0;  // where a drag across began (a value)
};

}  // namespace cubesolve::ui
