// Rendering tests: each view of the application drawn at a fixed size and
// compared with a baseline image kept in tests/ui/baselines. A view drawn
// differently (a histogram, a legend, a colour bar over the data, a title
// missing or moved) fails; the actual image and a difference image are then
// written to the build's render folder. CUBESOLVE_UPDATE_BASELINES=1 writes
// the baselines instead.
#include "gui_fixture.hpp"
#include "profilechart.hpp"
#include "timeline.hpp"

#include <QDir>
#include <QScreen>
#include <QTemporaryDir>

using namespace cubesolve;
using cubesolve::ui::VtkView;

class TestRender : public QObject, GuiFixture {
  Q_OBJECT
  const QDir out_{CUBESOLVE_RENDER_OUTPUT};
  const bool update_ = qEnvironmentVariableIsSet("CUBESOLVE_UPDATE_BASELINES");

  /// The image against its baseline: at most 0.1 % of the pixels may differ
  /// by more than 40 in a channel (text edges between font renderers).
  void compare(const QImage& image, const QString& name) {
    const QImage actual = image.convertToFormat(QImage::Format_RGB32);
    QVERIFY(!actual.isNull());
    const QString baseline = QString(CUBESOLVE_BASELINES) + "/" + name + ".png";
    if (update_) {
      QVERIFY(actual.save(baseline));
      qInfo("wrote %s", qPrintable(baseline));
      return;
    }
    const QString actual_path = out_.filePath(name + ".actual.png"), diff_path = out_.filePath(name + ".diff.png");
    QFile::remove(actual_path);
    QFile::remove(diff_path);
    const QImage expected = QImage(baseline).convertToFormat(QImage::Format_RGB32);
    if (expected.isNull() || expected.size() != actual.size()) {
      actual.save(actual_path);
      QFAIL(qPrintable(QString("%1: expected an image of %2 x %3 as the baseline, found %4 x %5 (actual image: %6)")
                           .arg(name).arg(expected.width()).arg(expected.height())
                           .arg(actual.width()).arg(actual.height()).arg(actual_path)));
    }
    QImage diff(actual.size(), QImage::Format_RGB32);
    diff.fill(Qt::white);
    long long differ = 0;
    for (int y = 0; y < actual.height(); ++y)
      for (int x = 0; x < actual.width(); ++x) {
        const QRgb a = actual.pixel(x, y), e = expected.pixel(x, y);
        const int d = std::max({std::abs(qRed(a) - qRed(e)), std::abs(qGreen(a) - qGreen(e)), std::abs(qBlue(a) - qBlue(e))});
        if (d > 40) {
          ++differ;
          diff.setPixel(x, y, qRgb(255, 255 - d, 255 - d));
        }
      }
    const double fraction = static_cast<double>(differ) / (static_cast<double>(actual.width()) * actual.height());
    if (fraction > 0.001) {
      actual.save(actual_path);
      diff.save(diff_path);
      QFAIL(qPrintable(QString("%1: %2 % of the pixels differ from the baseline (at most 0.1 %); actual %3, difference %4")
                           .arg(name).arg(100 * fraction, 0, 'f', 2).arg(actual_path, diff_path)));
    }
  }

  /// The view as it is on the screen (its first display, not a render made for the grab).
  static QImage grabView(MainWindow& w, MainWindow::View view, VtkView* widget) {
    w.showView(view);
    QTest::qWait(200);
    const QPoint at = widget->mapTo(&w, QPoint(0, 0));
    return w.screen()->grabWindow(w.winId(), at.x(), at.y(), widget->width(), widget->height()).toImage();
  }

private slots:
  void initTestCase() {
    QVERIFY(isolate());
    QVERIFY(QDir().mkpath(out_.path()));
  }

