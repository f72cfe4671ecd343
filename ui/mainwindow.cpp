#include "mainwindow.hpp"

#include "chartview.hpp"
#include "imageview.hpp"

#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/raster.hpp>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextEdit>
#include <QVBoxLayout>

#include <vtkVersion.h>

#include <cmath>

namespace cubesolve::ui {

namespace {
QString fmt(double v) { return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("—"); }
}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), doc_(new Document(this)) {
  setWindowTitle("CubeSolve");
  setAcceptDrops(true);
  resolve_timer_.setSingleShot(true);
  resolve_timer_.setInterval(300);
  connect(&resolve_timer_, &QTimer::timeout, this, [this] {
    if (doc_->cube() && doc_->design()) solve();
  });
  tabs_ = new QTabWidget;
  for (const auto& [view, page, title] :
       {std::tuple{View::Gaps, buildGapsPage(), tr("&Gaps")}, std::tuple{View::Groups, buildGroupsPage(), tr("G&roups")},
        std::tuple{View::Result, buildResultPage(), tr("&Result")},
        std::tuple{View::Inspector, buildInspectorPage(), tr("&Inspector")}}) {
    pages_[view] = page;
    tabs_->addTab(page, title);
  }
  setCentralWidget(tabs_);
  buildParametersDock();
  buildStatusBar();
  buildFileMenu();
  buildOtherMenus();
  connectDocument();
  restoreSettings();
  doc_->setOptions(options());
  resize(1280, 820);
}

MainWindow::~MainWindow() = default;

QWidget* MainWindow::buildGapsPage() {
  // The valid-count map, or one observation's mask.
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* bar = new QHBoxLayout;
  gaps_mode_ = new QComboBox;
  gaps_mode_->addItems({tr("Valid observations per pixel"), tr("Mask of one observation")});
  band_slider_ = new QSlider(Qt::Horizontal);
  band_slider_->setEnabled(false);
  bar->addWidget(gaps_mode_);
  bar->addWidget(new QLabel(tr("Observation")));
  bar->addWidget(band_slider_, 1);
  layout->addLayout(bar);
  gaps_ = new ImageView;
  layout->addWidget(gaps_, 1);
  connect(gaps_mode_, &QComboBox::currentIndexChanged, this, [this] { updateGaps(); });
  connect(band_slider_, &QSlider::valueChanged, this, [this] { updateGaps(); });
  return page;
}

QWidget* MainWindow::buildGroupsPage() {
  // The histogram of mask-group sizes.
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  groups_label_ = new QLabel;
  groups_label_->setWordWrap(true);
  layout->addWidget(groups_label_);
  groups_ = new ChartView;
  layout->addWidget(groups_, 1);
  connect(groups_, &ChartView::barClicked, this, &MainWindow::selectGroupBin);
  return page;
}

