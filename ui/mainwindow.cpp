#include "mainwindow.hpp"

#include "exports.hpp"
#include "gapspage.hpp"
#include "groupspage.hpp"
#include "imageview.hpp"
#include "inspectorpage.hpp"
#include "markspanel.hpp"
#include "profilechart.hpp"
#include "parameterspanel.hpp"
#include "session.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/io/raster.hpp>

#include <QAction>
#include <QApplication>
#include <QCloseEvent>
#include <QDockWidget>
#include <QDragEnterEvent>
#include <QFileDialog>
#include <QFile>
#include <QFileInfo>
#include <QInputDialog>
#include <QKeyEvent>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextBrowser>

#include <vtkVersion.h>

#include <algorithm>

namespace cubesolve::ui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), doc_(new Document(this)) {
  setWindowTitle("CubeSolve");
  setAcceptDrops(true);
  gaps_ = new GapsPage(doc_);
  groups_ = new GroupsPage(doc_);
  result_ = new ResultPage(doc_);
  inspector_ = new InspectorPage(doc_);
  tabs_ = new QTabWidget;
  for (const auto& [view, page, title] : {std::tuple<View, QWidget*, QString>{View::Gaps, gaps_, tr("&Gaps")},
                                          {View::Groups, groups_, tr("G&roups")},
                                          {View::Result, result_, tr("&Result")},
                                          {View::Inspector, inspector_, tr("&Inspector")}}) {
    pages_[view] = page;
    tabs_->addTab(page, title);
  }
  setCentralWidget(tabs_);
  dock_ = new QDockWidget(tr("Data and parameters"), this);
  dock_->setObjectName("data-dock");
  dock_->setWidget(panel_ = new ParametersPanel(doc_));
  addDockWidget(Qt::LeftDockWidgetArea, dock_);
  marks_dock_ = new QDockWidget(tr("Points and profiles"), this);
  marks_dock_->setObjectName("marks-dock");
  marks_dock_->setWidget(marks_ = new MarksPanel(doc_));
  addDockWidget(Qt::LeftDockWidgetArea, marks_dock_);
  connect(marks_, &MarksPanel::drawProfile, this, &MainWindow::drawProfile);
  connect(marks_, &MarksPanel::drawReferenceArea, this, &MainWindow::drawReferenceArea);
  tabifyDockWidget(dock_, marks_dock_);  // a tab beside the data and parameters: the window keeps its size
  dock_->raise();
  session_ = new Session(doc_, this);  // after the pages: what it restores once a cube is read lands on them
  exports_ = new Exports(doc_, this,
                         {[this] { return currentView() == View::Gaps ? gaps_->view() : currentView() == View::Result ? result_->view() : nullptr; },
                          [this](int scale) { return picture(scale); },
                          result_,
                          [this] { return exportableCharts(); }});
  buildStatusBar();
  buildFileMenu();
  buildOtherMenus();
  connectDocument();
  connectMaps();
  QSettings settings;
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
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
  doc_->disconnect();
}

ImageView* MainWindow::gapsView() const { return gaps_->view(); }
ImageView* MainWindow::resultView() const { return result_->view(); }
ChartView* MainWindow::groupsChart() const { return groups_->chart(); }
ChartView* MainWindow::inspectorChart() const { return inspector_->chart(); }
ChartView* MainWindow::seriesChart() const { return inspector_->seriesChart(); }
QString MainWindow::inspectorText() const { return inspector_->text(); }
const std::vector<double>& MainWindow::inspectedX() const { return inspector_->inspectedX(); }
QString MainWindow::notice() const { return panel_->notice(); }

void MainWindow::setMethod(Method method) {
  SolveOptions o = doc_->options();
  o.method = method;
  doc_->setOptions(o);
}

void MainWindow::buildStatusBar() {
  progress_ = new QProgressBar;
  progress_->setRange(0, 1000);
  progress_->setMaximumWidth(220);
  progress_->hide();
  cancel_ = new QPushButton(tr("Cancel"));
  cancel_->setToolTip(tr("Stop the solve, read or export; what is shown stays (Esc)"));
  cancel_->hide();
  connect(cancel_, &QPushButton::clicked, this, &MainWindow::cancelSolve);
  // One current message: the solve's summary yields to a passing message
  // (hidden while it shows), and goes when another cube is opened.
  status_ = new QLabel;
  status_->setObjectName("solve-summary");
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_);
}

