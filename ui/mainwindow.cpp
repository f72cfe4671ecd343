#include "mainwindow.hpp"

#include "chartview.hpp"
#include "imageview.hpp"
#include "solvecontroller.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
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
#include <fstream>

namespace cubesolve::ui {

namespace {

// One plane of an array whose first dimension indexes planes.
std::vector<double> plane(const Array& a, std::size_t index) {
  const std::size_t P = a.dim(a.ndim() - 2) * a.dim(a.ndim() - 1);
  std::vector<double> out(P);
  for (std::size_t p = 0; p < P; ++p) out[p] = a.value(index * P + p);
  return out;
}

QString fmt(double v) { return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("—"); }

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setWindowTitle("CubeSolve");
  setAcceptDrops(true);
  controller_ = new SolveController(this);
  connect(controller_, &SolveController::progress, this, [this](int id, double f) {
    if (id == pending_id_) progress_->setValue(static_cast<int>(f * 1000));
  });
  connect(controller_, &SolveController::finished, this, &MainWindow::onFinished);
  connect(controller_, &SolveController::cancelled, this, [this](int id) {
    if (id != pending_id_) return;
    awaiting_ = false;
    progress_->hide();
    cancel_->hide();
    status_->setText(tr("Solve cancelled; the previous result is kept."));
    emit solveCancelled();
  });
  connect(controller_, &SolveController::failed, this, [this](int id, const QString& message) {
    if (id != pending_id_) return;
    awaiting_ = false;
    progress_->hide();
    cancel_->hide();
    fail(tr("The solve failed: %1").arg(message));
    emit solveFailed(message);
  });
  resolve_timer_.setSingleShot(true);
  resolve_timer_.setInterval(300);
  connect(&resolve_timer_, &QTimer::timeout, this, [this] {
    if (cube_ && design_) solve();
  });
  buildUi();
  buildMenus();
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  min_valid_->setValue(settings.value("params/min_valid", 1).toInt());
  ridge_->setValue(settings.value("params/ridge", 0.0).toDouble());
  rcond_->setText(settings.value("params/rcond", "").toString());
  auto_solve_->setChecked(settings.value("params/auto", true).toBool());
}

MainWindow::~MainWindow() = default;

void MainWindow::buildUi() {
  tabs_ = new QTabWidget;
  // Gaps: the valid-count map, or one observation's mask.
  auto* gaps_page = new QWidget;
  auto* gl = new QVBoxLayout(gaps_page);
  auto* gaps_bar = new QHBoxLayout;
  gaps_mode_ = new QComboBox;
  gaps_mode_->addItems({tr("Valid observations per pixel"), tr("Mask of one observation")});
  band_slider_ = new QSlider(Qt::Horizontal);
  band_slider_->setEnabled(false);
  gaps_bar->addWidget(gaps_mode_);
  gaps_bar->addWidget(new QLabel(tr("Observation")));
  gaps_bar->addWidget(band_slider_, 1);
  gl->addLayout(gaps_bar);
  gaps_ = new ImageView;
  gl->addWidget(gaps_, 1);
  connect(gaps_mode_, &QComboBox::currentIndexChanged, this, [this] { updateGaps(); });
  connect(band_slider_, &QSlider::valueChanged, this, [this] { updateGaps(); });
  tabs_->addTab(gaps_page, tr("&Gaps"));

  // Groups: histogram of mask-group sizes.
  auto* groups_page = new QWidget;
  auto* grl = new QVBoxLayout(groups_page);
  groups_label_ = new QLabel;
  groups_label_->setWordWrap(true);
  grl->addWidget(groups_label_);
  groups_ = new ChartView;
  grl->addWidget(groups_, 1);
  connect(groups_, &ChartView::barClicked, this, &MainWindow::selectGroupBin);
  tabs_->addTab(groups_page, tr("G&roups"));

  // Result: channels, model bands, residual RMS, rank, status.
  auto* result_page = new QWidget;
  auto* rl = new QVBoxLayout(result_page);
  auto* rbar = new QHBoxLayout;
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
  rbar->addWidget(layer_);
  rbar->addWidget(channel_label_);
  rbar->addWidget(channel_slider_, 1);
  rbar->addWidget(colormap_);
  rbar->addWidget(auto_range_);
  rbar->addWidget(range_lo_);
  rbar->addWidget(range_hi_);
  rl->addLayout(rbar);
  result_view_ = new ImageView;
  rl->addWidget(result_view_, 1);
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
  tabs_->addTab(result_page, tr("&Result"));

  // Inspector: one pixel's observations and fit.
  auto* insp_page = new QWidget;
  auto* il = new QHBoxLayout(insp_page);
  inspector_ = new ChartView;
  inspector_text_ = new QTextEdit;
  inspector_text_->setReadOnly(true);
  inspector_text_->setMaximumWidth(260);
  il->addWidget(inspector_, 1);
  il->addWidget(inspector_text_);
  tabs_->addTab(insp_page, tr("&Inspector"));
  setCentralWidget(tabs_);

  for (ImageView* v : {gaps_, result_view_}) {
    connect(v, &ImageView::pixelClicked, this, &MainWindow::selectPixel);
    connect(v, &ImageView::pixelHovered, this, [this](int row, int col, double value) {
      statusBar()->showMessage(tr("row %1, column %2: %3").arg(row).arg(col).arg(fmt(value)), 3000);
    });
  }

  // Data and parameters panel.
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
  resize(1280, 820);
}

void MainWindow::buildMenus() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &cube…"), QKeySequence::Open, this, [this] {
    const QString p = QFileDialog::getOpenFileName(
        this, tr("Open cube (N, H, W)"), {},
        raster_support() ? tr("Cubes (*.npy *.tif *.tiff *.img *.hdr *.nc *.h5 *.he5 *.vrt);;All files (*)")
                         : tr("NumPy arrays (*.npy)"));
    if (!p.isEmpty()) openCubeInBackground(p);
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
  auto* solve_menu = menuBar()->addMenu(tr("&Solve"));
  solve_menu->addAction(tr("&Solve"), QKeySequence(Qt::Key_F5), this, &MainWindow::solve);
  solve_menu->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelSolve);
  auto* view = menuBar()->addMenu(tr("&View"));
  view->addAction(tr("&Gaps"), QKeySequence(tr("Ctrl+1")), this, [this] { showView(View::Gaps); });
  view->addAction(tr("G&roups"), QKeySequence(tr("Ctrl+2")), this, [this] { showView(View::Groups); });
  view->addAction(tr("&Result"), QKeySequence(tr("Ctrl+3")), this, [this] { showView(View::Result); });
  view->addAction(tr("&Inspector"), QKeySequence(tr("Ctrl+4")), this, [this] { showView(View::Inspector); });
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

