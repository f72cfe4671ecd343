#include "chartview.hpp"

#include <QMouseEvent>

#include <vtkAxis.h>
#include <vtkChartLegend.h>
#include <vtkChartXY.h>
#include <vtkColor.h>
#include <vtkColorSeries.h>
#include <vtkContextActor.h>
#include <vtkContextScene.h>
#include <vtkDoubleArray.h>
#include <vtkBrush.h>
#include <vtkCharArray.h>
#include <vtkPen.h>
#include <vtkPlotArea.h>
#include <vtkPlot.h>
#include <vtkPlotBar.h>
#include <vtkPlotPoints.h>
#include <vtkRenderer.h>
#include <vtkStringArray.h>
#include <vtkTable.h>
#include <vtkTextProperty.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace cubesolve::ui {

ChartView::ChartView(QWidget* parent) : VtkView(parent) {
  chart_ = vtkSmartPointer<vtkChartXY>::New();
  actor_ = vtkSmartPointer<vtkContextActor>::New();
  actor_->GetScene()->AddItem(chart_);
  renderer()->AddActor(actor_);
  renderer()->SetBackground(1, 1, 1);
  chart_->GetTitleProperties()->SetFontSize(14);
}

void ChartView::scaleText(double factor) {
  auto scaled = [factor](int size) { return std::max(1, static_cast<int>(std::lround(size * factor))); };
  for (vtkTextProperty* text : {chart_->GetTitleProperties(), chart_->GetAxis(vtkAxis::LEFT)->GetLabelProperties(),
                                chart_->GetAxis(vtkAxis::LEFT)->GetTitleProperties(), chart_->GetAxis(vtkAxis::BOTTOM)->GetLabelProperties(),
                                chart_->GetAxis(vtkAxis::BOTTOM)->GetTitleProperties()})
    text->SetFontSize(scaled(text->GetFontSize()));
  chart_->GetLegend()->SetLabelSize(scaled(chart_->GetLegend()->GetLabelSize()));
}

int ChartView::plotCount() const { return static_cast<int>(chart_->GetNumberOfPlots()); }

void ChartView::clear() {
  chart_->ClearPlots();
  bars_.clear();
  selected_ = -1;
  update();
}

namespace {

/// A count's label: 1, 10, 100, 1k, 10k, 100k, 1M, ...
std::string count_label(int decade) {
  static const char* const kSuffix[] = {"", "k", "M", "G", "T"};
  const int group = std::min(decade / 3, 4);
  std::string digits = "1" + std::string(static_cast<std::size_t>(decade - 3 * group), '0');
  return digits + kSuffix[group];
}

}  // namespace

void ChartView::setBars(const QStringList& labels, const std::vector<double>& values, const QString& xTitle,
                        const QString& yTitle, bool logY) {
  bars_ = values;
  labels_ = labels;
  x_title_ = xTitle;
  y_title_ = yTitle;
  log_y_ = logY;
  selected_ = -1;
  drawBars();
}

void ChartView::setSelectedBar(int index) {
  selected_ = index >= 0 && index < static_cast<int>(bars_.size()) ? index : -1;
  drawBars();
}

void ChartView::countAxis(double top) {
  // Counts up to `top` (bar heights); on a log scale labelled at each power of ten.
  auto* left = chart_->GetAxis(vtkAxis::LEFT);
  left->SetTitle(y_title_.toStdString());
  left->SetLogScale(false);
  left->SetBehavior(vtkAxis::FIXED);
  if (log_y_) {
    const int decades = static_cast<int>(std::ceil(top - 1 - 1e-9));
    vtkNew<vtkDoubleArray> yticks;
    vtkNew<vtkStringArray> ylabels;
    yticks->InsertNextValue(0);
    ylabels->InsertNextValue("0");
    for (int k = 0; k <= std::max(decades, 0); ++k) {
      yticks->InsertNextValue(1.0 + k);
      ylabels->InsertNextValue(count_label(k));
    }
    left->SetCustomTickPositions(yticks, ylabels);
    left->SetRange(0, std::max(2.0, 1.0 + std::max(decades, 0) + 0.15));
  } else {
    left->SetCustomTickPositions(nullptr, nullptr);
    left->SetRange(0, top > 0 ? top * 1.08 : 1);
  }
}

