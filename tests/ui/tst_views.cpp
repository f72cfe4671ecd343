// The desktop application's views under Xvfb: what the maps and charts draw
// and count, the layers and their scales, the inspector and pins, dates
// through the views, profiles, navigation, the layout at its minimum size,
// shortcuts and tooltips.
#include "gui_fixture.hpp"
#include "exports.hpp"
#include "playback.hpp"
#include "profilechart.hpp"
#include "rangehistogram.hpp"
#include "resultpage.hpp"
#include "timeline.hpp"

#include <cubesolve/image/profile.hpp>

#include <QImageReader>

#ifdef CUBESOLVE_HAS_AV
extern "C" {
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libswscale/swscale.h>
}
#endif
#include <QTreeWidget>
#include <QXmlStreamReader>

#include <numeric>
#include <set>

class TestViews : public QObject, GuiFixture {
  Q_OBJECT

#ifdef CUBESOLVE_HAS_AV
  /// Every frame of a video, as RGB images (none when it cannot be read).
  static std::vector<QImage> decodeVideo(const QString& path) {
    std::vector<QImage> frames;
    AVFormatContext* format = nullptr;
    if (avformat_open_input(&format, path.toUtf8().constData(), nullptr, nullptr) < 0) return frames;
    avformat_find_stream_info(format, nullptr);
    const int s = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
    const AVCodec* codec = s >= 0 ? avcodec_find_decoder(format->streams[s]->codecpar->codec_id) : nullptr;
    AVCodecContext* context = codec ? avcodec_alloc_context3(codec) : nullptr;
    AVFrame* frame = av_frame_alloc();
    AVPacket* packet = av_packet_alloc();
    if (context && avcodec_parameters_to_context(context, format->streams[s]->codecpar) >= 0 && avcodec_open2(context, codec, nullptr) >= 0) {
      auto receive = [&] {
        while (avcodec_receive_frame(context, frame) == 0) {
          QImage rgb(frame->width, frame->height, QImage::Format_RGB32);
          SwsContext* to_rgb = sws_getContext(frame->width, frame->height, static_cast<AVPixelFormat>(frame->format), frame->width, frame->height,
                                              AV_PIX_FMT_RGB32, SWS_BICUBIC, nullptr, nullptr, nullptr);
          std::uint8_t* out[1] = {rgb.bits()};
          const int stride[1] = {static_cast<int>(rgb.bytesPerLine())};
          sws_scale(to_rgb, frame->data, frame->linesize, 0, frame->height, out, stride);
          sws_freeContext(to_rgb);
          frames.push_back(rgb);
        }
      };
      while (av_read_frame(format, packet) >= 0) {
        if (packet->stream_index == s)
          while (avcodec_send_packet(context, packet) == AVERROR(EAGAIN)) receive();  // (room for it once frames are taken)
        receive();
        av_packet_unref(packet);
      }
      avcodec_send_packet(context, nullptr);
      receive();
    }
    av_packet_free(&packet);
    av_frame_free(&frame);
    avcodec_free_context(&context);
    avformat_close_input(&format);
    return frames;
  }
#endif

  /// A place on the map's widget over pixel (row, col); (-1, -1) for none.
  static QPoint placeOf(const ImageView* map, int row, int col) {
    int r = -1, c = -1;
    for (int y = 0; y < map->height(); ++y)
      for (int x = 0; x < map->width(); ++x)
        if (map->pixelAt({x, y}, r, c) && r == row && c == col) return QPoint(x, y);
    return QPoint(-1, -1);
  }

private slots:
  void initTestCase() { QVERIFY(isolate()); }
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
      for (int sy = 20; sy < view->height() - 20; sy += 11)
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