QWidget* MainWindow::buildResultPage() {
  // Channels, model bands, residual RMS, rank, status.
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* bar = new QHBoxLayout;
  layer_ = new QComboBox;
  layer_->addItems({tr("Solution x"), tr("Model A·x (gap-filled)"), tr("Residual RMS"), tr("Rank"), tr("Status")});
  channel_slider_ = new QSlider(Qt::Horizontal);
  channel_label_ = new QLabel;
  colormap_ = new QComboBox;
  colormap_->addItems({tr("Auto"), "viridis", tr("rdbu (diverging)")});
  auto_range_ = new QCheckBox(tr("Auto range"));
  auto_range_->setChecked(true);
  range_lo_ = new QDoubleSpinBox;
  range_hi_ = new QDoubleSpinBox;
  for (auto* s : {range_lo_, range_hi_}) {
    s->setRange(-1e12, 1e12);
    s->setDecimals(4);
    s->setEnabled(false);
  }
  for (QWidget* w : std::initializer_list<QWidget*>{layer_, channel_label_}) bar->addWidget(w);
  bar->addWidget(channel_slider_, 1);
  for (QWidget* w : std::initializer_list<QWidget*>{colormap_, auto_range_, range_lo_, range_hi_}) bar->addWidget(w);
  layout->addLayout(bar);
  result_view_ = new ImageView;
  layout->addWidget(result_view_, 1);
  connect(layer_, &QComboBox::currentIndexChanged, this, [this] { updateResult(); });
  connect(channel_slider_, &QSlider::valueChanged, this, [this] { updateResult(); });
  connect(colormap_, &QComboBox::currentIndexChanged, this, [this] { updateResult(); });
  connect(auto_range_, &QCheckBox::toggled, this, [this](bool on) {
    range_lo_->setEnabled(!on);
    range_hi_->setEnabled(!on);
    updateResult();
  });
  connect(range_lo_, &QDoubleSpinBox::valueChanged, this, [this] { updateResult(); });
  connect(range_hi_, &QDoubleSpinBox::valueChanged, this, [this] { updateResult(); });
  for (ImageView* v : {gaps_, result_view_}) {
    connect(v, &ImageView::pixelClicked, this, &MainWindow::selectPixel);
    connect(v, &ImageView::pixelHovered, this, [this](int row, int col, double value) {
      statusBar()->showMessage(tr("row %1, column %2: %3").arg(row).arg(col).arg(fmt(value)), 3000);
    });
  }
  return page;
}

QWidget* MainWindow::buildInspectorPage() {
  // One pixel's observations and fit.
  auto* page = new QWidget;
  auto* layout = new QHBoxLayout(page);
  inspector_ = new ChartView;
  inspector_text_ = new QTextEdit;
  inspector_text_->setReadOnly(true);
  inspector_text_->setMaximumWidth(260);
  layout->addWidget(inspector_, 1);
  layout->addWidget(inspector_text_);
  return page;
}

void MainWindow::buildParametersDock() {
  auto* dock = new QDockWidget(tr("Data and parameters"), this);
  dock->setObjectName("data-dock");
  auto* panel = new QWidget;
  auto* pl = new QVBoxLayout(panel);
  data_label_ = new QLabel;
  data_label_->setWordWrap(true);
  data_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* data_box = new QGroupBox(tr("Data"));
  (new QVBoxLayout(data_box))->addWidget(data_label_);
  pl->addWidget(data_box);
  auto* params = new QGroupBox(tr("Parameters"));
  auto* form = new QFormLayout(params);
  device_ = new QComboBox;
  device_->setObjectName("device");
  device_->addItem(tr("Auto"), "auto");
  device_->addItem(tr("CPU"), "cpu");
  form->addRow(tr("Device"), device_);
  if (resolve_device(Device::Auto) == Device::Cuda) {
    device_->addItem(tr("GPU (CUDA)"), "cuda");
    device_precision_ = new QComboBox;
    device_precision_->setObjectName("device-precision");
    device_precision_->addItem(tr("float32, refined once"), false);
    device_precision_->addItem(tr("float64"), true);
    form->addRow(tr("GPU precision"), device_precision_);
    connect(device_precision_, &QComboBox::currentIndexChanged, this, &MainWindow::parametersChanged);
  }
  rcond_ = new QLineEdit;
  rcond_->setPlaceholderText(tr("default: eps·max(|V|, M)"));
  form->addRow(tr("rcond"), rcond_);
  min_valid_ = new QSpinBox;
  min_valid_->setRange(1, 1000000);
  form->addRow(tr("Minimum valid rows"), min_valid_);
  ridge_ = new QDoubleSpinBox;
  ridge_->setRange(0, 1e9);
  ridge_->setDecimals(6);
  form->addRow(tr("Ridge λ"), ridge_);
  use_weights_ = new QCheckBox(tr("Use weights"));
  use_weights_->setEnabled(false);
  form->addRow(use_weights_);
  auto_solve_ = new QCheckBox(tr("Re-solve when a parameter changes"));
  form->addRow(auto_solve_);
  auto* solve_button = new QPushButton(tr("Solve"));
  form->addRow(solve_button);
  pl->addWidget(params);
  pl->addStretch(1);
  dock->setWidget(panel);
  addDockWidget(Qt::LeftDockWidgetArea, dock);
  connect(solve_button, &QPushButton::clicked, this, &MainWindow::solve);
  connect(rcond_, &QLineEdit::editingFinished, this, &MainWindow::parametersChanged);
  connect(min_valid_, &QSpinBox::valueChanged, this, &MainWindow::parametersChanged);
  connect(ridge_, &QDoubleSpinBox::valueChanged, this, &MainWindow::parametersChanged);
  connect(use_weights_, &QCheckBox::toggled, this, &MainWindow::parametersChanged);
  connect(device_, &QComboBox::currentIndexChanged, this, &MainWindow::parametersChanged);
}

