#pragma once
// Charts drawn by VTK (vtkChartXY in a context actor): the histogram of mask
// group sizes, and a pixel's observations against its fit.

#include "vtkview.hpp"

#include <QString>
#include <QStringList>

#include <vector>

class vtkChartXY;
class vtkContextActor;

namespace cubesolve::ui {

class ChartView : public VtkView {
  Q_OBJECT
public:
  explicit ChartView(QWidget* parent = nullptr);

  /// A bar per category, labelled.
  void setBars(const QStringList& labels, const std::vector<double>& values, const QString& xTitle,
               const QString& yTitle, bool logY);
  /// Points (observed values; NaN = missing, drawn at the fitted value as
  /// crosses) and the fitted line, against the observation index.
  void setSeries(const std::vector<double>& observed, const std::vector<double>& fitted, const QString& title);
  void clear();

  /// The values the bars show (what the chart was given).
  const std::vector<double>& barValues() const { return bars_; }

signals:
  void barClicked(int index);

protected:
  void mouseReleaseEvent(QMouseEvent* e) override;

private:
  vtkSmartPointer<vtkChartXY> chart_;
  vtkSmartPointer<vtkContextActor> actor_;
  std::vector<double> bars_;
};

}  // namespace cubesolve::ui
