// The desktop application under Xvfb: what it renders, what its views
// count, that every read, solve and export runs on the worker thread,
// cancelling, exporting.
#include "chartview.hpp"
#include "document.hpp"
#include "gui_test.hpp"
#include "imageview.hpp"
#include "mainwindow.hpp"

#include "cuda/backend.hpp"
#include "stack.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/raster.hpp>

#include <QAbstractButton>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTextBrowser>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

#include <cmath>
#include <functional>
#include <set>

using namespace cubesolve;
using cubesolve::ui::Document;
using cubesolve::ui::ImageView;
using cubesolve::ui::MainWindow;

namespace {

std::vector<double> channel(const Array& x, std::size_t j) {
  const std::size_t P = x.dim(1) * x.dim(2);
  std::vector<double> v(P);
  for (std::size_t p = 0; p < P; ++p) v[p] = x.value(j * P + p);
  return v;
}

}  // namespace

class TestGui : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;

  /// A demo's cube and design as .npy files NAME_cube.npy and NAME_A.npy.
  std::pair<std::string, std::string> demoFiles(const char* demo, std::size_t size, const QString& name) {
    const DemoCube d = make_demo(demo, size);
    const std::string cube = dir_.filePath(name + "_cube.npy").toStdString(), design = dir_.filePath(name + "_A.npy").toStdString();
    OutputSet in;
    in.add_npy(cube, d.cube);
    in.add_npy(design, d.design);
    in.commit();
    return {cube, design};
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    isolateSettings(dir_.filePath("settings"));
  }

  void init() { QSettings().clear(); }  // each test starts as on a new machine

  void resultViewDrawsTheChannel() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 800));
    QVERIFY(demoSolved(w, "insar", 96));
    w.showView(MainWindow::View::Result);
    for (int ch : {0, 28}) {
      w.showLayer(MainWindow::Layer::Solution, ch);
      QTest::qWait(50);
      auto* view = w.resultView();
      const QImage img = view->grab().convertToFormat(QImage::Format_RGB32);
      QVERIFY(!img.isNull());
      // Every sampled screen pixel inside the map has the colour the colour
      // map gives the engine's value there (robust range, diverging map).
      const auto values = channel(w.result()->x, static_cast<std::size_t>(ch));
      const auto [lo, hi] = robust_range(values.data(), values.size(), true);
      const std::uint8_t* lut = colormap_table(Colormap::RdBu);
      int checked = 0, matched = 0;
      std::set<QRgb> colours;
      const qreal ratio = view->devicePixelRatioF();
      for (int sy = 20; sy < view->height() - 20; sy += 13)
        for (int sx = 20; sx < view->width() - 20; sx += 17) {
          int row, col;
          if (sx > view->width() * 0.85 || !view->pixelAt(QPoint(sx, sy), row, col)) continue;  // not the colour bar
          bool interior = true;  // away from the edges between map pixels
          for (const QPoint d : {QPoint(2, 0), QPoint(-2, 0), QPoint(0, 2), QPoint(0, -2)}) {
            int r2, c2;
            interior = interior && view->pixelAt(QPoint(sx, sy) + d, r2, c2) && r2 == row && c2 == col;
          }
          if (!interior) continue;
          const double v = values[static_cast<std::size_t>(row) * 96 + static_cast<std::size_t>(col)];
          const QRgb got = img.pixel(static_cast<int>(sx * ratio), static_cast<int>(sy * ratio));
          colours.insert(got);
          int r = 128, g = 128, b = 128;
          if (std::isfinite(v)) {
            const int k = static_cast<int>(std::clamp((v - lo) / (hi - lo), 0.0, 1.0) * 255 + 0.5);
            r = lut[3 * k];
            g = lut[3 * k + 1];
            b = lut[3 * k + 2];
          }
          ++checked;
          if (std::abs(qRed(got) - r) <= 12 && std::abs(qGreen(got) - g) <= 12 && std::abs(qBlue(got) - b) <= 12) ++matched;
        }
      QVERIFY2(checked > 50, qPrintable(QString::number(checked)));
      QVERIFY2(matched >= checked * 9 / 10, qPrintable(QString("%1 of %2 pixels match").arg(matched).arg(checked)));
      QVERIFY(colours.size() > 20);
      if (matched < checked * 9 / 10) img.save(dir_.filePath(QString("actual_channel%1.png").arg(ch)));
    }
  }

  void groupsChartCountsAreTheCores() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 96));
    const auto bins = w.masks()->group_histogram();
    const auto& bars = w.groupsChart()->barValues();
    QCOMPARE(bars.size(), bins.size());
    for (std::size_t i = 0; i < bins.size(); ++i) QCOMPARE(bars[i], static_cast<double>(bins[i].groups));
    // Selecting the largest bin highlights exactly its pixels.
    w.selectGroupBin(static_cast<int>(bins.size()) - 1);
    QVERIFY(bins.back().pixels > 0);
  }

  void inspectorShowsTheEnginesX() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "seed", 40));
    const DemoCube d = make_demo("seed", 40);
    const SolveResult r = solve(d.cube, Design(d.design));
    for (auto [row, col] : {std::pair{3, 5}, std::pair{20, 31}}) {
      w.selectPixel(row, col);
      const auto& x = w.inspectedX();
      QCOMPARE(x.size(), std::size_t{100});
      for (std::size_t j = 0; j < x.size(); ++j)
        QCOMPARE(x[j], r.x.value(j * 1600 + static_cast<std::size_t>(row) * 40 + static_cast<std::size_t>(col)));
    }
    // The inspector follows the selected pixel when the result changes.
    w.selectPixel(7, 9);
    const double before = w.inspectedX()[0];
    QSignalSpy done(&w, &MainWindow::solveFinished);
    w.setMethod(Method::Exact);
    w.solve();
    QVERIFY(done.wait(60000));
    QVERIFY(std::fabs(w.inspectedX()[0] - before) <= 1e-5 * std::max(1.0, std::fabs(before)));
  }

  // With a device (the reference backend standing in for a GPU): the GPU
  // choice solves on it, and changing its precision re-solves there.
  void gpuChoiceAndPrecision() {
    namespace gpu = cubesolve::detail::gpu;
    gpu::set_backend_factory([] { return gpu::make_host_backend(std::size_t{256} << 20, std::size_t{256} << 20); });
    struct Reset {
      ~Reset() { gpu::set_backend_factory(nullptr); }
    } reset;
    MainWindow w;
    w.show();
    auto* device = w.findChild<QComboBox*>("device");
    auto* precision = w.findChild<QComboBox*>("device-precision");
    QVERIFY(device && precision);
    QCOMPARE(device->findData("cuda") >= 0, true);
    device->setCurrentIndex(device->findData("cuda"));
    QVERIFY(demoSolved(w, "seed", 40));
    const DemoCube d = make_demo("seed", 40);
    SolveOptions cpu;
    cpu.output = DType::Float64;
    const SolveResult ref = solve(d.cube, Design(d.design), nullptr, cpu);
    for (const char* mode : {"mixed", "float64"}) {
      if (std::string(mode) == "float64") {
        QSignalSpy done(&w, &MainWindow::solveFinished);
        precision->setCurrentIndex(precision->findData(true));  // re-solves at once
        QVERIFY(done.wait(60000));
      }
      const auto r = w.result();
      QCOMPARE(r->device, Device::Cuda);
      QCOMPARE(r->device_pixels, std::size_t{1600});
      for (std::size_t i = 0; i < r->x.size(); ++i)  // X in the cube's float32
        QVERIFY(std::fabs(r->x.value(i) - ref.x.value(i)) <= 1e-5 * std::max(1.0, std::fabs(ref.x.value(i))));
    }
  }

  void cancelKeepsThePreviousResult() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "seed", 200));
    const auto previous = w.result();
    QVERIFY(previous);
    // The exact path on 40,000 underdetermined pixels takes seconds: cancel
    // it once it has made progress.
    w.setMethod(Method::Exact);
    QSignalSpy progressed(&w.document(), &Document::progress);
    w.solve();
    QVERIFY(w.solving());
    QVERIFY(progressed.wait(30000));
    QSignalSpy cancelled(&w, &MainWindow::solveCancelled);
    QElapsedTimer stop;
    stop.start();
    w.cancelSolve();
    QVERIFY(cancelled.wait(30000));
    qInfo("the worker stopped %lld ms after the cancel", static_cast<long long>(stop.elapsed()));
    QVERIFY(!w.solving());
    QCOMPARE(w.result(), previous);
  }

  // The GUI thread never reads a file, builds a demo, solves or exports:
  // every such job runs on the worker thread, and a call to start one
  // returns before its work is done.
  void everyJobRunsOnTheWorker() {
    const DemoCube d = make_demo("insar", 32);
    const std::string cube = dir_.filePath("jobs_cube.npy").toStdString(), design = dir_.filePath("jobs_A.npy").toStdString();
    const std::string weights = dir_.filePath("jobs_w.npy").toStdString();
    Array w8(DType::Float64, d.cube.shape());
    for (std::size_t i = 0; i < w8.size(); ++i) w8.data<double>()[i] = 1.0 + static_cast<double>(i % 3);
    OutputSet in;
    in.add_npy(cube, d.cube);
    in.add_npy(design, d.design);
    in.add_npy(weights, w8);
    in.commit();
    MainWindow w;
    w.show();
    QSignalSpy loaded(&w, &MainWindow::cubeLoaded);
    w.openDemo("insar", 64);
    QVERIFY(w.masks() == nullptr);  // not yet: the demo is built on the worker
    QVERIFY(loaded.wait(60000));
    QVERIFY(waitSolved(w));
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(cube)); }));
    QVERIFY(loads(w, [&] { w.openDesign(QString::fromStdString(design)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(loads(w, [&] { w.openWeights(QString::fromStdString(weights)); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.result()->paths[static_cast<std::size_t>(SolvePath::Gram)] > 0, true);
    QVERIFY(loads(w, [&] { w.buildDesign("poly:1", {}, {}); }));
    QVERIFY(waitSolved(w));
    QVERIFY(loads(w, [&] { w.openAny(QString::fromStdString(design)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(!exports(w, [&] { w.exportSolution(dir_.filePath("jobs_x.npy")); }).isEmpty());
    const QString folder = dir_.filePath("jobs_channels");
    QVERIFY(QDir().mkpath(folder));
    QVERIFY(!exports(w, [&] { w.exportChannels(folder); }).isEmpty());
    std::set<QString> names;
    for (const auto& [name, on_worker] : w.document().worker().log()) {
      QVERIFY2(on_worker, qPrintable(name + " ran on the GUI thread"));
      names.insert(name);
    }
    for (const char* job : {"demo", "read cube", "read design", "read weights", "build design", "read file", "solve",
                            "export solution", "export channels"})
      QVERIFY2(names.count(job), job);
  }

  void exportMatchesTheCli() {
    const auto files = demoFiles("insar", 48, "cli");
    const std::string cube = files.first, design = files.second;
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(cube)); }));
    QCOMPARE(w.masks()->pixels(), std::size_t{48 * 48});
    QVERIFY(loads(w, [&] { w.openDesign(QString::fromStdString(design)); }));
    QVERIFY(waitSolved(w));
    const QString x_gui = dir_.filePath("x_gui.npy"), x_cli = dir_.filePath("x_cli.npy");
    const QStringList written = exports(w, [&] { w.exportSolution(x_gui); });
    QCOMPARE(written.size(), 7);  // x and the five diagnostics, as the CLI writes them, and how they were made
    for (const char* part : {"_nvalid", "_rank", "_rss", "_status", "_cond"})
      QVERIFY(QFile::exists(dir_.filePath(QString("x_gui%1.npy").arg(part))));
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), QString::fromStdString(design), "-o", x_cli, "--diag",
                              dir_.filePath("x_cli")});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    for (const char* part : {"", "_nvalid", "_rank", "_rss", "_status", "_cond"}) {
      QFile a(dir_.filePath(QString("x_gui%1.npy").arg(part))), b(dir_.filePath(QString("x_cli%1.npy").arg(part)));
      QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
      QVERIFY2(a.readAll() == b.readAll(), part);  // the same bytes
    }
    // How they were made, beside them, alike from both.
    auto provenance = [&](const char* name) {
      QFile f(dir_.filePath(name));
      return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject();
    };
    QJsonObject gui = provenance("x_gui.json"), cli_json = provenance("x_cli.json");
    QCOMPARE(gui["software"].toString(), QString("CubeSolve ") + cubesolve::version());
    QCOMPARE(gui["cube"].toString(), QString::fromStdString(cube));
    QCOMPARE(gui["design"].toString(), QString::fromStdString(design));
    QCOMPARE(gui["rcond"].toString(), QString("default"));
    QCOMPARE(gui["files"].toArray().size(), 6);
    gui.remove("files");
    cli_json.remove("files");
    QCOMPARE(gui, cli_json);
    w.showView(MainWindow::View::Result);
    const QString png = dir_.filePath("view.png");
    QVERIFY(w.exportViewPng(png));
    QVERIFY(QImage(png).width() > 100);
    const QString folder = dir_.filePath("channels");
    QVERIFY(QDir().mkpath(folder));
    QCOMPARE(exports(w, [&] { w.exportChannels(folder); }).size(), 29);
    QCOMPARE(QDir(folder).entryList({"*.png"}).size(), 29);
  }

  void geoTiffInAndOut() {
    if (!raster_support()) QSKIP("built without GDAL");
    const DemoCube d = make_demo("insar", 40);
    const GeoReference geo{{300000.0, 20.0, 0.0, 5000000.0, 0.0, -20.0}, "", {}};
    std::vector<std::string> names;
    for (std::size_t i = 0; i < d.cube.dim(0); ++i) names.push_back("ifg" + std::to_string(i));
    const std::string cube = dir_.filePath("stack.tif").toStdString(), design = dir_.filePath("A_geo.npy").toStdString();
    OutputSet in;
    write_geotiff(in.add_external(cube), d.cube, geo, names);
    in.add_npy(design, d.design);
    in.commit();
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(cube)); }));
    QVERIFY(loads(w, [&] { w.openDesign(QString::fromStdString(design)); }));
    QVERIFY(waitSolved(w));
    const QString out = dir_.filePath("ts.tif");
    QVERIFY(!exports(w, [&] { w.exportSolution(out); }).isEmpty());
    GeoReference back;
    const Array x = read_cube(out.toStdString(), &back);
    QCOMPARE(x.shape(), (Shape{29, 40, 40}));
    QCOMPARE(back.transform, geo.transform);
    QVERIFY(QFile::exists(dir_.filePath("ts_status.tif")));
    // The hover readout gives the pixel centre in map coordinates.
    emit w.resultView()->pixelHovered(2, 3, 0.5);
    const QString hover = w.statusBar()->currentMessage();
    QVERIFY2(hover.contains("row 2, column 3") && hover.contains("x 300070.00, y 4999950.00"), qPrintable(hover));
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double a = x.value(i), b = w.result()->x.value(i);
      QVERIFY(std::isnan(a) == std::isnan(b));
      if (!std::isnan(a)) QCOMPARE(static_cast<float>(a), static_cast<float>(b));
    }
  }

  void builtDesigns() {
    MainWindow w;
    QVERIFY(demoSolved(w, "seed", 24));
    QVERIFY(loads(w, [&] { w.buildDesign("poly:2", {}, {}); }));
    QCOMPARE(w.design()->cols(), std::size_t{3});
    QVERIFY(waitSolved(w));
    QCOMPARE(w.result()->x.dim(0), std::size_t{3});
    QVERIFY(loads(w, [&] { w.buildDesign("harmonic:1:25", {}, {}); }));
    QCOMPARE(w.design()->cols(), std::size_t{4});
    QVERIFY(waitSolved(w));
    // Channels named by the design's terms.
    QCOMPARE(w.document().xNames(), (std::vector<std::string>{"offset", "trend", "harmonic1_cos", "harmonic1_sin"}));
    w.showLayer(MainWindow::Layer::Solution, 2);
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), QString("harmonic1_cos"));
    QVERIFY(w.resultView()->style().title.contains("x[2]: harmonic1_cos"));
    QVERIFY(failure(w, [&] { w.buildDesign("poly:x", {}, {}); }).contains("poly:x"));
    QCOMPARE(w.design()->cols(), std::size_t{4});
  }

  void badFileKeepsTheData() {
    MainWindow w;
    QVERIFY(loads(w, [&] { w.openDemo("insar", 32); }));
    const QString bad = dir_.filePath("bad.npy");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a numpy file");
    f.close();
    const QString message = failure(w, [&] { w.openCube(bad); });
    QVERIFY2(message.contains("bad.npy") && message.contains("found a file starting with \"not a nu\""), qPrintable(message));
    QVERIFY2(!message.contains("\\x93"), qPrintable(message));
    QVERIFY(w.lastError().contains("bad.npy"));
    QVERIFY(w.masks() != nullptr);
    QVERIFY(waitSolved(w));
    // A header that claims terabytes: a message, no allocation, no crash.
    const QString lie = dir_.filePath("lie.npy");
    QFile l(lie);
    QVERIFY(l.open(QIODevice::WriteOnly));
    QByteArray header = "{'descr': '<f8', 'fortran_order': False, 'shape': (100000, 1000, 1000), }";
    header += QByteArray(118 - header.size(), ' ') + "\n";
    l.write(QByteArray("\x93NUMPY\x01\x00", 8) + QByteArray(1, char(header.size())) + QByteArray(1, '\0') + header +
            QByteArray(64, '\0'));
    l.close();
    QVERIFY(failure(w, [&] { w.openAny(lie); }).contains("expected 800000000000 bytes"));
    QCOMPARE(w.masks()->height, std::size_t{32});
  }

  // An export never replaces the cube (or design) it came from.
  void exportNeverOverwritesTheCube() {
    const auto files = demoFiles("insar", 24, "keep");
    const std::string cube = files.first, design = files.second;
    MainWindow w;
    QVERIFY(loads(w, [&] { w.document().openFiles(QString::fromStdString(cube), QString::fromStdString(design), {}); }));
    QVERIFY(waitSolved(w));
    const QByteArray before = [&] {
      QFile f(QString::fromStdString(cube));
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    for (const std::string& target : {cube, design})
      QVERIFY(failure(w, [&] { w.exportSolution(QString::fromStdString(target)); }).contains("apart from the inputs"));
    QVERIFY(!w.exportViewPng(QString::fromStdString(cube)));
    QFile f(QString::fromStdString(cube));
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll() == before);
    QCOMPARE(QDir(dir_.path()).entryList({"*partial*"}).size(), 0);
  }

  // Parameters, files, view, channel, pixel and pins come back after quit
  // and start; reading the settings at start-up does not rewrite them.
  void settingsRoundTrip() {
    const auto files = demoFiles("insar", 40, "session");
    const std::string cube = files.first, design = files.second;
    {
      MainWindow w;
      w.show();
      QVERIFY(loads(w, [&] { w.document().openFiles(QString::fromStdString(cube), QString::fromStdString(design), {}); }));
      QVERIFY(waitSolved(w));
      w.findChild<QCheckBox*>("auto-solve")->setChecked(false);
      w.findChild<QSpinBox*>("min-valid")->setValue(5);
      w.findChild<QDoubleSpinBox*>("ridge")->setValue(0.25);
      auto* rcond = w.findChild<QLineEdit*>("rcond");
      rcond->setText("1e-09");
      emit rcond->editingFinished();
      w.findChild<QComboBox*>("device")->setCurrentIndex(w.findChild<QComboBox*>("device")->findData("cpu"));
      w.showLayer(MainWindow::Layer::Solution, 0);
      w.findChild<QComboBox*>("colormap")->setCurrentIndex(3);
      w.findChild<QCheckBox*>("reversed")->setChecked(true);
      w.findChild<QCheckBox*>("auto-range")->setChecked(false);
      w.findChild<QDoubleSpinBox*>("range-lo")->setValue(-2);
      w.findChild<QDoubleSpinBox*>("range-hi")->setValue(3);
      w.showLayer(MainWindow::Layer::Solution, 7);
      w.selectPixel(3, 4);
      w.pinPixel();
      w.selectPixel(11, 12);
      w.showView(MainWindow::View::Inspector);
      w.close();
    }
    MainWindow w;
    QCOMPARE(QSettings().value("params/ridge").toDouble(), 0.25);  // not rewritten during start-up
    QCOMPARE(QSettings().value("params/auto").toBool(), false);
    QCOMPARE(w.findChild<QSpinBox*>("min-valid")->value(), 5);
    QCOMPARE(w.findChild<QDoubleSpinBox*>("ridge")->value(), 0.25);
    QCOMPARE(w.findChild<QLineEdit*>("rcond")->text(), QString("1e-09"));
    QCOMPARE(w.findChild<QCheckBox*>("auto-solve")->isChecked(), false);
    QCOMPARE(w.findChild<QComboBox*>("device")->currentData().toString(), QString("cpu"));
    QVERIFY(loads(w, [&] { QVERIFY(w.restoreSession()); }));
    QCOMPARE(w.document().cubeName(), QString::fromStdString(cube));
    QCOMPARE(w.document().designName(), QString::fromStdString(design));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().resultOptions().ridge, 0.25);
    QCOMPARE(w.document().resultOptions().min_valid, std::size_t{5});
    QCOMPARE(w.currentView(), MainWindow::View::Inspector);
    QCOMPARE(w.findChild<QSpinBox*>("channel")->value(), 7);
    QCOMPARE(w.inspectedX().size(), std::size_t{29});
    QCOMPARE(w.pinned().size(), std::size_t{1});
    QCOMPARE(w.pinned()[0], (std::pair{3, 4}));
    QCOMPARE(w.findChild<QComboBox*>("colormap")->currentIndex(), 3);
    QCOMPARE(w.resultView()->style().scale.map, Colormap::Twilight);
    QCOMPARE(w.resultView()->style().scale.reversed, true);
    QCOMPARE(w.resultView()->style().scale.lo, -2.0);
    QCOMPARE(w.resultView()->style().scale.hi, 3.0);
    // The recent files are sets: the cube with its design.
    const QStringList recent = QSettings().value("recent_sets").toStringList();
    QVERIFY(!recent.isEmpty());
    QCOMPARE(recent.first(), QString::fromStdString(cube + "\n" + design));
  }

  // A cube whose observations the loaded design does not fit: no result of
  // the previous cube stays on screen, and the window says why.
  void cubeOfAnotherLength() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    const DemoCube d = make_demo("seed", 16);  // 50 observations, the design has 110 rows
    const std::string cube = dir_.filePath("other_n.npy").toStdString();
    OutputSet in;
    in.add_npy(cube, d.cube);
    in.commit();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(cube)); }));
    QVERIFY(!w.solving());
    QVERIFY(!w.result());
    QCOMPARE(w.resultView()->imageHeight(), 0);
    QVERIFY2(w.notice().contains("110 rows") && w.notice().contains("50 observations"), qPrintable(w.notice()));
  }

  // Each layer keeps its colour map and range; the automatic range shows
  // what it clips.
  void layersKeepTheirOwnScale() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 48));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 2);
    QVERIFY(w.resultView()->clippedBelow() || w.resultView()->clippedAbove());  // 2-98 %: the legend marks it
    w.findChild<QCheckBox*>("auto-range")->setChecked(false);
    w.findChild<QDoubleSpinBox*>("range-lo")->setValue(-100);
    w.findChild<QDoubleSpinBox*>("range-hi")->setValue(100);
    QCOMPARE(w.resultView()->style().scale.hi, 100.0);
    QVERIFY(!w.resultView()->clippedBelow() && !w.resultView()->clippedAbove());
    w.showLayer(MainWindow::Layer::ResidualRms, 0);
    QVERIFY(w.findChild<QCheckBox*>("auto-range")->isChecked());
    QVERIFY(w.resultView()->style().scale.hi < 100.0);
    QCOMPARE(w.resultView()->style().scale.map, Colormap::Viridis);
    w.showLayer(MainWindow::Layer::Rank, 0);
    QCOMPARE(w.resultView()->style().scale.hi, 29.0);
    QVERIFY(w.resultView()->style().integers);
    w.showLayer(MainWindow::Layer::Status, 0);
    QCOMPARE(w.resultView()->style().categories.size(), std::size_t{5});
    w.showLayer(MainWindow::Layer::Solution, 2);
    QVERIFY(!w.findChild<QCheckBox*>("auto-range")->isChecked());
    QCOMPARE(w.resultView()->style().scale.lo, -100.0);
  }

  // The window's shortcuts work while a text field has the focus.
  void shortcutsInTextFields() {
    MainWindow w;
    w.show();
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    QAction* export_view = nullptr;
    for (QAction* a : w.findChildren<QAction*>())
      if (a->shortcut() == QKeySequence(QStringLiteral("Ctrl+E"))) export_view = a;
    QVERIFY(export_view);
    QObject::disconnect(export_view, &QAction::triggered, nullptr, nullptr);  // no file dialog here
    int fired = 0;
    connect(export_view, &QAction::triggered, this, [&fired] { ++fired; });
    for (const char* field : {"ridge", "min-valid", "rcond"}) {
      auto* widget = w.findChild<QWidget*>(field);
      widget->setFocus();
      QTRY_VERIFY(widget->hasFocus());
      QWidget* target = qobject_cast<QAbstractSpinBox*>(widget) ? widget->findChild<QLineEdit*>() : widget;
      const int before = fired;
      QTest::keyClick(target, Qt::Key_E, Qt::ControlModifier);
      QVERIFY2(fired == before + 1, field);
    }
  }

  // The window fits a small screen, the channel slider stays usable, and the
  // parameters panel comes back from the View menu.
  void layoutAtTheMinimumSize() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(demoSolved(w, "insar", 24));
    w.showView(MainWindow::View::Result);
    const QSize minimum = w.minimumSizeHint();
    QVERIFY2(minimum.width() <= 1000, qPrintable(QString::number(minimum.width())));
    w.resize(minimum);
    QTest::qWait(50);
    auto* slider = w.findChild<QSlider*>("channel-slider");
    QVERIFY2(slider->width() >= 100, qPrintable(QString::number(slider->width())));
    QVERIFY2(w.findChild<QSpinBox*>("channel")->isVisible(), "the channel spin box");
    QAction* toggle = nullptr;
    for (QAction* a : w.menuBar()->actions())
      for (QAction* b : a->menu() ? a->menu()->actions() : QList<QAction*>{})
        if (b->text().contains("parameters panel")) toggle = b;
    QVERIFY(toggle);
    auto* dock = w.findChild<QDockWidget*>("data-dock");
    dock->close();
    QVERIFY(!dock->isVisible());
    toggle->trigger();
    QVERIFY(dock->isVisible());
  }

  // Exported maps are figures at data resolution in the colours on screen.
  void figuresAtDataResolution() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 40));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 5);
    w.findChild<QComboBox*>("colormap")->setCurrentIndex(4);  // grey
    const QString png = dir_.filePath("figure_x5.png");
    QSignalSpy done(&w, &MainWindow::exported);
    QVERIFY(w.exportViewPng(png, 4));
    QCOMPARE(done.size(), 1);
    const QImage img(png);
    QVERIFY(img.width() >= 12 + 40 * 4 + 8 + cubesolve::ui::kLegendWidth);  // (wider where the title needs it)
    // A figure twice 600 pixels wide has its text and legend twice the size.
    const QImage big = cubesolve::ui::render_figure(channel(w.result()->x, 5), 40, 40, w.resultView()->style(), 30);
    QCOMPARE(big.size(), QSize(24 + 1200 + 16 + 2 * cubesolve::ui::kLegendWidth, 64 + 1200 + 24));
    const ColorScale scale = w.resultView()->style().scale;
    QCOMPARE(scale.map, Colormap::Grey);
    const auto values = channel(w.result()->x, 5);
    for (int r = 0; r < 40; r += 3)
      for (int c = 0; c < 40; c += 3) {
        const auto rgb = scale.color(values[static_cast<std::size_t>(r * 40 + c)]);
        QCOMPARE(img.pixel(12 + 4 * c + 2, 32 + 4 * r + 2), qRgb(rgb[0], rgb[1], rgb[2]));
      }
    // Every channel, in the layer's colours, named by its date, over one
    // 2-98 % range for all channels (so that they compare), or each its own.
    const QString folder = dir_.filePath("figures"), own = dir_.filePath("figures_own");
    QVERIFY(QDir().mkpath(folder) && QDir().mkpath(own));
    const QStringList files = exports(w, [&] { w.exportChannels(folder, 2); });
    QCOMPARE(files.size(), 29);
    const std::string day7 = w.document().unknownDates()[8];
    const QImage x7(QDir(folder).filePath(QString::fromStdString(day7) + ".png"));
    QVERIFY(!x7.isNull());
    std::vector<double> all;
    for (std::size_t j = 0; j < 29; ++j) {
      const auto v = channel(w.result()->x, j);
      all.insert(all.end(), v.begin(), v.end());
    }
    const auto v7 = channel(w.result()->x, 7);
    ColorScale shared = scale, s7 = scale;
    std::tie(shared.lo, shared.hi) = robust_range(all.data(), all.size(), false);
    std::tie(s7.lo, s7.hi) = robust_range(v7.data(), v7.size(), false);
    QVERIFY(shared.lo != s7.lo);
    auto rgb = shared.color(v7[20 * 40 + 20]);
    QCOMPARE(x7.pixel(12 + 2 * 20, 32 + 2 * 20), qRgb(rgb[0], rgb[1], rgb[2]));
    QCOMPARE(exports(w, [&] { w.exportChannels(own, 2, "png", true); }).size(), 29);
    rgb = s7.color(v7[20 * 40 + 20]);
    QCOMPARE(QImage(QDir(own).filePath(QString::fromStdString(day7) + ".png")).pixel(12 + 2 * 20, 32 + 2 * 20), qRgb(rgb[0], rgb[1], rgb[2]));
    // As PDF pages.
    const QString pdfs = dir_.filePath("figures_pdf");
    QVERIFY(QDir().mkpath(pdfs));
    QCOMPARE(exports(w, [&] { w.exportChannels(pdfs, 2, "pdf"); }).size(), 29);
    QFile pdf(QDir(pdfs).filePath(QString::fromStdString(day7) + ".pdf"));
    QVERIFY(pdf.open(QIODevice::ReadOnly) && pdf.read(5) == "%PDF-");
  }

  void modelAndResidualCubes() {
    MainWindow w;
    QVERIFY(demoSolved(w, "insar", 16));
    const QStringList files = exports(w, [&] { w.exportSolution(dir_.filePath("mr.npy"), true); });
    QCOMPARE(files.size(), 9);  // x, five diagnostics, model, residual, the JSON
    const Array model = read_npy(dir_.filePath("mr_model.npy").toStdString());
    const Array residual = read_npy(dir_.filePath("mr_residual.npy").toStdString());
    QCOMPARE(model.shape(), (Shape{110, 16, 16}));
    const Array& cube = *w.document().cube();
    std::size_t checked = 0;
    for (std::size_t i = 0; i < cube.size(); i += 37)
      if (std::isfinite(cube.value(i)) && std::isfinite(model.value(i))) {
        QVERIFY(std::fabs(cube.value(i) - model.value(i) - residual.value(i)) <= 1e-4 * std::max(1.0, std::fabs(cube.value(i))));
        ++checked;
      }
    QVERIFY(checked > 100);
  }

  void groupSelectionClears() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 48));
    w.selectGroupBin(1);
    QCOMPARE(w.groupsChart()->selectedBar(), 1);
    QVERIFY(w.gapsView()->hasOverlay());
    emit w.groupsChart()->barClicked(1);  // the selected bar again
    QCOMPARE(w.groupsChart()->selectedBar(), -1);
    QVERIFY(!w.gapsView()->hasOverlay());
    w.selectGroupBin(0);
    emit w.groupsChart()->barClicked(-1);  // beside the bars
    QVERIFY(!w.gapsView()->hasOverlay());
  }

  void pinnedPixelsCompared() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    w.selectPixel(5, 6);
    const int single = w.inspectorChart()->plotCount();
    w.pinPixel();
    w.selectPixel(20, 21);
    w.pinPixel();
    w.selectPixel(10, 10);
    QCOMPARE(w.pinned().size(), std::size_t{2});
    QCOMPARE(w.inspectorChart()->plotCount(), single + 4);  // each pin: its points and its fit
    // Every map marks each pin in its own colour, and the selection apart.
    for (ImageView* map : {w.gapsView(), w.resultView()}) {
      const auto& pins = map->marks(ImageView::Mark::Pin);
      QCOMPARE(pins.size(), std::size_t{2});
      QVERIFY(pins[0].row == 5 && pins[0].col == 6 && pins[1].row == 20 && pins[1].col == 21);
      QVERIFY(pins[0].color != pins[1].color);
      QVERIFY(map->marks(ImageView::Mark::Selection).size() == 1 && map->marks(ImageView::Mark::Selection)[0].row == 10);
    }
    // The list of pins: renamed in place, removed with Delete.
    auto* list = w.findChild<QListWidget*>("pins");
    QCOMPARE(list->count(), 2);
    QCOMPARE(list->item(0)->text(), QString("5_6"));
    list->item(0)->setText("well A");
    QCOMPARE(w.document().pinName(0), QString("well A"));
    QVERIFY(w.inspectorText().contains("well A (5, 6)"));
    list->setCurrentRow(1);
    QTest::keyClick(list, Qt::Key_Delete);
    QCOMPARE(w.pinned().size(), std::size_t{1});
    QCOMPARE(w.document().pinName(0), QString("well A"));
    QCOMPARE(w.resultView()->marks(ImageView::Mark::Pin).size(), std::size_t{1});
    w.clearPins();
    QCOMPARE(w.inspectorChart()->plotCount(), single);
    QVERIFY(w.resultView()->marks(ImageView::Mark::Pin).empty());
  }

  // The maps: the wheel zooms about the point under the cursor, the other
  // map follows while linked, arrow keys move the selected pixel.
  void mapsNavigate() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 800));
    QVERIFY(demoSolved(w, "insar", 64));
    w.showView(MainWindow::View::Result);
    QTest::qWait(50);
    ImageView* view = w.resultView();
    const QPoint at(view->width() / 3, view->height() / 2);
    int row0 = -1, col0 = -1, row1 = -1, col1 = -1;
    QVERIFY(view->pixelAt(at, row0, col0));
    const double scale = view->camera().scale;
    for (int k = 0; k < 3; ++k) {
      QWheelEvent wheel(QPointF(at), view->mapToGlobal(QPointF(at)), QPoint(), QPoint(0, 120), Qt::NoButton, Qt::NoModifier,
                        Qt::NoScrollPhase, false);
      QApplication::sendEvent(view, &wheel);
    }
    QVERIFY(view->camera().scale < 0.6 * scale);
    QVERIFY(view->pixelAt(at, row1, col1));
    QVERIFY2(row1 == row0 && col1 == col0, qPrintable(QString("(%1, %2) then (%3, %4)").arg(row0).arg(col0).arg(row1).arg(col1)));
    QCOMPARE(w.gapsView()->camera().scale, view->camera().scale);  // linked
    QCOMPARE(w.gapsView()->camera().x, view->camera().x);
    w.findChild<QAction*>("link-maps")->setChecked(false);
    QWheelEvent out(QPointF(at), view->mapToGlobal(QPointF(at)), QPoint(), QPoint(0, -120), Qt::NoButton, Qt::NoModifier,
                    Qt::NoScrollPhase, false);
    QApplication::sendEvent(view, &out);
    QVERIFY(w.gapsView()->camera().scale < view->camera().scale);
    QTest::mouseClick(view, Qt::LeftButton, Qt::NoModifier, at);
    QCOMPARE(w.document().selected(), std::make_pair(row0, col0));
    QTest::keyClick(view, Qt::Key_Right);
    QTest::keyClick(view, Qt::Key_Down);
    QCOMPARE(w.document().selected(), std::make_pair(row0 + 1, col0 + 1));
    QCOMPARE(view->marks(ImageView::Mark::Selection)[0].col, col0 + 1);
  }

  // A design with dates: channels named by date, the inspector's time series
  // with the dates the pixel's network does not reach, a velocity map.
  void datesThroughTheViews() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 96));
    QCOMPARE(w.document().pairs().size(), std::size_t{110});
    w.showLayer(MainWindow::Layer::Solution, 3);
    QVERIFY2(w.resultView()->style().title.contains("2020-02-18"), qPrintable(w.resultView()->style().title));
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), QString("2020-02-18"));
    w.showLayer(MainWindow::Layer::Model, 5);
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), QString("20200113_20200206"));
    w.showView(MainWindow::View::Result);
    w.selectPixel(80, 20);  // in the field where the network splits, picked while the inspector is hidden
    w.showView(MainWindow::View::Inspector);
    QTRY_VERIFY(w.seriesChart()->isVisible());
    QCOMPARE(w.seriesChart()->plotCount(), 2);  // the series and its undetermined dates
    QVERIFY2(w.inspectorText().contains("15 dates undetermined"), qPrintable(w.inspectorText()));
    w.selectPixel(30, 30);
    QVERIFY(!w.inspectorText().contains("undetermined"));
    w.showLayer(MainWindow::Layer::Velocity, 0);
    std::vector<double> times;
    for (const auto& d : w.document().dates()) times.push_back(decimal_year(d, "date"));
    const Array rate = linear_rate(w.result()->x, times);
    QCOMPARE(w.resultView()->imageHeight(), 96);
    for (std::size_t p = 0; p < rate.size(); p += 97)
      QVERIFY(w.resultView()->values()[p] == rate.value(p) || (std::isnan(rate.value(p)) && std::isnan(w.resultView()->values()[p])));
    // Without dates the velocity layer is not offered; the layer shown stays.
    QVERIFY(w.findChild<QComboBox*>("layer")->findData(int(MainWindow::Layer::Velocity)) >= 0);
    QVERIFY(demoSolved(w, "seed", 16));
    QCOMPARE(w.findChild<QComboBox*>("layer")->findData(int(MainWindow::Layer::Velocity)), -1);
    w.showLayer(MainWindow::Layer::Velocity, 0);
    QCOMPARE(w.findChild<QComboBox*>("layer")->currentData().toInt(), int(MainWindow::Layer::Solution));
    QCOMPARE(w.resultView()->imageHeight(), 16);
  }

