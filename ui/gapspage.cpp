#include "gapspage.hpp"

#include "document.hpp"
#include "imageview.hpp"

#include <QComboBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSlider>
#include <QVBoxLayout>

namespace cubesolve::ui {

GapsPage::GapsPage(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  auto* bar = new QHBoxLayout;
  mode_ = new QComboBox;
  mode_->setObjectName("gaps-mode");
  mode_->addItems({tr("Valid observations per pixel"), tr("Mask of one observation")});
  mode_->setToolTip(tr("How many observations each pixel has, or which pixels one observation covers"));
  band_ = new QSlider(Qt::Horizontal);
  band_->setObjectName("band-slider");
  band_->setToolTip(tr("The observation whose mask is shown"));
  band_->setEnabled(false);
  bar->addWidget(mode_);
  bar->addWidget(new QLabel(tr("Observation")));
  bar->addWidget(band_, 1);
  layout->addLayout(bar);
  view_ = new ImageView;
  layout->addWidget(view_, 1);
  connect(mode_, &QComboBox::currentIndexChanged, this, &GapsPage::update);
  connect(band_, &QSlider::valueChanged, this, &GapsPage::update);
  connect(doc_, &Document::loaded, this, [this] {
    if (const auto cube = doc_->cube()) band_->setRange(0, static_cast<int>(cube->dim(0)) - 1);
    update();
  });
}

void GapsPage::show(bool mask, int band) {
  mode_->setCurrentIndex(mask ? 1 : 0);
  band_->setValue(band);
  update();
}

bool GapsPage::showsMask() const { return mode_->currentIndex() == 1; }
int GapsPage::band() const { return band_->value(); }

void GapsPage::update() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const int H = static_cast<int>(m->height), W = static_cast<int>(m->width);
  const bool band = showsMask();
  band_->setEnabled(band);
  std::vector<double> v(m->pixels());
  MapStyle style;
  style.scale.map = Colormap::Viridis;
  const QString file = QFileInfo(doc_->cubeName()).fileName();
  if (!band) {
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = m->n_valid[p];
    style.scale.hi = static_cast<double>(m->n);
    style.integers = true;
    style.title = tr("%1 — valid observations per pixel (of %2)").arg(file).arg(m->n);
  } else {
    const auto i = static_cast<std::size_t>(band_->value());
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = m->valid(p, i);
    style.categories = {{0.0, tr("missing")}, {1.0, tr("valid")}};
    const auto& pairs = doc_->pairs();
    style.title = i < pairs.size() ? tr("%1 — observation %2 (%3_%4): valid or missing")
                                         .arg(file)
                                         .arg(i)
                                         .arg(QString::fromStdString(pairs[i].first), QString::fromStdString(pairs[i].second))
                                   : tr("%1 — observation %2: valid or missing").arg(file).arg(i);
  }
  view_->setImage(std::move(v), H, W, style);
}

}  // namespace cubesolve::ui
