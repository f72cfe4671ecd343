#pragma once
// A time series' dates as a timeline: a tick per acquisition placed by its
// date, the years and months along the axis, a gap where acquisitions are
// missing (an interval well beyond the usual one) shaded, the date shown
// marked and named, the date under the pointer named. Click or drag to
// choose a date; it drives the channel slider it is given, and follows it.

#include <QWidget>

#include <string>
#include <vector>

class QSlider;

namespace cubesolve::ui {

class Timeline : public QWidget {
  Q_OBJECT
public:
  explicit Timeline(QSlider* slider, QWidget* parent = nullptr);
  /// The slider's channels' dates (YYYYMMDD, one per channel, increasing);
  /// none hides the timeline.
  void setDates(std::vector<std::string> dates);
  const std::vector<std::string>& dates() const { return dates_; }
  /// Each date's x in the widget, and the date nearest to an x.
  std::vector<double> tickPositions() const;
  int dateAt(double x) const;
  /// The intervals (between dates k and k + 1, by k) longer than 1.5 times
  /// the median interval: acquisitions missing there.
  std::vector<int> gaps() const;
  /// The date under the pointer (YYYY-MM-DD), empty when it is elsewhere.
  const QString& hovered() const { return hovered_; }
  QSize sizeHint() const override;

protected:
  void paintEvent(QPaintEvent*) override;
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void leaveEvent(QEvent*) override;

private:
  double xOf(long day) const;
  QSlider* slider_;
  std::vector<std::string> dates_;
  std::vector<long> days_;
  QString hovered_;
};

}  // namespace cubesolve::ui