  // Playback steps through the dates at its rate, each frame the map of its
  // date, and stops on the last; played again, it starts from the first.
  void playbackThroughTheDates() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 20);
    auto* page = w.resultPage();
    const int n = page->channels(MainWindow::Layer::Solution);
    QCOMPARE(n, 29);
    std::vector<int> frames;
    bool same = true;
    const auto c = connect(page, &cubesolve::ui::ResultPage::drawn, this, [&] {
      frames.push_back(page->channel());
      const std::vector<double>& shown = w.resultView()->values();
      const std::vector<double> map = page->map(MainWindow::Layer::Solution, page->channel()).values;
      same = same && std::equal(shown.begin(), shown.end(), map.begin(), map.end(),
                                [](double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); });
    });
    page->playback()->setRate(30);
    QSignalSpy stopped(page->playback(), &cubesolve::ui::Playback::playingChanged);
    page->playback()->setPlaying(true);
    QVERIFY(page->playback()->playing());
    QTRY_VERIFY_WITH_TIMEOUT(!page->playback()->playing(), 20000);
    std::vector<int> expected(static_cast<std::size_t>(n - 21));
    std::iota(expected.begin(), expected.end(), 21);
    QCOMPARE(frames, expected);
    QVERIFY(same);
    QCOMPARE(page->channel(), n - 1);
    QCOMPARE(stopped.size(), 2);
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), cubesolve::ui::iso_day(w.document().unknownDates().back()));
    frames.clear();
    page->playback()->setPlaying(true);  // from the first date again
    QTRY_VERIFY_WITH_TIMEOUT(frames.size() >= 3, 20000);
    page->playback()->setPlaying(false);
    QCOMPARE(frames[0], 0);
    QCOMPARE(frames[1], 1);
    disconnect(c);
  }

  // A time series' dates as a timeline: a tick per date placed by its date,
  // a click choosing the nearest date, missing acquisitions found; only where
  // the channels are dates (else the slider).
  void timelineOfTheDates() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 0);
    auto* timeline = w.findChild<cubesolve::ui::Timeline*>("timeline");
    auto* slider = w.findChild<QSlider*>("channel-slider");
    QVERIFY(timeline->isVisible() && !slider->isVisible());
    const auto all = w.document().unknownDates();
    QCOMPARE(timeline->dates(), std::vector<std::string>(all.begin() + 1, all.end()));
    const std::vector<double> x = timeline->tickPositions();
    const auto& d = timeline->dates();
    const double days = static_cast<double>(day_number(d.back()) - day_number(d.front()));
    for (std::size_t k = 0; k < x.size(); ++k)
      QVERIFY(std::fabs((x[k] - x[0]) / (x.back() - x[0]) - static_cast<double>(day_number(d[k]) - day_number(d.front())) / days) < 1e-12);
    QTest::mouseClick(timeline, Qt::LeftButton, {}, QPoint(static_cast<int>(std::lround(x[17])) + 1, timeline->height() / 2));
    QCOMPARE(w.resultChannel(), 17);
    QCOMPARE(w.findChild<QLabel*>("channel-date")->text(), cubesolve::ui::iso_day(d[17]));
    QTest::mouseMove(timeline, QPoint(static_cast<int>(std::lround(x[3])), timeline->height() / 2));
    QCOMPARE(timeline->hovered(), cubesolve::ui::iso_day(d[3]));
    w.showLayer(MainWindow::Layer::ResidualRms, 0);
    QVERIFY(!timeline->isVisible() && slider->isVisible());
    // Acquisitions 12 days apart, one missing: that interval is the gap.
    timeline->setDates({"20200101", "20200113", "20200125", "20200218", "20200301"});
    QCOMPARE(timeline->gaps(), std::vector<int>{2});
    QCOMPARE(timeline->dateAt(-100), 0);
    QCOMPARE(timeline->dateAt(1e6), 4);
  }

  // The channels as an animated GIF: a frame per date at the playback's rate,
  // each the figure of its date (to the GIF's 256 colours a frame).
  void animationOfTheDates() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 40));
    const QString gif = dir_.filePath("series.gif");
    QSignalSpy done(&w, &MainWindow::exported);
    w.exports().animation(gif, 5);
    QVERIFY(done.wait(60000));
    QImageReader reader(gif);
    QVERIFY(reader.supportsAnimation());
    QCOMPARE(reader.imageCount(), 29);
    const auto figures = w.exports().channelFigures(false);
    for (int k = 0; k < 29; ++k) {
      const QImage frame = reader.read().convertToFormat(QImage::Format_RGB32);
      QCOMPARE(reader.nextImageDelay(), 200);
      const auto& f = figures[static_cast<std::size_t>(k)];
      QVERIFY(f.style.title.contains(cubesolve::ui::iso_day(w.document().unknownDates()[static_cast<std::size_t>(k) + 1])));
      const QImage expected = cubesolve::ui::render_figure(f.values, f.height, f.width, f.style, cubesolve::ui::default_figure_scale(40, 40))
                                  .convertToFormat(QImage::Format_RGB32);
      QVERIFY(frame.width() >= expected.width() && frame.height() == expected.height());
      double sum = 0;
      for (int y = 0; y < expected.height(); ++y)
        for (int x = 0; x < expected.width(); ++x) {
          const QRgb a = frame.pixel(x, y), b = expected.pixel(x, y);
          sum += std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
        }
      const double mean = sum / (3.0 * expected.width() * expected.height());
      QVERIFY2(mean < 0.5, qPrintable(QString("frame %1: mean difference %2").arg(k).arg(mean)));
    }
    w.exports().animation(dir_.filePath("series.avi"), 5);
    QVERIFY2(w.lastError().contains("series.avi: expected an animation ending in .gif or .mp4"), qPrintable(w.lastError()));
    QVERIFY(!QFile::exists(dir_.filePath("series.avi")));
