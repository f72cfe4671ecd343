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
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSaveFile>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextEdit>
#include <QVBoxLayout>

#include <vtkVersion.h>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {
QString fmt(double v) { return std::isfinite(v) ? QString::number(v, 'g', 6) : QStringLiteral("—"); }

/// A date YYYYMMDD as YYYY-MM-DD.
QString iso_day(const std::string& d) { return QString::fromStdString(d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2)); }

/// Dates YYYYMMDD as decimal years.
std::vector<double> years_of(const std::vector<std::string>& dates) {
  std::vector<double> t;
  for (const auto& d : dates) t.push_back(decimal_year(d, "date"));
  return t;
}

/// A regularisation weight: the arrows step by decades (0 ↔ 1e-6).
class DecadeSpinBox : public QDoubleSpinBox {
public:
  void stepBy(int steps) override {
    double v = value();
    for (int i = 0; i < std::abs(steps); ++i) {
      if (steps > 0) v = v <= 0 ? 1e-6 : v * 10;
      else v = v <= 1e-6 * (1 + 1e-9) ? 0 : v / 10;
    }
    setValue(v);
  }
};
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
  // The window's shortcuts work while a text field has the focus (a line
  // edit would take Ctrl+E, Ctrl+D, ... as editing keys).
  qApp->installEventFilter(this);
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
  if (event->type() == QEvent::ShortcutOverride && watched->isWidgetType() && isAncestorOf(static_cast<QWidget*>(watched))) {
    const auto* key = static_cast<QKeyEvent*>(event);
    const QKeySequence pressed(key->keyCombination());
    if (key->modifiers() & Qt::ControlModifier)
      for (const QAction* a : findChildren<QAction*>())
        if (a->isEnabled() && a->shortcut() == pressed) return true;  // not overridden: the action fires
  }
  return QMainWindow::eventFilter(watched, event);
}

MainWindow::~MainWindow() {
  // The widgets outlive this part of the window: what they signal while
  // going (a text field losing the focus finishes its edit) must not reach it.
  qApp->removeEventFilter(this);
  for (QObject* child : findChildren<QObject*>()) child->disconnect(this);
  resolve_timer_.stop();
}

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
  clear_highlight_ = new QPushButton(tr("Clear highlight"));
  clear_highlight_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addStretch(1);
  buttons->addWidget(clear_highlight_);
  layout->addLayout(buttons);
  // A click on the selected bar, or beside the bars, clears the highlight.
  connect(groups_, &ChartView::barClicked, this, [this](int bin) { selectGroupBin(bin == selected_bin_ ? -1 : bin); });
  connect(clear_highlight_, &QPushButton::clicked, this, [this] { selectGroupBin(-1); });
  return page;
}

QWidget* MainWindow::buildResultPage() {
  // Channels, model bands, residual RMS, rank, status; each layer keeps its
  // own colour map and range.
  auto* page = new QWidget;
  auto* layout = new QVBoxLayout(page);
  auto* top = new QHBoxLayout;
  layer_ = new QComboBox;
  layer_->addItems({tr("Solution x"), tr("Model A·x (gap-filled)"), tr("Residual RMS"), tr("Rank"), tr("Status"),
                    tr("Linear velocity (per year)")});
  layer_->setItemData(static_cast<int>(Layer::Velocity), tr("The slope of a line fitted to each pixel's time series (designs with dates)"),
                      Qt::ToolTipRole);
  channel_label_ = new QLabel(tr("Channel"));
  channel_box_ = new QSpinBox;
  channel_box_->setObjectName("channel");
  channel_slider_ = new QSlider(Qt::Horizontal);
  channel_slider_->setObjectName("channel-slider");
  channel_slider_->setMinimumWidth(120);
  top->addWidget(layer_);
  top->addWidget(channel_label_);
  top->addWidget(channel_box_);
  channel_date_ = new QLabel;
  channel_date_->setObjectName("channel-date");
  top->addWidget(channel_date_);
  top->addWidget(channel_slider_, 1);
  auto* scale = new QHBoxLayout;
  colormap_ = new QComboBox;
  colormap_->setObjectName("colormap");
  colormap_->addItems({tr("Auto colours"), tr("viridis"), tr("rdbu (diverging)"), tr("twilight (cyclic, phase)"), tr("grey")});
  reversed_ = new QCheckBox(tr("Reversed"));
  reversed_->setObjectName("reversed");
  auto_range_ = new QCheckBox(tr("Auto (2–98 %)"));
  auto_range_->setToolTip(tr("The range from the 2nd to the 98th percentile of the values shown; the colour bar marks clipped ends"));
  auto_range_->setObjectName("auto-range");
  auto_range_->setChecked(true);
  range_lo_ = new QDoubleSpinBox;
  range_hi_ = new QDoubleSpinBox;
  range_lo_->setObjectName("range-lo");
  range_hi_->setObjectName("range-hi");
  for (auto* s : {range_lo_, range_hi_}) {
    s->setRange(-1e12, 1e12);
    s->setDecimals(4);
    s->setEnabled(false);
    s->setMinimumWidth(90);  // below its size hint for ±1e12: the window fits small screens
  }
  colormap_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  colormap_->setMinimumContentsLength(8);
  for (QWidget* w : std::initializer_list<QWidget*>{colormap_, reversed_, auto_range_, new QLabel(tr("from")), range_lo_,
                                                     new QLabel(tr("to")), range_hi_})
    scale->addWidget(w);
  scale->addStretch(1);
  layout->addLayout(top);
  layout->addLayout(scale);
  result_view_ = new ImageView;
  layout->addWidget(result_view_, 1);
  connect(layer_, &QComboBox::currentIndexChanged, this, [this] { showLayerSettings(); });
  connect(channel_slider_, &QSlider::valueChanged, channel_box_, &QSpinBox::setValue);
  connect(channel_box_, &QSpinBox::valueChanged, channel_slider_, &QSlider::setValue);
  connect(channel_slider_, &QSlider::valueChanged, this, [this] { updateResult(); });
  for (auto* w : {static_cast<QWidget*>(colormap_), static_cast<QWidget*>(reversed_), static_cast<QWidget*>(auto_range_),
                  static_cast<QWidget*>(range_lo_), static_cast<QWidget*>(range_hi_)}) {
    if (auto* c = qobject_cast<QComboBox*>(w)) connect(c, &QComboBox::currentIndexChanged, this, &MainWindow::layerSettingsChanged);
    if (auto* c = qobject_cast<QCheckBox*>(w)) connect(c, &QCheckBox::toggled, this, &MainWindow::layerSettingsChanged);
    if (auto* c = qobject_cast<QDoubleSpinBox*>(w)) connect(c, &QDoubleSpinBox::valueChanged, this, &MainWindow::layerSettingsChanged);
  }
  for (ImageView* v : {gaps_, result_view_}) {
    connect(v, &ImageView::pixelClicked, this, &MainWindow::selectPixel);
    connect(v, &ImageView::pixelHovered, this, &MainWindow::showHover);
    connect(v, &ImageView::pixelMenuRequested, this, &MainWindow::showPixelMenu);
  }
  return page;
}

