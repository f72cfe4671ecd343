#pragma once
// The result page: one layer of the solve as a map (solution channels, model
// bands, residual RMS, rank, status, linear velocity), each layer one entry of
// a table (what it is called, which designs it applies to, how many channels
// it has, its values and title), each with its own colours and range, kept in
// the settings.

#include "figure.hpp"

#include <QWidget>

#include <array>
#include <optional>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDoubleSpinBox;
class QHBoxLayout;
class QLabel;
class QSlider;
class QSpinBox;

namespace cubesolve::ui {

class Document;
class ImageView;
class Playback;
class ProfileChart;
class RangeHistogram;
class Timeline;

enum class Layer {
  Solution, Model, ResidualRms, Rank, Status, Velocity, Amplitude, Peak, StdError, Coherence, Objective, Iterations, VelocityStd
};
constexpr std::size_t kLayerCount = 13;

class ResultPage : public QWidget {
  Q_OBJECT
public:
  explicit ResultPage(Document* doc, QWidget* parent = nullptr);

  ImageView* view() const { return view_; }
  /// The histograms the colour range is set on.
  RangeHistogram* rangeHistogram() const { return histogram_; }
  /// The chart of the profiles along the map shown.
  ProfileChart* profileChart() const { return profiles_; }
  /// Play and pause through the channels.
  Playback* playback() const { return playback_; }
  /// Shows `layer` (where it applies to the design) at `channel`.
  void show(Layer layer, int channel);
  Layer layer() const;
  int channel() const;
  /// The colours and range of `layer` for values `v`, as its settings say.
  ColorScale scale(Layer layer, const std::vector<double>& v) const;
  /// A layer's channel as drawn: its values in the unit shown (H x W),
  /// its style (title, unit, colours and range) and what the channel is.
  struct Map {
    std::vector<double> values;
    MapStyle style;
    QString channel;
    int height = 0, width = 0;
  };
  /// Whether `layer` can be drawn (solved, and it applies to the design).
  bool applies(Layer layer) const;
  int channels(Layer layer) const;
  /// Channel `channel` of `layer`, where applies().
  Map map(Layer layer, int channel) const;

  /// A layer's name on the command line (solution, model, residual-rms,
  /// rank, status, velocity), and the layer of a name.
  static QString layerName(Layer layer);
  static std::optional<Layer> layerNamed(const QString& name);
  /// Draws `layer` in `map` (from its other end when `reversed`).
  void setColours(Layer layer, Colormap map, bool reversed);
  /// Whether `layer` takes its range from the values (2-98 %).
  bool autoRange(Layer layer) const { return views_[static_cast<std::size_t>(layer)].auto_range; }
  void update();

signals:
  /// The map was given its new values (a frame follows).
  void drawn();

private:
  void settingsChanged();
  void showSettings();
  /// map() but for its colour range (left as the style's default).
  Map unscaled(Layer layer, int channel) const;
  void offerLayers();
  void saveSettings() const;
  void loadSettings();
  /// The reference date's choices: the series' dates (hidden without).
  void showRefDates();
  /// The colour map, reversal and range controls.
  QHBoxLayout* buildScaleBar();
  /// The histograms of `m`'s values and of its layer's channels, its range marked.
  void showHistogram(Layer layer, const Map& m);

  /// Each layer's colours and range.
  struct LayerView {
    int colormap = -1;  // a Colormap; -1: automatic (diverging for signed data, cyclic for phase)
    bool reversed = false, auto_range = true;
    double lo = 0, hi = 1;
  };
  Document* doc_;
  std::array<LayerView, kLayerCount> views_{};
  ImageView* view_ = nullptr;
  ProfileChart* profiles_ = nullptr;
  RangeHistogram* histogram_ = nullptr;
  // All channels' values for the histogram: the layer and result they
  // sample (reset when the unit or a reference changes), the sample, its
  // axis, and its counts over the axis they were counted on.
  std::pair<int, const void*> all_key_{-1, nullptr};
  std::vector<double> all_sample_;
  std::pair<double, double> all_axis_{0, 1}, counted_axis_{0, 1};
  std::vector<std::size_t> all_counts_;
  QComboBox* layer_ = nullptr;
  QSlider* channel_slider_ = nullptr;
  Playback* playback_ = nullptr;
  Timeline* timeline_ = nullptr;
  QSpinBox* channel_box_ = nullptr;
  QLabel* channel_label_ = nullptr;
  QLabel* channel_date_ = nullptr;
  QComboBox* colormap_ = nullptr;
  QCheckBox* reversed_ = nullptr;
  QCheckBox* auto_range_ = nullptr;
  QDoubleSpinBox* range_lo_ = nullptr;
  QDoubleSpinBox* range_hi_ = nullptr;
  QLabel* ref_date_label_ = nullptr;
  QComboBox* ref_date_ = nullptr;  // the date a time series is shown relative to
};

}  // namespace cubesolve::ui
