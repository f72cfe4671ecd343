// The desktop application on MintPy stacks: opened as the CLI opens them,
// units from WAVELENGTH, geocoding, the reference pixel, and scripted runs
// with the CLI's options and exports.
#include "gui_fixture.hpp"

class TestStacks : public QObject, GuiFixture {
  Q_OBJECT

private slots:
  void initTestCase() { QVERIFY(isolate()); }
  void init() { QSettings().clear(); }  // each test starts as on a new machine

#ifdef CUBESOLVE_TEST_HDF5
  // A MintPy stack is opened as the CLI opens it: its options (weights from
  // the coherence, the velocity formulation) offered in the panel, and the
  // result the CLI's, the reference pixel included.
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
    // With standard errors; a stack's temporal coherence comes with every solve.
    QSignalSpy solved(&w, &MainWindow::solveFinished);
    w.findChild<QCheckBox*>("std-errors")->setChecked(true);
    QVERIFY(solved.wait(60000));
    auto* layers = w.findChild<QComboBox*>("layer");
    QVERIFY(layers->findData(int(MainWindow::Layer::Coherence)) >= 0 && layers->findData(int(MainWindow::Layer::StdError)) >= 0);
    sameAsTheCli(w, path, "stack");
  }

  // A stack larger than the memory budget is kept on disk: copied for the
  // views as its rules read it (the values and masks of the stack read into
  // memory), solved from its file a block of rows at a time (to the bit the
  // answers in memory), reread from it under coherence weights, the
  // velocity formulation and standard errors as the CLI reads it.
  void stackKeptOnDisk() {
    const std::string path = smallStack("disk.h5", {}, 40, 50);
    MainWindow mem;
    mem.show();
    QVERIFY(loads(mem, [&] { mem.openCube(QString::fromStdString(path)); }));
    QVERIFY(waitSolved(mem) && !mem.document().cubeOnDisk());
    MainWindow w;
    w.show();
    Document& doc = w.document();
    SolveOptions options = doc.options();
    options.memory = std::size_t{32} << 10;  // below the stack's 48 KB of values (and 48 KB of weights)
    doc.setOptions(options);
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(path)); }));
    QVERIFY(doc.cubeOnDisk());
    QVERIFY2(waitSolved(w), qPrintable(w.lastError()));
    QVERIFY(doc.reference() == std::make_pair(1, 2));
    const auto disk_cube = doc.cube(), mem_cube = mem.document().cube();
    const Array& a = *disk_cube;
    const Array& b = *mem_cube;
    QVERIFY(a.shape() == b.shape() && std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
    QVERIFY(doc.masks()->n_valid == mem.document().masks()->n_valid && doc.masks()->group_of == mem.document().masks()->group_of);
    QCOMPARE(std::memcmp(w.result()->x.raw(), mem.result()->x.raw(), w.result()->x.nbytes()), 0);
    QVERIFY(loads(w, [&] { w.findChild<QDoubleSpinBox*>("looks")->setValue(4); }));
    QVERIFY(waitSolved(w));
    QVERIFY(loads(w, [&] { w.findChild<QComboBox*>("weight-func")->setCurrentIndex(3); }));  // coherence
    QVERIFY(waitSolved(w) && doc.cubeOnDisk() && doc.weights() != nullptr);
    QVERIFY(loads(w, [&] { w.findChild<QComboBox*>("formulation")->setCurrentIndex(1); }));  // velocity
    QVERIFY(waitSolved(w));
    QSignalSpy solved(&w, &MainWindow::solveFinished);
    w.findChild<QCheckBox*>("std-errors")->setChecked(true);
    QVERIFY(solved.wait(60000));
    sameAsTheCli(w, path, "disk");
    if (QTest::currentTestFailed()) return;
    // Weights opened from a file over it: the masks under them, the solve weighted by them.
    Array weights(DType::Float32, a.shape());
    for (std::size_t i = 0; i < weights.size(); ++i) weights.data<float>()[i] = i % 9 == 4 ? 0.0f : 1.0f + static_cast<float>(i % 3);
    const std::string wfile = dir_.filePath("disk_w.npy").toStdString();
    {
      OutputSet out;
      out.add_npy(wfile, weights);
      out.commit();
    }
    QVERIFY(loads(w, [&] { w.openWeights(QString::fromStdString(wfile)); }));
    QVERIFY(waitSolved(w) && doc.weights()->value(4) == 0.0 && doc.cubeOnDisk());
    QCOMPARE(doc.masks()->n_valid, analyze_masks(*doc.cube(), &weights).n_valid);
  }