void MainWindow::layerSettingsChanged() {
  LayerView& v = layer_views_[static_cast<std::size_t>(layer_->currentIndex())];
  v.colormap = colormap_->currentIndex();
  v.reversed = reversed_->isChecked();
  v.auto_range = auto_range_->isChecked();
  range_lo_->setEnabled(!v.auto_range);
  range_hi_->setEnabled(!v.auto_range);
  if (!v.auto_range) {
    v.lo = range_lo_->value();
    v.hi = range_hi_->value();
  }
  updateResult();
}

void MainWindow::showLayerSettings() {
  const LayerView& v = layer_views_[static_cast<std::size_t>(layer_->currentIndex())];
  const QSignalBlocker b1(colormap_), b2(reversed_), b3(auto_range_), b4(range_lo_), b5(range_hi_);
  colormap_->setCurrentIndex(v.colormap);
  reversed_->setChecked(v.reversed);
  auto_range_->setChecked(v.auto_range);
  range_lo_->setEnabled(!v.auto_range);
  range_hi_->setEnabled(!v.auto_range);
  range_lo_->setValue(v.lo);
  range_hi_->setValue(v.hi);
  updateResult();
}

QWidget* MainWindow::buildInspectorPage() {
  // One pixel's observations and fit.
  auto* page = new QWidget;
  auto* layout = new QHBoxLayout(page);
  inspector_ = new ChartView;
  series_ = new ChartView;
  series_->hide();
  inspector_text_ = new QTextEdit;
  inspector_text_->setReadOnly(true);
  inspector_text_->setMaximumWidth(260);
  auto* side = new QVBoxLayout;
  auto* pin = new QPushButton(tr("&Pin this pixel"));
  pin->setToolTip(tr("Keep this pixel's observations and fit on the chart to compare it with others"));
  unpin_ = new QPushButton(tr("Clear pins"));
  unpin_->setEnabled(false);
  auto* buttons = new QHBoxLayout;
  buttons->addWidget(pin);
  buttons->addWidget(unpin_);
  side->addLayout(buttons);
  side->addWidget(inspector_text_, 1);
  auto* charts = new QVBoxLayout;
  charts->addWidget(inspector_, 1);
  charts->addWidget(series_, 1);
  layout->addLayout(charts, 1);
  layout->addLayout(side);
  connect(pin, &QPushButton::clicked, this, &MainWindow::pinPixel);
  connect(unpin_, &QPushButton::clicked, this, &MainWindow::clearPins);
  return page;
}