#ifdef CUBESOLVE_TEST_HDF5
  // A MintPy stack is referenced at the pixel picked on the map.
  // A MintPy stack is opened as the CLI opens it: its options (weights from
  // the coherence, the velocity formulation) offered in the panel, and the
  // result the CLI's, the reference pixel included.
  /// A stack of 6 interferograms over 5 dates, 5 x 7 pixels, with coherence,
  /// referenced at (1, 2), with WAVELENGTH; one value not unwrapped.
  std::string smallStack(const QString& name, const std::vector<std::pair<std::string, std::string>>& more = {}) {
    const hsize_t N = 6, H = 5, W = 7, P = H * W;
    const char* pairs[6][2] = {{"20200101", "20200113"}, {"20200101", "20200125"}, {"20200113", "20200125"},
                               {"20200113", "20200206"}, {"20200125", "20200206"}, {"20200125", "20200218"}};
    std::string dates;
    for (auto& p : pairs) dates += std::string(p[0]) + p[1];
    std::vector<float> phase(N * P), coherence(N * P);
    for (std::size_t i = 0; i < phase.size(); ++i) {
      phase[i] = 1.0f + static_cast<float>((i * 7) % 13) * 0.25f;
      coherence[i] = 0.3f + static_cast<float>((i * 5) % 11) * 0.06f;
    }
    phase[3 * P + 12] = 0.0f;  // not unwrapped there
    const std::vector<unsigned char> keep(N, 1);
    testing::StackExtras extras;
    extras.coherence = coherence.data();
    extras.attributes = {{"REF_Y", "1"}, {"REF_X", "2"}, {"WAVELENGTH", "0.05546576"}};
    extras.attributes.insert(extras.attributes.end(), more.begin(), more.end());
    const std::string path = dir_.filePath(name).toStdString();
    testing::write_stack(path, N, H, W, phase.data(), &dates, keep.data(), extras);
    return path;
  }

  // A geocoded stack (MintPy's X_FIRST, X_STEP, Y_FIRST, Y_STEP) reads out
  // longitude and latitude, and its GeoTIFF outputs carry the georeference,
  // from the window and from the CLI alike.
  void stackGeocoded() {
    if (!raster_support()) QSKIP("built without GDAL");
    const std::string path = smallStack("geo.h5", {{"X_FIRST", "30.0"}, {"X_STEP", "0.001"}, {"Y_FIRST", "40.0"},
                                                   {"Y_STEP", "-0.001"}, {"X_UNIT", "degrees"}, {"Y_UNIT", "degrees"}});
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(path)); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().geo().transform, (std::vector<double>{30.0, 0.001, 0.0, 40.0, 0.0, -0.001}));
    emit w.resultView()->pixelHovered(3, 2, 0.5);
    const QString hover = w.statusBar()->currentMessage();
    QVERIFY2(hover.contains("lon 30.002500, lat 39.996500"), qPrintable(hover));
    const QString gui_tif = dir_.filePath("geo_gui.tif"), cli_tif = dir_.filePath("geo_cli.tif");
    QVERIFY(!exports(w, [&] { w.exportSolution(gui_tif); }).isEmpty());
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(path), "sbas", "-o", cli_tif});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    for (const QString& tif : {gui_tif, cli_tif}) {
      GeoReference back;
      read_cube(tif.toStdString(), &back);
      QCOMPARE(back.transform, (std::vector<double>{30.0, 0.001, 0.0, 40.0, 0.0, -0.001}));
      QVERIFY2(back.projection.find("4326") != std::string::npos, back.projection.c_str());
    }
  }

  // A stack with WAVELENGTH is shown as line-of-sight displacement (MintPy's
  // sign) in the unit chosen, named on the colour bar and the chart; radian
  // shows the phase.
  void unitsFromWavelength() {
    const std::string path = smallStack("units.h5");
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(path)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(w.document().hasWavelength());
    QCOMPARE(w.document().xNames(), (std::vector<std::string>{"20200113", "20200125", "20200206", "20200218"}));
    w.showLayer(MainWindow::Layer::Solution, 2);
    const std::size_t P = 35;
    const double to_mm = -0.05546576 / (4 * M_PI) * 1000;
    QCOMPARE(w.resultView()->style().unit, QString("mm"));
    for (std::size_t p = 0; p < P; ++p) {
      const double x = w.result()->x.value(2 * P + p), shown = w.resultView()->values()[p];
      QVERIFY(std::isnan(x) ? std::isnan(shown) : std::fabs(shown - x * to_mm) <= 1e-12 * std::fabs(x * to_mm));
    }
    w.showLayer(MainWindow::Layer::Velocity, 0);
    QCOMPARE(w.resultView()->style().unit, QString("mm/yr"));
    w.selectPixel(3, 3);
    w.showView(MainWindow::View::Inspector);
    QVERIFY2(w.inspectorText().contains(" mm\n"), qPrintable(w.inspectorText()));
    w.findChild<QComboBox*>("unit")->setCurrentIndex(w.findChild<QComboBox*>("unit")->findData("radian"));
    QCOMPARE(w.document().unit(), QString("radian"));
    w.showLayer(MainWindow::Layer::Solution, 2);
    QCOMPARE(w.resultView()->style().unit, QString("rad"));
    QCOMPARE(w.resultView()->values()[3 * 7 + 3], w.result()->x.value(2 * P + 3 * 7 + 3));
    QCOMPARE(QSettings().value("view/unit").toString(), QString("radian"));
    // A cube of no stack has no unit of ours: its values as they are.
    QVERIFY(demoSolved(w, "seed", 8));
    QVERIFY(w.resultView()->style().unit.isEmpty());
    QVERIFY(!w.findChild<QWidget*>("stack-options")->isVisible());
  }

  // The desktop takes the CLI's options by the CLI's names and rules, and
  // its own (--unit, --layer, --channel, --pin) for what it shows; a wrong
  // value is one message and exit 2, no picture.
  void commandLineOptions() {
    const QString stack = QString::fromStdString(smallStack("cmdline.h5")), shot = dir_.filePath("cmdline.png");
    auto run = [&](const QStringList& args) {
      QFile::remove(shot);
      QProcess app;
      app.start(CUBESOLVE_GUI_APP, QStringList{stack} + args + QStringList{"--screenshot", shot});
      app.waitForFinished(60000);
      return std::pair{app.exitCode(), QString(app.readAllStandardError())};
    };
    const auto ok = run({"--unit", "cm", "--layer", "velocity", "--formulation", "velocity", "--weight-func", "coh", "--looks", "4",
                         "--ref-yx", "3,3", "--ridge", "1e-3", "--pin", "2,2", "--channel", "20200206"});
    QVERIFY2(ok.first == 0 && QImage(shot).width() > 600, qPrintable(ok.second));
    for (const auto& [args, message] :
         {std::pair{QStringList{"--weight-func", "foo"}, QString("--weight-func: expected var, fim, coh or no, found 'foo'")},
          std::pair{QStringList{"--ref-yx", "3"}, QString("--ref-yx: expected a pixel as ROW,COLUMN")},
          std::pair{QStringList{"--unit", "ft"}, QString("expected radian, mm, cm or m, found 'ft'")},
          std::pair{QStringList{"--layer", "speed"}, QString("--layer: expected solution, model")},
          std::pair{QStringList{"--channel", "19990101"}, QString("--channel: expected a date of the time series")},
          std::pair{QStringList{"--pin", "2"}, QString("--pin: expected Y,X")}}) {
      const auto [code, err] = run(args);
      QVERIFY2(code == 2 && err.contains(message), qPrintable(args.join(' ') + ": " + QString::number(code) + " " + err));
      QVERIFY(!QFile::exists(shot));
    }
  }

  // A scripted run's exports: the pins' series as CSV and the solution as
  // data, in the unit asked for, equal to the CLI's timeseries.h5 in that unit.
  void scriptedExportsMatchTheCli() {
    const QString stack = QString::fromStdString(smallStack("exports.h5"));
    const QString csv = dir_.filePath("pins.csv"), x = dir_.filePath("x_mm.npy"), h5 = dir_.filePath("ts_mm/timeseries.h5");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {stack, "--unit", "mm", "--pin", "3,3", "--pin", "4,6", "--export-ts", csv, "--export", "solution=" + x});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QVERIFY(QDir().mkpath(dir_.filePath("ts_mm")));
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", stack, "sbas", "-o", h5, "--unit", "mm"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    std::vector<hsize_t> dims;
    const std::vector<float> ts = testing::read_floats(h5.toStdString(), "timeseries", &dims);
    QCOMPARE(dims, (std::vector<hsize_t>{5, 5, 7}));
    const std::size_t P = 35;
    auto near = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); };
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines[0].startsWith("#") && lines[0].contains("mm") && lines[0].contains("1_2"), qPrintable(lines[0]));
    QCOMPARE(lines[1], QString("date,3_3,4_6"));
    QCOMPARE(lines.size(), 2 + 5);
    const QStringList days{"2020-01-01", "2020-01-13", "2020-01-25", "2020-02-06", "2020-02-18"};
    for (int i = 0; i < 5; ++i) {
      const QStringList cells = lines[2 + i].split(',');
      QCOMPARE(cells[0], days[i]);
      for (const auto& [k, p] : {std::pair{1, std::size_t{3 * 7 + 3}}, std::pair{2, std::size_t{4 * 7 + 6}}})
        QVERIFY2(near(cells[k].isEmpty() ? std::nan("") : cells[k].toDouble(), ts[static_cast<std::size_t>(i) * P + p]),
                 qPrintable(lines[2 + i] + " vs " + QString::number(ts[static_cast<std::size_t>(i) * P + p])));
    }
    const Array xs = read_npy(x.toStdString());
    QVERIFY(xs.shape() == (Shape{4, 5, 7}));
    for (std::size_t i = 0; i < xs.size(); ++i) QVERIFY2(near(xs.value(i), ts[P + i]), qPrintable(QString::number(i)));
  }

  void stackSolvedAsTheCli() {
    const hsize_t W = 7;
    const std::string path = smallStack("options.h5");
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(path)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(w.findChild<QWidget*>("stack-options")->isVisible());
    QVERIFY(w.document().reference() == std::make_pair(1, 2));
    QCOMPARE(w.result()->status.data<std::uint8_t>()[1 * W + 2], std::uint8_t(PixelStatus::Reference));
    // Weights that cannot be made (no looks in the file) leave the data and say why.
    const QString why = failure(w, [&] { w.findChild<QComboBox*>("weight-func")->setCurrentIndex(3); });
    QVERIFY2(why.contains("options.h5") && why.contains("looks"), qPrintable(why));
    QCOMPARE(w.document().inputOptions().stack.weight, std::string("no"));
    QCOMPARE(w.findChild<QComboBox*>("weight-func")->currentData().toString(), QString("no"));
    QVERIFY(w.result() && !w.document().weights());
    QVERIFY(loads(w, [&] { w.findChild<QDoubleSpinBox*>("looks")->setValue(4); }));
    QVERIFY(waitSolved(w));
    QVERIFY(loads(w, [&] { w.findChild<QComboBox*>("weight-func")->setCurrentIndex(3); }));  // coherence
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().inputOptions().stack.weight, std::string("coh"));
    QVERIFY(w.document().weights() != nullptr);
    QVERIFY(loads(w, [&] { w.findChild<QComboBox*>("formulation")->setCurrentIndex(1); }));  // velocity
    QVERIFY(waitSolved(w));
    QVERIFY(w.document().inputOptions().velocity);
    QCOMPARE(w.design()->cols(), std::size_t{4});
    const QString x_gui = dir_.filePath("stack_gui.npy"), x_cli = dir_.filePath("stack_cli.npy");
    QCOMPARE(exports(w, [&] { w.exportSolution(x_gui); }).size(), 7);
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(path), "sbas", "-o", x_cli, "--diag", dir_.filePath("stack_cli"),
                              "--weight-func", "coh", "--looks", "4", "--formulation", "velocity"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    for (const char* part : {"", "_nvalid", "_rank", "_status"}) {
      const Array a = read_npy(dir_.filePath(QString("stack_gui%1.npy").arg(part)).toStdString());
      const Array b = read_npy(dir_.filePath(QString("stack_cli%1.npy").arg(part)).toStdString());
      QVERIFY(a.shape() == b.shape());
      for (std::size_t i = 0; i < a.size(); ++i)
        QVERIFY2(a.value(i) == b.value(i) || (std::isnan(a.value(i)) && std::isnan(b.value(i))),
                 qPrintable(QString("%1[%2]: %3 vs %4").arg(part).arg(i).arg(a.value(i)).arg(b.value(i))));
    }
  }

  void referencePixelPicked() {
    const hsize_t N = 6, H = 5, W = 7, P = H * W;
    const char* pairs[6][2] = {{"20200101", "20200113"}, {"20200101", "20200125"}, {"20200113", "20200125"},
                               {"20200113", "20200206"}, {"20200125", "20200206"}, {"20200125", "20200218"}};
    std::string dates;
    for (auto& p : pairs) dates += std::string(p[0]) + p[1];
    std::vector<float> phase(N * P);
    for (std::size_t i = 0; i < phase.size(); ++i) phase[i] = 1.0f + static_cast<float>(i % 13) * 0.25f;
    const std::vector<unsigned char> keep(N, 1);
    testing::StackExtras extras;
    extras.attributes = {{"REF_Y", "0"}, {"REF_X", "0"}};
    const std::string path = dir_.filePath("picked.h5").toStdString();
    testing::write_stack(path, N, H, W, phase.data(), &dates, keep.data(), extras);
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(path)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(w.document().isStack());
    auto value = [&](std::size_t k, std::size_t p) { return w.document().cube()->value(k * P + p); };
    QVERIFY(std::isnan(value(0, 0)));  // the file's reference: zero after referencing, so no data
    QCOMPARE(value(2, 9), static_cast<double>(phase[2 * P + 9] - phase[2 * P]));
    QVERIFY(loads(w, [&] { w.setReferencePixel(3, 4); }));
    QVERIFY(waitSolved(w));
    QVERIFY(std::isnan(value(1, 3 * W + 4)));
    QCOMPARE(value(2, 9), static_cast<double>(phase[2 * P + 9] - phase[2 * P + 3 * W + 4]));
    QCOMPARE(w.document().stackOptions().ref_y, 3L);
    QVERIFY(!w.document().unreferenced());
    // The reference is drawn on every map and named in the data panel.
    QVERIFY(w.document().reference() == std::make_pair(3, 4));
    for (ImageView* map : {w.gapsView(), w.resultView()}) {
      QCOMPARE(map->marks(ImageView::Mark::Reference).size(), std::size_t{1});
      QVERIFY(map->marks(ImageView::Mark::Reference)[0].row == 3 && map->marks(ImageView::Mark::Reference)[0].col == 4);
    }
    bool named = false;
    for (QLabel* label : w.findChildren<QLabel*>()) named = named || label->text().contains("Reference pixel</b> row 3, column 4");
    QVERIFY(named);
    // Where a reference may be: the pixels valid in every interferogram.
    w.showReferenceCandidates();
    QCOMPARE(w.currentView(), MainWindow::View::Gaps);
    QVERIFY(w.gapsView()->hasOverlay());
    // The choice is kept in the session.
    w.saveSession();
    {
      MainWindow again;
      QVERIFY(loads(again, [&] { QVERIFY(again.restoreSession()); }));
      QVERIFY(again.document().reference() == std::make_pair(3, 4));
      QVERIFY(waitSolved(again));
    }
    // A stack with no reference of its own opens unreferenced, and says so.
    extras.attributes.clear();
    const std::string bare = dir_.filePath("bare.h5").toStdString();
    testing::write_stack(bare, N, H, W, phase.data(), &dates, keep.data(), extras);
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(bare)); }));
    QVERIFY(waitSolved(w));
    QVERIFY(w.document().unreferenced());
    QCOMPARE(value(2, 9), static_cast<double>(phase[2 * P + 9]));
    QVERIFY(loads(w, [&] { w.setReferencePixel(1, 1); }));
    QVERIFY(!w.document().unreferenced());
  }