private:
  /// The window's solution and diagnostics, exported as NAME_gui*.npy, are
  /// those of `cubesolve-cli solve PATH sbas` (NAME_cli*) with coherence
  /// weights of 4 looks, the velocity formulation and standard errors.
  void sameAsTheCli(MainWindow& w, const std::string& path, const QString& name) {
    QCOMPARE(exports(w, [&] { w.exportSolution(dir_.filePath(name + "_gui.npy")); }).size(), 9);
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(path), "sbas", "-o", dir_.filePath(name + "_cli.npy"), "--diag",
                              dir_.filePath(name + "_cli"), "--weight-func", "coh", "--looks", "4", "--formulation", "velocity", "--stderr"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    for (const char* part : {"", "_nvalid", "_rank", "_status", "_stderr", "_tcoh"}) {
      const Array a = read_npy(dir_.filePath(QString("%1_gui%2.npy").arg(name, part)).toStdString());
      const Array b = read_npy(dir_.filePath(QString("%1_cli%2.npy").arg(name, part)).toStdString());
      QVERIFY(a.shape() == b.shape());
      for (std::size_t i = 0; i < a.size(); ++i)
        QVERIFY2(a.value(i) == b.value(i) || (std::isnan(a.value(i)) && std::isnan(b.value(i))),
                 qPrintable(QString("%1[%2]: %3 vs %4").arg(part).arg(i).arg(a.value(i)).arg(b.value(i))));
    }
  }