void MainWindow::buildParametersDock() {
  auto* dock = dock_ = new QDockWidget(tr("Data and parameters"), this);
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
  rcond_->setObjectName("rcond");
  rcond_->setPlaceholderText(tr("default: eps·max(|V|, M)"));
  form->addRow(tr("rcond"), rcond_);
  min_valid_ = new QSpinBox;
  min_valid_->setObjectName("min-valid");
  min_valid_->setRange(1, 1000000);
  form->addRow(tr("Minimum valid rows"), min_valid_);
  ridge_ = new DecadeSpinBox;
  ridge_->setObjectName("ridge");
  ridge_->setRange(0, 1e9);
  ridge_->setDecimals(6);
  ridge_->setMinimumWidth(90);
  ridge_->setToolTip(tr("Tikhonov weight: minimises |A x − y|² + λ²|x|². The arrows step by factors of ten."));
  form->addRow(tr("Ridge λ"), ridge_);
  use_weights_ = new QCheckBox(tr("Use weights"));
  use_weights_->setEnabled(false);
  form->addRow(use_weights_);
  auto_solve_ = new QCheckBox(tr("Re-solve on change"));
  auto_solve_->setToolTip(tr("Solve again as soon as a parameter changes"));
  auto_solve_->setObjectName("auto-solve");
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
  // Maps are exported at data resolution: each value a block of pixels.
  auto ask_scale = [this](int height, int width, bool& ok) {
    return QInputDialog::getInt(this, tr("Export scale"), tr("Pixels per data value (the map is %1 × %2 values)").arg(width).arg(height),
                                default_figure_scale(height, width), 1, 32, 1, &ok);
  };
  file->addAction(tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), this, [this, ask_scale] {
    ImageView* map = currentView() == View::Gaps ? gaps_ : currentView() == View::Result ? result_view_ : nullptr;
    bool ok = true;
    const int scale = map && map->imageHeight() > 0 ? ask_scale(map->imageHeight(), map->imageWidth(), ok) : 0;
    if (!ok) return;
    const QString p = QFileDialog::getSaveFileName(this, tr("Export view"), "view.png", tr("PNG images (*.png)"));
    if (!p.isEmpty()) exportViewPng(p, scale);
  });
  file->addAction(tr("Export solution and diagnostics (NPY or GeoTIFF)…"), QKeySequence(tr("Ctrl+S")), this, [this] {
    const QString p = QFileDialog::getSaveFileName(
        this, tr("Export solution"), "x.npy",
        raster_support() ? tr("NumPy arrays (*.npy);;GeoTIFF (*.tif)") : tr("NumPy arrays (*.npy)"));
    if (p.isEmpty()) return;
    const auto cube = doc_->cube();
    const double gib = cube ? 2.0 * static_cast<double>(cube->size()) * dtype_size(cube->dtype()) / (1 << 30) : 0;
    const auto answer = QMessageBox::question(
        this, tr("Export solution"),
        tr("Besides x and its diagnostics (_nvalid, _rank, _rss, _status, _cond), write the model A·x (_model, gaps "
           "filled) and the residuals y − A·x (_residual)? Together they take %1 GiB.").arg(gib, 0, 'f', 2),
        QMessageBox::Yes | QMessageBox::No | QMessageBox::Cancel, QMessageBox::No);
    if (answer != QMessageBox::Cancel) exportSolution(p, answer == QMessageBox::Yes);
  });
  file->addAction(tr("Export all channels as PNG into a &folder…"), this, [this, ask_scale] {
    if (!doc_->result()) return fail(tr("Nothing to export: solve first."));
    bool ok = true;
    const int scale = ask_scale(static_cast<int>(doc_->result()->x.dim(1)), static_cast<int>(doc_->result()->x.dim(2)), ok);
    if (!ok) return;
    const QString d = QFileDialog::getExistingDirectory(this, tr("Folder for channel images"));
    if (!d.isEmpty()) exportChannelsPng(d, scale);
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
  view->addSeparator();
  auto* toggle = dock_->toggleViewAction();
  toggle->setText(tr("&Data and parameters panel"));
  toggle->setShortcut(QKeySequence(tr("Ctrl+P")));
  view->addAction(toggle);
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
    resolve_timer_.stop();
    // The parameters shown are those of the result shown.
    if (doc_->result()) showParameters(doc_->resultOptions());
    status_->setText(doc_->result() ? tr("Solve cancelled; the previous result and its parameters are kept.")
                                    : tr("Solve cancelled."));
    emit solveCancelled();
  });
  connect(doc_, &Document::solveFailed, this, [this](const QString& message) {
    showSolving(false);
    fail(tr("The solve failed: %1").arg(message));
    emit solveFailed(message);
  });
  connect(doc_, &Document::failed, this, &MainWindow::fail);
  connect(doc_, &Document::exported, this, [this](const QStringList& paths) {
    const QString where = paths.isEmpty() ? QString() : QFileInfo(paths.first()).absolutePath();
    statusBar()->showMessage(tr("Wrote %1 files into %2: %3")
                                 .arg(paths.size())
                                 .arg(where)
                                 .arg(paths.size() > 4 ? paths.first() + ", …, " + paths.last() : paths.join(", ")),
                             15000);
    emit exported(paths);
  });
}