#ifdef CUBESOLVE_HAS_AV
    // The MP4 video: 29 frames 0.2 s apart, each its date's figure (to the
    // encoder's loss, a few levels in 255 on average).
    const QString mp4 = dir_.filePath("series.mp4");
    w.exports().animation(mp4, 5);
    QVERIFY(done.wait(60000));
    const std::vector<QImage> video = decodeVideo(mp4);
    QCOMPARE(video.size(), std::size_t{29});  // (as many as the figures)
    for (std::size_t k = 0; k < video.size(); k += 7) {
      const auto& f = figures[k];
      const QImage expected = cubesolve::ui::render_figure(f.values, f.height, f.width, f.style, cubesolve::ui::default_figure_scale(40, 40));
      double sum = 0;
      for (int y = 0; y < expected.height(); ++y)
        for (int x = 0; x < expected.width(); ++x) {
          const QRgb a = video[k].pixel(x, y), b = expected.pixel(x, y);
          sum += std::abs(qRed(a) - qRed(b)) + std::abs(qGreen(a) - qGreen(b)) + std::abs(qBlue(a) - qBlue(b));
        }
      const double mean = sum / (3.0 * expected.width() * expected.height());
      QVERIFY2(mean < 6, qPrintable(QString("frame %1: mean difference %2").arg(k).arg(mean)));
    }