bool MainWindow::attempt(const std::function<void()>& action) {
  try {
    action();
    return true;
  } catch (const std::exception& e) {
    fail(QString::fromUtf8(e.what()));
    return false;
  }
}

void MainWindow::fail(const QString& message) {
  last_error_ = message;
  // Window-modal but not blocking: no nested event loop, the solve goes on.
  auto* box = new QMessageBox(QMessageBox::Warning, tr("CubeSolve"), message, QMessageBox::Ok, this);
  box->setAttribute(Qt::WA_DeleteOnClose);
  box->open();
  statusBar()->showMessage(message, 10000);
}

bool MainWindow::openDemo(const QString& name, int size) {
  return attempt([&] {
    DemoCube d = make_demo(name.toStdString(), static_cast<std::size_t>(size));
    setCube(std::make_shared<const Array>(std::move(d.cube)), tr("demo: %1").arg(name));
    geo_ = {};
    setDesign(std::make_shared<const Design>(d.design, name.toStdString()), tr("demo: %1").arg(name));
    weights_.reset();
    use_weights_->setEnabled(false);
    updateDataPanel();
    solve();
  });
}

namespace {

bool is_stack_path(const QString& path) {
  return stack_support() && (path.endsWith(".h5", Qt::CaseInsensitive) || path.endsWith(".he5", Qt::CaseInsensitive));
}

}  // namespace

MainWindow::LoadedCube MainWindow::loadCube(const std::string& path) {
  LoadedCube l;
  auto cube = std::make_shared<Array>(read_cube(path, &l.geo));
  check_cube(*cube, path);
  l.masks = analyze_masks(*cube);
  l.cube = std::move(cube);
  return l;
}

void MainWindow::showCube(LoadedCube loaded, const QString& path) {
  setCube(std::move(loaded.cube), path, std::move(loaded.masks));
  geo_ = std::move(loaded.geo);
  if (weights_ && weights_->shape() != cube_->shape()) weights_.reset();
  addRecent(path);
  updateDataPanel();
  emit cubeLoaded();
  if (design_ && design_->rows() == cube_->dim(0)) solve();
}

