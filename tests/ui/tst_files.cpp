// The desktop application's files: every read, solve and export on the
// worker thread, bad files, exports equal to the CLI's (data, figures,
// GeoTIFF), built designs, a design of another length.
#include "gui_fixture.hpp"

#include <random>

class TestFiles : public QObject, GuiFixture {
  Q_OBJECT

  /// A float32 cube (N, H, W) of normal values, 15 % missing at random and
  /// rows [gap, gap + 30) with no valid value, and a design (N, M).
  static std::pair<Array, Array> gappedCube(std::size_t N, std::size_t H, std::size_t W, std::size_t M, unsigned seed, std::size_t gap) {
    Array y(DType::Float32, {N, H, W}), a(DType::Float64, {N, M});
    std::mt19937 rng(seed);
    std::normal_distribution<float> normal;
    std::uniform_real_distribution<double> uniform;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const std::size_t row = (i / W) % H;
      y.data<float>()[i] = (row >= gap && row < gap + 30) || uniform(rng) < 0.15 ? NAN : normal(rng);
    }
    for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = normal(rng);
    return {std::move(y), std::move(a)};
  }

private slots:
  void initTestCase() { QVERIFY(isolate()); }
  void init() { QSettings().clear(); }  // each test starts as on a new machine

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

  // A raster whose bands carry dates: a design built without a times file
  // takes them (a harmonic fit's annual terms, in decimal years), the data
  // panel names them, and the solution's GeoTIFF of a time series is dated.
  void datedRaster() {
    if (!raster_support()) QSKIP("built without GDAL");
    const DemoCube d = make_demo("seed", 12);
    const std::size_t n = d.cube.dim(0);
    std::vector<std::string> dates;
    for (std::size_t i = 0; i < n; ++i) dates.push_back(date_of_day(day_number("20190105") + static_cast<long>(11 * i)));
    const std::string cube = dir_.filePath("dated.tif").toStdString();
    OutputSet in;
    write_geotiff(in.add_external(cube), d.cube, {}, dates);
    in.commit();
    MainWindow w;
    w.show();
    QVERIFY(loads(w, [&] { w.openCube(QString::fromStdString(cube)); }));
    QCOMPARE(w.document().bandDates(), dates);
    QVERIFY(loads(w, [&] { w.buildDesign("harmonic:1", {}, {}); }));
    QVERIFY(waitSolved(w));
    const Array expected = make_design({"harmonic:1", "", "", dates}, n);
    QCOMPARE(w.design()->cols(), std::size_t{4});
    for (std::size_t i = 0; i < expected.size(); ++i) QCOMPARE(w.design()->values()[i], expected.value(i));
    QCOMPARE(w.document().xNames(), (std::vector<std::string>{"offset", "trend", "annual_cos", "annual_sin"}));
    const QString panel = w.findChild<QLabel*>("data-summary")->text();
    QVERIFY2(panel.contains("band dates 2019-01-05 to " + cubesolve::ui::iso_day(dates.back())), qPrintable(panel));
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
    // A harmonic fit's amplitude and peak as layers of their own, per periodic term.
    auto* layers = w.findChild<QComboBox*>("layer");
    QVERIFY(layers->findData(int(MainWindow::Layer::Amplitude)) >= 0 && layers->findData(int(MainWindow::Layer::Peak)) >= 0);
    w.showLayer(MainWindow::Layer::Amplitude, 0);
    const Array& x = w.result()->x;
    const std::size_t P = x.dim(1) * x.dim(2);
    for (std::size_t p = 0; p < P; p += 7)
      QCOMPARE(w.resultView()->values()[p], std::hypot(x.value(2 * P + p), x.value(3 * P + p)));
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), QString("harmonic1"));
    w.showLayer(MainWindow::Layer::Peak, 0);
    QVERIFY2(w.resultView()->style().title.contains("peak, time into its period of 25"), qPrintable(w.resultView()->style().title));
    QCOMPARE(w.resultView()->style().scale.hi, 25.0);  // the whole cycle, in its colours
    QCOMPARE(w.resultView()->style().scale.map, Colormap::Twilight);
    // Dated times: the annual term's peak in days after 1 January.
    QString dates;
    for (std::size_t i = 0; i < w.document().cube()->dim(0); ++i) dates += QString::fromStdString(date_of_day(day_number("20200103") + 30 * long(i))) + "\n";
    const QString times = dir_.filePath("dates.txt");
    QFile f(times);
    QVERIFY(f.open(QIODevice::WriteOnly) && f.write(dates.toUtf8()) > 0);
    f.close();
    QVERIFY(loads(w, [&] { w.buildDesign("harmonic:1", {}, times); }));
    QVERIFY(waitSolved(w));
    w.showLayer(MainWindow::Layer::Peak, 0);
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), QString("annual"));
    QVERIFY2(w.resultView()->style().title.contains("annual peak, days into its 365.25-day period"), qPrintable(w.resultView()->style().title));
    QCOMPARE(w.resultView()->style().unit, QString("day"));
    QCOMPARE(w.resultView()->style().scale.hi, 365.25);
    // Other designs have no such layers.
    QVERIFY(loads(w, [&] { w.buildDesign("poly:2", {}, {}); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(layers->findData(int(MainWindow::Layer::Amplitude)), -1);
    QVERIFY(loads(w, [&] { w.buildDesign("harmonic:1:25", {}, {}); }));
    QVERIFY(waitSolved(w));
    QVERIFY(failure(w, [&] { w.buildDesign("poly:x", {}, {}); }).contains("poly:x"));
    // Scripted with the CLI's words (a built design, --times), the amplitude
    // exported is that of the CLI's x for the same inputs.
    const auto [cube, design] = demoFiles("seed", 12, "season");
    const QString amplitude = dir_.filePath("amplitude.npy"), x_cli = dir_.filePath("x_season.npy");
    QProcess app, cli;
    app.start(CUBESOLVE_GUI_APP, {QString::fromStdString(cube), "harmonic:1", "--times", times, "--export", "amplitude=" + amplitude});
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), "harmonic:1", "--times", times, "-o", x_cli});
    QVERIFY(app.waitForFinished(60000) && cli.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QVERIFY2(cli.exitCode() == 0, cli.readAllStandardError().constData());
    const Array a = read_npy(amplitude.toStdString()), xc = read_npy(x_cli.toStdString());
    QCOMPARE(a.shape(), (Shape{1, 12, 12}));
    for (std::size_t p = 0; p < 144; ++p) {
      const double want = std::hypot(xc.value(2 * 144 + p), xc.value(3 * 144 + p));
      QVERIFY2(std::abs(a.value(p) - want) <= 1e-5 * (1 + want) || (std::isnan(want) && std::isnan(a.value(p))), qPrintable(QString::number(p)));
    }
    QCOMPARE(w.design()->cols(), std::size_t{4});
  }

  // A read shows its progress block by block and Esc cancels it: what was
  // open stays, and no error is shown.
  void readProgressAndCancel() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    const auto before = w.document().cube();
    const std::string big = dir_.filePath("big.npy").toStdString();  // 48 x 600 x 600 float32: 69 MB, three blocks
    {
      Array a(DType::Float32, {48, 600, 600});
      for (std::size_t i = 0; i < a.size(); i += 97) a.data<float>()[i] = NAN;
      OutputSet out;
      out.add_npy(big, a);
      out.commit();
    }
    QSignalSpy progress(&w.document().worker(), &cubesolve::ui::Worker::jobProgress);
    QSignalSpy cancelled(&w.document(), &cubesolve::ui::Document::jobCancelled), failed(&w, &MainWindow::errorShown);
    w.document().openCube(QString::fromStdString(big));
    w.cancelSolve();  // Esc before the first block is in: the read stops there
    QVERIFY(cancelled.wait(60000));
    QCOMPARE(w.document().cube(), before);
    QVERIFY(failed.isEmpty());
    QVERIFY2(w.findChild<QLabel*>("solve-summary")->text().contains("Cancelled"), qPrintable(w.findChild<QLabel*>("solve-summary")->text()));
    QVERIFY(!w.findChild<QProgressBar*>()->isVisible());
    // Read to the end: a report per block, the last at 1.
    progress.clear();
    QVERIFY(loads(w, [&] { w.document().openCube(QString::fromStdString(big)); }));
    QVERIFY(progress.size() >= 3);
    QCOMPARE(progress.last().first().toDouble(), 1.0);
    QCOMPARE(w.document().cube()->shape(), (Shape{48, 600, 600}));
    QVERIFY(std::isnan(w.document().cube()->value(97)) && w.document().cube()->value(98) == 0);
    // An export too: cancelled, it leaves no file; run, it reports block by block.
    QVERIFY(loads(w, [&] { w.buildDesign("poly:1", {}, {}); }));
    QVERIFY(waitSolved(w) && w.result());
    const QString x = dir_.filePath("big_x.tif");
    cancelled.clear();
    w.document().exportSolution(x, false);
    w.cancelSolve();
    QVERIFY(cancelled.wait(60000));
    QVERIFY(!QFile::exists(x) && !QFile::exists(dir_.filePath("big_x_rank.tif")));
    QCOMPARE(QDir(dir_.path()).entryList({"big_x*"}).size(), 0);  // nor a temporary file
    progress.clear();
    QCOMPARE(exports(w, [&] { w.document().exportSolution(x, false); }).size(), 6);
    QVERIFY(progress.size() >= 2);
    // The core's reader cancels as the window's does.
    auto reader = open_cube(big);
    int calls = 0;
    QVERIFY_THROWS_EXCEPTION(Cancelled, read_all(*reader, [&](double) { return ++calls < 2; }));
    QCOMPARE(calls, 2);
  }

  // A .npy cube is kept on disk: mapped for the views, its masks from one
  // pass a block of rows at a time, solved a block at a time as the CLI's
  // solve and to the bit its solutions (odd height, a band of rows with no
  // valid value, several blocks); a file cut short while open gives one
  // clear message and no crash.
  void cubeKeptOnDisk() {
    const std::size_t N = 40, H = 301, W = 500;
    const std::string cube = dir_.filePath("disk.npy").toStdString(), design = dir_.filePath("disk_A.npy").toStdString();
    const auto [y, a] = gappedCube(N, H, W, 4, 21, 100);
    {
      OutputSet out;
      out.add_npy(cube, y);
      out.add_npy(design, a);
      out.commit();
    }
    MainWindow w;
    w.show();
    SolveOptions options = w.document().options();
    options.memory = std::size_t{16} << 20;  // several blocks
    w.document().setOptions(options);
    QVERIFY(loads(w, [&] { w.document().openFiles(QString::fromStdString(cube), QString::fromStdString(design), {}); }));
    QVERIFY(waitSolved(w));
    Document& doc = w.document();
    QVERIFY(doc.cubeOnDisk());
    const MaskStats whole = analyze_masks(y);
    QVERIFY(doc.masks()->n_valid == whole.n_valid && doc.masks()->group_of == whole.group_of && doc.masks()->compact);
    for (std::size_t p = 0; p < whole.pixels(); ++p) QVERIFY(std::equal(whole.mask(p), whole.mask(p) + whole.words, doc.masks()->mask(p)));
    QCOMPARE(doc.cube()->value(5 * H * W + 7), y.value(5 * H * W + 7));  // the views read the file
    QProcess cli;
    const QString x = dir_.filePath("disk_x.npy");
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), QString::fromStdString(design), "-o", x, "--diag",
                              dir_.filePath("disk_d"), "--memory", "16", "--json"});
    QVERIFY(cli.waitForFinished(60000) && cli.exitCode() == 0);
    QVERIFY(QJsonDocument::fromJson(cli.readAllStandardOutput()).object()["blocks"].toInt() > 2);
    const Array cx = read_npy(x.toStdString()), crss = read_npy(dir_.filePath("disk_d_rss.npy").toStdString());
    QCOMPARE(std::memcmp(cx.raw(), doc.result()->x.raw(), cx.nbytes()), 0);
    for (std::size_t i = 0; i < crss.size(); ++i) {  // (rss from sums whose order follows the engine's batches: to rounding)
      const double c = crss.value(i), d = doc.result()->rss.value(i);
      QVERIFY(std::isnan(c) ? std::isnan(d) : std::fabs(c - d) <= 1e-12 * std::fabs(c));
    }
    // Weights opened after: the masks again from a pass over the file, the solve weighted.
    Array weights(DType::Float64, {N, H, W});
    for (std::size_t i = 0; i < weights.size(); ++i) weights.data<double>()[i] = i % 7 == 3 ? 0.0 : 1.0 + static_cast<double>(i % 5);
    const std::string wfile = dir_.filePath("disk_w.npy").toStdString();
    {
      OutputSet out;
      out.add_npy(wfile, weights);
      out.commit();
    }
    QVERIFY(loads(w, [&] { w.openWeights(QString::fromStdString(wfile)); }));
    QVERIFY(waitSolved(w) && doc.useWeights());
    const MaskStats weighted = analyze_masks(y, &weights);
    QVERIFY(doc.masks()->n_valid == weighted.n_valid && doc.masks()->group_of == weighted.group_of);
    QVERIFY(doc.result()->paths[static_cast<std::size_t>(SolvePath::Gram)] > 0);  // (weighted pixels)
    // Cut short while open: the next solve and the inspector say so, and read nothing.
    QSignalSpy failed(&w, &MainWindow::errorShown);
    QVERIFY(QFile::resize(QString::fromStdString(cube), static_cast<qint64>(y.nbytes() / 2)));
    w.selectPixel(200, 300);  // past the cut
    w.showView(MainWindow::View::Inspector);
    QCOMPARE(failed.size(), 1);
    QVERIFY2(failed[0][0].toString().contains("disk.npy") && failed[0][0].toString().contains("cut short"), qPrintable(failed[0][0].toString()));
    doc.solve();
    QVERIFY(failed.wait(60000) || failed.size() > 1);
    QVERIFY2(failed.last()[0].toString().contains("cut short"), qPrintable(failed.last()[0].toString()));
    // Another cube dropped on the window (of another shape): told apart by
    // its header (not read whole), kept on disk too.
    const std::string other = dir_.filePath("disk_other.npy").toStdString();
    {
      OutputSet out;
      out.add_npy(other, take_rows(y, 0, 50));
      out.commit();
    }
    QVERIFY(loads(w, [&] { w.openAny(QString::fromStdString(other)); }));
    QVERIFY(doc.cubeOnDisk() && doc.cube()->shape() == (Shape{N, 50, W}));
    // A cube on disk opened with its weights: its masks under them from its one pass.
    const std::string other_w = dir_.filePath("disk_other_w.npy").toStdString();
    {
      OutputSet out;
      out.add_npy(other_w, take_rows(weights, 0, 50));
      out.commit();
    }
    QVERIFY(loads(w, [&] {
      doc.openFiles(QString::fromStdString(other), QString::fromStdString(design), QString::fromStdString(other_w));
    }));
    QVERIFY(waitSolved(w) && doc.cubeOnDisk() && doc.useWeights());
    const Array top_w = take_rows(weights, 0, 50);
    const MaskStats both = analyze_masks(take_rows(y, 0, 50), &top_w);
    QVERIFY(doc.masks()->n_valid == both.n_valid && doc.masks()->group_of == both.group_of);
    QVERIFY(doc.result()->paths[static_cast<std::size_t>(SolvePath::Gram)] > 0);
    QSignalSpy refused(&w, &MainWindow::errorShown);  // weights of another shape: named
    doc.openFiles(QString::fromStdString(other), QString::fromStdString(design), QString::fromStdString(wfile));
    QVERIFY(refused.wait(60000) || !refused.isEmpty());
    QVERIFY2(refused.last()[0].toString().contains("disk_w.npy"), qPrintable(refused.last()[0].toString()));
    MainWindow demo;  // a cube made in memory stays there
    QVERIFY(demoSolved(demo, "insar", 24) && !demo.document().cubeOnDisk());
  }

  // A raster larger than the memory budget is kept on disk as a .npy is:
  // copied once into the cache folder for the views (with its masks from
  // the same pass), solved from its own file a block of rows at a time as
  // the CLI solves it, to the bit; its georeference and band dates kept.
  // One within the budget is read into memory.
  void rasterKeptOnDisk() {
    if (!raster_support()) QSKIP("built without GDAL");
    const std::size_t N = 30, H = 301, W = 500;
    const auto [y, a] = gappedCube(N, H, W, 3, 5, 200);
    std::vector<std::string> dates;
    for (std::size_t i = 0; i < N; ++i) dates.push_back(date_of_day(day_number("20200101") + static_cast<long>(12 * i)));
    const GeoReference geo{{500000.0, 30.0, 0.0, 4100000.0, 0.0, -30.0}, "", {}};
    const std::string cube = dir_.filePath("big.tif").toStdString(), design = dir_.filePath("big_A.npy").toStdString();
    {
      OutputSet out;
      write_geotiff(out.add_external(cube), y, geo, dates);
      out.add_npy(design, a);
      out.commit();
    }
    MainWindow w;
    w.show();
    Document& doc = w.document();
    SolveOptions options = doc.options();
    options.memory = std::size_t{16} << 20;  // below the cube's 18 MB
    doc.setOptions(options);
    QVERIFY(loads(w, [&] { doc.openFiles(QString::fromStdString(cube), QString::fromStdString(design), {}); }));
    QVERIFY(waitSolved(w));
    QVERIFY(doc.cubeOnDisk());
    QCOMPARE(doc.bandDates(), dates);
    QCOMPARE(doc.geo().transform, geo.transform);
    const MaskStats whole = analyze_masks(y);
    QVERIFY(doc.masks()->n_valid == whole.n_valid && doc.masks()->group_of == whole.group_of);
    QCOMPARE(std::memcmp(doc.cube()->raw(), y.raw(), y.nbytes()), 0);  // the copy the views read
    QProcess cli;
    const QString x = dir_.filePath("big_x.npy");
    cli.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), QString::fromStdString(design), "-o", x, "--memory", "16", "--json"});
    QVERIFY(cli.waitForFinished(60000) && cli.exitCode() == 0);
    QVERIFY(QJsonDocument::fromJson(cli.readAllStandardOutput()).object()["blocks"].toInt() > 1);
    const Array cx = read_npy(x.toStdString());
    QCOMPARE(std::memcmp(cx.raw(), doc.result()->x.raw(), cx.nbytes()), 0);
    // Cut short while open: the next solve says so, naming the file.
    QSignalSpy failed(&w, &MainWindow::errorShown);
    QVERIFY(QFile::resize(QString::fromStdString(cube), 4096));
    doc.solve();
    QVERIFY(failed.wait(60000) || !failed.isEmpty());
    QVERIFY2(failed.last()[0].toString().contains("big.tif") && failed.last()[0].toString().contains("cut short"),
             qPrintable(failed.last()[0].toString()));
    // Within the budget: read into memory.
    options.memory = std::size_t{64} << 20;
    doc.setOptions(options);
    const std::string small = dir_.filePath("small.tif").toStdString();
    {
      OutputSet out;
      write_geotiff(out.add_external(small), take_rows(y, 0, 100), geo, dates);
      out.commit();
    }
    QVERIFY(loads(w, [&] { doc.openCube(QString::fromStdString(small)); }));
    QVERIFY(!doc.cubeOnDisk() && doc.cube()->shape() == (Shape{N, 100, W}));
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

  // Exported maps are figures at data resolution in the colours on screen.
  void figuresAtDataResolution() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 40));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 5);
    w.findChild<QComboBox*>("colormap")->setCurrentIndex(w.findChild<QComboBox*>("colormap")->findData(int(Colormap::Grey)));
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
    const QString name7 = "008_" + QString::fromStdString(day7) + ".png";  // numbered and dated
    const QImage x7(QDir(folder).filePath(name7));
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
    QCOMPARE(QImage(QDir(own).filePath(name7)).pixel(12 + 2 * 20, 32 + 2 * 20), qRgb(rgb[0], rgb[1], rgb[2]));
    // As PDF pages.
    const QString pdfs = dir_.filePath("figures_pdf");
    QVERIFY(QDir().mkpath(pdfs));
    QCOMPARE(exports(w, [&] { w.exportChannels(pdfs, 2, "pdf"); }).size(), 29);
    QFile pdf(QDir(pdfs).filePath("008_" + QString::fromStdString(day7) + ".pdf"));
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
};

QTEST_MAIN(TestFiles)
#include "tst_files.moc"
