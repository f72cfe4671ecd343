#include "parameterspanel.hpp"

#include "document.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/io/files.hpp>

#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <tuple>

#include <utility>

#include <cmath>

namespace cubesolve::ui {

namespace {

QString fmt(double v) { return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("—"); }

/// A number as typed (1e-8, 2.5E-3, .5), or nothing.
std::optional<double> parse_number(const QString& text) {
  bool ok = false;
  const double v = QLocale::c().toDouble(text.trimmed(), &ok);
  return ok && std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

/// Marks a field whose text does not parse (or clears the mark).
void mark(QWidget* field, bool bad) {
  QPalette p = field->palette();
  p.setColor(QPalette::Base, bad ? QColor(0xff, 0xd8, 0xdc) : QApplication::palette(field).color(QPalette::Base));
  field->setPalette(p);
}

/// The shortest text that reads back as `v`.
QString shortest(double v) { return QString::number(v, 'g', QLocale::FloatingPointShortest); }

}  // namespace

/// A number field that takes what scientists type (1e-8, 2.5E-3) and shows
/// the shortest exact form; the arrows step by decades (0 ↔ 1e-6).
class NumberSpinBox : public QDoubleSpinBox {
public:
  NumberSpinBox() { setDecimals(323); }  // no rounding: the value is what was typed
  using QDoubleSpinBox::lineEdit;
  void stepBy(int steps) override {
    double v = value();
    for (int i = 0; i < std::abs(steps); ++i) {
      if (steps > 0) v = v <= 0 ? 1e-6 : v * 10;
      else v = v <= 1e-6 * (1 + 1e-9) ? 0 : v / 10;
    }
    setValue(v);
  }
  QString textFromValue(double v) const override { return shortest(v); }
  double valueFromText(const QString& text) const override { return parse_number(text).value_or(value()); }
  QValidator::State validate(QString& text, int&) const override {
    if (const auto v = parse_number(text)) return *v >= minimum() && *v <= maximum() ? QValidator::Acceptable : QValidator::Intermediate;
    static const QRegularExpression partial(R"(^\s*\+?(\d*\.?\d*)([eE][+-]?\d*)?\s*$)");  // on its way to a number
    return partial.match(text).hasMatch() ? QValidator::Intermediate : QValidator::Invalid;
  }
  QSize sizeHint() const override { return QDoubleSpinBox::sizeHint().boundedTo(QSize(120, 1000)); }
  QSize minimumSizeHint() const override { return QDoubleSpinBox::minimumSizeHint().boundedTo(QSize(90, 1000)); }
};

ParametersPanel::ParametersPanel(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* pl = new QVBoxLayout(this);
  data_ = new QLabel;
  data_->setObjectName("data-summary");
  data_->setWordWrap(true);
  data_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* data_box = new QGroupBox(tr("Data"));
  (new QVBoxLayout(data_box))->addWidget(data_);
  pl->addWidget(data_box);
  pl->addWidget(buildParameters());
  pl->addWidget(buildStack());
  pl->addStretch(1);

  connect(rcond_, &QLineEdit::textEdited, this, &ParametersPanel::edited);
  connect(min_valid_, &QSpinBox::valueChanged, this, &ParametersPanel::edited);
  connect(memory_, &QSpinBox::valueChanged, this, &ParametersPanel::edited);
  connect(ridge_, &QDoubleSpinBox::valueChanged, this, &ParametersPanel::edited);
  // A field left with a value on its way to a number (1e-) says so.
  connect(ridge_->lineEdit(), &QLineEdit::textEdited, this, &ParametersPanel::edited);
  connect(use_weights_, &QCheckBox::toggled, this, &ParametersPanel::edited);
  connect(auto_solve_, &QCheckBox::toggled, this, &ParametersPanel::edited);
  connect(std_errors_, &QCheckBox::toggled, this, &ParametersPanel::edited);
  connect(loss_, &QComboBox::currentIndexChanged, this, &ParametersPanel::edited);
  connect(device_, &QComboBox::currentIndexChanged, this, &ParametersPanel::edited);
  connect(doc_, &Document::parametersChanged, this, &ParametersPanel::showParameters);
  connect(doc_, &Document::loaded, this, &ParametersPanel::onLoaded);
  connect(doc_, &Document::failed, this, &ParametersPanel::showStack);  // what holds after a read that failed
  for (auto signal : {&Document::solved, &Document::solveStarted, &Document::solveCancelled})
    connect(doc_, signal, this, &ParametersPanel::showParameters);
  showParameters();
  updateData();
}

QGroupBox* ParametersPanel::buildParameters() {
  auto* params = new QGroupBox(tr("Parameters"));
  auto* form = new QFormLayout(params);
  device_ = new QComboBox;
  device_->setObjectName("device");
  device_->setToolTip(tr("Where the solve runs: Auto takes a CUDA GPU when one is usable"));
  device_->addItem(tr("Auto"), "auto");
  device_->addItem(tr("CPU"), "cpu");
  form->addRow(tr("Device"), device_);
  if (resolve_device(Device::Auto) == Device::Cuda) {
    device_->addItem(tr("GPU (CUDA)"), "cuda");
    precision_ = new QComboBox;
    precision_->setObjectName("device-precision");
    precision_->setToolTip(tr("float32 systems refined against float64 residuals, or float64 throughout"));
    precision_->addItem(tr("float32, refined once"), false);
    precision_->addItem(tr("float64"), true);
    form->addRow(tr("GPU precision"), precision_);
    connect(precision_, &QComboBox::currentIndexChanged, this, &ParametersPanel::edited);
  }
  rcond_ = new QLineEdit;
  rcond_->setObjectName("rcond");
  rcond_->setPlaceholderText(tr("default: eps·max(|V|, M)"));
  rcond_->setToolTip(tr("Singular values at most rcond × the largest count as zero (as LAPACK's gelsd); empty: the default"));
  form->addRow(tr("rcond"), rcond_);
  min_valid_ = new QSpinBox;
  min_valid_->setObjectName("min-valid");
  min_valid_->setRange(1, 1000000);
  min_valid_->setToolTip(tr("Pixels with fewer valid observations are flagged, not solved"));
  form->addRow(tr("Minimum valid rows"), min_valid_);
  ridge_ = new NumberSpinBox;
  ridge_->setObjectName("ridge");
  ridge_->setRange(0, 1e9);
  ridge_->setToolTip(tr("Tikhonov weight: minimises |A x − y|² + λ|x|². Type 1e-8 or 2.5E-3; the arrows step by factors of ten."));
  form->addRow(tr("Ridge λ"), ridge_);
  memory_ = new QSpinBox;
  memory_->setObjectName("memory");
  memory_->setRange(16, 1 << 20);
  memory_->setSuffix(tr(" MB"));
  memory_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);  // (its largest value does not widen the panel)
  memory_->setToolTip(tr("The memory a cube kept on disk (a .npy) is read and solved in, a block of rows at a time (--memory, "
                         "as the CLI's): a cube larger than memory opens and solves like a small one, only slower"));
  form->addRow(tr("Memory budget"), memory_);
  use_weights_ = new QCheckBox(tr("Use weights"));
  use_weights_->setObjectName("use-weights");
  use_weights_->setToolTip(tr("Weigh each observation by the weights file (0: left out)"));
  use_weights_->setEnabled(false);
  form->addRow(use_weights_);
  loss_ = new QComboBox;
  loss_->setObjectName("loss");
  for (const auto& [label, loss, tip] :
       {std::tuple{tr("L2"), Loss::L2, tr("Least squares")}, std::tuple{tr("L1"), Loss::L1, tr("Least absolute deviations (exact)")},
        std::tuple{tr("Huber"), Loss::Huber, tr("Huber's, with δ per pixel")}}) {
    loss_->addItem(label, int(loss));
    loss_->setItemData(loss_->count() - 1, tip, Qt::ToolTipRole);
  }
  loss_->setToolTip(tr("The loss each pixel is fitted under on its own valid rows: L1 and Huber resist outliers "
                       "(unwrapping errors, clouds missed by the mask). Huber's δ: 1.345 × 1.4826 × the MAD of the pixel's "
                       "least-squares residuals (--loss)"));
  form->addRow(tr("Loss"), loss_);
  std_errors_ = new QCheckBox(tr("Standard errors"));
  std_errors_->setObjectName("std-errors");
  std_errors_->setToolTip(tr("Also each unknown's standard error on the pixel's own valid rows, sqrt(diag(s²·(A_Vᵀ W A_V)⁺)) "
                             "with s² = rss / (valid rows − rank): a layer of the result (--stderr)"));
  form->addRow(std_errors_);
  auto_solve_ = new QCheckBox(tr("Re-solve on change"));
  auto_solve_->setToolTip(tr("Solve again as soon as a parameter changes"));
  auto_solve_->setObjectName("auto-solve");
  form->addRow(auto_solve_);
  auto* solve = new QPushButton(tr("Solve"));
  solve->setToolTip(tr("Solve with the parameters shown (F5)"));
  form->addRow(solve);
  stale_ = new QLabel;
  stale_->setObjectName("stale");
  stale_->setWordWrap(true);
  stale_->setStyleSheet("color:#b00020");
  form->addRow(stale_);
  connect(solve, &QPushButton::clicked, doc_, &Document::solve);
  return params;
}

QGroupBox* ParametersPanel::buildStack() {
  stack_ = new QGroupBox(tr("MintPy stack"));
  stack_->setObjectName("stack-options");
  auto* form = new QFormLayout(stack_);
  formulation_ = new QComboBox;
  formulation_->setObjectName("formulation");
  formulation_->addItem(tr("phase"), "phase");
  formulation_->addItem(tr("velocity"), "velocity");
  formulation_->setToolTip(tr("Minimum-norm phase, or minimum-norm velocity between dates (MintPy's default); "
                              "the time series either way (--formulation)"));
  form->addRow(tr("Formulation"), formulation_);
  unit_ = new QComboBox;
  unit_->setObjectName("unit");
  for (const auto& [label, value] : {std::pair{tr("mm (line of sight)"), "mm"}, std::pair{tr("cm (line of sight)"), "cm"},
                                     std::pair{tr("m (line of sight)"), "m"}, std::pair{tr("radian (phase)"), "radian"}})
    unit_->addItem(label, value);
  unit_->setToolTip(tr("How the phase is shown: line-of-sight displacement from the stack's WAVELENGTH, by MintPy's sign "
                       "(−λ/4π · phase), or the phase itself (--unit)"));
  form->addRow(tr("Unit"), unit_);
  connect(unit_, &QComboBox::currentIndexChanged, this, [this] { doc_->setUnit(unit_->currentData().toString()); });
  connect(doc_, &Document::unitChanged, this, &ParametersPanel::showStack);
  weight_ = new QComboBox;
  weight_->setObjectName("weight-func");
  for (const auto& [label, value] : {std::pair{tr("none"), "no"}, std::pair{tr("inverse variance"), "var"},
                                     std::pair{tr("Fisher information"), "fim"}, std::pair{tr("coherence"), "coh"}})
    weight_->addItem(label, value);
  weight_->setToolTip(tr("Weights of the interferograms from their coherence, as MintPy's (--weight-func)"));
  form->addRow(tr("Weights"), weight_);
  looks_ = new QDoubleSpinBox;
  looks_->setObjectName("looks");
  looks_->setRange(0, 1e6);
  looks_->setDecimals(1);
  looks_->setSpecialValueText(tr("the file's"));
  looks_->setToolTip(tr("Independent looks for the variance and Fisher weights; 0: the file's NCORRLOOKS (--looks)"));
  form->addRow(tr("Looks"), looks_);
  ref_radius_ = new QDoubleSpinBox;
  ref_radius_->setObjectName("ref-radius");
  ref_radius_->setRange(0, 1000);
  ref_radius_->setDecimals(0);
  ref_radius_->setSpecialValueText(tr("the pixel"));
  ref_radius_->setSuffix(tr(" px about it"));
  ref_radius_->setToolTip(tr("The reference: the reference pixel's value, or the mean of the valid values in the (2R + 1)² "
                             "pixels about it, subtracted from each interferogram (--ref-radius)"));
  form->addRow(tr("Reference area"), ref_radius_);
  mask_ = new QComboBox;
  mask_->setObjectName("mask-dataset");
  mask_->addItem(tr("none"), "");
  mask_->addItem(tr("connected components"), "connectComponent");
  mask_->addItem(tr("coherence"), "coherence");
  mask_->setToolTip(tr("Leave out per pixel the interferograms that this dataset marks (--mask-dataset)"));
  form->addRow(tr("Mask"), mask_);
  mask_threshold_ = new QDoubleSpinBox;
  mask_threshold_->setObjectName("mask-threshold");
  mask_threshold_->setRange(0, 1);
  mask_threshold_->setDecimals(3);
  mask_threshold_->setSingleStep(0.05);
  mask_threshold_->setToolTip(tr("With the coherence mask: coherence below this leaves the interferogram out (--mask-threshold)"));
  form->addRow(tr("Mask threshold"), mask_threshold_);
  for (QComboBox* c : {formulation_, weight_, mask_}) connect(c, &QComboBox::currentIndexChanged, this, &ParametersPanel::stackEdited);
  for (QDoubleSpinBox* d : {looks_, ref_radius_, mask_threshold_}) {
    d->setKeyboardTracking(false);  // a stack is read again: once the number is typed
    connect(d, &QDoubleSpinBox::valueChanged, this, &ParametersPanel::stackEdited);
  }
  showStack();
  return stack_;
}

void ParametersPanel::stackEdited() {
  InputOptions o = doc_->inputOptions();
  o.velocity = formulation_->currentData().toString() == "velocity";
  o.stack.weight = weight_->currentData().toString().toStdString();
  o.stack.looks = looks_->value() >= 1 ? looks_->value() : 0;
  o.stack.ref_radius = std::lround(ref_radius_->value());
  o.stack.mask = mask_->currentData().toString().toStdString();
  o.stack.mask_threshold = mask_threshold_->value();
  doc_->setInputOptions(o);
}

void ParametersPanel::showStack() {
  const InputOptions& o = doc_->inputOptions();
  const QSignalBlocker b1(formulation_), b2(weight_), b3(looks_), b4(mask_), b5(mask_threshold_), b6(unit_), b7(ref_radius_);
  const bool wavelength = doc_->hasWavelength();
  unit_->setCurrentIndex(wavelength ? std::max(0, unit_->findData(doc_->unit())) : unit_->findData("radian"));
  unit_->setEnabled(wavelength);
  if (!wavelength) unit_->setToolTip(tr("The stack has no WAVELENGTH attribute: its phase is shown in radians"));
  formulation_->setCurrentIndex(o.velocity ? 1 : 0);
  weight_->setCurrentIndex(std::max(0, weight_->findData(QString::fromStdString(o.stack.weight))));
  looks_->setValue(o.stack.looks);
  ref_radius_->setValue(static_cast<double>(o.stack.ref_radius));
  mask_->setCurrentIndex(std::max(0, mask_->findData(QString::fromStdString(o.stack.mask))));
  mask_threshold_->setValue(o.stack.mask_threshold);
  mask_threshold_->setEnabled(o.stack.mask == "coherence");
  stack_->setVisible(doc_->isStack());
}

void ParametersPanel::edited() {
  // What the fields show, parsed; a field that does not parse marks itself.
  SolveOptions o = doc_->options();
  QString error;
  const QString rcond = rcond_->text().trimmed();
  const std::optional<double> r = parse_number(rcond);
  if (rcond.isEmpty()) o.rcond = -1;
  else if (r && *r >= 0 && *r < 1) o.rcond = *r;
  else error = tr("rcond: expected a number from 0 to 1 (e.g. 1e-10) or nothing for the default, found “%1”").arg(rcond);
  mark(rcond_, !error.isEmpty());
  rcond_->setToolTip(error.isEmpty() ? tr("Singular values at most rcond × the largest count as zero (as LAPACK's gelsd); empty: the default")
                                     : error);
  int pos = 0;
  QString ridge = ridge_->cleanText();
  const bool ridge_ok = ridge_->validate(ridge, pos) == QValidator::Acceptable;
  if (!ridge_ok && error.isEmpty()) error = tr("ridge λ: expected a number from 0 to 1e9 (e.g. 1e-8), found “%1”").arg(ridge);
  mark(ridge_, !ridge_ok);
  o.ridge = ridge_ok ? ridge_->value() : o.ridge;
  o.min_valid = min_valid_->value();
  o.memory = static_cast<std::size_t>(memory_->value()) << 20;
  o.device = parse_device(device_->currentData().toString().toStdString());
  o.device_float64 = precision_ && precision_->currentData().toBool();
  o.loss = static_cast<Loss>(loss_->currentData().toInt());
  o.std_errors = std_errors_->isChecked() && o.loss == Loss::L2;  // (least squares' only)
  if (o.loss != Loss::L2 && o.ridge > 0 && error.isEmpty()) error = tr("ridge λ: expected 0 with a robust loss, found %1").arg(o.ridge);
  doc_->setAutoSolve(auto_solve_->isChecked());
  if (use_weights_->isEnabled()) doc_->setUseWeights(use_weights_->isChecked());  // (unticked while there are none)
  if (error.isEmpty()) doc_->setOptions(o);
  doc_->setParameterError(error);
}

void ParametersPanel::showParameters() {
  // The fields are set with their signals blocked: showing is no edit.
  const SolveOptions& o = doc_->options();
  const QSignalBlocker b1(min_valid_), b2(ridge_), b3(rcond_), b4(device_), b5(use_weights_), b6(auto_solve_), b8(std_errors_), b9(loss_),
      b10(memory_);
  min_valid_->setValue(o.min_valid);
  memory_->setValue(static_cast<int>(o.memory >> 20));
  if (doc_->parameterError().isEmpty()) {  // a field being corrected keeps what is typed
    if (ridge_->value() != o.ridge) ridge_->setValue(o.ridge);
    const std::optional<double> shown = parse_number(rcond_->text());
    if (o.rcond < 0 ? !rcond_->text().trimmed().isEmpty() : shown != o.rcond) rcond_->setText(o.rcond >= 0 ? shortest(o.rcond) : QString());
    mark(rcond_, false);
    mark(ridge_, false);
  }
  device_->setCurrentIndex(std::max(0, device_->findData(QString::fromUtf8(device_name(o.device)))));
  if (precision_) {
    const QSignalBlocker b7(precision_);
    precision_->setCurrentIndex(o.device_float64 ? 1 : 0);
  }
  use_weights_->setChecked(doc_->weights() && doc_->useWeights());
  auto_solve_->setChecked(doc_->autoSolve());
  std_errors_->setChecked(o.std_errors);
  std_errors_->setEnabled(o.loss == Loss::L2);
  loss_->setCurrentIndex(std::max(0, loss_->findData(int(o.loss))));
  QString stale;
  if (!doc_->parameterError().isEmpty()) stale = tr("Not solved: %1").arg(doc_->parameterError());
  else if (doc_->stale()) stale = doc_->solving() ? tr("Solving with these parameters; the result shown is of others.")
                                                  : tr("The result shown was solved with other parameters: Solve (F5) to update it.");
  stale_->setText(stale);
  stale_->setVisible(!stale.isEmpty());
}

void ParametersPanel::onLoaded() {
  const auto cube = doc_->cube();
  if (!cube) return;
  const int N = static_cast<int>(cube->dim(0));
  {
    const QSignalBlocker block(min_valid_);  // no more valid rows can be asked for than the cube has observations
    min_valid_->setMaximum(N);
  }
  min_valid_->setToolTip(tr("Pixels with fewer valid observations are flagged, not solved (1 to %1).").arg(N));
  if (doc_->options().min_valid > N) {
    SolveOptions o = doc_->options();
    o.min_valid = N;
    doc_->setOptions(o);
  }
  notice_.clear();
  if (const auto d = doc_->design()) {
    if (d->rows() != cube->dim(0))
      notice_ = tr("The design matrix %1 has %2 rows and the cube %3 observations: open or build a design of %3 rows.")
                    .arg(QFileInfo(doc_->designName()).fileName())
                    .arg(d->rows())
                    .arg(N);
  } else {
    notice_ = tr("Open or build a design matrix of %1 rows to solve.").arg(N);
  }
  if (!notice_.isEmpty() && doc_->design()) emit message(notice_, 15000);
  use_weights_->setEnabled(doc_->weights() != nullptr);
  showParameters();
  showStack();
  updateData();
}

void ParametersPanel::updateData() {
  QString text;
  const auto cube = doc_->cube();
  if (cube) {
    text += tr("<b>Cube</b> %1<br>shape %2, %3<br>").arg(doc_->cubeName().toHtmlEscaped(),
                                                      QString::fromStdString(shape_string(cube->shape())),
                                                      dtype_name(cube->dtype()));
    if (const MaskStats* m = doc_->masks())
      text += tr("missing %1 %<br>NaN %2, Inf %3<br>no-data pixels %4<br>")
                  .arg(100.0 * m->missing_fraction(), 0, 'f', 2)
                  .arg(m->nan_count)
                  .arg(m->inf_count)
                  .arg(m->valid_histogram()[0]);
    if (const auto& dates = doc_->bandDates(); !dates.empty())  // the times of a built design
      text += tr("band dates %1 to %2<br>").arg(iso_day(dates.front()), iso_day(dates.back()));
  } else {
    text += tr("No cube: File ▸ Open cube, or drop a .npy here.<br>");
  }
  if (const auto d = doc_->design())
    text += tr("<b>Design</b> %1<br>%2 × %3, rank %4, condition %5<br>")
                .arg(doc_->designName().toHtmlEscaped())
                .arg(d->rows())
                .arg(d->cols())
                .arg(d->rank())
                .arg(fmt(d->condition()));
  if (doc_->weights()) text += tr("<b>Weights</b> %1<br>").arg(doc_->weightsName().toHtmlEscaped());
  if (const auto [row, col] = doc_->reference(); row >= 0)
    text += tr("<b>Reference pixel</b> row %1, column %2 (marked □ on the maps)%3<br>")
                .arg(row)
                .arg(col)
                .arg(doc_->stackOptions().ref_radius > 0 ? tr(", the mean of the %1 × %1 pixels about it").arg(2 * doc_->stackOptions().ref_radius + 1)
                                                         : QString());
  if (doc_->unreferenced())
    text += tr("<br><span style='color:#b00020'>Unreferenced: the stack has no reference pixel; right-click a pixel to pick one.</span>");
  if (!notice_.isEmpty()) text += QString("<br><span style='color:#b00020'>%1</span>").arg(notice_.toHtmlEscaped());
  data_->setText(text);
}

}  // namespace cubesolve::ui
