#include "inspectorpage.hpp"

#include "document.hpp"
#include "figure.hpp"

#include <QHBoxLayout>
#include <QPushButton>
#include <QTextEdit>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {
QString fmt(double v) { return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("—"); }
}  // namespace

InspectorPage::InspectorPage(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QHBoxLayout(this);
  chart_ = new ChartView;
  series_ = new ChartView;
  series_->hide();
  text_ = new QTextEdit;
  text_->setReadOnly(true);
  text_->setMaximumWidth(260);
  auto* side = new QVBoxLayout;
  auto* pin = new QPushButton(tr("&Pin this pixel"));
  pin->setToolTip(tr("Keep this pixel's observations and fit on the chart to compare it with others"));
  unpin_ = new QPushButton(tr("Clear pins"));
  unpin_->setToolTip(tr("Remove every pinned pixel from the charts"));
  unpin_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(pin);
  buttons->addWidget(unpin_);
  side->addLayout(buttons);
  side->addWidget(text_, 1);
  auto* charts = new QVBoxLayout;
  charts->addWidget(chart_, 1);
  charts->addWidget(series_, 1);
  layout->addLayout(charts, 1);
  layout->addLayout(side);
  connect(pin, &QPushButton::clicked, doc_, &Document::pin);
  connect(unpin_, &QPushButton::clicked, this, [this] { doc_->setPins({}); });
  for (auto signal : {&Document::loaded, &Document::solved, &Document::selectionChanged, &Document::unitChanged})
    connect(doc_, signal, this, &InspectorPage::update);
  update();
}

QString InspectorPage::valueTitle(const QString& what) const {
  const QString unit = doc_->unitLabel();
  if (unit.isEmpty()) return tr("%1 (cube units)").arg(what);
  return unit == "rad" ? tr("phase (rad)") : tr("LOS %1 (%2)").arg(what, unit);
}

QString InspectorPage::text() const { return text_->toPlainText(); }

ChartView::Series InspectorPage::pixelSeries(int row, int col) const {
  ChartView::Series s;
  const auto cube = doc_->cube();
  const std::size_t W = cube->dim(2), P = cube->dim(1) * W, N = cube->dim(0);
  const std::size_t p = static_cast<std::size_t>(row) * W + static_cast<std::size_t>(col);
  const auto weights = doc_->useWeights() ? doc_->weights() : nullptr;
  s.observed.assign(N, std::nan(""));
  const bool intact = doc_->cubeIntact();  // (a file changed since it was opened is not read)
  for (std::size_t i = 0; i < N && intact; ++i) {
    s.observed[i] = cube->value(i * P + p);
    if (weights && !(weights->value(i * P + p) > 0)) s.observed[i] = std::nan("");
  }
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (result && design && result->x.dim(0) == design->cols()) s.fitted = pixel_model(*design, result->x, p);
  s.label = QString("(%1, %2)").arg(row).arg(col);
  const double k = doc_->unitScale();  // in the unit shown
  for (auto* v : {&s.observed, &s.fitted})
    for (double& e : *v) e *= k;
  return s;
}

void InspectorPage::update() {
  x_.clear();
  const auto cube = doc_->cube();
  const auto [row, col] = doc_->selected();
  unpin_->setEnabled(!doc_->pins().empty());
  if (!cube || row < 0) {
    chart_->clear();
    series_->hide();
    text_->setPlainText(tr("Click a pixel on any map to inspect it."));
    return;
  }
  const std::size_t W = cube->dim(2), P = cube->dim(1) * W;
  const std::size_t p = static_cast<std::size_t>(row) * W + static_cast<std::size_t>(col);
  QString text = tr("Pixel row %1, column %2\n").arg(row).arg(col);
  const auto result = doc_->result();
  const auto design = doc_->design();
  std::vector<ChartView::Series> series{pixelSeries(row, col)};
  if (!series[0].fitted.empty()) {
    for (std::size_t j = 0; j < design->cols(); ++j) x_.push_back(result->x.value(j * P + p));
    text += tr("valid rows %1\nrank %2\nstatus %3\nrss %4\n\nx:\n")
                .arg(result->n_valid.value(p))
                .arg(result->rank.value(p))
                .arg(status_name(static_cast<PixelStatus>(result->status.data<std::uint8_t>()[p])))
                .arg(fmt(result->rss.value(p)));
    const QString unit = doc_->unitLabel().isEmpty() ? QString() : " " + doc_->unitLabel();
    for (std::size_t j = 0; j < x_.size(); ++j) text += QString("  x[%1] = %2%3\n").arg(j).arg(fmt(x_[j] * doc_->unitScale())).arg(unit);
  } else {
    text += tr("(not solved yet)\n");
  }
  QString pinned;
  for (std::size_t k = 0; k < doc_->pins().size(); ++k) {
    const auto [r, c] = doc_->pins()[k];
    if ((r == row && c == col) || !doc_->pinShown(k)) continue;
    series.push_back(pixelSeries(r, c));
    series.back().color = pin_color(k);
    series.back().label = doc_->pinName(k);
    const std::size_t q = static_cast<std::size_t>(r) * W + static_cast<std::size_t>(c);
    pinned += QString("  %1 (%2, %3)").arg(doc_->pinName(k)).arg(r).arg(c);
    if (!series.back().fitted.empty())
      pinned += tr(": %1, rss %2").arg(status_name(static_cast<PixelStatus>(result->status.data<std::uint8_t>()[q]))).arg(fmt(result->rss.value(q)));
    pinned += "\n";
  }
  if (!pinned.isEmpty()) text += tr("\nPinned for comparison:\n") + pinned;
  text += showTimeSeries(row, col, series[0]);
  text_->setPlainText(text);
  chart_->setSeries(series, tr("pixel (%1, %2): observations (× missing) and fit").arg(row).arg(col), valueTitle(tr("value")));
}