void MainWindow::buildStatusBar() {
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  progress_->hide();
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->hide();
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancelSolve);
  status_ = new QLabel;
  statusBar()->addPermanentWidget(status_);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
}

void MainWindow::buildFileMenu() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &cube…"), QKeySequence::Open, this, [this] {
    const QString p = QFileDialog::getOpenFileName(
        this, tr("Open cube (N, H, W)"), {},
        raster_support() ? tr("Cubes (*.npy *.tif *.tiff *.img *.hdr *.nc *.h5 *.he5 *.vrt);;All files (*)")
                         : tr("NumPy arrays (*.npy)"));
    if (!p.isEmpty()) openCube(p);
  });
  file->addAction(tr("Open &design matrix…"), QKeySequence(tr("Ctrl+D")), this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open design matrix (N, M)"), {}, tr("Arrays (*.npy *.csv *.txt)"));
    if (!p.isEmpty()) openDesign(p);
  });
  file->addAction(tr("Open &weights…"), this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open weights (N, H, W)"), {}, tr("NumPy arrays (*.npy)"));
    if (!p.isEmpty()) openWeights(p);
  });
  auto* build = file->addMenu(tr("&Build design matrix"));
  build->addAction(tr("SBAS from interferogram pairs…"), this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Pairs (YYYYMMDD_YYYYMMDD per line)"), {}, tr("Text (*.txt *.list);;All files (*)"));
    if (!p.isEmpty()) buildDesign("sbas", p, {});
  });
  for (const auto& [label, spec] : {std::pair{tr("Polynomial in time…"), QString("poly:%1")},
                                    std::pair{tr("Trend and annual harmonics…"), QString("harmonic:%1")}}) {
    build->addAction(label, this, [this, spec = spec, label = label] {
      bool ok = false;
      const int k = QInputDialog::getInt(this, label, spec.startsWith("poly") ? tr("Degree") : tr("Harmonics"), 1, 0, 16, 1, &ok);
      if (!ok) return;
      const QString times = QFileDialog::getOpenFileName(
          this, tr("Times, one per band (numbers or YYYYMMDD); cancel for band index"), {}, tr("Text (*.txt);;All files (*)"));
      buildDesign(spec.arg(k), {}, times);
    });
  }
  auto* demos = file->addMenu(tr("Open d&emo"));
  demos->addAction(tr("InSAR stack"), this, [this] { openDemo("insar"); });
  demos->addAction(tr("Seed setting (N=50, M=100)"), this, [this] { openDemo("seed"); });
  recent_menu_ = file->addMenu(tr("&Recent files"));
  rebuildRecentMenu();
  file->addSeparator();
  file->addAction(tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    const QString p = QFileDialog::getSaveFileName(this, tr("Export view"), "view.png", tr("PNG images (*.png)"));
    if (!p.isEmpty()) exportViewPng(p);
  });
  file->addAction(tr("Export solution and diagnostics (NPY or GeoTIFF)…"), QKeySequence(tr("Ctrl+S")), this, [this] {
    const QString p = QFileDialog::getSaveFileName(
        this, tr("Export solution"), "x.npy",
        raster_support() ? tr("NumPy arrays (*.npy);;GeoTIFF (*.tif)") : tr("NumPy arrays (*.npy)"));
    if (!p.isEmpty()) exportSolution(p);
  });
  file->addAction(tr("Export all channels as PNG into a &folder…"), this, [this] {
    const QString d = QFileDialog::getExistingDirectory(this, tr("Folder for channel images"));
    if (!d.isEmpty()) exportChannelsPng(d);
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildOtherMenus() {
  auto* solve_menu = menuBar()->addMenu(tr("&Solve"));
  solve_menu->addAction(tr("&Solve"), QKeySequence(Qt::Key_F5), this, &MainWindow::solve);
  solve_menu->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelSolve);
  auto* view = menuBar()->addMenu(tr("&View"));
  for (const auto& [v, label, key] : {std::tuple{View::Gaps, tr("&Gaps"), "Ctrl+1"},
                                      std::tuple{View::Groups, tr("G&roups"), "Ctrl+2"},
                                      std::tuple{View::Result, tr("&Result"), "Ctrl+3"},
                                      std::tuple{View::Inspector, tr("&Inspector"), "Ctrl+4"}})
    view->addAction(label, QKeySequence(tr(key)), this, [this, v = v] { showView(v); });
  view->addAction(tr("Reset &zoom"), QKeySequence(tr("Ctrl+0")), this, [this] {
    gaps_->resetCamera();
    result_view_->resetCamera();
  });
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About CubeSolve"), this, [this] {
    QString devices;
    for (const auto& d : describe_devices()) devices += QString::fromStdString(d) + "<br>";
    QMessageBox::about(this, tr("About CubeSolve"),
                       tr("<b>CubeSolve %1</b><br>Per-pixel minimum-norm least squares on data cubes with gaps."
                          "<br><br>Qt %2, VTK %3<br>Compute devices:<br>%4")
                           .arg(version(), qVersion(), vtkVersion::GetVTKVersion(), devices));
  });
}

