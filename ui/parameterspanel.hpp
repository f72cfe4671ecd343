#pragma once
// The data and parameters panel: what is loaded (cube, design, weights, and
// what keeps them from being solved), and the solve parameters. It shows the
// document's parameters and asks the document to change them; every field
// takes effect as it is edited, numbers as scientists write them (1e-8,
// 2.5E-3), a value that does not parse is marked at its field with the reason
// and solves nothing, and a result solved with other parameters than those
// shown is marked stale.

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace cubesolve::ui {

class Document;
class NumberSpinBox;

class ParametersPanel : public QWidget {
  Q_OBJECT
public:
  explicit ParametersPanel(Document* doc, QWidget* parent = nullptr);

  /// What keeps the loaded data from being solved (a design of another
  /// number of rows, none); empty when nothing.
  const QString& notice() const { return notice_; }

signals:
  /// A line for the status bar.
  void message(const QString& text, int timeout_ms);

private:
  QGroupBox* buildParameters();
  /// A MintPy stack's reading: formulation, weights, looks, mask (the CLI's options).
  QGroupBox* buildStack();
  void stackEdited();
  void showStack();
  void showParameters();
  void edited();
  void onLoaded();
  void updateData();

  Document* doc_;
  QString notice_;
  QLabel* data_ = nullptr;
  QLabel* stale_ = nullptr;
  QComboBox* device_ = nullptr;
  QComboBox* precision_ = nullptr;  // only where a GPU is usable
  QLineEdit* rcond_ = nullptr;
  QSpinBox* min_valid_ = nullptr;
  NumberSpinBox* ridge_ = nullptr;
  QSpinBox* memory_ = nullptr;
  QCheckBox* use_weights_ = nullptr;
  QCheckBox* std_errors_ = nullptr;
  QComboBox* loss_ = nullptr;
  QCheckBox* auto_solve_ = nullptr;
  QGroupBox* stack_ = nullptr;
  QComboBox* formulation_ = nullptr;
  QComboBox* unit_ = nullptr;
  QComboBox* weight_ = nullptr;
  QDoubleSpinBox* looks_ = nullptr;
  QDoubleSpinBox* ref_radius_ = nullptr;  // a reference area's half-width (0: the pixel)
  QComboBox* mask_ = nullptr;
  QDoubleSpinBox* mask_threshold_ = nullptr;
};

}  // namespace cubesolve::ui