void MainWindow::restoreSettings() {
  // The widgets are set with their signals blocked: a change here is no
  // edit, and must neither rewrite the settings half-read nor start a solve.
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  const QSignalBlocker b1(min_valid_), b2(ridge_), b3(rcond_), b4(auto_solve_), b5(device_);
  min_valid_->setValue(settings.value("params/min_valid", 1).toInt());
  ridge_->setValue(settings.value("params/ridge", 0.0).toDouble());
  rcond_->setText(settings.value("params/rcond", "").toString());
  auto_solve_->setChecked(settings.value("params/auto", true).toBool());
  device_->setCurrentIndex(std::max(0, device_->findData(settings.value("params/device", "auto"))));
  if (device_precision_) {
    const QSignalBlocker b6(device_precision_);
    device_precision_->setCurrentIndex(settings.value("params/device_float64", false).toBool() ? 1 : 0);
  }
  for (std::size_t k = 0; k < layer_views_.size(); ++k) {
    const QString key = QString("view/layer%1/").arg(k);
    LayerView& v = layer_views_[k];
    v.colormap = std::clamp(settings.value(key + "colormap", 0).toInt(), 0, colormap_->count() - 1);
    v.reversed = settings.value(key + "reversed", false).toBool();
    v.auto_range = settings.value(key + "auto_range", true).toBool();
    v.lo = settings.value(key + "lo", 0.0).toDouble();
    v.hi = settings.value(key + "hi", 1.0).toDouble();
  }
  showLayerSettings();
}

void MainWindow::saveParameters() {
  QSettings settings;
  settings.setValue("params/min_valid", min_valid_->value());
  settings.setValue("params/ridge", ridge_->value());
  settings.setValue("params/rcond", rcond_->text());
  settings.setValue("params/auto", auto_solve_->isChecked());
  settings.setValue("params/device", device_->currentData());
  if (device_precision_) settings.setValue("params/device_float64", device_precision_->currentIndex() == 1);
}

void MainWindow::showParameters(const SolveOptions& o) {
  const QSignalBlocker b1(min_valid_), b2(ridge_), b3(rcond_), b5(device_);
  min_valid_->setValue(static_cast<int>(o.min_valid));
  ridge_->setValue(o.ridge);
  rcond_->setText(o.rcond >= 0 ? QString::number(o.rcond, 'g', 17) : QString());
  device_->setCurrentIndex(std::max(0, device_->findData(QString::fromUtf8(device_name(o.device)))));
  saveParameters();
}

namespace {
/// The files of a session: cube, design, weights (empty where none).
QStringList file_set(const QString& cube, const QString& design, const QString& weights) {
  QStringList set{cube};
  for (const QString& f : {design, weights}) set << (QFileInfo(f).isFile() ? f : QString());
  while (set.size() > 1 && set.last().isEmpty()) set.removeLast();
  return set;
}
}  // namespace

void MainWindow::saveSession() const {
  QSettings settings;
  settings.beginGroup("session");
  settings.remove("");
  const auto cube = doc_->cube();
  if (cube && QFileInfo(doc_->cubeName()).isFile()) {
    settings.setValue("files", file_set(doc_->cubeName(), doc_->designName(), doc_->weightsName()));
  } else if (cube && doc_->cubeName().startsWith("demo: ")) {
    settings.setValue("demo", doc_->cubeName().mid(6));
    settings.setValue("demo_size", static_cast<int>(cube->dim(1)));
  }
  settings.setValue("use_weights", use_weights_->isChecked());
  settings.setValue("view", static_cast<int>(currentView()));
  settings.setValue("layer", layer_->currentIndex());
  settings.setValue("channel", channel_slider_->value());
  settings.setValue("gaps_mode", gaps_mode_->currentIndex());
  settings.setValue("band", band_slider_->value());
  settings.setValue("pixel", QPoint(selected_col_, selected_row_));
  QVariantList pins;
  for (const auto& [r, c] : pinned_) pins << QPoint(c, r);
  settings.setValue("pinned", pins);
  settings.endGroup();
  for (std::size_t k = 0; k < layer_views_.size(); ++k) {
    const QString key = QString("view/layer%1/").arg(k);
    const LayerView& v = layer_views_[k];
    settings.setValue(key + "colormap", v.colormap);
    settings.setValue(key + "reversed", v.reversed);
    settings.setValue(key + "auto_range", v.auto_range);
    settings.setValue(key + "lo", v.lo);
    settings.setValue(key + "hi", v.hi);
  }
}

bool MainWindow::restoreSession() {
  QSettings settings;
  settings.beginGroup("session");
  const QStringList files = settings.value("files").toStringList();
  const QString demo = settings.value("demo").toString();
  if (files.isEmpty() && demo.isEmpty()) return false;
  if (!files.isEmpty() && !QFileInfo(files[0]).isFile()) return false;
  // What the view showed, applied once the files are read (onLoaded).
  Session s;
  s.use_weights = settings.value("use_weights", true).toBool();
  s.view = settings.value("view", 0).toInt();
  s.layer = settings.value("layer", 0).toInt();
  s.channel = settings.value("channel", 0).toInt();
  s.gaps_mode = settings.value("gaps_mode", 0).toInt();
  s.band = settings.value("band", 0).toInt();
  const QPoint pixel = settings.value("pixel", QPoint(-1, -1)).toPoint();
  s.row = pixel.y();
  s.col = pixel.x();
  for (const QVariant& v : settings.value("pinned").toList()) s.pinned.emplace_back(v.toPoint().y(), v.toPoint().x());
  session_ = s;
  if (!files.isEmpty()) doc_->openFiles(files[0], files.value(1), files.value(2));
  else openDemo(demo, settings.value("demo_size", 0).toInt());
  return true;
}

