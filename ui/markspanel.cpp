#include "markspanel.hpp"

#include "document.hpp"
#include "figure.hpp"

#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QPixmap>
#include <QPushButton>
#include <QSpinBox>
#include <QTreeWidget>
#include <QVBoxLayout>

namespace cubesolve::ui {

namespace {
enum Kind { Point = 1, Profile, Reference, ReferenceArea };  // an item's kind (its type), its index in the document (its data)
constexpr int kIndex = Qt::UserRole;

/// Whether the Remove button removes `item`: a point, a profile or the reference area.
bool removable(const QTreeWidgetItem* item) { return item && item->parent() && item->type() != Reference; }

QIcon swatch(const QColor& color) {
  QPixmap p(12, 12);
  p.fill(color);
  return QIcon(p);
}
}  // namespace

MarksPanel::MarksPanel(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  tree_ = new QTreeWidget;
  tree_->setObjectName("marks");
  tree_->setHeaderHidden(true);
  tree_->setRootIsDecorated(false);
  tree_->setToolTip(tr("The points pinned, the profiles drawn and the reference, on every map: the box shows or hides one, "
                       "a double click renames it, Delete removes it; a click on a point selects it"));
  tree_->installEventFilter(this);
  layout->addWidget(tree_, 1);
  auto* draw = new QPushButton(tr("Draw &profile"));
  draw->setObjectName("draw-profile");
  draw->setToolTip(tr("Click points on the result map; a double click or Enter ends the line, Esc cancels it"));
  auto* area = new QPushButton(tr("Reference &area"));
  area->setObjectName("draw-reference-area");
  area->setToolTip(tr("Press at one corner of an area on the result map and release at the other: the mean of its values is "
                      "subtracted from every map and time series of values"));
  remove_ = new QPushButton(tr("Remove"));
  remove_->setToolTip(tr("Remove the point or profile chosen (Delete)"));
  auto* buttons = new QGridLayout;  // (two a row: the panel is no wider than the data panel it sits beside)
  buttons->addWidget(draw, 0, 0);
  buttons->addWidget(remove_, 0, 1);
  buttons->addWidget(area, 1, 0, 1, 2);
  layout->addLayout(buttons);
  band_ = new QSpinBox;
  band_->setObjectName("profile-band");
  band_->setRange(1, 101);
  band_->setSingleStep(2);
  band_->setSuffix(tr(" px"));
  band_->setToolTip(tr("How many pixels across a profile its values are averaged over, with ±1 std shown (1: the line's own pixels)"));
  auto* across = new QHBoxLayout;
  across->addWidget(new QLabel(tr("Profile width")));
  across->addWidget(band_, 1);
  layout->addLayout(across);
  layout->addLayout(scopeRow());
  connect(draw, &QPushButton::clicked, this, &MarksPanel::drawProfile);
  connect(area, &QPushButton::clicked, this, &MarksPanel::drawReferenceArea);
  connect(remove_, &QPushButton::clicked, this, &MarksPanel::removeCurrent);
  connect(band_, &QSpinBox::valueChanged, doc_, &Document::setProfileBand);
  connect(tree_, &QTreeWidget::itemChanged, this, &MarksPanel::changed);
  connect(tree_, &QTreeWidget::currentItemChanged, this, [this](QTreeWidgetItem* item) { remove_->setEnabled(removable(item)); });
  connect(tree_, &QTreeWidget::itemClicked, this, [this](QTreeWidgetItem* item) {
    if (item->type() == Point) {
      const auto [row, col] = doc_->pins()[item->data(0, kIndex).toULongLong()];
      doc_->selectPixel(row, col);
    }
  });
  for (auto signal : {&Document::loaded, &Document::selectionChanged, &Document::profilesChanged, &Document::unitChanged})
    connect(doc_, signal, this, &MarksPanel::refill);
  refill();
}

QLayout* MarksPanel::scopeRow() {
  scope_ = new QComboBox;
  scope_->setObjectName("reference-scope");
  scope_->addItem(tr("every view"), static_cast<int>(Document::AreaScope::All));
  scope_->addItem(tr("maps and profiles"), static_cast<int>(Document::AreaScope::Maps));
  scope_->addItem(tr("time series"), static_cast<int>(Document::AreaScope::Series));
  scope_->setToolTip(tr("Which views the reference area's mean is subtracted from: the maps (with their profiles and exports), "
                        "the time series (the inspector's charts and the pins' CSV), or both"));
  connect(scope_, &QComboBox::activated, this,
          [this] { doc_->setReferenceScope(static_cast<Document::AreaScope>(scope_->currentData().toInt())); });
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Area applies to")));
  row->addWidget(scope_, 1);
  return row;
}

void MarksPanel::refill() {
  if (editing_) return;  // (the item edited already shows what the document now holds)
  const QSignalBlocker block(tree_);
  const QTreeWidgetItem* current = tree_->currentItem();
  const int current_type = current ? current->type() : 0;
  const qulonglong current_index = current ? current->data(0, kIndex).toULongLong() : 0;
  tree_->clear();
  auto group = [this](const QString& title) {
    auto* g = new QTreeWidgetItem(tree_, QStringList{title});
    g->setFlags(Qt::ItemIsEnabled);
    QFont bold = g->font(0);
    bold.setBold(true);
    g->setFont(0, bold);
    return g;
  };
  auto add = [&](QTreeWidgetItem* parent, Kind kind, std::size_t k, const QString& name, const QColor& color, bool shown, bool editable) {
    auto* item = new QTreeWidgetItem(parent, QStringList{name}, kind);
    item->setData(0, kIndex, static_cast<qulonglong>(k));
    item->setIcon(0, swatch(color));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsUserCheckable | (editable ? Qt::ItemIsEditable : Qt::NoItemFlags));
    item->setCheckState(0, shown ? Qt::Checked : Qt::Unchecked);
    if (kind == current_type && k == current_index) tree_->setCurrentItem(item);
  };
  auto* points = group(tr("Points"));
  for (std::size_t k = 0; k < doc_->pins().size(); ++k) add(points, Point, k, doc_->pinName(k), pin_color(k), doc_->pinShown(k), true);
  auto* profiles = group(tr("Profiles"));
  for (std::size_t k = 0; k < doc_->profiles().size(); ++k)
    add(profiles, Profile, k, doc_->profiles()[k].name, pin_color(k), doc_->profiles()[k].shown, true);
  const auto [row, col] = doc_->reference();
  const auto& area = doc_->referenceArea();
  QTreeWidgetItem* reference = row >= 0 || area ? group(tr("Reference")) : nullptr;
  if (row >= 0) {
    const int radius = static_cast<int>(doc_->stackOptions().ref_radius);
    const QString what = radius > 0 ? tr("mean of %1 × %1 pixels about (%2, %3)").arg(2 * radius + 1).arg(row).arg(col)
                                    : tr("pixel (%1, %2)").arg(row).arg(col);
    add(reference, Reference, 0, what, Qt::white, doc_->referenceShown(), false);
  }
  if (area)
    add(reference, ReferenceArea, 0, tr("area: rows %1–%2, columns %3–%4").arg((*area)[0]).arg((*area)[2]).arg((*area)[1]).arg((*area)[3]), Qt::white,
        doc_->referenceShown(), false);
  tree_->expandAll();
  remove_->setEnabled(removable(tree_->currentItem()));
  const QSignalBlocker block_band(band_);
  band_->setValue(doc_->profileBand());
  scope_->setCurrentIndex(scope_->findData(static_cast<int>(doc_->referenceScope())));
  scope_->setEnabled(area.has_value());
}