void MainWindow::buildFileMenu() {
  auto* file = menuBar()->addMenu(tr("&File"));
  file->addAction(tr("Open &cube…"), QKeySequence::Open, this, [this] {
    const QString p = QFileDialog::getOpenFileName(this, tr("Open cube (N, H, W)"), {},
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
      const QString times = QFileDialog::getOpenFileName(this, tr("Times, one per band (numbers or YYYYMMDD); cancel for band index"), {},
                                                         tr("Text (*.txt);;All files (*)"));
      buildDesign(spec.arg(k), {}, times);
    });
  }
  auto* demos = file->addMenu(tr("Open d&emo"));
  demos->addAction(tr("InSAR stack"), this, [this] { openDemo("insar"); });
  demos->addAction(tr("Seed setting (N=50, M=100)"), this, [this] { openDemo("seed"); });
  recent_menu_ = file->addMenu(tr("&Recent files"));
  rebuildRecentMenu();
  file->addSeparator();
  exports_->addActions(file);
  file->addSeparator();
  file->addAction(tr("&Quit"), QKeySequence::Quit, this, &QWidget::close);
}

void MainWindow::buildOtherMenus() {
  auto* solve_menu = menuBar()->addMenu(tr("&Solve"));
  solve_menu->addAction(tr("&Solve"), QKeySequence(Qt::Key_F5), this, &MainWindow::solve);
  solve_menu->addAction(tr("&Cancel"), QKeySequence(Qt::Key_Escape), this, &MainWindow::cancelSolve);
  auto* view = menuBar()->addMenu(tr("&View"));
  for (const auto& [v, label, key] : {std::tuple{View::Gaps, tr("&Gaps"), "Ctrl+1"}, std::tuple{View::Groups, tr("G&roups"), "Ctrl+2"},
                                      std::tuple{View::Result, tr("&Result"), "Ctrl+3"}, std::tuple{View::Inspector, tr("&Inspector"), "Ctrl+4"}})
    view->addAction(label, QKeySequence(tr(key)), this, [this, v = v] { showView(v); });
  view->addSeparator();
  auto* toggle = dock_->toggleViewAction();
  toggle->setText(tr("&Data and parameters panel"));
  toggle->setShortcut(QKeySequence(tr("Ctrl+P")));
  view->addAction(toggle);
  auto* marks = marks_dock_->toggleViewAction();
  marks->setText(tr("P&oints and profiles panel"));
  view->addAction(marks);
  view->addAction(tr("Draw a &profile on the result map"), QKeySequence(tr("Ctrl+L")), this, &MainWindow::drawProfile);
  view->addAction(tr("Draw a reference &area on the result map"), this, &MainWindow::drawReferenceArea);
  view->addAction(tr("Reset &zoom"), QKeySequence(tr("Ctrl+0")), this, [this] {
    gaps_->view()->resetCamera();
    result_->view()->resetCamera();
  });
  link_maps_ = view->addAction(tr("&Link maps"));
  link_maps_->setObjectName("link-maps");
  link_maps_->setCheckable(true);
  link_maps_->setChecked(true);
  link_maps_->setToolTip(tr("Pan and zoom the gaps and result maps together"));
  auto* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&User guide"), QKeySequence::HelpContents, this, &MainWindow::showGuide);
  help->addAction(tr("&About CubeSolve"), this, [this] {
    QString devices;
    for (const auto& d : describe_devices()) devices += QString::fromStdString(d) + "<br>";
    QMessageBox::about(this, tr("About CubeSolve"),
                       tr("<b>CubeSolve %1</b><br>Per-pixel minimum-norm least squares on data cubes with gaps."
                          "<br><br>Qt %2, VTK %3<br>Compute devices:<br>%4")
                           .arg(version(), qVersion(), vtkVersion::GetVTKVersion(), devices));
  });
}

void MainWindow::showGuide() {
  auto* guide = findChild<QTextBrowser*>("guide");
  if (!guide) {
    QFile file(":/guide.md");
    guide = new QTextBrowser(this);
    guide->setObjectName("guide");
    guide->setWindowFlag(Qt::Window);
    guide->setWindowTitle(tr("CubeSolve user guide"));
    guide->setOpenExternalLinks(true);
    guide->setMarkdown(file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : tr("The guide is missing from this build."));
    guide->resize(720, 760);
  }
  guide->show();
  guide->raise();
}