private slots:
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

  // A MintPy stack is referenced at the pixel picked on the map.
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

  // A MintPy time series (timeseries.h5, here the CLI's from a stack, MintPy's
  // layout) opens as the result it is: its dates, its unit (m, shown in mm),
  // its reference pixel and date as in the file, each channel the file's
  // values, and the layers a time series has (velocity) on top of it.
  void timeSeriesOpened() {
    const hsize_t H = 5, W = 7, P = H * W;
    QVERIFY(QDir(dir_.path()).mkpath("series") && QDir(dir_.path()).mkpath("again"));  // (MintPy's outputs are named by folder)
    const QString stack = QString::fromStdString(smallStack("ts_stack.h5")), ts = dir_.filePath("series/timeseries.h5");
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", stack, "sbas", "-o", ts, "--ref-date", "20200125"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    MainWindow from_stack;
    QVERIFY(loads(from_stack, [&] { from_stack.openCube(stack); }));
    QVERIFY(waitSolved(from_stack));
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(ts); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().xNames(), (std::vector<std::string>{"20200113", "20200125", "20200206", "20200218"}));
    QCOMPARE(w.document().refDate(), QString("20200125"));
    QVERIFY(w.document().reference() == std::make_pair(1, 2));
    QVERIFY(w.document().hasWavelength());
    from_stack.document().setRefDate("20200125");
    for (std::size_t p = 0; p < P; ++p) {  // the file's values (float32 metres), as the stack's solve shows them
      const std::vector<double> a = w.document().series(p), b = from_stack.document().series(p);
      QCOMPARE(a.size(), std::size_t{5});
      for (std::size_t d = 0; d < a.size(); ++d)
        QVERIFY2(std::isnan(b[d]) ? std::isnan(a[d]) : std::fabs(a[d] - b[d]) <= 1e-5 * std::max(1.0, std::fabs(b[d])),
                 qPrintable(QString("pixel %1 date %2: %3 vs %4").arg(p).arg(d).arg(a[d]).arg(b[d])));
    }
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Velocity, 0);
    QCOMPARE(w.resultView()->style().unit, QString("mm/yr"));
    from_stack.showLayer(MainWindow::Layer::Velocity, 0);
    for (std::size_t p = 0; p < P; ++p) {
      const double a = w.resultView()->values()[p], b = from_stack.resultView()->values()[p];
      QVERIFY(std::isnan(b) ? std::isnan(a) : std::fabs(a - b) <= 1e-4 * std::max(1.0, std::fabs(b)));
    }
    // The stack's own outputs of the time series read back as the file (a round trip through the CLI).
    const QString again = dir_.filePath("again/timeseries.h5");
    cli.start(CUBESOLVE_CLI, {"solve", ts, "sbas", "-o", again, "--ref-date", "20200125"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    MainWindow round;
    QVERIFY(loads(round, [&] { round.openCube(again); }));
    QVERIFY(waitSolved(round));
    QCOMPARE(round.document().refDate(), QString("20200125"));
    for (std::size_t p = 0; p < P; ++p) {
      const std::vector<double> a = round.document().series(p), b = w.document().series(p);
      for (std::size_t d = 0; d < a.size(); ++d)
        QVERIFY(std::isnan(b[d]) ? std::isnan(a[d]) : std::fabs(a[d] - b[d]) <= 1e-5 * std::max(1.0, std::fabs(b[d])));
    }
    // Files that are neither a stack nor a series, or a series without dates, say so.
    testing::write_stack(dir_.filePath("nodates.h5").toStdString(), 2, H, W, std::vector<float>(2 * P, 1.0f).data(), nullptr,
                         std::vector<unsigned char>(2, 1).data());
    const QString why = failure(w, [&] { w.openCube(dir_.filePath("nodates.h5")); });
    QVERIFY2(why.contains("nodates.h5") && why.contains("'date'"), qPrintable(why));
    // A reference area, from the panel: the data panel says so, and the CLI with --ref-radius gives the same series.
    QVERIFY(loads(w, [&] { w.findChild<QDoubleSpinBox*>("ref-radius")->setValue(1); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().stackOptions().ref_radius, 1L);
    QVERIFY2(w.findChild<QLabel*>("data-summary")->text().contains("the mean of the 3 × 3 pixels about it"),
             qPrintable(w.findChild<QLabel*>("data-summary")->text()));
    const QString area = dir_.filePath("area_x.npy");
    cli.start(CUBESOLVE_CLI, {"solve", ts, "sbas", "-o", area, "--ref-radius", "1"});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    const Array x_area = read_npy(area.toStdString());
    for (std::size_t i = 0; i < x_area.size(); ++i)
      QVERIFY(std::isnan(x_area.value(i)) ? std::isnan(w.result()->x.value(i)) : x_area.value(i) == w.result()->x.value(i));
    double centre = 0;  // the reference pixel is no longer 0 on every date
    for (std::size_t j = 0; j < 4; ++j) centre += std::fabs(w.result()->x.value(j * P + 1 * W + 2));
    QVERIFY(centre > 0);
  }

  // MintPy's maps (temporalCoherence.h5 beside a time series, velocity.h5)
  // open as the maps they are: a channel per dataset named by it, in its
  // unit (none for MintPy's "1"), the file's values (NaN where the file has
  // none), its reference.
  void mapsOpened() {
    const hsize_t H = 5, W = 7, P = H * W;
    QVERIFY(QDir(dir_.path()).mkpath("maps"));
    const QString stack = QString::fromStdString(smallStack("maps_stack.h5")), ts = dir_.filePath("maps/timeseries.h5");
    QProcess cli;
    cli.start(CUBESOLVE_CLI, {"solve", stack, "sbas", "-o", ts});
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    const std::string tcoh = dir_.filePath("maps/temporalCoherence.h5").toStdString();
    std::vector<float> v(P), s(P);
    for (hsize_t p = 0; p < P; ++p) v[p] = 0.002f * static_cast<float>(p) - 0.01f, s[p] = 0.0005f;
    v[4] = NAN;
    const std::string velocity = dir_.filePath("maps/velocity.h5").toStdString();
    testing::write_maps(velocity, H, W, {{"velocity", v, "m/year"}, {"velocityStd", s, "m/year"}},
                        {{"FILE_TYPE", "velocity"}, {"REF_Y", "1"}, {"REF_X", "2"}, {"WAVELENGTH", "0.0555"}});
    for (const auto& [file, names, unit] : {std::tuple{tcoh, std::vector<std::string>{"temporalCoherence"}, QString()},
                                            std::tuple{velocity, std::vector<std::string>{"velocity", "velocityStd"}, QString("m/year")}}) {
      MainWindow w;
      w.show();
      QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(file)); }));
      QVERIFY(waitSolved(w));
      QCOMPARE(w.document().xNames(), names);
      QVERIFY(!w.document().stack());  // values, not phase: no unit of ours
      w.showView(MainWindow::View::Result);
      for (int k = 0; k < static_cast<int>(names.size()); ++k) {
        w.showLayer(MainWindow::Layer::Solution, k);
        QCOMPARE(w.resultView()->style().unit, unit);
        const std::vector<float> expected = testing::read_floats(file, names[static_cast<std::size_t>(k)].c_str());
        QCOMPARE(expected.size(), std::size_t{P});
        for (std::size_t p = 0; p < P; ++p) {
          const double a = w.resultView()->values()[p];
          QVERIFY2(std::isnan(expected[p]) ? std::isnan(a) : std::fabs(a - expected[p]) <= 1e-7,
                   qPrintable(QString("%1 pixel %2: %3 vs %4").arg(names[0].c_str()).arg(p).arg(a).arg(expected[p])));
        }
      }
    }
    MainWindow w;
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(velocity)); }));
    QVERIFY(w.document().reference() == std::make_pair(1, 2));
  }

  // A scripted run's exports: the pins' series as CSV and the solution as
  // data, in the unit asked for and relative to the date asked for (the
  // first by default), equal to the CLI's timeseries.h5 for the same.
  void scriptedExportsMatchTheCli_data() {
    QTest::addColumn<QString>("refDate");
    QTest::newRow("first date") << QString();
    QTest::newRow("--ref-date 20200125") << QString("20200125");
  }
  void scriptedExportsMatchTheCli() {
    QFETCH(QString, refDate);
    const QString stack = QString::fromStdString(smallStack("exports.h5")), tag = refDate.isEmpty() ? "first" : refDate;
    const QString csv = dir_.filePath("pins_" + tag + ".csv"), x = dir_.filePath("x_mm_" + tag + ".npy"),
                  h5 = dir_.filePath("ts_mm_" + tag + "/timeseries.h5");
    const QStringList ref = refDate.isEmpty() ? QStringList() : QStringList{"--ref-date", refDate};
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, QStringList{stack, "--unit", "mm", "--pin", "3,3", "--pin", "4,6", "--export-ts", csv, "--export", "solution=" + x} + ref);
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QVERIFY(QDir().mkpath(dir_.filePath("ts_mm_" + tag)));
    QProcess cli;
    cli.start(CUBESOLVE_CLI, QStringList{"solve", stack, "sbas", "-o", h5, "--unit", "mm"} + ref);
    QVERIFY(cli.waitForFinished(60000));
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    std::vector<hsize_t> dims;
    const std::vector<float> ts = testing::read_floats(h5.toStdString(), "timeseries", &dims);
    QCOMPARE(dims, (std::vector<hsize_t>{5, 5, 7}));
    // MintPy's reference date: REF_DATE, and 0 there at every pixel.
    const int r = refDate.isEmpty() ? 0 : 2;
    QCOMPARE(QString::fromStdString(testing::read_attribute(h5.toStdString(), "REF_DATE")), refDate.isEmpty() ? QString("20200101") : refDate);
    for (std::size_t p = 0; p < 35; ++p) QVERIFY(ts[static_cast<std::size_t>(r) * 35 + p] == 0 || std::isnan(ts[static_cast<std::size_t>(r) * 35 + p]));
    const std::size_t P = 35;
    auto near = [](double a, double b) { return (std::isnan(a) && std::isnan(b)) || std::fabs(a - b) <= 1e-6 * std::max(1.0, std::fabs(b)); };
    QFile f(csv);
    QVERIFY(f.open(QIODevice::ReadOnly | QIODevice::Text));
    const QStringList lines = QString(f.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY2(lines[0].startsWith("#") && lines[0].contains("mm") && lines[0].contains("1_2") &&
                 lines[0].contains(refDate.isEmpty() ? "2020-01-01 (0 there)" : "2020-01-25 (0 there)"),
             qPrintable(lines[0]));
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
    if (!refDate.isEmpty()) return;
    // A date the series lacks, or an output that cannot hold the first date, is refused, nothing written.
    for (const QStringList& bad : {QStringList{"-o", dir_.filePath("never.h5"), "--ref-date", "20200102"},
                                   QStringList{"-o", dir_.filePath("never.npy"), "--ref-date", "20200125"}}) {
      QProcess refused;
      refused.start(CUBESOLVE_CLI, QStringList{"solve", stack, "sbas"} + bad);
      QVERIFY(refused.waitForFinished(60000));
      QVERIFY2(refused.exitCode() == 2 && QString(refused.readAllStandardError()).contains("--ref-date: expected"), qPrintable(bad.join(' ')));
    }
    QCOMPARE(QDir(dir_.path()).entryList({"never*", "temporalCoherence*", "numInvIfgram*"}).size(), 0);
    QProcess gui_refused;
    gui_refused.start(CUBESOLVE_GUI_APP, {stack, "--ref-date", "20200102", "--pin", "3,3", "--export-ts", dir_.filePath("never.csv")});
    QVERIFY(gui_refused.waitForFinished(60000));
    QVERIFY2(gui_refused.exitCode() == 2 && QString(gui_refused.readAllStandardError()).contains("2020-01-01 to 2020-02-18"), "GUI --ref-date");
    QVERIFY(!QFile::exists(dir_.filePath("never.csv")));
    // An export onto an input is refused, the input kept.
    QProcess onto;
    onto.start(CUBESOLVE_GUI_APP, {stack, "--pin", "3,3", "--export-ts", stack});
    QVERIFY(onto.waitForFinished(60000));
    QVERIFY2(onto.exitCode() == 2 && QString(onto.readAllStandardError()).contains("apart from the inputs"), "export onto the stack");
    QVERIFY(QFileInfo(stack).size() > 1000);
  }
#else
  void stacks() { QSKIP("built without HDF5"); }
#endif
};

QTEST_MAIN(TestStacks)
#include "tst_stacks.moc"