void MarksPanel::changed(QTreeWidgetItem* item) {
  const std::size_t k = item->data(0, kIndex).toULongLong();
  const bool shown = item->checkState(0) == Qt::Checked;
  editing_ = true;
  switch (item->type()) {
    case Point:
      doc_->setPinShown(k, shown);
      doc_->setPinName(k, item->text(0));
      break;
    case Profile:
      doc_->setProfileShown(k, shown);
      doc_->setProfileName(k, item->text(0));
      break;
    case Reference:
    case ReferenceArea: doc_->setReferenceShown(shown); break;
    default: break;
  }
  editing_ = false;
  if (item->type() == Profile) {  // (an empty name is refused)
    const QSignalBlocker block(tree_);
    item->setText(0, doc_->profiles()[k].name);
  }
}

void MarksPanel::removeCurrent() {
  const QTreeWidgetItem* item = tree_->currentItem();
  if (!item) return;
  const std::size_t k = item->data(0, kIndex).toULongLong();
  if (item->type() == Point) doc_->removePin(k);
  else if (item->type() == Profile) doc_->removeProfile(k);
  else if (item->type() == ReferenceArea) doc_->setReferenceArea(std::nullopt);
}

bool MarksPanel::eventFilter(QObject* watched, QEvent* event) {
  if (watched == tree_ && event->type() == QEvent::KeyPress && tree_->currentItem() && !tree_->isPersistentEditorOpen(tree_->currentItem())) {
    const int key = static_cast<QKeyEvent*>(event)->key();
    if (key == Qt::Key_Delete || key == Qt::Key_Backspace) {
      removeCurrent();
      return true;
    }
  }
  return QWidget::eventFilter(watched, event);
}

}  // namespace cubesolve::ui