ChartView::TimeSeries InspectorPage::timeSeries(int row, int col) const {
  // The series at the pixel relative to the reference date, and which of
  // its dates (after the first) its network leaves undetermined.
  ChartView::TimeSeries s;
  s.label = QString("(%1, %2)").arg(row).arg(col);
  const auto result = doc_->result();
  const auto design = doc_->design();
  const auto cube = doc_->cube();
  const std::size_t W = cube->dim(2), p = static_cast<std::size_t>(row) * W + static_cast<std::size_t>(col);
  const ChartView::Series observed = pixelSeries(row, col);
  std::vector<bool> valid(observed.observed.size());
  for (std::size_t i = 0; i < valid.size(); ++i) valid[i] = std::isfinite(observed.observed[i]);
  const std::vector<bool> unknown = undetermined_unknowns(*design, valid);
  s.values = doc_->series(p);
  s.undetermined = {false};
  s.undetermined.insert(s.undetermined.end(), unknown.begin(), unknown.end());
  return s;
}

QString InspectorPage::showTimeSeries(int row, int col, const ChartView::Series& pixel) {
  // With dates: the time series of the pixel and of each pin, and the dates
  // their networks leave undetermined.
  const std::vector<std::string> dates = doc_->unknownDates();
  // (Set whether the page is shown or not: isVisible() is false on a hidden page.)
  const bool with_series = !dates.empty() && !pixel.fitted.empty();
  series_->setVisible(with_series);
  if (!with_series) return {};
  std::vector<ChartView::TimeSeries> series{timeSeries(row, col)};
  for (std::size_t k = 0; k < doc_->pins().size(); ++k) {
    const auto [r, c] = doc_->pins()[k];
    if ((r == row && c == col) || !doc_->pinShown(k)) continue;
    series.push_back(timeSeries(r, c));
    series.back().color = pin_color(k);
    series.back().label = doc_->pinName(k);
  }
  const std::vector<double> t = years_of(dates);
  std::vector<double> ticks;
  QStringList labels;
  const std::size_t fit = static_cast<std::size_t>(std::clamp(series_->width() / 110, 2, 8));  // labels that fit side by side
  const std::size_t step = std::max<std::size_t>(1, (dates.size() + fit - 1) / fit);
  for (std::size_t i = 0; i < dates.size(); i += step) {
    ticks.push_back(t[i]);
    labels << iso_day(dates[i]);
  }
  const auto n_undetermined = std::count(series[0].undetermined.begin(), series[0].undetermined.end(), true);
  series_->setTimeSeries(t, series, ticks, labels, valueTitle(tr("displacement")),
                         n_undetermined ? tr("(%1, %2), 0 on %3: %4 dates undetermined (minimum norm)")
                                              .arg(row).arg(col).arg(iso_day(doc_->refDate().toStdString())).arg(n_undetermined)
                                        : tr("time series of (%1, %2), 0 on %3").arg(row).arg(col).arg(iso_day(doc_->refDate().toStdString())));
  return n_undetermined ? tr("\n%1 dates undetermined: the network of this pixel does not reach them.\n").arg(n_undetermined) : QString();
}

}  // namespace cubesolve::ui