bool MainWindow::openCube(const QString& path) {
  if (is_stack_path(path)) return openStack(path);  // a MintPy interferogram stack brings its own SBAS design
  return attempt([&] { showCube(loadCube(path.toStdString()), path); });
}

void MainWindow::openCubeInBackground(const QString& path) {
  if (is_stack_path(path)) {
    openStack(path);
    return;
  }
  controller_->cancel();
  status_->setText(tr("Reading %1…").arg(QFileInfo(path).fileName()));
  QApplication::setOverrideCursor(Qt::BusyCursor);
  const std::string p = path.toStdString();
  controller_->run<LoadedCube>(
      [p] { return loadCube(p); },
      [this, path](LoadedCube loaded) {
        QApplication::restoreOverrideCursor();
        status_->clear();
        showCube(std::move(loaded), path);
      },
      [this](const QString& message) {
        QApplication::restoreOverrideCursor();
        status_->clear();
        fail(message);
      });
}

bool MainWindow::openDesign(const QString& path) {
  return attempt([&] {
    auto d = std::make_shared<const Design>(read_array(path.toStdString()), path.toStdString());
    if (cube_ && d->rows() != cube_->dim(0))
      throw InputError(path.toStdString() + ": expected " + std::to_string(cube_->dim(0)) +
                       " rows (one per observation of the cube), found " + std::to_string(d->rows()));
    setDesign(d, path);
    addRecent(path);
    updateDataPanel();
    if (cube_) solve();
  });
}

bool MainWindow::buildDesign(const QString& spec, const QString& pairs, const QString& times) {
  return attempt([&] {
    if (!cube_) throw InputError("open a cube before building its design matrix");
    Array a;
    if (spec == "sbas") a = sbas_design(read_pairs(pairs.toStdString()), nullptr, pairs.toStdString());
    else a = build_design(spec.toStdString(), cube_->dim(0), times.isEmpty() ? std::vector<double>{} : read_times(times.toStdString()));
    if (a.dim(0) != cube_->dim(0))
      throw InputError(pairs.toStdString() + ": expected " + std::to_string(cube_->dim(0)) + " pairs (one per band), found " +
                       std::to_string(a.dim(0)));
    setDesign(std::make_shared<const Design>(a, spec.toStdString()), spec);
    updateDataPanel();
    solve();
  });
}

bool MainWindow::openStack(const QString& path) {
  return attempt([&] {
    InsarStack s = kept_only(read_mintpy_stack(path.toStdString()));
    auto design = std::make_shared<const Design>(sbas_design(s.pairs, nullptr, path.toStdString()), "sbas");
    setCube(std::make_shared<const Array>(std::move(s.cube)), path);
    geo_ = {};
    setDesign(design, tr("sbas from %1").arg(QFileInfo(path).fileName()));
    addRecent(path);
    updateDataPanel();
    solve();
  });
}

bool MainWindow::openWeights(const QString& path) {
  return attempt([&] {
    if (!cube_) throw InputError("open a cube before its weights");
    auto w = std::make_shared<const Array>(read_npy(path.toStdString()));
    if (w->shape() != cube_->shape())
      throw InputError(path.toStdString() + ": expected the cube's shape " + shape_string(cube_->shape()) +
                       ", found " + shape_string(w->shape()));
    weights_ = w;
    weights_name_ = path;
    use_weights_->setEnabled(true);
    use_weights_->setChecked(true);
    addRecent(path);
    masks_ = analyze_masks(*cube_, weights_.get());
    updateDataPanel();
    updateGaps();
    updateGroups();
    if (design_) solve();
  });
}

void MainWindow::setCube(std::shared_ptr<const Array> cube, const QString& name, std::optional<MaskStats> masks) {
  cube_ = std::move(cube);
  cube_name_ = name;
  masks_ = masks ? std::move(masks) : analyze_masks(*cube_);
  result_.reset();
  inspected_x_.clear();
  selected_row_ = selected_col_ = -1;
  selected_bin_ = -1;
  band_slider_->setRange(0, static_cast<int>(cube_->dim(0)) - 1);
  setWindowTitle(tr("CubeSolve — %1").arg(QFileInfo(name).fileName()));
  updateGaps();
  updateGroups();
  updateResult();
  updateInspector();
}

