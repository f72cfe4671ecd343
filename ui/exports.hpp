#pragma once
// Exports: the view shown as a PNG figure, every channel as figures, the
// solution and its diagnostics as data (NPY, GeoTIFF); their File menu
// entries and dialogs. An export never writes over an input; the
// solution's run on the worker thread.

#include "document.hpp"
#include "figure.hpp"

#include <QObject>

#include <functional>
#include <utility>
#include <vector>

class QMenu;
class QSize;
class QWidget;

namespace cubesolve::ui {

class ChartView;
class Document;
class ImageView;
class ResultPage;
enum class Layer;

class Exports : public QObject {
  Q_OBJECT
public:
  /// What the window shows: the map of the current view (null where it
  /// shows none), its picture (a map at `scale`, or a chart), the result
  /// page's layers.
  struct Sources {
    std::function<ImageView*()> map;
    std::function<QImage(int scale)> picture;
    const ResultPage* result = nullptr;  // the layers, as drawn
    /// The charts that can be exported, shown (the histogram on the groups
    /// view, else the inspector's time series, where there is one, and its
    /// observations), each with its name.
    std::function<std::vector<std::pair<QString, ChartView*>>()> charts;
  };
  Exports(Document* doc, QWidget* window, Sources sources);

  /// The current view as a PNG (a map at data resolution, each value `scale`
  /// pixels wide, 0: about 600 pixels in all): false (and failed()) when it
  /// could not be written.
  bool viewPng(const QString& path, int scale = 0);
  /// Every channel of x as a figure (`format` "png" or "pdf") in the
  /// solution layer's colours and the unit shown, on the worker thread (the
  /// document's exported() or failed() follows): named NNN_YYYYMMDD (the
  /// date's index in the series, and the date) and titled by date where the
  /// design has dates, else xNNN; one colour range for
  /// all channels, so that they compare, or each its own.
  void channels(const QString& folder, int scale = 0, const QString& format = "png", bool per_channel = false);
  /// Every channel of x, as channels() draws them over one range, as an
  /// animated GIF at `fps` frames a second (the playback's rate), on the
  /// worker thread.
  void animation(const QString& path, double fps, int scale = 0);
  /// Every channel of x as channels() and animation() draw it.
  std::vector<Document::Figure> channelFigures(bool per_channel) const;
  /// A result layer to `path`: .png its channel `channel` as a figure;
  /// .npy or .tif every channel as data (channels, H, W) in the unit shown,
  /// GeoTIFF bands named by date (YYYYMMDD), pair or layer. False (and
  /// failed()) when it cannot be written.
  bool layerFile(Layer layer, const QString& path, int channel = 0);
  /// The pinned pixels' time series as CSV: `date` (YYYY-MM-DD) first, then
  /// a column per pin named Y_X in pin order, in the unit shown, referenced
  /// to the stack's reference pixel and to the first date (0 there), as
  /// MintPy's timeseries.h5; a comment line above names the reference and
  /// the unit.
  bool timeSeriesCsv(const QString& path);
  /// The profiles shown along the result map, as ProfileChart::csv() writes
  /// them. False (and failed()) when there is none or it cannot be written.
  bool profileCsv(const QString& path);
  /// Chart `index` of Sources::charts drawn at `size` pixels with its axes,
  /// titles and units (text grown with the figure): .png, or .svg with vector
  /// lines and text (as outlines). False (and failed()) when it cannot be written.
  bool chartFile(const QString& path, const QSize& size, int index = 0);
  /// The export entries, with their dialogs.
  void addActions(QMenu* menu);

signals:
  void failed(const QString& message);
  void message(const QString& text, int timeout_ms);
  void exported(const QStringList& paths);

private:
  int askScale(int height, int width, bool& ok);
  /// Asks which chart, its size and file, and exports it.
  void askChart();
  /// Runs `write` for `path` (never one of the open inputs): true and
  /// exported(), or false and failed() with what it threw.
  bool written(const QString& path, const std::function<void()>& write);
  /// Throws InputError when `path` is one of the open inputs.
  void checkApart(const QString& path) const;

  Document* doc_;
  QWidget* window_;
  Sources sources_;
};

}  // namespace cubesolve::ui