void MainWindow::applySession() {
  if (!session_) return;
  const Session s = *session_;
  session_.reset();
  const auto cube = doc_->cube();
  if (!cube) return;
  const int H = static_cast<int>(cube->dim(1)), W = static_cast<int>(cube->dim(2));
  {
    const QSignalBlocker block(use_weights_);
    use_weights_->setChecked(s.use_weights && doc_->weights());
  }
  doc_->setUseWeights(use_weights_->isChecked());
  gaps_mode_->setCurrentIndex(std::clamp(s.gaps_mode, 0, 1));
  band_slider_->setValue(s.band);
  layer_->setCurrentIndex(std::clamp(s.layer, 0, layer_->count() - 1));
  channel_slider_->setValue(s.channel);
  for (const auto& [r, c] : s.pinned)
    if (r >= 0 && c >= 0 && r < H && c < W) pinned_.emplace_back(r, c);
  if (s.row >= 0 && s.col >= 0 && s.row < H && s.col < W) selectPixel(s.row, s.col);
  showView(static_cast<View>(std::clamp(s.view, 0, static_cast<int>(View::Inspector))));
}

void MainWindow::fail(const QString& message) {
  last_error_ = message;
  session_.reset();  // a session whose files could not be read is not applied to the next ones
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
  const int N = static_cast<int>(cube->dim(0));
  band_slider_->setRange(0, N - 1);
  // No more valid rows can be asked for than the cube has observations.
  min_valid_->setMaximum(N);
  min_valid_->setToolTip(tr("Pixels with fewer valid observations are flagged, not solved (1 to %1).").arg(N));
  notice_.clear();
  if (const auto d = doc_->design()) {
    channel_slider_->setRange(0, static_cast<int>(d->cols()) - 1);
    if (d->rows() != cube->dim(0))
      notice_ = tr("The design matrix %1 has %2 rows and the cube %3 observations: open or build a design of %3 rows.")
                    .arg(QFileInfo(doc_->designName()).fileName())
                    .arg(d->rows())
                    .arg(N);
  } else {
    notice_ = tr("Open or build a design matrix of %1 rows to solve.").arg(N);
  }
  if (doc_->unreferenced())
    statusBar()->showMessage(tr("%1 has no reference pixel (REF_Y/REF_X) or refPhase: read unreferenced. "
                                "Right-click a pixel to reference the interferograms there.")
                                 .arg(QFileInfo(doc_->cubeName()).fileName()),
                             20000);
  if (!doc_->result()) result_view_->clear(notice_.isEmpty() ? tr("Solving…") : notice_);
  if (!notice_.isEmpty() && doc_->design()) statusBar()->showMessage(notice_, 15000);
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
  if (QFileInfo(doc_->cubeName()).isFile()) addRecent(file_set(doc_->cubeName(), doc_->designName(), doc_->weightsName()));
  updateDataPanel();
  updateGaps();
  updateGroups();
  updateResult();
  updateInspector();
  applySession();
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
  if (doc_->unreferenced())
    text += tr("<br><span style='color:#b00020'>Unreferenced: the stack has no reference pixel; right-click a pixel to pick one.</span>");
  if (!notice_.isEmpty()) text += QString("<br><span style='color:#b00020'>%1</span>").arg(notice_.toHtmlEscaped());
  data_label_->setText(text);
}

void MainWindow::updateGaps() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const int H = static_cast<int>(m->height), W = static_cast<int>(m->width);
  const bool band = gaps_mode_->currentIndex() == 1;
  band_slider_->setEnabled(band);
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
    const auto i = static_cast<std::size_t>(band_slider_->value());
    for (std::size_t p = 0; p < v.size(); ++p) v[p] = m->valid(p, i);
    style.categories = {{0.0, tr("missing")}, {1.0, tr("valid")}};
    const auto& pairs = doc_->pairs();
    style.title = i < pairs.size() ? tr("%1 — observation %2 (%3_%4): valid or missing")
                                         .arg(file)
                                         .arg(i)
                                         .arg(QString::fromStdString(pairs[i].first), QString::fromStdString(pairs[i].second))
                                   : tr("%1 — observation %2: valid or missing").arg(file).arg(i);
  }
  gaps_->setImage(std::move(v), H, W, style);
}

void MainWindow::updateGroups() {
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
  groups_->setBars(labels, counts,
                   bins.size() > 8 ? tr("pixels sharing one mask (bins from 1, 2, 4, 8, … pixels)")
                                   : tr("pixels sharing one mask"),
                   tr("distinct masks"), true);
  selectGroupBin(-1);
  const std::size_t P = m->pixels();
  groups_label_->setText(tr("%1 distinct masks over %2 pixels; %3 % of the pixels are in groups of 16 or more. "
                            "Click a bar to highlight its pixels on the gaps map; click it again to clear.")
                             .arg(m->distinct_masks())
                             .arg(P)
                             .arg(P ? 100.0 * m->pixels_in_groups_of_at_least(16) / P : 0.0, 0, 'f', 1));
}

