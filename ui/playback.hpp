#pragma once
// Playback through a map's channels (the dates of a time series): play and
// pause, at a chosen rate, from the first channel again once at the last.

#include <QTimer>
#include <QWidget>

class QDoubleSpinBox;
class QSlider;
class QToolButton;

namespace cubesolve::ui {

class Playback : public QWidget {
  Q_OBJECT
public:
  /// Drives `slider` (the channel's), one step a frame.
  /// The rates offered, in frames a second.
  static constexpr double kMinRate = 0.2, kMaxRate = 30;
  explicit Playback(QSlider* slider, QWidget* parent = nullptr);
  bool playing() const { return timer_.isActive(); }
  /// Starts (from the first channel when at the last) or pauses.
  void setPlaying(bool play);
  /// Frames (channels) a second.
  double rate() const;
  void setRate(double fps);

signals:
  void playingChanged(bool playing);

private:
  void step();
  QSlider* slider_;
  QToolButton* button_ = nullptr;
  QDoubleSpinBox* rate_ = nullptr;
  QTimer timer_;
};

}  // namespace cubesolve::ui