void MainWindow::connectDocument() {
  auto show_message = [this](const QString& text, int timeout) { statusBar()->showMessage(text, timeout); };
  connect(panel_, &ParametersPanel::message, this, show_message);
  connect(groups_, &GroupsPage::message, this, show_message);
  connect(exports_, &Exports::message, this, show_message);
  connect(exports_, &Exports::failed, this, &MainWindow::fail);
  connect(exports_, &Exports::exported, this, &MainWindow::exported);
  connect(groups_, &GroupsPage::highlighted, gaps_->view(), &ImageView::setOverlay);
  connect(session_, &Session::restored, this, [this](const Session::View& v) {
    gaps_->show(v.gaps_mode == 1, v.band);
    result_->show(static_cast<Layer>(std::clamp(v.layer, 0, static_cast<int>(kLayerCount) - 1)), v.channel);
    showView(static_cast<View>(std::clamp(v.view, 0, static_cast<int>(View::Inspector))));
  });
  connect(doc_, &Document::loaded, this, &MainWindow::onLoaded);
  connect(doc_, &Document::solveStarted, this, [this] { showSolving(true); });
  connect(doc_, &Document::progress, this, [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); });
  // Reads and exports: their progress and Cancel, as a solve's.
  Worker& worker = doc_->worker();
  auto before = std::make_shared<QString>();  // the status a job's message replaced
  connect(&worker, &Worker::jobStarted, this, [this, before](const QString& job) {
    if (!progress_->isVisible()) *before = status_->text();
    showSolving(true);
    status_->setText(tr("%1…").arg(job.left(1).toUpper() + job.mid(1)));
  });
  connect(&worker, &Worker::jobProgress, this, [this](double f) { progress_->setValue(static_cast<int>(f * 1000)); });
  connect(&worker, &Worker::jobEnded, this, [this, before] {
    if (doc_->worker().jobsRunning() || doc_->solving()) return;
    showSolving(false);
    status_->setText(*before);
  });
  connect(doc_, &Document::jobCancelled, this, [this] {
    status_->setText(doc_->cube() ? tr("Cancelled; what was open stays.") : tr("Cancelled."));
  });
  connect(doc_, &Document::solved, this, &MainWindow::onSolved);
  connect(doc_, &Document::solveCancelled, this, [this] {
    showSolving(false);
    status_->setText(doc_->result() ? tr("Solve cancelled; the previous result and its parameters are kept.") : tr("Solve cancelled."));
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

void MainWindow::connectMaps() {
  for (ImageView* v : {gaps_->view(), result_->view()}) {
    connect(v, &ImageView::pixelClicked, doc_, &Document::selectPixel);
    connect(v, &ImageView::pixelHovered, this, [this, v](int row, int col, double value) { showHover(row, col, value, v->style().unit); });
    connect(v, &ImageView::pixelMenuRequested, this, &MainWindow::showPixelMenu);
    // The reference pixel, the pins (each its colour) and the selection on every map.
    auto mark = [this, v] {
      std::vector<ImageView::Marker> pins;
      for (std::size_t k = 0; k < doc_->pins().size(); ++k)
        if (doc_->pinShown(k)) pins.push_back({doc_->pins()[k].first, doc_->pins()[k].second, pin_color(k)});
      v->setMarks(ImageView::Mark::Pin, std::move(pins));
      const auto [ref_row, ref_col] = doc_->reference();
      v->setMarks(ImageView::Mark::Reference, ref_row >= 0 && doc_->referenceShown() ? std::vector<ImageView::Marker>{{ref_row, ref_col, Qt::white}}
                                                                                    : std::vector<ImageView::Marker>{});
      v->setMarker(doc_->selected().first, doc_->selected().second);
    };
    auto lines = [this, v] {  // the profiles, and the reference area's outline
      std::vector<ImageView::Line> shown;
      for (std::size_t k = 0; k < doc_->profiles().size(); ++k)
        if (doc_->profiles()[k].shown) shown.push_back({doc_->profiles()[k].vertices, pin_color(k)});
      if (const auto& area = doc_->referenceArea(); area && doc_->referenceShown()) {
        const double r0 = (*area)[0] - 0.5, c0 = (*area)[1] - 0.5, r1 = (*area)[2] + 0.5, c1 = (*area)[3] + 0.5;  // about its pixels
        shown.push_back({{{r0, c0}, {r0, c1}, {r1, c1}, {r1, c0}, {r0, c0}}, Qt::white});
      }
      v->setLines(std::move(shown));
    };
    connect(doc_, &Document::selectionChanged, v, mark);
    connect(doc_, &Document::loaded, v, mark);
    connect(doc_, &Document::profilesChanged, v, lines);
    connect(doc_, &Document::selectionChanged, v, lines);
    connect(doc_, &Document::loaded, v, lines);
    connect(v, &ImageView::lineDrawn, doc_, [this](const std::vector<std::array<double, 2>>& vertices) {
      doc_->addProfile(vertices);
      statusBar()->clearMessage();
    });
    connect(v, &ImageView::rectangleDrawn, doc_, [this](int r0, int c0, int r1, int c1) {
      doc_->setReferenceArea(std::array{r0, c0, r1, c1});
      statusBar()->clearMessage();
    });
    connect(v, &ImageView::stepRequested, doc_, [this, v](int rows, int cols) {
      const auto [row, col] = doc_->selected();
      if (row < 0) return doc_->selectPixel(v->imageHeight() / 2, v->imageWidth() / 2);
      doc_->selectPixel(std::clamp(row + rows, 0, v->imageHeight() - 1), std::clamp(col + cols, 0, v->imageWidth() - 1));
    });
    // Linked maps: pan or zoom one, the other follows (where they are alike).
    connect(v, &ImageView::cameraChanged, this, [this, v] {
      if (!link_maps_->isChecked()) return;
      for (ImageView* other : {gaps_->view(), result_->view()})
        if (other != v && other->imageHeight() == v->imageHeight() && other->imageWidth() == v->imageWidth()) other->setCamera(v->camera());
    });
  }
}

void MainWindow::showView(View view) { tabs_->setCurrentWidget(pages_.at(view)); }

MainWindow::View MainWindow::currentView() const {
  for (const auto& [view, page] : pages_)
    if (page == tabs_->currentWidget()) return view;
  return View::Gaps;
}

void MainWindow::showLayer(Layer layer, int channel) { result_->show(layer, channel); }
void MainWindow::setColours(Layer layer, Colormap map, bool reversed) { result_->setColours(layer, map, reversed); }
void MainWindow::showGaps(bool mask, int band) { gaps_->show(mask, band); }
void MainWindow::selectGroupBin(int bin) { groups_->selectBin(bin); }

void MainWindow::showReferenceCandidates() {
  const MaskStats* m = doc_->masks();
  if (!m) return;
  std::vector<std::uint8_t> allowed(m->pixels());
  std::size_t count = 0;
  for (std::size_t p = 0; p < allowed.size(); ++p) count += allowed[p] = static_cast<std::size_t>(m->n_valid[p]) == m->n;
  gaps_->show(false, 0);
  gaps_->view()->setOverlay(allowed);
  showView(View::Gaps);
  statusBar()->showMessage(tr("%1 pixels are valid in every interferogram (highlighted): any of them can be the reference").arg(count), 15000);
}

QImage MainWindow::picture(int scale) const {
  ImageView* map = currentView() == View::Gaps ? gaps_->view() : currentView() == View::Result ? result_->view() : nullptr;
  if (map) return map->imageHeight() > 0 ? map->figure(scale) : QImage();
  if (currentView() == View::Groups) return groups_->chart()->grab();
  return inspector_->grab().toImage();
}

std::vector<std::pair<QString, ChartView*>> MainWindow::exportableCharts() {
  if (currentView() == View::Groups) return {{tr("Histogram of mask groups"), groups_->chart()}};
  if (currentView() == View::Result && result_->profileChart()->shown()) return {{tr("Profiles"), result_->profileChart()}};
  if (doc_->selected().first < 0) return {};
  showView(View::Inspector);
  QCoreApplication::sendPostedEvents();
  std::vector<std::pair<QString, ChartView*>> charts;
  if (!inspector_->seriesChart()->isHidden()) charts.emplace_back(tr("Time series"), inspector_->seriesChart());
  charts.emplace_back(tr("Observations and fit"), inspector_->chart());
  return charts;
}

bool MainWindow::exportViewPng(const QString& path, int scale) { return exports_->viewPng(path, scale); }
void MainWindow::exportChannels(const QString& folder, int scale, const QString& format, bool per_channel) {
  exports_->channels(folder, scale, format, per_channel);
}

void MainWindow::drawProfile() { beginDrawing(false); }
void MainWindow::drawReferenceArea() { beginDrawing(true); }

void MainWindow::beginDrawing(bool area) {
  const QString what = area ? tr("a reference area") : tr("a profile");
  if (result_->view()->imageHeight() == 0) return statusBar()->showMessage(tr("Solve first: %1 is drawn on the result map").arg(what), 8000);
  showView(View::Result);
  if (area) {
    result_->view()->beginRectangle();
  } else {
    marks_dock_->show();
    marks_dock_->raise();  // where the profile will be listed
    result_->view()->beginLine();
  }
  statusBar()->showMessage(area ? tr("Reference area: press at one corner and release at the other; Esc cancels")
                                : tr("Profile: click its points on the map; double-click or Enter ends it, Esc cancels it"),
                           30000);
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
  if (doc_->isStack()) {
    // A reference must be valid in every interferogram (the current one is,
    // though referencing leaves it none).
    const MaskStats* m = doc_->masks();
    const std::size_t p = static_cast<std::size_t>(row) * m->width + static_cast<std::size_t>(col);
    const bool allowed = static_cast<std::size_t>(m->n_valid[p]) == m->n || doc_->reference() == std::make_pair(row, col);
    QAction* use = menu.addAction(allowed ? tr("Use (%1, %2) as the reference pixel (reads the stack again)").arg(row).arg(col)
                                          : tr("(%1, %2) cannot be the reference: it is missing in %3 of %4 interferograms")
                                                .arg(row).arg(col).arg(m->n - static_cast<std::size_t>(m->n_valid[p])).arg(m->n),
                                  this, [this, row, col] { setReferencePixel(row, col); });
    use->setEnabled(allowed);
    menu.addAction(tr("Show the pixels allowed as reference on the gaps map"), this, [this] { showReferenceCandidates(); });
  }
  menu.exec(global);
}

void MainWindow::showHover(int row, int col, double value, const QString& unit) {
  QString where = tr("row %1, column %2").arg(row).arg(col);
  where += mapCoordinates(doc_->geo(), row, col);
  const QString shown = std::isfinite(value) ? QString::number(value, 'g', 6) + (unit.isEmpty() ? QString() : " " + unit) : QStringLiteral("—");
  statusBar()->showMessage(tr("%1: %2").arg(where, shown), 3000);
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
    auto* action = recent_menu_->addAction(names.join(" + "), this, [this, files] { doc_->openFiles(files[0], files.value(1), files.value(2)); });
    action->setToolTip(files.join("\n"));
  }
  recent_menu_->setToolTipsVisible(true);
  recent_menu_->setEnabled(!recent_menu_->isEmpty());
}

void MainWindow::saveSession() const {
  session_->save({static_cast<int>(currentView()), static_cast<int>(result_->layer()), result_->channel(), gaps_->showsMask() ? 1 : 0,
                  gaps_->band()});
}

bool MainWindow::restoreSession() { return session_->restore(); }

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
  if (!doc_->cube()) return;
  if (doc_->unreferenced())
    statusBar()->showMessage(tr("%1 has no reference pixel (REF_Y/REF_X) or refPhase: read unreferenced. "
                                "Right-click a pixel to reference the interferograms there.")
                                 .arg(QFileInfo(doc_->cubeName()).fileName()),
                             20000);
  setWindowTitle(tr("CubeSolve — %1").arg(QFileInfo(doc_->cubeName()).fileName()));
  if (!doc_->result() && !doc_->solving()) status_->clear();  // the previous cube's summary
  if (QFileInfo(doc_->cubeName()).isFile()) addRecent(doc_->files());
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
  QStringList warnings;  // the solve's, and a stored engine parameters' line passed over
  for (const auto& w : tuning_state().warnings) warnings << QString::fromStdString(w);
  for (const auto& w : r.warnings) warnings << QString::fromStdString(w);
  if (!warnings.isEmpty()) statusBar()->showMessage(warnings.join("; "), 10000);
  emit solveFinished();
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