#endif
  }

  // Every colour map is offered, grouped by kind; a diverging one's automatic
  // range is symmetric about zero, a sequential one's spans the values.
  void colourMapsOffered() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 48));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 6);
    auto* maps = w.findChild<QComboBox*>("colormap");
    for (int k = 0; k < kColormapCount; ++k) QVERIFY(maps->findData(k) >= 0);
    QCOMPARE(maps->currentData().toInt(), -1);  // Auto: a signed layer's diverging map
    QCOMPARE(colormap_kind(w.resultView()->style().scale.map), ColormapKind::Diverging);
    maps->setCurrentIndex(maps->findData(int(Colormap::Vik)));
    const ColorScale vik = w.resultView()->style().scale;
    QCOMPARE(vik.map, Colormap::Vik);
    QCOMPARE(vik.lo, -vik.hi);
    maps->setCurrentIndex(maps->findData(int(Colormap::Batlow)));
    const ColorScale batlow = w.resultView()->style().scale;
    QCOMPARE(batlow.map, Colormap::Batlow);
    const auto [lo, hi] = robust_range(w.resultView()->values().data(), w.resultView()->values().size(), false);
    QCOMPARE(batlow.lo, lo);
    QCOMPARE(batlow.hi, hi);
    QVERIFY(batlow.lo != -batlow.hi);
    // Drawn in the table's colours: the pixel of the largest value takes its last entry.
    const std::vector<double>& v = w.resultView()->values();
    const auto top = std::max_element(v.begin(), v.end(), [](double a, double b) { return std::isnan(a) || (!std::isnan(b) && a < b); });
    QCOMPARE(batlow.color(*top), (std::array<std::uint8_t, 3>{250, 204, 250}));
  }

  // Ticking Standard errors re-solves with them and offers their layer, the
  // engine's values with a sequential scale; unticked, the layer goes.
  void standardErrorLayer() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 48));
    auto* layers = w.findChild<QComboBox*>("layer");
    QCOMPARE(layers->findData(int(MainWindow::Layer::StdError)), -1);
    QCOMPARE(layers->findData(int(MainWindow::Layer::Coherence)), -1);  // a phase stack's
    QVERIFY(w.result()->std_error.empty());
    QSignalSpy solved(&w, &MainWindow::solveFinished);
    w.findChild<QCheckBox*>("std-errors")->setChecked(true);  // solved again on the next turn of the event loop
    QVERIFY(solved.wait(60000));
    QVERIFY(w.document().options().std_errors);
    QCOMPARE(w.result()->std_error.shape(), w.result()->x.shape());
    QVERIFY(layers->findData(int(MainWindow::Layer::StdError)) >= 0);
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::StdError, 3);
    const auto expected = channel(w.result()->std_error, 3);
    const std::vector<double>& shown = w.resultView()->values();
    QCOMPARE(shown.size(), expected.size());
    std::size_t finite = 0;
    for (std::size_t p = 0; p < shown.size(); ++p) {
      QCOMPARE(std::isnan(shown[p]), std::isnan(expected[p]));
      if (std::isnan(expected[p])) continue;
      QVERIFY(shown[p] > 0 && std::fabs(shown[p] - expected[p]) <= 1e-12 * expected[p]);
      ++finite;
    }
    QVERIFY(finite > shown.size() / 2);
    QCOMPARE(w.resultView()->style().scale.map, Colormap::Viridis);
    QVERIFY(w.resultView()->style().title.contains("standard error"));
    w.findChild<QCheckBox*>("std-errors")->setChecked(false);
    QVERIFY(solved.wait(60000));
    QVERIFY(w.result()->std_error.empty());
    QCOMPARE(layers->findData(int(MainWindow::Layer::StdError)), -1);
    QCOMPARE(layers->currentData().toInt(), int(MainWindow::Layer::Solution));
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
    // The marks panel lists them: renamed in place, hidden with the box
    // (off the maps and charts), removed with Delete.
    auto* tree = w.findChild<QTreeWidget*>("marks");
    QTreeWidgetItem* points = tree->topLevelItem(0);
    QCOMPARE(points->childCount(), 2);
    QCOMPARE(points->child(0)->text(0), QString("5_6"));
    points->child(0)->setText(0, "well A");
    QCOMPARE(w.document().pinName(0), QString("well A"));
    QVERIFY(w.inspectorText().contains("well A (5, 6)"));
    points->child(0)->setCheckState(0, Qt::Unchecked);
    QVERIFY(!w.document().pinShown(0));
    QCOMPARE(w.resultView()->marks(ImageView::Mark::Pin).size(), std::size_t{1});
    QCOMPARE(w.inspectorChart()->plotCount(), single + 2);
    QVERIFY(!w.inspectorText().contains("well A"));
    tree->topLevelItem(0)->child(0)->setCheckState(0, Qt::Checked);
    QCOMPARE(w.resultView()->marks(ImageView::Mark::Pin).size(), std::size_t{2});
    tree->setCurrentItem(tree->topLevelItem(0)->child(1));
    QTest::keyClick(tree, Qt::Key_Delete);
    QCOMPARE(w.pinned().size(), std::size_t{1});
    QCOMPARE(w.document().pinName(0), QString("well A"));
    QCOMPARE(w.resultView()->marks(ImageView::Mark::Pin).size(), std::size_t{1});
    w.clearPins();
    QCOMPARE(w.inspectorChart()->plotCount(), single);
    QVERIFY(w.resultView()->marks(ImageView::Mark::Pin).empty());
  }

  // A profile drawn with the mouse on the result map: on every map, charted
  // along the map shown (its values at the nearest pixels, a band across
  // with its std), following the channel and layer (with the observed values
  // on a model layer); listed in the marks panel, hidden, renamed, removed.
  void profilesAlongTheMap() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    Document& doc = w.document();
    ImageView* map = w.resultView();
    ui::ProfileChart* chart = w.resultPage()->profileChart();
    w.showView(MainWindow::View::Result);
    QTest::qWait(50);  // (drawn: the map's place on the widget is known)
    QVERIFY(!chart->shown());
    auto at = [map](int row, int col) { return placeOf(map, row, col); };
    w.selectPixel(1, 1);
    w.drawProfile();  // Esc cancels
    QTest::mouseClick(map, Qt::LeftButton, {}, at(4, 5));
    QTest::keyClick(map, Qt::Key_Escape);
    QVERIFY(!map->drawingLine() && doc.profiles().empty() && !doc.solving());
    w.drawProfile();
    QVERIFY(map->drawingLine());
    QTest::mouseClick(map, Qt::LeftButton, {}, at(4, 5));
    QTest::mouseClick(map, Qt::LeftButton, {}, at(25, 28));
    QTest::mouseDClick(map, Qt::LeftButton, {}, at(25, 28));
    QVERIFY(!map->drawingLine());
    QCOMPARE(doc.profiles().size(), std::size_t{1});
    QCOMPARE(doc.profiles()[0].vertices, (std::vector<std::array<double, 2>>{{4, 5}, {25, 28}}));
    QCOMPARE(doc.profiles()[0].name, QString("profile 1"));
    QCOMPARE(doc.selected(), (std::pair{1, 1}));  // the clicks drew; they selected nothing
    for (ImageView* v : {w.gapsView(), map}) QCOMPARE(v->lines().size(), std::size_t{1});
    QVERIFY(chart->shown() && chart->height() >= chart->minimumHeight());
    auto followsTheMap = [&] {
      const auto& points = chart->lines().at(0).points;
      if (points.size() != 33) return false;  // ceil(hypot(21, 23)) steps, and the last vertex
      for (const ProfilePoint& p : points) {
        const double v = map->valueAt(static_cast<int>(std::lround(p.row)), static_cast<int>(std::lround(p.col)));
        if (!(p.mean == v || (std::isnan(v) && std::isnan(p.mean)))) return false;
      }
      return true;
    };
    QVERIFY(followsTheMap());
    w.showLayer(MainWindow::Layer::Solution, 20);
    QVERIFY(followsTheMap());
    // The model layer: the observed values along it too, where they are valid.
    w.showLayer(MainWindow::Layer::Model, 3);
    QVERIFY(followsTheMap());
    const auto cube = doc.cube();
    const std::size_t H = cube->dim(1), W = cube->dim(2);
    std::size_t observed = 0;
    for (const ProfilePoint& p : chart->lines()[0].observed) {
      const double v = cube->value(3 * H * W + static_cast<std::size_t>(std::lround(p.row)) * W + static_cast<std::size_t>(std::lround(p.col)));
      QVERIFY(p.mean == v || (std::isnan(v) && std::isnan(p.mean)));
      observed += std::isfinite(v);
    }
    QVERIFY(observed > 0);
    // A band across: the mean and std of its pixels.
    w.findChild<QSpinBox*>("profile-band")->setValue(3);
    QCOMPARE(doc.profileBand(), 3);
    bool spread = false;
    for (const ProfilePoint& p : chart->lines()[0].points) spread = spread || (p.count > 1 && p.std > 0);
    QVERIFY(spread);
    // The marks panel: hidden, renamed, removed.
    auto* tree = w.findChild<QTreeWidget*>("marks");
    QTreeWidgetItem* item = tree->topLevelItem(1)->child(0);
    QCOMPARE(item->text(0), QString("profile 1"));
    item->setCheckState(0, Qt::Unchecked);
    QVERIFY(map->lines().empty() && !chart->shown());
    tree->topLevelItem(1)->child(0)->setCheckState(0, Qt::Checked);
    tree->topLevelItem(1)->child(0)->setText(0, "across the bowl");
    QCOMPARE(doc.profiles()[0].name, QString("across the bowl"));
    QCOMPARE(chart->lines()[0].name, QString("across the bowl"));
    tree->setCurrentItem(tree->topLevelItem(1)->child(0));
    QTest::keyClick(tree, Qt::Key_Delete);
    QVERIFY(doc.profiles().empty() && map->lines().empty() && !chart->shown());
    // What is no line is refused.
    QVERIFY(!doc.addProfile({{1, 1}}) && !doc.addProfile({{1, 1}, {1, 1}}) && !doc.addProfile({{1, 1}, {40, 1}}));
    QVERIFY(doc.profiles().empty());
  }

  // A reference area drawn with the mouse (press at one corner, release at
  // the other), outlined on every map: the mean of its values is subtracted
  // from the maps of values and from the time series, not from counts;
  // listed in the panel and removed there.
  void referenceArea() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 800));
    QVERIFY(demoSolved(w, "insar", 40));
    Document& doc = w.document();
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 10);
    QTest::qWait(50);
    ImageView* map = w.resultView();
    const std::vector<double> before = map->values(), rank = (w.showLayer(MainWindow::Layer::Rank, 0), map->values());
    w.showLayer(MainWindow::Layer::Solution, 10);
    w.selectPixel(30, 31);
    w.drawReferenceArea();
    QTest::mousePress(map, Qt::LeftButton, {}, placeOf(map, 5, 6));
    QTest::mouseMove(map, placeOf(map, 9, 10));
    QTest::mouseRelease(map, Qt::LeftButton, {}, placeOf(map, 12, 15));
    QVERIFY(doc.referenceArea() && *doc.referenceArea() == (std::array{5, 6, 12, 15}));
    QCOMPARE(doc.selected(), (std::pair{30, 31}));  // drawn, not clicked
    for (ImageView* v : {w.gapsView(), map}) QCOMPARE(v->lines().size(), std::size_t{1});
    const double mean = area_mean(before.data(), 40, 40, 5, 6, 12, 15);
    QVERIFY(std::isfinite(mean) && std::fabs(mean) > 1e-3);
    const std::vector<double>& after = map->values();
    for (std::size_t p = 0; p < before.size(); ++p) QVERIFY(std::isnan(before[p]) ? std::isnan(after[p]) : std::fabs(after[p] - (before[p] - mean)) < 1e-12);
    QVERIFY(std::fabs(area_mean(after.data(), 40, 40, 5, 6, 12, 15)) < 1e-12);
    QVERIFY(map->style().title.contains("less the mean of rows 5–12"));
    QVERIFY(std::fabs(doc.series(30 * 40 + 31)[11] - map->valueAt(30, 31)) < 1e-9);  // the series as the map
    w.showLayer(MainWindow::Layer::Rank, 0);
    QVERIFY(map->values() == rank);  // counts are not referenced
    w.showLayer(MainWindow::Layer::Solution, 10);
    // Per view: the maps only, or the time series only (the panel's choice).
    const std::vector<double> referenced = doc.series(30 * 40 + 31);
    auto* scope = w.findChild<QComboBox*>("reference-scope");
    QVERIFY(scope && scope->isEnabled());
    auto choose = [&](Document::AreaScope s) {
      scope->setCurrentIndex(scope->findData(static_cast<int>(s)));
      emit scope->activated(scope->currentIndex());
      QCOMPARE(doc.referenceScope(), s);
    };
    choose(Document::AreaScope::Series);
    for (std::size_t p = 0; p < before.size(); ++p)  // the map as without the area
      QVERIFY(std::isnan(before[p]) ? std::isnan(map->values()[p]) : map->values()[p] == before[p]);
    QVERIFY(!map->style().title.contains("less the mean"));
    QVERIFY(doc.series(30 * 40 + 31) == referenced);
    choose(Document::AreaScope::Maps);
    for (std::size_t p = 0; p < before.size(); ++p)
      QVERIFY(std::isnan(before[p]) ? std::isnan(map->values()[p]) : std::fabs(map->values()[p] - (before[p] - mean)) < 1e-12);
    QVERIFY(std::fabs(doc.series(30 * 40 + 31)[11] - before[30 * 40 + 31]) < 1e-9);  // the series as without the area
    choose(Document::AreaScope::All);
    auto* tree = w.findChild<QTreeWidget*>("marks");
    QTreeWidgetItem* reference = tree->topLevelItem(2);
    QVERIFY(reference && reference->child(0)->text(0).contains("rows 5–12, columns 6–15"));
    tree->setCurrentItem(reference->child(0));
    QTest::keyClick(tree, Qt::Key_Delete);
    QVERIFY(!doc.referenceArea() && map->lines().empty());
    for (std::size_t p = 0; p < before.size(); ++p) QVERIFY(std::isnan(before[p]) ? std::isnan(map->values()[p]) : map->values()[p] == before[p]);
    QVERIFY(!doc.setReferenceArea(std::array{0, 0, 40, 3}));  // off the cube
  }

  // The colour range on the histograms: the channel's values counted over
  // the axis, beside all channels'; a drag across sets the range, a handle
  // moves one end; categories have none.
  void rangeOnTheHistogram() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 800));
    QVERIFY(demoSolved(w, "insar", 48));
    w.showView(MainWindow::View::Result);
    w.showLayer(MainWindow::Layer::Solution, 20);
    QTest::qWait(50);
    auto* hist = w.resultPage()->rangeHistogram();
    ImageView* map = w.resultView();
    QVERIFY(hist->isVisible());
    QCOMPARE(hist->rangeLo(), map->style().scale.lo);
    QCOMPARE(hist->rangeHi(), map->style().scale.hi);
    auto dragged = [&](double from, double to) {
      QTest::mousePress(hist, Qt::LeftButton, {}, QPoint(static_cast<int>(std::lround(hist->xOf(from))), hist->height() / 2));
      QMouseEvent move(QEvent::MouseMove, QPointF(std::lround(hist->xOf(to)), hist->height() / 2.0), hist->mapToGlobal(QPointF(0, 0)),
                       Qt::NoButton, Qt::LeftButton, Qt::NoModifier);
      QCoreApplication::sendEvent(hist, &move);
      QTest::mouseRelease(hist, Qt::LeftButton, {}, QPoint(static_cast<int>(std::lround(hist->xOf(to))), hist->height() / 2));
    };
    dragged(-5, 2);  // across
    const double lo = map->style().scale.lo, hi = map->style().scale.hi;
    QVERIFY2(std::fabs(lo + 5) < 1 && std::fabs(hi - 2) < 1, qPrintable(QString("%1 %2").arg(lo).arg(hi)));
    QVERIFY(!w.findChild<QCheckBox*>("auto-range")->isChecked());
    QCOMPARE(w.findChild<QDoubleSpinBox*>("range-lo")->value(), lo);
    QCOMPARE(hist->rangeLo(), lo);
    dragged(hi, 6);  // the upper handle
    QCOMPARE(map->style().scale.lo, lo);
    QVERIFY(std::fabs(map->style().scale.hi - 6) < 1);
    w.showLayer(MainWindow::Layer::Status, 0);
    QVERIFY(!hist->isVisible());
  }

  // Zoomed in, the minimap shows the whole map with the part in view
  // outlined; a click on it takes the view there (selecting nothing);
  // zoomed out again, it goes.
  void minimapOfTheWholeMap() {
    MainWindow w;
    QVERIFY(shown(w, 1100, 800));
    QVERIFY(demoSolved(w, "insar", 64));
    w.showView(MainWindow::View::Result);
    QTest::qWait(50);
    ImageView* view = w.resultView();
    QVERIFY(!view->minimapShown() && view->minimapRect().isEmpty());
    ImageView::Camera c = view->camera();
    c.scale /= 4;
    view->setCamera(c);
    QVERIFY(view->minimapShown());
    std::array<double, 4> part = view->viewedPart();  // rows r0, r1, columns c0, c1
    QVERIFY(part[1] - part[0] < 20 && part[0] > 15 && part[1] < 48);  // about a quarter of the 64 rows, about the middle
    const QRect m = view->minimapRect();
    QVERIFY(!m.isEmpty() && m.width() <= 180 && m.bottom() < view->height());
    w.selectPixel(3, 3);
    QTest::mouseClick(view, Qt::LeftButton, {}, QPoint(m.right() - 1, m.bottom() - 1));  // its lower right corner
    part = view->viewedPart();
    QVERIFY((part[0] + part[1]) / 2 > 60 && (part[2] + part[3]) / 2 > 60);
    QCOMPARE(w.document().selected(), (std::pair{3, 3}));
    QCOMPARE(w.gapsView()->camera().x, view->camera().x);  // the linked map follows
    view->resetCamera();
    QVERIFY(!view->minimapShown());
  }

  // A map larger than kFullPixels is drawn from an overview at about the
  // screen's resolution, and at full resolution over the part in view once
  // zoomed in that far; its values stay whole.
  void largeMapAtTheScreensResolution() {
    ImageView view;
    view.resize(900, 700);
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    const int H = 2200, W = 2300;
    std::vector<double> values(static_cast<std::size_t>(H) * W);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i % W) + 10000.0 * static_cast<double>(i / W);
    cubesolve::ui::MapStyle style;
    style.scale = {Colormap::Viridis, false, 0, 1e7};
    view.setImage(values, H, W, style);
    QTest::qWait(50);
    ImageView::Picture p = view.picture();
    QVERIFY2(p.step >= 3 && p.r0 == 0 && p.c0 == 0 && p.r1 == H && p.c1 == W, qPrintable(QString("step %1").arg(p.step)));
    QVERIFY((p.r1 - p.r0) / p.step <= 2 * view.height());  // the screen's resolution, not the map's
    QCOMPARE(view.valueAt(1234, 567), 1234 * 10000.0 + 567);
    ImageView::Camera c{1500, H - 1 - 1000.0, 50};  // about 100 rows in view, about row 1000, column 1500
    view.setCamera(c);
    p = view.picture();
    QVERIFY2(p.step == 1 && p.r0 <= 950 && p.r1 >= 1051 && p.c0 <= 1400 && p.c1 < 1700 && p.r1 - p.r0 < 400,
             qPrintable(QString("%1 %2 %3 %4 step %5").arg(p.r0).arg(p.r1).arg(p.c0).arg(p.c1).arg(p.step)));
    c.x += 20;  // a small pan stays within what is drawn
    view.setCamera(c);
    QCOMPARE(view.picture().r0, p.r0);
    QCOMPARE(view.picture().c0, p.c0);
    view.resetCamera();
    QVERIFY(view.picture().step >= 3);
    QVERIFY(view.minimapRect().isEmpty());
    values.resize(100 * 100);  // a small map is drawn whole
    view.setImage(values, 100, 100, style);
    QCOMPARE(view.picture().step, 1);
    QCOMPARE(view.picture().r1, 100);
  }

  // The time series shown relative to a date chosen (MintPy's REF_DATE):
  // maps, the inspector's series, the velocity unchanged; kept in the session.
  void referenceDate() {
    std::string chosen;
    {
      MainWindow w;
      w.show();
      QVERIFY(demoSolved(w, "insar", 24));
      const auto dates = w.document().unknownDates();
      auto* ref = w.findChild<QComboBox*>("ref-date");
      QCOMPARE(ref->count(), static_cast<int>(dates.size()));
      ref->setCurrentIndex(3);
      chosen = dates[3];
      QCOMPARE(w.document().refDate().toStdString(), chosen);
      w.showLayer(MainWindow::Layer::Solution, 0);
      const Array& x = w.result()->x;
      const std::size_t P = 24 * 24;
      for (std::size_t p = 0; p < P; p += 5) {
        const double want = x.value(p) - x.value(2 * P + p);
        QVERIFY(w.resultView()->values()[p] == want || (std::isnan(want) && std::isnan(w.resultView()->values()[p])));
      }
      QVERIFY2(w.resultView()->style().title.contains("relative to " + cubesolve::ui::iso_day(chosen)), qPrintable(w.resultView()->style().title));
      const std::vector<double> s = w.document().series(5 * 24 + 6);
      QCOMPARE(s[3], 0.0);
      QCOMPARE(s[0], -x.value(2 * P + 5 * 24 + 6));
      w.showLayer(MainWindow::Layer::Velocity, 0);  // a line's slope does not depend on where it is 0
      const Array rate = linear_rate(x, mintpy_years(dates, "date"));
      for (std::size_t p = 0; p < P; p += 5)
        QVERIFY(w.resultView()->values()[p] == rate.value(p) || (std::isnan(rate.value(p)) && std::isnan(w.resultView()->values()[p])));
      w.close();  // the session keeps the choice
    }
    MainWindow w;
    QVERIFY(loads(w, [&] { QVERIFY(w.restoreSession()); }));
    QVERIFY(waitSolved(w));
    QCOMPARE(w.document().refDate().toStdString(), chosen);
    QCOMPARE(w.findChild<QComboBox*>("ref-date")->currentIndex(), 3);
  }

  // A chart is drawn for a paper at the size asked, with its axes, title,
  // legend and units: PNG, or SVG with vector text; the window is left as it was.
  void chartsExported() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    w.selectPixel(5, 6);
    w.pinPixel();
    w.selectPixel(10, 10);
    const QString png = dir_.filePath("chart.png"), svg = dir_.filePath("chart.svg");
    QVERIFY2(w.exports().chartFile(png, QSize(900, 500)), qPrintable(w.lastError()));
    const QImage image(png);
    QCOMPARE(image.size(), QSize(900, 500));
    QCOMPARE(w.currentView(), MainWindow::View::Inspector);
    const QSize on_screen = w.seriesChart()->size();
    const QImage shown = w.seriesChart()->grab();
    std::set<QRgb> colours;
    for (int y = 0; y < 500; y += 2)
      for (int x = 0; x < 900; x += 2) colours.insert(image.pixel(x, y));
    QVERIFY(colours.size() > 20);  // lines, text and grid, not a blank page
    QVERIFY2(w.exports().chartFile(svg, QSize(900, 500)), qPrintable(w.lastError()));
    QFile file(svg);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QXmlStreamReader xml(&file);
    QVERIFY(xml.readNextStartElement() && xml.name() == QString("svg"));
    QCOMPARE(xml.attributes().value("width").toString(), QString("900"));
    QCOMPARE(xml.attributes().value("height").toString(), QString("500"));
    int lines = 0, outlines = 0;  // the plot's lines; text as outlines (VTK places SVG text elements wrongly)
    while (!xml.atEnd())
      if (xml.readNext() == QXmlStreamReader::StartElement) {
        lines += xml.name() == QString("polyline");
        outlines += xml.name() == QString("path");
      }
    QVERIFY(!xml.hasError());
    QVERIFY(lines >= 10 && outlines >= 20);
    QCOMPARE(w.seriesChart()->size(), on_screen);
    QCOMPARE(w.seriesChart()->grab(), shown);
    // The observations' chart is the second; the histogram is the groups view's.
    QVERIFY(w.exports().chartFile(png, QSize(400, 300), 1));
    QCOMPARE(QImage(png).size(), QSize(400, 300));
    w.showView(MainWindow::View::Groups);
    QVERIFY(w.exports().chartFile(png, QSize(640, 480)));
    QCOMPARE(QImage(png).size(), QSize(640, 480));
    // What cannot be drawn says so, and writes nothing.
    QVERIFY(!w.exports().chartFile(dir_.filePath("chart.jpg"), QSize(900, 500)));
    QVERIFY2(w.lastError().contains("expected a chart export ending in .png or .svg"), qPrintable(w.lastError()));
    QVERIFY(!w.exports().chartFile(dir_.filePath("tiny.png"), QSize(4, 4)));
    QVERIFY(w.lastError().contains("16 × 16") && !QFile::exists(dir_.filePath("tiny.png")));
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
    const Array rate = linear_rate(w.result()->x, mintpy_years(w.document().dates(), "date"));
    QCOMPARE(w.resultView()->imageHeight(), 96);
    for (std::size_t p = 0; p < rate.size(); p += 97)
      QVERIFY(w.resultView()->values()[p] == rate.value(p) || (std::isnan(rate.value(p)) && std::isnan(w.resultView()->values()[p])));
    // Its standard error beside it (velocityStd), positive, in the unit per year.
    w.showLayer(MainWindow::Layer::VelocityStd, 0);
    const Array rate_std = linear_rate_std(w.result()->x, mintpy_years(w.document().dates(), "date"));
    for (std::size_t p = 0; p < rate_std.size(); p += 97)
      QVERIFY(w.resultView()->values()[p] == rate_std.value(p) ||
              (std::isnan(rate_std.value(p)) && std::isnan(w.resultView()->values()[p])));
    QVERIFY(w.resultView()->style().title.contains("standard error of the linear velocity"));
    // Without dates the velocity layer is not offered; the layer shown stays.
    QVERIFY(w.findChild<QComboBox*>("layer")->findData(int(MainWindow::Layer::Velocity)) >= 0);
    QVERIFY(demoSolved(w, "seed", 16));
    QCOMPARE(w.findChild<QComboBox*>("layer")->findData(int(MainWindow::Layer::Velocity)), -1);
    w.showLayer(MainWindow::Layer::Velocity, 0);
    QCOMPARE(w.findChild<QComboBox*>("layer")->currentData().toInt(), int(MainWindow::Layer::Solution));
    QCOMPARE(w.resultView()->imageHeight(), 16);
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
};

QTEST_MAIN(TestViews)
#include "tst_views.moc"
