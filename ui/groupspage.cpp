#include "groupspage.hpp"

#include "chartview.hpp"
#include "document.hpp"

#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QVBoxLayout>

namespace cubesolve::ui {

GroupsPage::GroupsPage(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  label_ = new QLabel;
  label_->setWordWrap(true);
  layout->addWidget(label_);
  chart_ = new ChartView;
  layout->addWidget(chart_, 1);
  clear_ = new QPushButton(tr("Clear highlight"));
  clear_->setToolTip(tr("Remove the highlight of the selected bar's pixels from the gaps map"));
  clear_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(clear_);
  layout->addLayout(buttons);
  // A click on the selected bar, or beside the bars, clears the highlight.
  connect(chart_, &ChartView::barClicked, this, [this](int bin) { selectBin(bin == selected_ ? -1 : bin); });
  connect(clear_, &QPushButton::clicked, this, [this] { selectBin(-1); });
  connect(doc_, &Document::loaded, this, &GroupsPage::update);
}

void GroupsPage::update() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  QStringList labels;
  std::vector<double> counts;
  const auto bins = m->group_histogram();
  // Bins 1, 2-3, 4-7, ...: labelled by their range while the labels fit,
  // by their lower end beyond.
  for (const auto& b : bins) {
    labels << (b.hi - 1 == b.lo || bins.size() > 8 ? QString::number(b.lo) : QString("%1–%2").arg(b.lo).arg(b.hi - 1));
    counts.push_back(static_cast<double>(b.groups));
  }
  chart_->setBars(labels, counts,
                  bins.size() > 8 ? tr("pixels sharing one mask (bins from 1, 2, 4, 8, … pixels)") : tr("pixels sharing one mask"),
                  tr("distinct masks"), true);
  selectBin(-1);
  const std::size_t P = m->pixels();
  label_->setText(tr("%1 distinct masks over %2 pixels; %3 % of the pixels are in groups of 16 or more. "
                     "Click a bar to highlight its pixels on the gaps map; click it again to clear.")
                      .arg(m->distinct_masks())
                      .arg(P)
                      .arg(P ? 100.0 * m->pixels_in_groups_of_at_least(16) / P : 0.0, 0, 'f', 1));
}

void GroupsPage::selectBin(int bin) {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const auto bins = m->group_histogram();
  if (bin >= static_cast<int>(bins.size())) bin = -1;
  selected_ = bin;
  chart_->setSelectedBar(bin);
  clear_->setEnabled(bin >= 0);
  if (bin < 0) return emit highlighted({});
  const auto& b = bins[static_cast<std::size_t>(bin)];
  emit highlighted(m->pixels_in(b));
  emit message(tr("%1 pixels in groups of %2 to %3 pixels highlighted on the gaps map").arg(b.pixels).arg(b.lo).arg(b.hi - 1), 5000);
}

}  // namespace cubesolve::ui