void MainWindow::selectGroupBin(int bin) {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  const auto bins = m->group_histogram();
  if (bin >= static_cast<int>(bins.size())) bin = -1;
  selected_bin_ = bin;
  groups_->setSelectedBar(bin);
  clear_highlight_->setEnabled(bin >= 0);
  if (bin < 0) {
    gaps_->setOverlay({});
    return;
  }
  const auto& b = bins[static_cast<std::size_t>(bin)];
  gaps_->setOverlay(m->pixels_in(b));
  statusBar()->showMessage(tr("%1 pixels in groups of %2 to %3 pixels highlighted on the gaps map")
                               .arg(b.pixels).arg(b.lo).arg(b.hi - 1), 5000);
}

void MainWindow::updateResult() {
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (!result || !design || result->x.dim(0) != design->cols()) return;  // a new design's result is on its way
  const auto L = static_cast<Layer>(layer_->currentIndex());
  const int H = static_cast<int>(result->x.dim(1)), W = static_cast<int>(result->x.dim(2));
  const int channels = L == Layer::Solution ? static_cast<int>(design->cols()) : L == Layer::Model ? static_cast<int>(design->rows()) : 1;
  for (QWidget* w : std::initializer_list<QWidget*>{channel_slider_, channel_box_, channel_label_}) w->setEnabled(channels > 1);
  if (channel_slider_->maximum() != channels - 1) {
    channel_slider_->setRange(0, channels - 1);
    channel_box_->setRange(0, channels - 1);
  }
  const auto ch = static_cast<std::size_t>(channel_slider_->value());
  const std::vector<std::string> dates = unknownDates();
  const auto& pairs = doc_->pairs();
  std::vector<double> v;
  MapStyle style;
  const QString file = QFileInfo(doc_->cubeName()).fileName();
  channel_date_->clear();
  switch (L) {
    case Layer::Solution:
      v = plane(result->x, ch);
      if (!dates.empty()) {
        channel_date_->setText(iso_day(dates[ch + 1]));
        style.title = tr("%1 — x[%2]: %3, relative to %4").arg(file).arg(ch).arg(iso_day(dates[ch + 1]), iso_day(dates[0]));
      } else {
        style.title = tr("%1 — x[%2] of %3").arg(file).arg(ch).arg(channels);
      }
      break;
    case Layer::Model:
      v = plane(model_band(*design, result->x, ch));
      if (ch < pairs.size()) channel_date_->setText(QString::fromStdString(pairs[ch].first + "_" + pairs[ch].second));
      style.title = ch < pairs.size() ? tr("%1 — model A·x, observation %2 (%3, gaps filled)").arg(file).arg(ch).arg(channel_date_->text())
                                      : tr("%1 — model A·x, observation %2 (gaps filled)").arg(file).arg(ch);
      break;
    case Layer::ResidualRms: v = plane(residual_rms(*result)); style.title = tr("%1 — residual RMS").arg(file); break;
    case Layer::Rank:
      v = plane(result->rank);
      style.title = tr("%1 — numerical rank of A_V (of %2)").arg(file).arg(design->cols());
      style.integers = true;
      break;
    case Layer::Status:
      v = plane(result->status);
      style.title = tr("%1 — status of each pixel").arg(file);
      for (int k = 0; k < static_cast<int>(kStatusCount); ++k)  // a stack's reference pixel where there is one
        if (static_cast<PixelStatus>(k) != PixelStatus::Reference || result->count(PixelStatus::Reference) > 0)
          style.categories.emplace_back(k, QString::fromUtf8(status_name(static_cast<PixelStatus>(k))));
      break;
    case Layer::Velocity:
      if (dates.empty()) {
        result_view_->clear(tr("%1 — a linear velocity needs a design with dates (an SBAS network)").arg(file));
        return;
      }
      v = plane(linear_rate(result->x, years_of(dates)));
      style.title = tr("%1 — linear velocity of the time series, per year (%2 to %3)").arg(file).arg(iso_day(dates.front()), iso_day(dates.back()));
      break;
  }
  const LayerView& lv = layer_views_[static_cast<std::size_t>(L)];
  style.scale = layerScale(L, v);
  if (lv.auto_range) {  // the range in use, shown (and the start of a fixed one)
    const QSignalBlocker b1(range_lo_), b2(range_hi_);
    range_lo_->setValue(style.scale.lo);
    range_hi_->setValue(style.scale.hi);
  }
  result_view_->setImage(std::move(v), H, W, style);
  result_view_->setMarker(selected_row_, selected_col_);
}

QString MainWindow::inspectorText() const { return inspector_text_->toPlainText(); }

std::vector<std::string> MainWindow::unknownDates() const {
  const auto design = doc_->design();
  std::vector<std::string> dates = doc_->dates();
  if (!design || dates.size() != design->cols() + 1) dates.clear();
  return dates;
}

void MainWindow::showPixelMenu(int row, int col, const QPoint& global) {
  QMenu menu(this);
  menu.addAction(tr("Inspect pixel (%1, %2)").arg(row).arg(col), this, [this, row, col] {
    selectPixel(row, col);
    showView(View::Inspector);
  });
  menu.addAction(tr("Pin pixel (%1, %2) in the inspector").arg(row).arg(col), this, [this, row, col] {
    selectPixel(row, col);
    pinPixel();
  });
  if (doc_->isStack())
    menu.addAction(tr("Use (%1, %2) as the reference pixel (reads the stack again)").arg(row).arg(col), this,
                   [this, row, col] { setReferencePixel(row, col); });
  menu.exec(global);
}

