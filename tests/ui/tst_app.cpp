// The desktop application as a program: the session and settings across
// runs, --help without a display, --screenshot and its exit codes.
#include "gui_fixture.hpp"

#include <cubesolve/engine/tuning.hpp>

#include <QImageReader>

#include <set>

class TestApp : public QObject, GuiFixture {
  Q_OBJECT

private slots:
  void initTestCase() { QVERIFY(isolate()); }
  void init() { QSettings().clear(); }  // each test starts as on a new machine

  // Parameters, files, view, channel, pixel, pins and profiles come back after quit
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
      w.findChild<QSpinBox*>("memory")->setValue(64);
      QCOMPARE(w.document().options().memory, std::size_t{64} << 20);
      w.findChild<QDoubleSpinBox*>("ridge")->setValue(0.25);
      auto* rcond = w.findChild<QLineEdit*>("rcond");
      rcond->setText("1e-09");
      emit rcond->editingFinished();
      w.findChild<QComboBox*>("device")->setCurrentIndex(w.findChild<QComboBox*>("device")->findData("cpu"));
      w.showLayer(MainWindow::Layer::Solution, 0);
      auto* maps = w.findChild<QComboBox*>("colormap");
      maps->setCurrentIndex(maps->findData(int(Colormap::RomaO)));
      w.findChild<QCheckBox*>("reversed")->setChecked(true);
      w.findChild<QCheckBox*>("auto-range")->setChecked(false);
      w.findChild<QDoubleSpinBox*>("range-lo")->setValue(-2);
      w.findChild<QDoubleSpinBox*>("range-hi")->setValue(3);
      w.showLayer(MainWindow::Layer::Solution, 7);
      w.selectPixel(3, 4);
      w.pinPixel();
      w.selectPixel(5, 6);
      w.pinPixel();
      w.document().setPinShown(1, false);
      QVERIFY(w.document().addProfile({{1, 2}, {30, 31}, {2, 39}}, "across"));
      QVERIFY(w.document().addProfile({{0, 0}, {39, 0}}));
      w.document().setProfileShown(1, false);
      w.document().setProfileBand(5);
      QVERIFY(w.document().setReferenceArea(std::array{30, 2, 36, 9}));
      w.document().setReferenceScope(Document::AreaScope::Series);
      w.selectPixel(11, 12);
      w.showView(MainWindow::View::Inspector);
      w.close();
    }
    MainWindow w;
    QCOMPARE(QSettings().value("params/ridge").toDouble(), 0.25);  // not rewritten during start-up
    QCOMPARE(QSettings().value("params/auto").toBool(), false);
    QCOMPARE(w.findChild<QSpinBox*>("min-valid")->value(), 5);
    QCOMPARE(w.findChild<QSpinBox*>("memory")->value(), 64);
    QCOMPARE(w.document().options().memory, std::size_t{64} << 20);
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
    QCOMPARE(w.pinned().size(), std::size_t{2});
    QCOMPARE(w.pinned()[0], (std::pair{3, 4}));
    QVERIFY(w.document().pinShown(0) && !w.document().pinShown(1));
    const auto& profiles = w.document().profiles();
    QCOMPARE(profiles.size(), std::size_t{2});
    QCOMPARE(profiles[0].vertices, (std::vector<std::array<double, 2>>{{1, 2}, {30, 31}, {2, 39}}));
    QVERIFY(profiles[0].name == "across" && profiles[0].shown && profiles[1].name == "profile 1" && !profiles[1].shown);
    QCOMPARE(w.document().profileBand(), 5);
    QVERIFY(w.document().referenceArea() && *w.document().referenceArea() == (std::array{30, 2, 36, 9}));
    QCOMPARE(w.document().referenceScope(), Document::AreaScope::Series);
    QCOMPARE(w.findChild<QComboBox*>("colormap")->currentData().toInt(), int(Colormap::RomaO));
    QCOMPARE(QSettings().value("view/layer0/colormap").toString(), QString("romaO"));  // kept by name
    QCOMPARE(w.resultView()->style().scale.map, Colormap::RomaO);
    QCOMPARE(w.resultView()->style().scale.reversed, true);
    QCOMPARE(w.resultView()->style().scale.lo, -2.0);
    QCOMPARE(w.resultView()->style().scale.hi, 3.0);
    // The recent files are sets: the cube with its design.
    const QStringList recent = QSettings().value("recent_sets").toStringList();
    QVERIFY(!recent.isEmpty());
    QCOMPARE(recent.first(), QString::fromStdString(cube + "\n" + design));
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

  // --export-animation writes the channels as an animated GIF (or an MP4
  // video, read back in tst_views) at --rate, then exits.
  void animationOption() {
    const QString gif = dir_.filePath("dates.gif");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--rate", "10", "--export-animation", gif});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QImageReader reader(gif);
    QCOMPARE(reader.imageCount(), 29);
    QVERIFY(!reader.read().isNull());
    QCOMPARE(reader.nextImageDelay(), 100);
    for (const auto& [args, message] : {std::pair{QStringList{"--rate", "0"}, QString("--rate: expected frames a second")},
                                        std::pair{QStringList{"--rate", "x"}, QString("--rate: expected frames a second")},
                                        std::pair{QStringList{"--export-animation", dir_.filePath("a.avi")}, QString("ending in .gif or .mp4")}}) {
      app.start(CUBESOLVE_GUI_APP, QStringList{"--demo", "insar", "--size", "40"} + args +
                                       (args[0] == "--rate" ? QStringList{"--export-animation", dir_.filePath("never.gif")} : QStringList{}));
      QVERIFY(app.waitForFinished(60000));
      const QString err = app.readAllStandardError();
      QVERIFY2(app.exitCode() == 2 && err.contains(message), qPrintable(args.join(' ') + ": " + err));
    }
    QVERIFY(!QFile::exists(dir_.filePath("never.gif")) && !QFile::exists(dir_.filePath("a.avi")));
    // An animation is never written over an open input (here a design file named .mp4).
    const auto files = demoFiles("insar", 40, "animation");
    const QString design = dir_.filePath("design.mp4");
    QVERIFY(QFile::copy(QString::fromStdString(files.second), design));
    app.start(CUBESOLVE_GUI_APP, {QString::fromStdString(files.first), design, "--export-animation", design});
    QVERIFY(app.waitForFinished(60000));
    const QString err = app.readAllStandardError();
    QVERIFY2(app.exitCode() == 2 && err.contains("apart from the inputs"), qPrintable(err));
    QFile kept(design), original(QString::fromStdString(files.second));
    QVERIFY(kept.open(QIODevice::ReadOnly) && original.open(QIODevice::ReadOnly) && kept.readAll() == original.readAll());
  }

  // --json prints what a scripted run cost as one JSON line: its wall time,
  // peak memory, the engine's time and how long the window went unanswering.
  void jsonReport() {
    const auto files = demoFiles("insar", 30, "json");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {QString::fromStdString(files.first), QString::fromStdString(files.second), "--screenshot",
                                  dir_.filePath("json.png"), "--json"});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    const QStringList lines = QString::fromUtf8(app.readAllStandardOutput()).trimmed().split('\n');
    const QJsonObject j = QJsonDocument::fromJson(lines.last().toUtf8()).object();
    QCOMPARE(j["command"].toString(), QString("cubesolve"));
    QCOMPARE(j["exit"].toInt(), 0);
    QVERIFY(j["cube_on_disk"].toBool());  // (a .npy)
    QVERIFY(j["wall_seconds"].toDouble() > 0 && j["peak_memory_mb"].toDouble() > 0 && j["engine_seconds"].toDouble() > 0);
    QVERIFY(j["ticks"].toInt() >= 1 && j["largest_tick_gap_ms"].toDouble() >= 0);
    for (const auto& gap : j["tick_gaps_over_100ms"].toArray())  // (when each ended, and how long it was)
      QVERIFY(gap.toArray().size() == 2 && gap.toArray()[1].toDouble() > 100 &&
              gap.toArray()[1].toDouble() <= j["largest_tick_gap_ms"].toDouble());
    QVERIFY(j["tick_gaps_over_100ms"].isArray());
    QVERIFY(j["engine_parameters_origin"].toString().size() > 0);
    QVERIFY(j["warnings"].toArray().isEmpty());
    // A stored engine parameters' line for this machine that cannot be read:
    // passed over, said on stderr, in the JSON and in the window's status bar.
    const QString tuning = dir_.filePath("tuning.txt");
    QFile stored(tuning);
    QVERIFY(stored.open(QIODevice::WriteOnly));
    stored.write(QString::fromStdString(machine_key().text() + "\tchunk_kib=huge\n").toUtf8());
    stored.close();
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("CUBESOLVE_TUNING_FILE", tuning);
    app.setProcessEnvironment(env);
    app.start(CUBESOLVE_GUI_APP, {QString::fromStdString(files.first), QString::fromStdString(files.second), "--screenshot",
                                  dir_.filePath("json.png"), "--json"});
    QVERIFY(app.waitForFinished(60000) && app.exitCode() == 0);
    const QString err = QString::fromUtf8(app.readAllStandardError());
    QVERIFY2(err.contains("cubesolve: warning: " + tuning + ":1: ignored") && err.contains("chunk_kib"), qPrintable(err));
    const QJsonObject bad = QJsonDocument::fromJson(QString::fromUtf8(app.readAllStandardOutput()).trimmed().split('\n').last().toUtf8()).object();
    QVERIFY(bad["warnings"].toArray().size() == 1 && bad["engine_parameters_origin"].toString().startsWith("derived"));
    qputenv("CUBESOLVE_TUNING_FILE", tuning.toUtf8());
    set_tuning(std::nullopt);  // (read again)
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 20));
    const QString shown = w.statusBar()->currentMessage();
    qunsetenv("CUBESOLVE_TUNING_FILE");
    set_tuning(std::nullopt);
    QVERIFY2(shown.contains(tuning + ":1: ignored"), qPrintable(shown));
  }

  // --profile draws profiles once read; --export-profile writes them along
  // the map shown: at band 1 each point's value is the map's at its nearest
  // pixel (the layer exported beside it); bad profiles are refused.
  void profileOption() {
    const QString csv = dir_.filePath("profiles.csv"), x = dir_.filePath("x.npy"), chart = dir_.filePath("profiles.png");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--channel", "5", "--profile", "2,3:30,35", "--profile", "20,0:20,39:39,39",
                                  "--export-profile", csv, "--export", "solution=" + x});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    const Array solution = read_npy(x.toStdString());
    QFile file(csv);
    QVERIFY(file.open(QIODevice::ReadOnly));
    const QStringList lines = QString(file.readAll()).split('\n', Qt::SkipEmptyParts);
    QVERIFY(lines[0].startsWith("# ") && lines[0].contains("x[5]"));
    QCOMPARE(lines[2], QString("profile,distance,row,col,mean,std,count"));
    std::set<QString> names;
    int finite = 0;
    for (int i = 3; i < lines.size(); ++i) {
      const QStringList f = lines[i].split(',');
      QCOMPARE(f.size(), 7);
      names.insert(f[0]);
      const auto r = static_cast<std::size_t>(std::lround(f[2].toDouble())), c = static_cast<std::size_t>(std::lround(f[3].toDouble()));
      const double v = solution.value(5 * 40 * 40 + r * 40 + c);
      QVERIFY2(std::isnan(v) ? f[4].isEmpty() && f[6] == "0" : f[4].toDouble() == v && f[5] == "0" && f[6] == "1", qPrintable(lines[i]));
      finite += std::isfinite(v);
    }
    QCOMPARE(lines.size() - 3, (43 + 1) + (39 + 19 + 1));  // ceil(hypot(28, 32)) steps, 39 + 19, and each last vertex
    QVERIFY(names == (std::set<QString>{"profile 1", "profile 2"}) && finite > 50);
    // Its chart, at a band 3 pixels wide.
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--profile", "2,3:30,35", "--profile-width", "3", "--export-chart", chart});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QCOMPARE(QImage(chart).size(), QSize(1200, 800));
    for (const auto& [args, message] : {std::pair{QStringList{"--profile", "2,3"}, QString("--profile: expected two vertices or more")},
                                        std::pair{QStringList{"--profile", "2,3:a,b"}, QString("--profile: expected vertices Y,X")},
                                        std::pair{QStringList{"--profile", "2,3:2,3"}, QString("two distinct vertices or more within the cube's 40 rows")},
                                        std::pair{QStringList{"--profile", "2,3:2,45"}, QString("two distinct vertices or more within the cube's 40 rows")},
                                        std::pair{QStringList{"--profile", "2,3:4,5", "--profile-width", "4"}, QString("--profile-width: expected an odd number")},
                                        std::pair{QStringList{"--profile", "2,3:4,5", "--ref-area", "1,2:3"}, QString("--ref-area: expected Y0,X0:Y1,X1")},
                                        std::pair{QStringList{"--profile", "2,3:4,5", "--ref-area", "1,2:3,40"}, QString("--ref-area: expected corners within")},
                                        std::pair{QStringList{"--profile", "2,3:4,5", "--ref-area-for", "pins"}, QString("--ref-area-for: expected all, maps or series")},
                                        std::pair{QStringList{"--profile", "2,3:4,5", "--memory", "8"}, QString("--memory: expected an integer from 16")},
                                        std::pair{QStringList{}, QString("expected a profile shown on a solved map")}}) {
      app.start(CUBESOLVE_GUI_APP, QStringList{"--demo", "insar", "--size", "40"} + args + QStringList{"--export-profile", dir_.filePath("never.csv")});
      QVERIFY(app.waitForFinished(60000));
      const QString err = app.readAllStandardError();
      QVERIFY2(app.exitCode() == 2 && err.contains(message), qPrintable(args.join(' ') + ": " + err));
    }
    QVERIFY(!QFile::exists(dir_.filePath("never.csv")));
  }

  // --export-chart draws the inspected pixel's chart at --chart-size, then exits.
  void chartOption() {
    const QString svg = dir_.filePath("series.svg"), png = dir_.filePath("series.png");
    QProcess app;
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--pixel", "3,4", "--pin", "9,9", "--export-chart", png, "--chart-size", "1000x640"});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QCOMPARE(QImage(png).size(), QSize(1000, 640));
    app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--export-chart", svg});
    QVERIFY(app.waitForFinished(60000));
    QVERIFY2(app.exitCode() == 0, app.readAllStandardError().constData());
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly) && file.readAll().contains("width=\"1200\" height=\"800\""));
    // --colormap: the layer exported and shown in the named map; an unknown name is refused.
    auto colours = [&](const QString& map) {
      const QString out = dir_.filePath(map + ".png");
      app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--colormap", map, "--export", "solution=" + out});
      return app.waitForFinished(60000) && app.exitCode() == 0 ? QImage(out) : QImage();
    };
    auto has = [](const QImage& img, QRgb c) {
      for (int y = 0; y < img.height(); ++y)
        for (int x = 0; x < img.width(); ++x)
          if (img.pixel(x, y) == c) return true;
      return false;
    };
    const QImage batlow = colours("batlow"), grey = colours("grey");
    QVERIFY(!batlow.isNull() && !grey.isNull());
    QVERIFY(has(batlow, qRgb(1, 25, 89)) && has(batlow, qRgb(250, 204, 250)));  // batlow's ends (clipped 2-98 %)
    QVERIFY(!has(grey, qRgb(1, 25, 89)) && !has(grey, qRgb(250, 204, 250)));
    QVERIFY(!colours("brocO_r").isNull());
    QVERIFY(colours("jet").isNull());
    QCOMPARE(app.exitCode(), 2);
    QVERIFY(app.readAllStandardError().contains("--colormap: expected viridis"));
    for (const QString& size : QStringList{"1000", "0x600", "axb"}) {
      app.start(CUBESOLVE_GUI_APP, {"--demo", "insar", "--size", "40", "--export-chart", png + ".2.png", "--chart-size", size});
      QVERIFY(app.waitForFinished(60000));
      const QString err = app.readAllStandardError();
      QVERIFY2(app.exitCode() == 2 && (err.contains("--chart-size") || err.contains("16 × 16")), qPrintable(size + ": " + err));
      QVERIFY(!QFile::exists(png + ".2.png"));
    }
  }
};

QTEST_MAIN(TestApp)
#include "tst_app.moc"