void ChartView::drawBars() {
  chart_->ClearPlots();
  // On a log scale a bar of v stands 1 + log10(v) high over the axis' 0, so
  // that a single group shows as a bar and an empty bin as none; the axis is
  // labelled in counts at each power of ten.
  auto height = [this](double v) { return !log_y_ ? v : v >= 1 ? 1 + std::log10(v) : 0.0; };
  vtkNew<vtkTable> table;
  vtkNew<vtkDoubleArray> x, y, sel;
  x->SetName("bin");
  y->SetName(y_title_.toUtf8().constData());
  sel->SetName(tr("selected: highlighted on the gaps map").toUtf8().constData());
  for (auto* a : {x.Get(), y.Get(), sel.Get()}) table->AddColumn(a);
  table->SetNumberOfRows(static_cast<vtkIdType>(bars_.size()));
  vtkNew<vtkDoubleArray> ticks;
  vtkNew<vtkStringArray> tick_labels;
  double top = 0;
  for (std::size_t i = 0; i < bars_.size(); ++i) {
    const auto row = static_cast<vtkIdType>(i);
    const double h = height(bars_[i]);
    top = std::max(top, h);
    table->SetValue(row, 0, static_cast<double>(i));
    table->SetValue(row, 1, static_cast<int>(i) == selected_ ? 0.0 : h);
    table->SetValue(row, 2, static_cast<int>(i) == selected_ ? h : 0.0);
    ticks->InsertNextValue(static_cast<double>(i));
    tick_labels->InsertNextValue(i < static_cast<std::size_t>(labels_.size()) ? labels_[static_cast<int>(i)].toStdString() : "");
  }
  // One bar plot: the selected bar as a second stacked series in the
  // highlight's colour on the gaps map.
  auto* bars = vtkPlotBar::SafeDownCast(chart_->AddPlot(vtkChart::BAR));
  bars->SetInputData(table, 0, 1);
  vtkNew<vtkColorSeries> colours;
  colours->ClearColors();
  colours->AddColor(vtkColor3ub(59, 82, 139));
  vtkNew<vtkStringArray> names;
  names->InsertNextValue(y_title_.toStdString());
  if (selected_ >= 0) {
    bars->SetInputArray(2, sel->GetName());
    colours->AddColor(vtkColor3ub(255, 0, 255));
    names->InsertNextValue(sel->GetName());
  }
  bars->SetColorSeries(colours);
  bars->SetColor(59, 82, 139, 255);  // a single series is drawn in the plot's own colour
  bars->SetLabels(names);
  auto* bottom = chart_->GetAxis(vtkAxis::BOTTOM);
  bottom->SetCustomTickPositions(ticks, tick_labels);
  bottom->SetTitle(x_title_.toStdString());
  bottom->SetBehavior(vtkAxis::FIXED);
  bottom->SetRange(-0.6, static_cast<double>(bars_.size()) - 0.4);
  countAxis(top);
  chart_->SetShowLegend(true);
  chart_->SetTitle("");
  settle();
  update();
}

void ChartView::setSeries(const std::vector<Series>& series, const QString& title, const QString& yTitle) {
  chart_->ClearPlots();
  bars_.clear();
  selected_ = -1;
  // The first series in black and teal with its missing rows as red
  // crosses; the others (pinned pixels) each in its colour.
  for (std::size_t k = 0; k < series.size(); ++k) {
    const Series& s = series[k];
    vtkNew<vtkTable> table;
    vtkNew<vtkDoubleArray> x, obs, fit, miss;
    x->SetName("observation");
    obs->SetName((s.label + tr(" observed")).toUtf8().constData());
    fit->SetName((s.label + tr(" fit A x")).toUtf8().constData());
    miss->SetName((s.label + tr(" missing (at the fit)")).toUtf8().constData());
    for (auto* a : {x.Get(), obs.Get(), fit.Get(), miss.Get()}) table->AddColumn(a);
    table->SetNumberOfRows(static_cast<vtkIdType>(s.observed.size()));
    for (std::size_t i = 0; i < s.observed.size(); ++i) {
      const auto row = static_cast<vtkIdType>(i);
      const double f = i < s.fitted.size() ? s.fitted[i] : std::nan("");
      table->SetValue(row, 0, static_cast<double>(i));
      table->SetValue(row, 1, s.observed[i]);
      table->SetValue(row, 2, f);
      table->SetValue(row, 3, std::isfinite(s.observed[i]) ? std::nan("") : f);
    }
    const QColor c = s.color.isValid() ? s.color : QColor(102, 102, 102);
    if (!s.fitted.empty()) {
      vtkPlot* line = chart_->AddPlot(vtkChart::LINE);
      line->SetInputData(table, 0, 2);
      if (k == 0) line->SetColor(33, 145, 140, 255);
      else line->SetColor(static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()), static_cast<unsigned char>(c.blue()), 255);
      line->SetWidth(k == 0 ? 2.0f : 1.5f);
    }
    auto* points = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
    points->SetInputData(table, 0, 1);
    if (k == 0) points->SetColor(20, 20, 20, 255);
    else points->SetColor(static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()), static_cast<unsigned char>(c.blue()), 255);
    points->SetMarkerStyle(vtkPlotPoints::CIRCLE);
    if (k == 0) {
      auto* missing = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
      missing->SetInputData(table, 0, 3);
      missing->SetColor(220, 30, 30, 255);
      missing->SetMarkerStyle(vtkPlotPoints::CROSS);
      missing->SetMarkerSize(10);
    }
  }
  showLines("observation", yTitle, title);
}