ColorScale MainWindow::layerScale(Layer L, const std::vector<double>& v) const {
  const LayerView& lv = layer_views_[static_cast<std::size_t>(L)];
  const bool signed_data = L == Layer::Solution || L == Layer::Model || L == Layer::Velocity;
  static const Colormap kMaps[] = {Colormap::Viridis, Colormap::Viridis, Colormap::RdBu, Colormap::Twilight, Colormap::Grey};
  ColorScale scale;
  scale.map = lv.colormap > 0 ? kMaps[lv.colormap] : signed_data ? Colormap::RdBu : Colormap::Viridis;
  scale.reversed = lv.reversed;
  const auto design = doc_->design();
  if (L == Layer::Status) {
    scale.lo = 0;
    scale.hi = 4;
  } else if (L == Layer::Rank && lv.auto_range) {
    scale.lo = 0;
    scale.hi = design ? static_cast<double>(design->cols()) : 1;
  } else if (lv.auto_range) {
    std::tie(scale.lo, scale.hi) = robust_range(v.data(), v.size(), scale.map == Colormap::RdBu);
  } else {
    scale.lo = lv.lo;
    scale.hi = lv.hi;
  }
  return scale;
}

void MainWindow::showHover(int row, int col, double value) {
  QString where = tr("row %1, column %2").arg(row).arg(col);
  const auto& t = doc_->geo().transform;
  if (t.size() == 6) {  // the pixel's centre in map coordinates
    const double x = t[0] + (col + 0.5) * t[1] + (row + 0.5) * t[2], y = t[3] + (col + 0.5) * t[4] + (row + 0.5) * t[5];
    where += tr(" (x %1, y %2)").arg(x, 0, 'f', 2).arg(y, 0, 'f', 2);
  }
  statusBar()->showMessage(tr("%1: %2").arg(where, fmt(value)), 3000);
}

void MainWindow::selectPixel(int row, int col) {
  selected_row_ = row;
  selected_col_ = col;
  gaps_->setMarker(row, col);
  result_view_->setMarker(row, col);
  updateInspector();
}

ChartView::Series MainWindow::pixelSeries(int row, int col) const {
  ChartView::Series s;
  const auto cube = doc_->cube();
  const std::size_t W = cube->dim(2), P = cube->dim(1) * W, N = cube->dim(0);
  const std::size_t p = static_cast<std::size_t>(row) * W + static_cast<std::size_t>(col);
  const auto weights = doc_->useWeights() ? doc_->weights() : nullptr;
  s.observed.resize(N);
  for (std::size_t i = 0; i < N; ++i) {
    s.observed[i] = cube->value(i * P + p);
    if (weights && !(weights->value(i * P + p) > 0)) s.observed[i] = std::nan("");
  }
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (result && design && result->x.dim(0) == design->cols()) s.fitted = pixel_model(*design, result->x, p);
  s.label = QString("(%1, %2)").arg(row).arg(col);
  return s;
}

void MainWindow::pinPixel() {
  if (selected_row_ < 0) return;
  const std::pair<int, int> px{selected_row_, selected_col_};
  if (std::find(pinned_.begin(), pinned_.end(), px) == pinned_.end()) pinned_.push_back(px);
  updateInspector();
}

