#include "playback.hpp"

#include <QDoubleSpinBox>
#include <QHBoxLayout>
#include <QSlider>
#include <QStyle>
#include <QToolButton>

#include <cmath>

namespace cubesolve::ui {

Playback::Playback(QSlider* slider, QWidget* parent) : QWidget(parent), slider_(slider) {
  button_ = new QToolButton;
  button_->setObjectName("play");
  button_->setCheckable(true);
  button_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  button_->setToolTip(tr("Play the channels (the dates of a time series) one after another, at the rate beside; again to pause"));
  rate_ = new QDoubleSpinBox;
  rate_->setObjectName("play-rate");
  rate_->setRange(kMinRate, kMaxRate);
  rate_->setDecimals(1);
  rate_->setSingleStep(1);
  rate_->setValue(4);
  rate_->setSuffix(tr(" /s"));
  rate_->setToolTip(tr("Playback rate: channels a second (the views keep up to about 15 a second on a 1000 × 1000 map)"));
  auto* row = new QHBoxLayout(this);
  row->setContentsMargins(0, 0, 0, 0);
  row->addWidget(button_);
  row->addWidget(rate_);
  timer_.setTimerType(Qt::PreciseTimer);
  connect(&timer_, &QTimer::timeout, this, &Playback::step);
  connect(button_, &QToolButton::toggled, this, &Playback::setPlaying);
  connect(rate_, &QDoubleSpinBox::valueChanged, this, [this](double fps) { timer_.setInterval(static_cast<int>(std::lround(1000 / fps))); });
  timer_.setInterval(static_cast<int>(std::lround(1000 / rate_->value())));
  // A channel chosen by hand while playing goes on from there; a layer of one channel stops it.
  connect(slider_, &QSlider::rangeChanged, this, [this](int lo, int hi) {
    if (hi <= lo) setPlaying(false);
  });
}

void Playback::setPlaying(bool play) {
  play = play && slider_->maximum() > slider_->minimum();
  if (play == playing()) {
    button_->setChecked(play);
    return;
  }
  if (play) {
    if (slider_->value() >= slider_->maximum()) slider_->setValue(slider_->minimum());
    timer_.start();
  } else {
    timer_.stop();
  }
  button_->setChecked(play);
  button_->setIcon(style()->standardIcon(play ? QStyle::SP_MediaPause : QStyle::SP_MediaPlay));
  emit playingChanged(play);
}

double Playback::rate() const { return rate_->value(); }
void Playback::setRate(double fps) { rate_->setValue(fps); }

void Playback::step() {
  if (slider_->value() >= slider_->maximum()) return setPlaying(false);  // the last channel stays on screen
  slider_->setValue(slider_->value() + 1);
}

}  // namespace cubesolve::ui