void ChartView::setTimeSeries(const std::vector<double>& t, const std::vector<TimeSeries>& series, const std::vector<double>& ticks,
                              const QStringList& labels, const QString& yTitle, const QString& title) {
  chart_->ClearPlots();
  bars_.clear();
  selected_ = -1;
  for (std::size_t k = 0; k < series.size(); ++k) {
    const TimeSeries& s = series[k];
    vtkNew<vtkTable> table;
    vtkNew<vtkDoubleArray> x, v, u;
    x->SetName("time");
    v->SetName(s.label.toUtf8().constData());
    u->SetName((s.label + tr(" undetermined")).toUtf8().constData());
    for (auto* a : {x.Get(), v.Get(), u.Get()}) table->AddColumn(a);
    table->SetNumberOfRows(static_cast<vtkIdType>(t.size()));
    bool any_undetermined = false;
    for (std::size_t i = 0; i < t.size(); ++i) {
      const auto row = static_cast<vtkIdType>(i);
      const bool undetermined = i < s.undetermined.size() && s.undetermined[i];
      any_undetermined = any_undetermined || undetermined;
      table->SetValue(row, 0, t[i]);
      table->SetValue(row, 1, i < s.values.size() ? s.values[i] : std::nan(""));
      table->SetValue(row, 2, undetermined ? s.values[i] : std::nan(""));
    }
    const QColor c = k == 0 || !s.color.isValid() ? QColor(33, 145, 140) : s.color;
    vtkPlot* line = chart_->AddPlot(vtkChart::LINE);
    line->SetInputData(table, 0, 1);
    line->SetColor(static_cast<unsigned char>(c.red()), static_cast<unsigned char>(c.green()), static_cast<unsigned char>(c.blue()), 255);
    line->SetWidth(k == 0 ? 2.0f : 1.5f);
    if (!any_undetermined) continue;  // (a legend entry only where there are such dates)
    auto* marks = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
    marks->SetInputData(table, 0, 2);
    marks->SetColor(220, 30, 30, 255);
    marks->SetMarkerStyle(vtkPlotPoints::CROSS);
    marks->SetMarkerSize(12);
  }
  vtkNew<vtkDoubleArray> tick_values;
  vtkNew<vtkStringArray> tick_labels;
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    tick_values->InsertNextValue(ticks[i]);
    tick_labels->InsertNextValue(i < static_cast<std::size_t>(labels.size()) ? labels[static_cast<int>(i)].toStdString() : "");
  }
  showLines(tr("date"), yTitle, title, tick_values, tick_labels);
}