void MainWindow::connectDocument() {
  connect(doc_, &Document::loaded, this, &MainWindow::onLoaded);
  connect(doc_, &Document::solveStarted, this, [this] { showSolving(true); });
  connect(doc_, &Document::progress, this, [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); });
  connect(doc_, &Document::solved, this, &MainWindow::onSolved);
  connect(doc_, &Document::solveCancelled, this, [this] {
    showSolving(false);
    status_->setText(tr("Solve cancelled; the previous result is kept."));
    emit solveCancelled();
  });
  connect(doc_, &Document::solveFailed, this, [this](const QString& message) {
    showSolving(false);
    fail(tr("The solve failed: %1").arg(message));
    emit solveFailed(message);
  });
  connect(doc_, &Document::failed, this, &MainWindow::fail);
  connect(doc_, &Document::exported, this, [this](const QStringList& paths) {
    statusBar()->showMessage(tr("Wrote %1 files: %2").arg(paths.size()).arg(paths.join(", ")), 10000);
    emit exported(paths);
  });
}

void MainWindow::restoreSettings() {
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  min_valid_->setValue(settings.value("params/min_valid", 1).toInt());
  ridge_->setValue(settings.value("params/ridge", 0.0).toDouble());
  rcond_->setText(settings.value("params/rcond", "").toString());
  auto_solve_->setChecked(settings.value("params/auto", true).toBool());
}

