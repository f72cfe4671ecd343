#pragma once
// Charts drawn by VTK (vtkChartXY in a context actor): the histogram of mask
// group sizes, a pixel's observations against its fit, time series, and
// values along profiles.

#include "vtkview.hpp"

#include <QColor>
#include <QString>
#include <QStringList>

#include <vector>

class vtkChartXY;
class vtkDoubleArray;
class vtkStringArray;
class vtkContextActor;

namespace cubesolve::ui {

class ChartView : public VtkView {
  Q_OBJECT
public:
  explicit ChartView(QWidget* parent = nullptr);

  /// A bar per category, labelled; on a log scale (logY) a bin of 1 shows
  /// as a bar and an empty bin as none.
  void setBars(const QStringList& labels, const std::vector<double>& values, const QString& xTitle,
               const QString& yTitle, bool logY);
  /// A pixel's observed values (NaN = missing) and its fit.
  struct Series {
    std::vector<double> observed, fitted;
    QString label;
    QColor color;  // of a pinned pixel's series (the first series has its own colours)
  };
  /// Points (observed values) and the fitted line of each series against
  /// the observation index; the first series' missing rows are drawn at the
  /// fitted value as crosses.
  void setSeries(const std::vector<Series>& series, const QString& title, const QString& yTitle = "value");
  void clear();

  /// One pixel's time series: its values at the chart's times, which of
  /// them are undetermined, its colour (the first series has its own).
  struct TimeSeries {
    std::vector<double> values;
    std::vector<bool> undetermined;
    QString label;
    QColor color;
  };
  /// Time series against time t (decimal years): points joined by a line,
  /// those at undetermined times marked as such; `labels` name `ticks`.
  void setTimeSeries(const std::vector<double>& t, const std::vector<TimeSeries>& series, const std::vector<double>& ticks,
                     const QStringList& labels, const QString& yTitle, const QString& title);

  /// Values along a profile against the distance along it: the mean across
  /// the line joined by a line in its colour, a band of ±1 std about it
  /// (where std is given), and points of the observed values (where given).
  struct Profile {
    std::vector<double> distance, mean, std, observed;
    QString label;
    QColor color;
  };
  void setProfiles(const std::vector<Profile>& profiles, const QString& xTitle, const QString& yTitle, const QString& title);

  /// Marks one bar as selected (and names it in a legend); -1 clears it.
  void setSelectedBar(int index);
  int selectedBar() const { return selected_; }

  void scaleText(double factor) override;

  /// How many plots the chart draws (bars, lines, point sets).
  int plotCount() const;
  /// The values the bars show (what the chart was given).
  const std::vector<double>& barValues() const { return bars_; }

signals:
  /// A bar was clicked; -1 for a click beside the bars.
  void barClicked(int index);

protected:
  void mouseReleaseEvent(QMouseEvent* e) override;

private:
  void drawBars();
  /// The count axis of the bars, up to `top`.
  void countAxis(double top);
  void placeLegend();
  /// The axes of a chart of lines and points (automatic ranges; `ticks`
  /// named by `labels` on the bottom one where given), the legend above the
  /// plot, the title; then a render.
  void showLines(const QString& xTitle, const QString& yTitle, const QString& title, vtkDoubleArray* ticks = nullptr,
                 vtkStringArray* labels = nullptr);

  vtkSmartPointer<vtkChartXY> chart_;
  vtkSmartPointer<vtkContextActor> actor_;
  std::vector<double> bars_;
  QStringList labels_;
  QString x_title_, y_title_;
  bool log_y_ = false;
  int selected_ = -1;
};

}  // namespace cubesolve::ui