  void insarViews() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 760));
    QVERIFY(demoSolved(w, "insar", 96));
    compare(grabView(w, MainWindow::View::Gaps, w.gapsView()), "gaps_insar");
    w.showGaps(true, 7);
    compare(grabView(w, MainWindow::View::Gaps, w.gapsView()), "mask_insar");
    w.showGaps(false, 0);
    compare(grabView(w, MainWindow::View::Groups, w.groupsChart()), "groups_insar");
    w.selectGroupBin(2);
    compare(grabView(w, MainWindow::View::Groups, w.groupsChart()), "groups_insar_selected");
    w.showLayer(MainWindow::Layer::Solution, 3);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "result_insar");
    compare(w.findChild<cubesolve::ui::Timeline*>("timeline")->grab().toImage(), "timeline_insar");
    w.showLayer(MainWindow::Layer::Status, 0);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "status_insar");
    w.showLayer(MainWindow::Layer::Rank, 0);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "rank_insar");
    w.selectPixel(40, 50);
    w.pinPixel();
    w.selectPixel(70, 20);
    compare(grabView(w, MainWindow::View::Inspector, w.inspectorChart()), "inspector_insar");
    // The time series of a pixel in the split part of the network: its
    // undetermined dates marked.
    w.selectPixel(80, 20);
    compare(grabView(w, MainWindow::View::Inspector, w.seriesChart()), "series_insar");
    w.showLayer(MainWindow::Layer::Velocity, 0);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "velocity_insar");
    w.setColours(MainWindow::Layer::Velocity, Colormap::Batlow, false);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "velocity_batlow");
    // An exported figure: the map at 3 pixels a value, its title and legend.
    w.showLayer(MainWindow::Layer::Solution, 3);
    w.showView(MainWindow::View::Result);
    const QString png = dir_.filePath("figure.png");
    QVERIFY(w.exportViewPng(png, 3));
    compare(QImage(png), "export_insar");
    // A profile across the bowl, 5 pixels wide: drawn on the map, charted under it.
    QVERIFY(w.document().addProfile({{10, 8}, {80, 90}, {80, 20}}));
    w.document().setProfileBand(5);
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "profile_map_insar");
    compare(grabView(w, MainWindow::View::Result, w.resultPage()->profileChart()), "profile_insar");
  }

#ifdef CUBESOLVE_TEST_HDF5
  // A MintPy stack with WAVELENGTH: displacement in mm on the colour bar, the
  // reference pixel marked, the channel titled by its date.
  void stackInMillimetres() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 760));
    // 6 interferograms over 5 dates, 48 x 64 pixels: a bowl subsiding by the
    // date, referenced at (6, 8).
    const hsize_t N = 6, H = 48, W = 64, P = H * W;
    const int pairs[6][2] = {{0, 1}, {0, 2}, {1, 2}, {1, 3}, {2, 3}, {2, 4}};
    const char* days[5] = {"20200101", "20200113", "20200125", "20200206", "20200218"};
    std::string dates;
    std::vector<float> phase(N * P);
    for (hsize_t k = 0; k < N; ++k) {
      dates += std::string(days[pairs[k][0]]) + days[pairs[k][1]];
      for (hsize_t p = 0; p < P; ++p) {
        const double y = double(p / W) - 28, x = double(p % W) - 36, bowl = std::exp(-(x * x + y * y) / 300.0);
        phase[k * P + p] = static_cast<float>(2.0 * bowl * (pairs[k][1] - pairs[k][0]) + 0.01 * double((p * 7) % 5));
      }
    }
    const std::vector<unsigned char> keep(N, 1);
    testing::StackExtras extras;
    extras.attributes = {{"REF_Y", "6"}, {"REF_X", "8"}, {"WAVELENGTH", "0.05546576"}};
    const std::string stack = dir_.filePath("render.h5").toStdString();
    testing::write_stack(stack, N, H, W, phase.data(), &dates, keep.data(), extras);
    QVERIFY(loads(w, [&] { w.document().openCube(QString::fromStdString(stack)); }));
    QVERIFY(waitSolved(w));
    w.selectPixel(30, 40);
    // The map alone sizes the grab: the data panel's width (its stack options)
    // follows the fonts of the machine.
    w.findChild<QDockWidget*>("data-dock")->hide();
    w.findChild<QDockWidget*>("marks-dock")->hide();
    QCOMPARE(w.document().unitLabel(), QString("mm"));
    w.showLayer(MainWindow::Layer::Solution, 2);
    QCOMPARE(w.resultView()->style().unit, QString("mm"));
    compare(grabView(w, MainWindow::View::Result, w.resultView()), "stack_mm");
  }
#endif

  // 500 x 500 pixels with 249,879 distinct masks: a bar of a quarter of a
  // million groups and one of two, both readable.
  void seedGroups() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 760));
    QVERIFY(loads(w, [&] { w.openDemo("seed"); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.masks()->distinct_masks(), std::size_t{249879});
    compare(grabView(w, MainWindow::View::Groups, w.groupsChart()), "groups_seed");
  }
};

QTEST_MAIN(TestRender)
#include "tst_render.moc"
