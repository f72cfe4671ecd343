#pragma once
// The marks panel: the points pinned, the profiles drawn and the stack's
// reference (pixel and area), listed in one place, each shown or hidden (its box), renamed
// (double click), removed (Delete, or the button); a profile is drawn from
// here and its band across set, and the views the reference area applies to
// chosen.

#include <QWidget>

class QComboBox;
class QPushButton;
class QSpinBox;
class QTreeWidget;
class QTreeWidgetItem;

namespace cubesolve::ui {

class Document;

class MarksPanel : public QWidget {
  Q_OBJECT
public:
  explicit MarksPanel(Document* doc, QWidget* parent = nullptr);

  QTreeWidget* tree() const { return tree_; }

signals:
  /// "Draw profile" or "Reference area" was asked for.
  void drawProfile();
  void drawReferenceArea();

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

private:
  void refill();
  void changed(QTreeWidgetItem* item);
  void removeCurrent();
  /// The row that sets which views the reference area applies to.
  QLayout* scopeRow();

  Document* doc_;
  QTreeWidget* tree_ = nullptr;
  QPushButton* remove_ = nullptr;
  QSpinBox* band_ = nullptr;
  QComboBox* scope_ = nullptr;  // the views the reference area applies to
  bool editing_ = false;  // an item's change is being applied
};

}  // namespace cubesolve::ui
