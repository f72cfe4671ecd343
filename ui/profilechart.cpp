#include "profilechart.hpp"

#include "document.hpp"
#include "figure.hpp"
#include "imageview.hpp"
#include "resultpage.hpp"

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

ProfileChart::ProfileChart(Document* doc, const ResultPage* page, QWidget* parent) : ChartView(parent), doc_(doc), page_(page) {
  setObjectName("profile-chart");
  setMinimumHeight(200);
  connect(doc_, &Document::profilesChanged, this, &ProfileChart::refresh);
  connect(page_, &ResultPage::drawn, this, &ProfileChart::refresh);
}

void ProfileChart::refresh() {
  lines_.clear();
  const ImageView* map = page_->view();
  const int H = map->imageHeight(), W = map->imageWidth();
  const auto cube = doc_->cube();
  const bool on_map = H > 0 && cube && static_cast<std::size_t>(H) == cube->dim(1) && static_cast<std::size_t>(W) == cube->dim(2);
  const bool any = std::any_of(doc_->profiles().begin(), doc_->profiles().end(), [](const Document::Profile& p) { return p.shown; });
  std::vector<double> observed;  // the observation the model layer fits, in the unit shown
  if (on_map && any && page_->layer() == Layer::Model && static_cast<std::size_t>(page_->channel()) < cube->dim(0) && doc_->cubeIntact()) {
    const std::size_t P = static_cast<std::size_t>(H) * W, band = static_cast<std::size_t>(page_->channel());
    const auto weights = doc_->useWeights() ? doc_->weights() : nullptr;
    observed.resize(P);
    for (std::size_t p = 0; p < P; ++p)
      observed[p] = weights && !(weights->value(band * P + p) > 0) ? std::nan("") : cube->value(band * P + p) * doc_->unitScale();
  }
  std::vector<ChartView::Profile> series;
  for (std::size_t k = 0; on_map && k < doc_->profiles().size(); ++k) {
    const Document::Profile& p = doc_->profiles()[k];
    if (!p.shown) continue;
    Line line{p.name, profile(map->values().data(), H, W, p.vertices, doc_->profileBand()), {}};
    if (!observed.empty()) line.observed = profile(observed.data(), H, W, p.vertices, doc_->profileBand());
    ChartView::Profile s{{}, {}, {}, {}, p.name, pin_color(k)};
    for (std::size_t i = 0; i < line.points.size(); ++i) {
      s.distance.push_back(line.points[i].distance);
      s.mean.push_back(line.points[i].mean);
      if (doc_->profileBand() > 1) s.std.push_back(line.points[i].std);
      if (!line.observed.empty()) s.observed.push_back(line.observed[i].mean);
    }
    series.push_back(std::move(s));
    lines_.push_back(std::move(line));
  }
  if (shown_ != !lines_.empty()) emit shownChanged(shown_ = !lines_.empty());
  if (lines_.empty()) return clear();
  const MapStyle& style = map->style();
  const QString unit = style.unit.isEmpty() ? tr("value") : tr("value (%1)").arg(style.unit);
  const QString across = doc_->profileBand() > 1 ? tr("; mean and ±1 std across %1 pixels").arg(doc_->profileBand()) : QString();
  setProfiles(series, tr("distance along the profile (pixels)%1").arg(across), unit, style.title);
}

QString ProfileChart::csv() const {
  const MapStyle& style = page_->view()->style();
  const bool geo = mapXY(doc_->geo(), 0, 0).has_value();
  QString text = QString("# %1\n# unit: %2; mean, std (population) and count of the finite values across %3 pixel(s)\n")
                     .arg(style.title, style.unit.isEmpty() ? tr("as the cube") : style.unit)
                     .arg(doc_->profileBand());
  text += "profile,distance,row,col";
  if (geo) text += ",map_x,map_y";
  text += ",mean,std,count";
  const bool observed = !lines_.empty() && !lines_.front().observed.empty();
  if (observed) text += ",observed";
  text += "\n";
  auto num = [](double v) { return std::isfinite(v) ? QString::number(v, 'g', 17) : QString(); };
  for (const Line& l : lines_)
    for (std::size_t i = 0; i < l.points.size(); ++i) {
      const ProfilePoint& p = l.points[i];
      QString name = l.name;
      if (name.contains(',') || name.contains('"')) name = '"' + name.replace('"', "\"\"") + '"';
      text += QString("%1,%2,%3,%4").arg(name, num(p.distance), num(p.row), num(p.col));
      if (const auto at = mapXY(doc_->geo(), p.row, p.col)) text += "," + num(at->first) + "," + num(at->second);
      text += QString(",%1,%2,%3").arg(num(p.mean), num(p.std)).arg(p.count);
      if (observed) text += "," + num(l.observed[i].mean);
      text += "\n";
    }
  return text;
}

}  // namespace cubesolve::ui
