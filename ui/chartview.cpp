#include "chartview.hpp"

#include <QMouseEvent>

#include <vtkAxis.h>
#include <vtkChartXY.h>
#include <vtkContextActor.h>
#include <vtkContextScene.h>
#include <vtkDoubleArray.h>
#include <vtkPen.h>
#include <vtkPlot.h>
#include <vtkPlotPoints.h>
#include <vtkRenderer.h>
#include <vtkStringArray.h>
#include <vtkTable.h>
#include <vtkTextProperty.h>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

ChartView::ChartView(QWidget* parent) : VtkView(parent) {
  chart_ = vtkSmartPointer<vtkChartXY>::New();
  actor_ = vtkSmartPointer<vtkContextActor>::New();
  actor_->GetScene()->AddItem(chart_);
  renderer()->AddActor(actor_);
  renderer()->SetBackground(1, 1, 1);
  chart_->GetTitleProperties()->SetFontSize(14);
}

void ChartView::clear() {
  chart_->ClearPlots();
  bars_.clear();
  update();
}

void ChartView::setBars(const QStringList& labels, const std::vector<double>& values, const QString& xTitle,
                        const QString& yTitle, bool logY) {
  chart_->ClearPlots();
  bars_ = values;
  vtkNew<vtkTable> table;
  vtkNew<vtkDoubleArray> x, y;
  x->SetName("bin");
  y->SetName("count");
  table->AddColumn(x);
  table->AddColumn(y);
  table->SetNumberOfRows(static_cast<vtkIdType>(values.size()));
  vtkNew<vtkDoubleArray> ticks;
  vtkNew<vtkStringArray> tick_labels;
  for (std::size_t i = 0; i < values.size(); ++i) {
    table->SetValue(static_cast<vtkIdType>(i), 0, static_cast<double>(i));
    // A log axis cannot show 0: empty bins stay empty at the axis minimum.
    table->SetValue(static_cast<vtkIdType>(i), 1, logY && values[i] <= 0 ? 0.5 : values[i]);
    ticks->InsertNextValue(static_cast<double>(i));
    tick_labels->InsertNextValue(i < static_cast<std::size_t>(labels.size()) ? labels[static_cast<int>(i)].toStdString() : "");
  }
  vtkPlot* bars = chart_->AddPlot(vtkChart::BAR);
  bars->SetInputData(table, 0, 1);
  bars->SetColor(68, 1, 84, 255);
  auto* bottom = chart_->GetAxis(vtkAxis::BOTTOM);
  bottom->SetCustomTickPositions(ticks, tick_labels);
  bottom->SetTitle(xTitle.toStdString());
  bottom->SetBehavior(vtkAxis::FIXED);
  bottom->SetRange(-0.6, static_cast<double>(values.size()) - 0.4);
  auto* left = chart_->GetAxis(vtkAxis::LEFT);
  left->SetTitle(yTitle.toStdString());
  left->SetLogScale(logY);
  double top = 1;
  for (double v : values) top = std::max(top, v);
  // A log axis needs a positive fixed range to be active.
  left->SetBehavior(logY ? vtkAxis::FIXED : vtkAxis::AUTO);
  if (logY) left->SetRange(0.5, top * 2);
  chart_->SetTitle("");
  chart_->RecalculateBounds();
  update();
}

void ChartView::setSeries(const std::vector<double>& observed, const std::vector<double>& fitted, const QString& title) {
  chart_->ClearPlots();
  bars_.clear();
  vtkNew<vtkTable> table;
  vtkNew<vtkDoubleArray> x, obs, fit, miss;
  x->SetName("observation");
  obs->SetName("observed");
  fit->SetName("fitted A x");
  miss->SetName("missing");
  for (auto* a : {x.Get(), obs.Get(), fit.Get(), miss.Get()}) table->AddColumn(a);
  table->SetNumberOfRows(static_cast<vtkIdType>(observed.size()));
  for (std::size_t i = 0; i < observed.size(); ++i) {
    const auto row = static_cast<vtkIdType>(i);
    const double f = i < fitted.size() ? fitted[i] : std::nan("");
    table->SetValue(row, 0, static_cast<double>(i));
    table->SetValue(row, 1, observed[i]);
    table->SetValue(row, 2, f);
    table->SetValue(row, 3, std::isfinite(observed[i]) ? std::nan("") : f);
  }
  vtkPlot* line = chart_->AddPlot(vtkChart::LINE);
  line->SetInputData(table, 0, 2);
  line->SetColor(33, 145, 140, 255);
  line->SetWidth(2.0);
  auto* points = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
  points->SetInputData(table, 0, 1);
  points->SetColor(20, 20, 20, 255);
  points->SetMarkerStyle(vtkPlotPoints::CIRCLE);
  auto* missing = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
  missing->SetInputData(table, 0, 3);
  missing->SetColor(220, 30, 30, 255);
  missing->SetMarkerStyle(vtkPlotPoints::CROSS);
  missing->SetMarkerSize(10);
  chart_->GetAxis(vtkAxis::BOTTOM)->SetCustomTickPositions(nullptr, nullptr);
  chart_->GetAxis(vtkAxis::BOTTOM)->SetBehavior(vtkAxis::AUTO);
  chart_->GetAxis(vtkAxis::BOTTOM)->SetTitle("observation");
  chart_->GetAxis(vtkAxis::LEFT)->SetLogScale(false);
  chart_->GetAxis(vtkAxis::LEFT)->SetTitle("value");
  chart_->SetShowLegend(true);
  chart_->SetTitle(title.toStdString());
  chart_->RecalculateBounds();
  update();
}

void ChartView::mouseReleaseEvent(QMouseEvent* e) {
  if (bars_.empty()) return;
  auto* axis = chart_->GetAxis(vtkAxis::BOTTOM);
  const float x0 = axis->GetPoint1()[0], x1 = axis->GetPoint2()[0];
  if (x1 <= x0) return;
  const double px = e->position().x() * devicePixelRatioF();
  const double value = axis->GetMinimum() + (px - x0) / (x1 - x0) * (axis->GetMaximum() - axis->GetMinimum());
  const long index = std::lround(value);
  if (index >= 0 && index < static_cast<long>(bars_.size())) emit barClicked(static_cast<int>(index));
}

}  // namespace cubesolve::ui