void MainWindow::setDesign(std::shared_ptr<const Design> design, const QString& name) {
  design_ = std::move(design);
  design_name_ = name;
  channel_slider_->setRange(0, static_cast<int>(design_->cols()) - 1);
}

void MainWindow::updateDataPanel() {
  QString text;
  if (cube_) {
    text += tr("<b>Cube</b> %1<br>shape %2, %3<br>").arg(cube_name_.toHtmlEscaped(),
                                                      QString::fromStdString(shape_string(cube_->shape())),
                                                      dtype_name(cube_->dtype()));
    if (masks_)
      text += tr("missing %1 %<br>NaN %2, Inf %3<br>no-data pixels %4<br>")
                  .arg(100.0 * masks_->missing_fraction(), 0, 'f', 2)
                  .arg(masks_->nan_count)
                  .arg(masks_->inf_count)
                  .arg(masks_->valid_histogram()[0]);
  } else {
    text += tr("No cube: File ▸ Open cube, or drop a .npy here.<br>");
  }
  if (design_)
    text += tr("<b>Design</b> %1<br>%2 × %3, rank %4, condition %5<br>")
                .arg(design_name_.toHtmlEscaped())
                .arg(design_->rows())
                .arg(design_->cols())
                .arg(design_->rank())
                .arg(fmt(design_->condition()));
  if (weights_) text += tr("<b>Weights</b> %1<br>").arg(weights_name_.toHtmlEscaped());
  data_label_->setText(text);
}

void MainWindow::updateGaps() {
  if (!cube_ || !masks_) return;
  const int H = static_cast<int>(cube_->dim(1)), W = static_cast<int>(cube_->dim(2));
  const bool band = gaps_mode_->currentIndex() == 1;
  band_slider_->setEnabled(band);
  std::vector<double> v(masks_->n_valid.size());
  if (!band) {
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = masks_->n_valid[p];
    gaps_->setImage(std::move(v), H, W, Colormap::Viridis, 0, static_cast<double>(masks_->n),
                    tr("valid observations per pixel (of %1)").arg(masks_->n));
  } else {
    const auto i = static_cast<std::size_t>(band_slider_->value());
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = (masks_->masks[p * masks_->words + i / 64] >> (i % 64)) & 1;
    gaps_->setImage(std::move(v), H, W, Colormap::Viridis, 0, 1, tr("observation %1: valid (1) or missing (0)").arg(i));
  }
}

void MainWindow::updateGroups() {
  if (!masks_) return;
  const auto bins = masks_->group_histogram();
  QStringList labels;
  std::vector<double> counts;
  for (const auto& b : bins) {
    labels << (b.hi - 1 == b.lo ? QString::number(b.lo) : QString("%1-%2").arg(b.lo).arg(b.hi - 1));
    counts.push_back(static_cast<double>(b.groups));
  }
  groups_->setBars(labels, counts, tr("pixels sharing one mask"), tr("distinct masks"), true);
  const std::size_t P = masks_->pixels();
  groups_label_->setText(tr("%1 distinct masks over %2 pixels; %3 % of the pixels are in groups of 16 or more. "
                            "Click a bar to see its pixels on the gaps map.")
                             .arg(masks_->distinct_masks())
                             .arg(P)
                             .arg(P ? 100.0 * masks_->pixels_in_groups_of_at_least(16) / P : 0.0, 0, 'f', 1));
}

void MainWindow::selectGroupBin(int bin) {
  if (!masks_) return;
  const auto bins = masks_->group_histogram();
  if (bin < 0 || bin >= static_cast<int>(bins.size())) return;
  selected_bin_ = bin;
  const auto& b = bins[static_cast<std::size_t>(bin)];
  std::vector<std::uint8_t> mask(masks_->pixels(), 0);
  for (std::size_t p = 0; p < mask.size(); ++p) {
    const std::size_t size = masks_->group_size[static_cast<std::size_t>(masks_->group_of[p])];
    mask[p] = size >= b.lo && size < b.hi;
  }
  gaps_->setOverlay(mask);
  statusBar()->showMessage(tr("%1 pixels in groups of %2 to %3 pixels highlighted on the gaps map")
                               .arg(b.pixels).arg(b.lo).arg(b.hi - 1), 5000);
}

