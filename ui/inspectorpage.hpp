#pragma once
// The inspector page: the selected pixel's observations and fit, its time
// series where the design has dates, its numbers, and the pixels pinned for
// comparison (those shown; the marks panel lists them).

#include "chartview.hpp"

#include <QWidget>

#include <vector>

class QPushButton;
class QTextEdit;

namespace cubesolve::ui {

class Document;

class InspectorPage : public QWidget {
  Q_OBJECT
public:
  explicit InspectorPage(Document* doc, QWidget* parent = nullptr);

  ChartView* chart() const { return chart_; }
  /// The time-series chart (shown where the design has dates).
  ChartView* seriesChart() const { return series_; }
  QString text() const;
  /// The x of the selected pixel (empty when none, or not solved).
  const std::vector<double>& inspectedX() const { return x_; }

private:
  void update();
  ChartView::Series pixelSeries(int row, int col) const;
  /// An axis title for values of `what` in the unit shown.
  QString valueTitle(const QString& what) const;
  /// The time series of `pixel` at (row, col) where the design has dates
  /// (the chart hidden otherwise); what the text adds about it.
  QString showTimeSeries(int row, int col, const ChartView::Series& pixel);
  /// The time series of a solved pixel (the design has dates).
  ChartView::TimeSeries timeSeries(int row, int col) const;

  Document* doc_;
  std::vector<double> x_;
  ChartView* chart_ = nullptr;
  ChartView* series_ = nullptr;
  QTextEdit* text_ = nullptr;
  QPushButton* unpin_ = nullptr;
};

}  // namespace cubesolve::ui