void MainWindow::fail(const QString& message) {
  last_error_ = message;
  // Window-modal but not blocking: no nested event loop, the solve goes on.
  auto* box = new QMessageBox(QMessageBox::Warning, tr("CubeSolve"), message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  statusBar()->showMessage(message, 10000);
  emit errorShown(message);
}

void MainWindow::onLoaded() {
  const auto cube = doc_->cube();
  if (!cube) return;
  band_slider_->setRange(0, static_cast<int>(cube->dim(0)) - 1);
  if (const auto d = doc_->design()) channel_slider_->setRange(0, static_cast<int>(d->cols()) - 1);
  use_weights_->setEnabled(doc_->weights() != nullptr);
  {
    const QSignalBlocker block(use_weights_);
    use_weights_->setChecked(doc_->weights() && doc_->useWeights());
  }
  if (!doc_->result()) {
    inspected_x_.clear();
    selected_row_ = selected_col_ = selected_bin_ = -1;
  }
  setWindowTitle(tr("CubeSolve — %1").arg(QFileInfo(doc_->cubeName()).fileName()));
  for (const QString& name : {doc_->cubeName(), doc_->designName(), doc_->weightsName()})
    if (QFileInfo::exists(name)) addRecent(name);
  updateDataPanel();
  updateGaps();
  updateGroups();
  updateResult();
  updateInspector();
  emit cubeLoaded();
}

void MainWindow::showSolving(bool on) {
  if (on) progress_->setValue(0);
  progress_->setVisible(on);
  cancel_->setVisible(on);
  if (on) status_->setText(tr("Solving…"));
}

void MainWindow::onSolved() {
  showSolving(false);
  const SolveResult& r = *doc_->result();
  QString paths;
  for (std::size_t i = 0; i < kPathCount; ++i)
    if (r.paths[i]) paths += QString(" %1 %2").arg(path_name(static_cast<SolvePath>(i))).arg(r.paths[i]);
  const QString on_device = r.device == Device::Cuda ? tr(", %1 pixels on the GPU").arg(r.device_pixels) : QString();
  status_->setText(tr("engine %1 s on %2 (%3 CPU threads%4); paths:%5")
                       .arg(r.engine_seconds, 0, 'f', 3)
                       .arg(device_name(r.device))
                       .arg(r.threads)
                       .arg(on_device)
                       .arg(paths));
  for (const auto& w : r.warnings) statusBar()->showMessage(QString::fromStdString(w), 10000);
  updateResult();
  updateInspector();
  emit solveFinished();
}

void MainWindow::updateDataPanel() {
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
  data_label_->setText(text);
}

void MainWindow::updateGaps() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const int H = static_cast<int>(m->height), W = static_cast<int>(m->width);
  const bool band = gaps_mode_->currentIndex() == 1;
  band_slider_->setEnabled(band);
  std::vector<double> v(m->pixels());
  if (!band) {
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = m->n_valid[p];
    gaps_->setImage(std::move(v), H, W, Colormap::Viridis, 0, static_cast<double>(m->n),
                    tr("valid observations per pixel (of %1)").arg(m->n));
  } else {
    const auto i = static_cast<std::size_t>(band_slider_->value());
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = m->valid(p, i);
    gaps_->setImage(std::move(v), H, W, Colormap::Viridis, 0, 1, tr("observation %1: valid (1) or missing (0)").arg(i));
  }
}

void MainWindow::updateGroups() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  QStringList labels;
  std::vector<double> counts;
  for (const auto& b : m->group_histogram()) {
    labels << (b.hi - 1 == b.lo ? QString::number(b.lo) : QString("%1-%2").arg(b.lo).arg(b.hi - 1));
    counts.push_back(static_cast<double>(b.groups));
  }
  groups_->setBars(labels, counts, tr("pixels sharing one mask"), tr("distinct masks"), true);
  const std::size_t P = m->pixels();
  groups_label_->setText(tr("%1 distinct masks over %2 pixels; %3 % of the pixels are in groups of 16 or more. "
                            "Click a bar to see its pixels on the gaps map.")
                             .arg(m->distinct_masks())
                             .arg(P)
                             .arg(P ? 100.0 * m->pixels_in_groups_of_at_least(16) / P : 0.0, 0, 'f', 1));
}