#endif

  // Every control says what it does; Help > User guide opens the guide kept
  // in the repository.
  void everyControlExplained() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 16));
    QStringList silent;
    for (QWidget* c : w.findChildren<QWidget*>()) {
      const bool control = qobject_cast<QAbstractButton*>(c) || qobject_cast<QComboBox*>(c) || qobject_cast<QAbstractSpinBox*>(c) ||
                           qobject_cast<QSlider*>(c) || (qobject_cast<QLineEdit*>(c) && !qobject_cast<QAbstractSpinBox*>(c->parentWidget()));
      if (control && c->isVisibleTo(&w) && c->toolTip().isEmpty() && !c->inherits("QTabBar") && !c->inherits("QToolButton") &&
          c->parentWidget() && !c->parentWidget()->inherits("QTabBar") && !c->parentWidget()->inherits("QDockWidget"))
        silent << c->metaObject()->className() + QString(" ") + c->objectName() + " " +
                      (qobject_cast<QAbstractButton*>(c) ? qobject_cast<QAbstractButton*>(c)->text() : QString());
    }
    QVERIFY2(silent.isEmpty(), qPrintable(silent.join("; ")));
    w.showGuide();
    auto* guide = w.findChild<QTextBrowser*>("guide");
    QVERIFY(guide && guide->isVisible());
    QVERIFY(guide->toPlainText().contains("MintPy stacks") && guide->toPlainText().contains("--export-ts"));
  }

  // --help and --version answer without a display (a shell on a server).
  void helpWithoutDisplay() {
    for (const char* flag : {"--help", "--version"}) {
      QProcess app;
      QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
      env.remove("DISPLAY");
      env.remove("WAYLAND_DISPLAY");
      env.remove("QT_QPA_PLATFORM");
      app.setProcessEnvironment(env);
      app.start(CUBESOLVE_GUI_APP, {flag});
      QVERIFY(app.waitForFinished(30000));
      QCOMPARE(app.exitStatus(), QProcess::NormalExit);
      QCOMPARE(app.exitCode(), 0);
      const QString out = app.readAllStandardOutput();
      QVERIFY2(out.contains(std::string(flag) == "--help" ? "--screenshot" : "cubesolve"), qPrintable(out));
    }
  }

  void screenshotOption() {
    const QString shot = dir_.filePath("shot.png");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "64", "--view", "groups", "--screenshot", shot});
    QVERIFY(app.waitForFinished(60000));
    QCOMPARE(app.exitCode(), 0);
    const QImage img(shot);
    QVERIFY(img.width() >= 640);
    // What goes wrong exits as the CLI does for the same cause: 2 bad
    // input, 3 a file that cannot be read, one line on stderr, no image.
    {
      QFile bad(dir_.filePath("notnpy.npy"));
      QVERIFY(bad.open(QIODevice::WriteOnly));
      bad.write("not an array");
    }
    QFile::copy(dir_.filePath("notnpy.npy"), dir_.filePath("locked.npy"));
    QFile::setPermissions(dir_.filePath("locked.npy"), QFileDevice::WriteOwner);  // unreadable (but to root)
    const bool root = ::geteuid() == 0;
    for (const auto& [name, code] : {std::pair{QString("notnpy.npy"), 2}, std::pair{QString("missing.npy"), 3},
                                     std::pair{QString("locked.npy"), root ? 2 : 3}}) {
      QProcess run;
      run.start(CUBESOLVE_GUI_APP, {dir_.filePath(name), "--screenshot", dir_.filePath("never.png")});
      QVERIFY(run.waitForFinished(60000));
      const QString err = run.readAllStandardError();
      QVERIFY2(run.exitCode() == code && err.contains(name), qPrintable(QString("%1: exit %2, %3").arg(name).arg(run.exitCode()).arg(err)));
      QVERIFY(!QFile::exists(dir_.filePath("never.png")));
      QProcess cli;  // the CLI, for the same file
      cli.start(CUBESOLVE_CLI, {"info", dir_.filePath(name)});
      QVERIFY(cli.waitForFinished(60000));
      QCOMPARE(cli.exitCode(), code);
    }
  }
};

QTEST_MAIN(TestGui)
#include "tst_gui.moc"