void MainWindow::clearPins() {
  pinned_.clear();
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
  const std::size_t W = cube->dim(2), P = cube->dim(1) * W;
  const std::size_t p = static_cast<std::size_t>(selected_row_) * W + static_cast<std::size_t>(selected_col_);
  QString text = tr("Pixel row %1, column %2\n").arg(selected_row_).arg(selected_col_);
  const auto result = doc_->result();
  const auto design = doc_->design();
  std::vector<ChartView::Series> series{pixelSeries(selected_row_, selected_col_)};
  if (!series[0].fitted.empty()) {
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
  const std::size_t H = cube->dim(1);
  pinned_.erase(std::remove_if(pinned_.begin(), pinned_.end(),
                               [H, W](const std::pair<int, int>& px) {  // pins of another cube's size
                                 return px.first < 0 || px.second < 0 || static_cast<std::size_t>(px.first) >= H ||
                                        static_cast<std::size_t>(px.second) >= W;
                               }),
                pinned_.end());
  if (!pinned_.empty()) text += tr("\nPinned for comparison:\n");
  for (const auto& [r, c] : pinned_) {
    if (r == selected_row_ && c == selected_col_) continue;
    series.push_back(pixelSeries(r, c));
    const std::size_t q = static_cast<std::size_t>(r) * W + static_cast<std::size_t>(c);
    text += QString("  (%1, %2)").arg(r).arg(c);
    if (!series.back().fitted.empty())
      text += tr(": %1, rss %2").arg(status_name(static_cast<PixelStatus>(result->status.data<std::uint8_t>()[q]))).arg(fmt(result->rss.value(q)));
    text += "\n";
  }
  unpin_->setEnabled(!pinned_.empty());
  // With dates: the pixel's time series, and the dates its network leaves undetermined.
  const std::vector<std::string> dates = unknownDates();
  // (Set whether the page is shown or not: isVisible() is false on a hidden page.)
  const bool with_series = !dates.empty() && !series[0].fitted.empty();
  series_->setVisible(with_series);
  if (with_series) {
    std::vector<bool> valid(series[0].observed.size());
    for (std::size_t i = 0; i < valid.size(); ++i) valid[i] = std::isfinite(series[0].observed[i]);
    const std::vector<bool> unknown = undetermined_unknowns(*design, valid);
    const std::vector<double> t = years_of(dates);
    std::vector<double> values{0.0};
    std::vector<bool> undetermined{false};
    for (std::size_t j = 0; j < inspected_x_.size(); ++j) {
      values.push_back(inspected_x_[j]);
      undetermined.push_back(unknown[j]);
    }
    std::vector<double> ticks;
    QStringList labels;
    const std::size_t step = std::max<std::size_t>(1, dates.size() / 6);
    for (std::size_t i = 0; i < dates.size(); i += step) {
      ticks.push_back(t[i]);
      labels << iso_day(dates[i]);
    }
    const auto n_undetermined = std::count(undetermined.begin(), undetermined.end(), true);
    series_->setTimeSeries(t, values, undetermined, ticks, labels, tr("displacement (cube units)"),
                           n_undetermined ? tr("time series of (%1, %2): %3 dates undetermined (minimum norm)")
                                                .arg(selected_row_).arg(selected_col_).arg(n_undetermined)
                                          : tr("time series of (%1, %2)").arg(selected_row_).arg(selected_col_));
    if (n_undetermined) text += tr("\n%1 dates undetermined: the network of this pixel does not reach them.\n").arg(n_undetermined);
  }
  inspector_text_->setPlainText(text);
  inspector_->setSeries(series, tr("pixel (%1, %2): observations (× missing) and fit").arg(selected_row_).arg(selected_col_));
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
  saveParameters();
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

void MainWindow::showGaps(bool mask, int band) {
  gaps_mode_->setCurrentIndex(mask ? 1 : 0);
  band_slider_->setValue(band);
  updateGaps();
}

bool MainWindow::exportViewPng(const QString& path, int scale) {
  for (const QString& input : {doc_->cubeName(), doc_->designName(), doc_->weightsName()})
    if (!input.isEmpty() && same_file(path.toStdString(), file_of(input.toStdString()))) {
      fail(tr("%1: expected the image apart from the inputs, found it is %2, which is open").arg(path, input));
      return false;
    }
  // A map as a figure at data resolution (its title, its legend, the colours
  // on screen); a chart as drawn.
  QImage image;
  ImageView* map = currentView() == View::Gaps ? gaps_ : currentView() == View::Result ? result_view_ : nullptr;
  if (map && map->imageHeight() > 0)
    image = map->figure(scale > 0 ? scale : default_figure_scale(map->imageHeight(), map->imageWidth()));
  else if (currentView() == View::Groups)
    image = groups_->grab();
  else if (currentView() == View::Inspector)
    image = pages_.at(View::Inspector)->grab().toImage();
  if (image.isNull()) {
    fail(tr("%1: nothing to export: the view is empty").arg(path));
    return false;
  }
  QSaveFile file(path);  // the whole image or none
  const QByteArray png = png_bytes(image);
  if (png.isEmpty() || !file.open(QIODevice::WriteOnly) || file.write(png) != png.size() || !file.commit()) {
    fail(tr("%1: cannot write the PNG image: %2").arg(path, file.errorString()));
    return false;
  }
  statusBar()->showMessage(tr("Wrote %1 (%2 × %3 pixels)").arg(path).arg(image.width()).arg(image.height()), 10000);
  emit exported({path});
  return true;
}

void MainWindow::exportChannelsPng(const QString& folder, int scale) {
  const auto design = doc_->design();
  if (!design || !doc_->result()) return fail(tr("Nothing to export: solve first."));
  const LayerView& lv = layer_views_[static_cast<std::size_t>(Layer::Solution)];
  MapStyle style;
  style.scale = layerScale(Layer::Solution, {});
  style.title = QFileInfo(doc_->cubeName()).fileName() + " — x[%1] of " + QString::number(design->cols());
  doc_->exportChannels(folder, style, lv.auto_range, scale);
}

void MainWindow::addRecent(const QStringList& files) {
  QSettings settings;
  QStringList recent = settings.value("recent_sets").toStringList();
  const QString entry = files.join('\n');
  recent.removeAll(entry);
  recent.prepend(entry);
  while (recent.size() > 10) recent.removeLast();
  settings.setValue("recent_sets", recent);
  rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu() {
  // Each entry is a cube with the design and weights it was opened with.
  recent_menu_->clear();
  for (const QString& entry : QSettings().value("recent_sets").toStringList()) {
    const QStringList files = entry.split('\n');
    QStringList names;
    for (const QString& f : files)
      if (!f.isEmpty()) names << QFileInfo(f).fileName();
    auto* action = recent_menu_->addAction(names.join(" + "), this, [this, files] {
      doc_->openFiles(files[0], files.value(1), files.value(2));
    });
    action->setToolTip(files.join("\n"));
  }
  recent_menu_->setToolTipsVisible(true);
  recent_menu_->setEnabled(!recent_menu_->isEmpty());
}

void MainWindow::closeEvent(QCloseEvent* e) {
  saveSession();
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