void MainWindow::selectGroupBin(int bin) {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const auto bins = m->group_histogram();
  if (bin < 0 || bin >= static_cast<int>(bins.size())) return;
  selected_bin_ = bin;
  const auto& b = bins[static_cast<std::size_t>(bin)];
  gaps_->setOverlay(m->pixels_in(b));
  statusBar()->showMessage(tr("%1 pixels in groups of %2 to %3 pixels highlighted on the gaps map")
                               .arg(b.pixels).arg(b.lo).arg(b.hi - 1), 5000);
}

void MainWindow::updateResult() {
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (!result || !design) {
    channel_label_->setText({});
    return;
  }
  const auto L = static_cast<Layer>(layer_->currentIndex());
  const int H = static_cast<int>(result->x.dim(1)), W = static_cast<int>(result->x.dim(2));
  const int channels = L == Layer::Solution ? static_cast<int>(design->cols()) : L == Layer::Model ? static_cast<int>(design->rows()) : 1;
  channel_slider_->setEnabled(channels > 1);
  if (channel_slider_->maximum() != channels - 1) channel_slider_->setRange(0, channels - 1);
  const auto ch = static_cast<std::size_t>(channel_slider_->value());
  std::vector<double> v;
  QString title;
  const bool signed_data = L == Layer::Solution || L == Layer::Model;
  switch (L) {
    case Layer::Solution: v = plane(result->x, ch); title = tr("x[%1]").arg(ch); break;
    case Layer::Model: v = plane(model_band(*design, result->x, ch)); title = tr("model (A·x)[%1], gaps filled").arg(ch); break;
    case Layer::ResidualRms: v = plane(residual_rms(*result)); title = tr("residual RMS"); break;
    case Layer::Rank: v = plane(result->rank); title = tr("numerical rank of A_V"); break;
    case Layer::Status:
      v = plane(result->status);
      title = tr("status: 0 ok, 1 min-norm, 2 no data, 3 too few, 4 failed");
      break;
  }
  channel_label_->setText(channels > 1 ? tr("channel %1 of %2").arg(ch).arg(channels) : QString());
  const int cm = colormap_->currentIndex();
  const Colormap map = cm == 1 ? Colormap::Viridis : cm == 2 ? Colormap::RdBu : signed_data ? Colormap::RdBu : Colormap::Viridis;
  double lo, hi;
  if (auto_range_->isChecked()) {
    std::tie(lo, hi) = robust_range(v.data(), v.size(), map == Colormap::RdBu);
    if (L == Layer::Status) std::tie(lo, hi) = std::make_pair(0.0, 4.0);
    const QSignalBlocker b1(range_lo_), b2(range_hi_);
    range_lo_->setValue(lo);
    range_hi_->setValue(hi);
  } else {
    lo = range_lo_->value();
    hi = range_hi_->value();
  }
  result_view_->setImage(std::move(v), H, W, map, lo, hi, title);
  result_view_->setMarker(selected_row_, selected_col_);
}

void MainWindow::selectPixel(int row, int col) {
  selected_row_ = row;
  selected_col_ = col;
  gaps_->setMarker(row, col);
  result_view_->setMarker(row, col);
  updateInspector();
}