void ChartView::setProfiles(const std::vector<Profile>& profiles, const QString& xTitle, const QString& yTitle, const QString& title) {
  chart_->ClearPlots();
  bars_.clear();
  selected_ = -1;
  for (const Profile& p : profiles) {
    vtkNew<vtkTable> table;
    vtkNew<vtkDoubleArray> x, v, lo, hi, obs;
    vtkNew<vtkCharArray> valid;
    x->SetName("distance");
    v->SetName(p.label.toUtf8().constData());
    lo->SetName("lo");
    hi->SetName("hi");
    valid->SetName("valid");
    obs->SetName(tr("%1 observed").arg(p.label).toUtf8().constData());
    for (vtkAbstractArray* a : std::initializer_list<vtkAbstractArray*>{x, v, lo, hi, valid, obs}) table->AddColumn(a);
    table->SetNumberOfRows(static_cast<vtkIdType>(p.distance.size()));
    for (std::size_t i = 0; i < p.distance.size(); ++i) {
      const auto row = static_cast<vtkIdType>(i);
      const double m = p.mean[i], s = i < p.std.size() ? p.std[i] : std::nan("");
      table->SetValue(row, 0, p.distance[i]);
      table->SetValue(row, 1, m);
      table->SetValue(row, 2, std::isfinite(s) ? m - s : 0.0);
      table->SetValue(row, 3, std::isfinite(s) ? m + s : 0.0);
      table->SetValue(row, 4, static_cast<signed char>(std::isfinite(m) && std::isfinite(s)));
      table->SetValue(row, 5, i < p.observed.size() ? p.observed[i] : std::nan(""));
    }
    const auto r = static_cast<unsigned char>(p.color.red()), g = static_cast<unsigned char>(p.color.green()),
               b = static_cast<unsigned char>(p.color.blue());
    if (!p.std.empty()) {  // the band under the line
      auto* band = vtkPlotArea::SafeDownCast(chart_->AddPlot(vtkChart::AREA));
      band->SetInputData(table);
      band->SetInputArray(0, "distance");
      band->SetInputArray(1, "lo");
      band->SetInputArray(2, "hi");
      band->SetValidPointMaskName("valid");
      band->SetColor(r, g, b, 60);
      band->SetLegendVisibility(false);
    }
    vtkPlot* line = chart_->AddPlot(vtkChart::LINE);
    line->SetInputData(table, 0, 1);
    line->SetColor(r, g, b, 255);
    line->SetWidth(2.0f);
    if (p.observed.empty()) continue;
    auto* points = vtkPlotPoints::SafeDownCast(chart_->AddPlot(vtkChart::POINTS));
    points->SetInputData(table, 0, 5);
    points->SetColor(r, g, b, 255);
    points->SetMarkerStyle(vtkPlotPoints::CIRCLE);
    points->SetMarkerSize(5);
  }
  showLines(xTitle, yTitle, title);
  chart_->GetLegend()->SetHorizontalAlignment(vtkChartLegend::RIGHT);  // beside the plot: a profile chart is wide and low
  chart_->GetLegend()->SetVerticalAlignment(vtkChartLegend::CENTER);
}

void ChartView::showLines(const QString& xTitle, const QString& yTitle, const QString& title, vtkDoubleArray* ticks, vtkStringArray* labels) {
  auto* bottom = chart_->GetAxis(vtkAxis::BOTTOM);
  bottom->SetCustomTickPositions(ticks, labels);
  bottom->SetBehavior(vtkAxis::AUTO);
  bottom->SetTitle(xTitle.toStdString());
  bottom->GetLabelProperties()->SetOrientation(0);
  auto* left = chart_->GetAxis(vtkAxis::LEFT);
  left->SetCustomTickPositions(nullptr, nullptr);
  left->SetBehavior(vtkAxis::AUTO);
  left->SetTitle(yTitle.toStdString());
  placeLegend();
  chart_->SetTitle(title.toStdString());
  chart_->RecalculateBounds();
  settle();
  update();
}

void ChartView::placeLegend() {
  // Above the plot, under the title: never over the data.
  chart_->SetShowLegend(true);
  vtkChartLegend* legend = chart_->GetLegend();
  legend->SetInline(false);
  legend->SetHorizontalAlignment(vtkChartLegend::CENTER);
  legend->SetVerticalAlignment(vtkChartLegend::TOP);
}

void ChartView::mouseReleaseEvent(QMouseEvent* e) {
  if (bars_.empty()) return;
  auto* axis = chart_->GetAxis(vtkAxis::BOTTOM);
  const float x0 = axis->GetPoint1()[0], x1 = axis->GetPoint2()[0];
  if (x1 <= x0) return;
  const double px = e->position().x() * devicePixelRatioF();
  const double value = axis->GetMinimum() + (px - x0) / (x1 - x0) * (axis->GetMaximum() - axis->GetMinimum());
  const long index = std::lround(value);
  // A click beside the bars is -1 (clear the selection).
  emit barClicked(index >= 0 && index < static_cast<long>(bars_.size()) ? static_cast<int>(index) : -1);
}

}  // namespace cubesolve::ui