void MainWindow::updateResult() {
  if (!result_ || !design_ || !cube_) {
    channel_label_->setText({});
    return;
  }
  const auto L = static_cast<Layer>(layer_->currentIndex());
  const int H = static_cast<int>(cube_->dim(1)), W = static_cast<int>(cube_->dim(2));
  const int channels = L == Layer::Solution ? static_cast<int>(design_->cols()) : L == Layer::Model ? static_cast<int>(design_->rows()) : 1;
  channel_slider_->setEnabled(channels > 1);
  if (channel_slider_->maximum() != channels - 1) channel_slider_->setRange(0, channels - 1);
  const auto ch = static_cast<std::size_t>(channel_slider_->value());
  std::vector<double> v;
  QString title;
  bool signed_data = false;
  switch (L) {
    case Layer::Solution:
      v = plane(result_->x, ch);
      title = tr("x[%1]").arg(ch);
      signed_data = true;
      break;
    case Layer::Model:
      v = plane(model_band(*design_, result_->x, ch), 0);
      title = tr("model (A·x)[%1], gaps filled").arg(ch);
      signed_data = true;
      break;
    case Layer::ResidualRms: v = plane(residual_rms(*result_), 0); title = tr("residual RMS"); break;
    case Layer::Rank: v = plane(result_->rank, 0); title = tr("numerical rank of A_V"); break;
    case Layer::Status:
      v = plane(result_->status, 0);
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
  if (!cube_ || selected_row_ < 0) {
    inspector_->clear();
    inspector_text_->setPlainText(tr("Click a pixel on any map to inspect it."));
    return;
  }
  const std::size_t W = cube_->dim(2), P = cube_->dim(1) * W, N = cube_->dim(0);
  const std::size_t p = static_cast<std::size_t>(selected_row_) * W + static_cast<std::size_t>(selected_col_);
  std::vector<double> obs(N);
  for (std::size_t i = 0; i < N; ++i) {
    obs[i] = cube_->value(i * P + p);
    if (weights_ && use_weights_->isChecked() && !(weights_->value(i * P + p) > 0)) obs[i] = std::nan("");
  }
  QString text = tr("Pixel row %1, column %2\n").arg(selected_row_).arg(selected_col_);
  std::vector<double> fitted;
  if (result_ && design_) {
    fitted = pixel_model(*design_, result_->x, p);
    for (std::size_t j = 0; j < design_->cols(); ++j) inspected_x_.push_back(result_->x.value(j * P + p));
    text += tr("valid rows %1\nrank %2\nstatus %3\nrss %4\n\nx:\n")
                .arg(result_->n_valid.value(p))
                .arg(result_->rank.value(p))
                .arg(status_name(static_cast<PixelStatus>(result_->status.data<std::uint8_t>()[p])))
                .arg(fmt(result_->rss.value(p)));
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
  o.device_float64 = device_precision_ && device_precision_->currentData().toBool();
  return o;
}

void MainWindow::solve() {
  if (!cube_ || !design_) {
    fail(tr("Open a cube and a design matrix first."));
    return;
  }
  try {
    SolveOptions o = options();
    o.device = resolve_device(parse_device(device_->currentData().toString().toStdString()));
    const auto weights = (weights_ && use_weights_->isChecked()) ? weights_ : nullptr;
    check_inputs(*cube_, *design_, weights.get(), cube_name_.toStdString(), design_name_.toStdString(),
                 weights_name_.toStdString());
    pending_id_ = controller_->start(cube_, design_, weights, o);
    awaiting_ = true;
    progress_->setValue(0);
    progress_->show();
    cancel_->show();
    status_->setText(tr("Solving…"));
  } catch (const std::exception& e) {
    fail(QString::fromUtf8(e.what()));
  }
}

void MainWindow::cancelSolve() { controller_->cancel(); }

bool MainWindow::solving() const { return awaiting_; }

void MainWindow::onFinished(int id, std::shared_ptr<const SolveResult> result) {
  if (id != pending_id_) return;
  awaiting_ = false;
  result_ = std::move(result);
  progress_->hide();
  cancel_->hide();
  QString paths;
  for (std::size_t i = 0; i < kPathCount; ++i)
    if (result_->paths[i]) paths += QString(" %1 %2").arg(path_name(static_cast<SolvePath>(i))).arg(result_->paths[i]);
  const QString on_device =
      result_->device == Device::Cuda ? tr(", %1 pixels on the GPU").arg(result_->device_pixels) : QString();
  status_->setText(tr("engine %1 s on %2 (%3 CPU threads%4); paths:%5")
                       .arg(result_->engine_seconds, 0, 'f', 3)
                       .arg(device_name(result_->device))
                       .arg(result_->threads)
                       .arg(on_device)
                       .arg(paths));
  for (const auto& w : result_->warnings) statusBar()->showMessage(QString::fromStdString(w), 10000);
  updateResult();
  updateInspector();
  emit solveFinished();
}

void MainWindow::parametersChanged() {
  QSettings settings;
  settings.setValue("params/min_valid", min_valid_->value());
  settings.setValue("params/ridge", ridge_->value());
  settings.setValue("params/rcond", rcond_->text());
  settings.setValue("params/auto", auto_solve_->isChecked());
  if (auto_solve_->isChecked()) resolve_timer_.start();
}

void MainWindow::showView(View view) { tabs_->setCurrentIndex(static_cast<int>(view)); }

void MainWindow::showLayer(Layer layer, int channel) {
  layer_->setCurrentIndex(static_cast<int>(layer));
  updateResult();
  channel_slider_->setValue(channel);
  updateResult();
}

bool MainWindow::exportViewPng(const QString& path) {
  QWidget* page = tabs_->currentWidget();
  QImage image;
  if (tabs_->currentIndex() == 0) image = gaps_->grab();
  else if (tabs_->currentIndex() == 1) image = groups_->grab();
  else if (tabs_->currentIndex() == 2) image = result_view_->grab();
  else image = page->grab().toImage();
  if (image.isNull() || !image.save(path, "PNG")) {
    fail(tr("%1: cannot write the PNG image").arg(path));
    return false;
  }
  return true;
}

bool MainWindow::exportSolution(const QString& path) {
  if (!result_) {
    fail(tr("Nothing to export: solve first."));
    return false;
  }
  return attempt([&] {
    const bool tif = is_geotiff_path(path.toStdString());
    QString base = path;
    base.chop(static_cast<int>(QFileInfo(path).suffix().size()) + 1);
    const QString ext = tif ? ".tif" : ".npy";
    OutputSet out;
    auto add = [&](const QString& p, const Array& a, const char* name) {
      add_result_file(out, p.toStdString(), a, geo_, name);
    };
    add(path, result_->x, "x");
    add(base + "_nvalid" + ext, result_->n_valid, "n_valid");
    add(base + "_rank" + ext, result_->rank, "rank");
    add(base + "_rss" + ext, result_->rss, "rss");
    add(base + "_status" + ext, result_->status, "status");
    out.commit();
  });
}

bool MainWindow::exportChannelsPng(const QString& folder) {
  if (!result_) {
    fail(tr("Nothing to export: solve first."));
    return false;
  }
  return attempt([&] {
    const std::size_t M = result_->x.dim(0), H = result_->x.dim(1), W = result_->x.dim(2);
    OutputSet out;
    for (std::size_t j = 0; j < M; ++j) {
      const std::vector<double> v = plane(result_->x, j);
      const auto [lo, hi] = robust_range(v.data(), v.size(), true);
      write_png(out.add(QDir(folder).filePath(QString("x%1.png").arg(j, 3, 10, QChar('0'))).toStdString()),
                colorize(v.data(), H, W, Colormap::RdBu, lo, hi));
    }
    out.commit();
  });
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

bool MainWindow::openAny(const QString& path) {
  if (path.endsWith(".csv", Qt::CaseInsensitive) || path.endsWith(".txt", Qt::CaseInsensitive)) return openDesign(path);
  if (!cube_ || !path.endsWith(".npy", Qt::CaseInsensitive)) {  // rasters are cubes
    openCubeInBackground(path);
    return true;
  }
  // After a cube: a 3-D array of its shape is weights (once a design is
  // there), another 3-D array a new cube, a 2-D one a design matrix.
  int ndim = 0;
  bool cube_shape = false;
  if (!attempt([&] {
        const Array a = read_npy(path.toStdString());
        ndim = static_cast<int>(a.ndim());
        cube_shape = a.shape() == cube_->shape();
      }))
    return false;
  if (ndim == 3 && cube_shape && design_) return openWeights(path);
  if (ndim == 3) {
    openCubeInBackground(path);
    return true;
  }
  return openDesign(path);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  QSettings settings;
  settings.setValue("window/geometry", saveGeometry());
  settings.setValue("window/state", saveState());
  controller_->cancel();
  e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& url : e->mimeData()->urls()) openAny(url.toLocalFile());
}

}  // namespace cubesolve::ui