void MainWindow::updateInspector() {
  inspected_x_.clear();
  const auto cube = doc_->cube();
  if (!cube || selected_row_ < 0) {
    inspector_->clear();
    inspector_text_->setPlainText(tr("Click a pixel on any map to inspect it."));
    return;
  }
  const std::size_t W = cube->dim(2), P = cube->dim(1) * W, N = cube->dim(0);
  const std::size_t p = static_cast<std::size_t>(selected_row_) * W + static_cast<std::size_t>(selected_col_);
  const auto weights = doc_->useWeights() ? doc_->weights() : nullptr;
  std::vector<double> obs(N);
  for (std::size_t i = 0; i < N; ++i) {
    obs[i] = cube->value(i * P + p);
    if (weights && !(weights->value(i * P + p) > 0)) obs[i] = std::nan("");
  }
  QString text = tr("Pixel row %1, column %2\n").arg(selected_row_).arg(selected_col_);
  std::vector<double> fitted;
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (result && design) {
    fitted = pixel_model(*design, result->x, p);
    for (std::size_t j = 0; j < design->cols(); ++j) inspected_x_.push_back(result->x.value(j * P + p));
    text += tr("valid rows %1\nrank %2\nstatus %3\nrss %4\n\nx:\n")
                .arg(result->n_valid.value(p))
                .arg(result->rank.value(p))
                .arg(status_name(static_cast<PixelStatus>(result->status.data<std::uint8_t>()[p])))
                .arg(fmt(result->rss.value(p)));
    for (std::size_t j = 0; j < inspected_x_.size(); ++j) text += QString("  x[%1] = %2\n").arg(j).arg(fmt(inspected_x_[j]));
  } else {
    text += tr("(not solved yet)\n");
  }
  inspector_text_->setPlainText(text);
  inspector_->setSeries(obs, fitted, tr("pixel (%1, %2): observations (× missing) and fit").arg(selected_row_).arg(selected_col_));
}

SolveOptions MainWindow::options() const {
  SolveOptions o;
  bool ok = false;
  const double r = rcond_->text().trimmed().toDouble(&ok);
  if (ok) o.rcond = r;
  o.min_valid = min_valid_->value();
  o.ridge = ridge_->value();
  o.method = method_;
  o.device = parse_device(device_->currentData().toString().toStdString());
  o.device_float64 = device_precision_ && device_precision_->currentData().toBool();
  return o;
}

void MainWindow::solve() {
  doc_->setOptions(options());
  doc_->setUseWeights(use_weights_->isChecked());
  doc_->solve();
}

void MainWindow::parametersChanged() {
  QSettings settings;
  settings.setValue("params/min_valid", min_valid_->value());
  settings.setValue("params/ridge", ridge_->value());
  settings.setValue("params/rcond", rcond_->text());
  settings.setValue("params/auto", auto_solve_->isChecked());
  doc_->setOptions(options());
  doc_->setUseWeights(use_weights_->isChecked());
  if (auto_solve_->isChecked()) resolve_timer_.start();
}

void MainWindow::showView(View view) { tabs_->setCurrentWidget(pages_.at(view)); }

MainWindow::View MainWindow::currentView() const {
  for (const auto& [view, page] : pages_)
    if (page == tabs_->currentWidget()) return view;
  return View::Gaps;
}

void MainWindow::showLayer(Layer layer, int channel) {
  layer_->setCurrentIndex(static_cast<int>(layer));
  updateResult();
  channel_slider_->setValue(channel);
  updateResult();
}

bool MainWindow::exportViewPng(const QString& path) {
  for (const QString& input : {doc_->cubeName(), doc_->designName(), doc_->weightsName()})
    if (!input.isEmpty() && same_file(path.toStdString(), file_of(input.toStdString()))) {
      fail(tr("%1: expected the image apart from the inputs, found it is %2, which is open").arg(path, input));
      return false;
    }
  QImage image;
  switch (currentView()) {
    case View::Gaps: image = gaps_->grab(); break;
    case View::Groups: image = groups_->grab(); break;
    case View::Result: image = result_view_->grab(); break;
    case View::Inspector: image = pages_.at(View::Inspector)->grab().toImage(); break;
  }
  if (image.isNull() || !image.save(path, "PNG")) {
    fail(tr("%1: cannot write the PNG image").arg(path));
    return false;
  }
  return true;
}

void MainWindow::addRecent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value("recent").toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recent", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  recent_menu_->clear();
  for (const QString& p : QSettings().value("recent").toStringList())
    recent_menu_->addAction(p, this, [this, p] { openAny(p); });
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  doc_->cancel();
  e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& url : e->mimeData()->urls()) openAny(url.toLocalFile());
}

}  // namespace cubesolve::ui
