#include "resolvebench.hpp"

#include "document.hpp"
#include "imageview.hpp"
#include "resultpage.hpp"

#include <QSpinBox>
#include <QTimer>

#include <algorithm>
#include <cstdio>

namespace cubesolve::ui {

ResolveBench::ResolveBench(Document* doc, ResultPage* page, int changes, bool steps, QObject* parent)
    : QObject(parent), doc_(doc), page_(page), left_(changes), steps_(steps) {
  connect(doc_, &Document::solveStarted, this, [this] {
    if (waiting_) times_.back().started = clock_.nsecsElapsed() * 1e-9;
  });
  connect(doc_, &Document::solved, this, [this] {
    if (!waiting_ && !armed_) QTimer::singleShot(500, this, &ResolveBench::change);  // the first solve shown: the changes begin
    armed_ = true;
  });
  connect(page_, &ResultPage::drawn, this, [this] {  // (on solved(), before the handler above)
    if (!waiting_ || times_.back().started == 0 || !doc_->result()) return;
    times_.back().engine = steps_ ? 0 : doc_->result()->engine_seconds;
    times_.back().drawn = clock_.nsecsElapsed() * 1e-9;
  });
  connect(page_->view(), &ImageView::rendered, this, [this] {
    if (!waiting_ || times_.back().drawn == 0) return;
    times_.back().shown = clock_.nsecsElapsed() * 1e-9;
    waiting_ = false;
    if (--left_ > 0) QTimer::singleShot(200, this, &ResolveBench::change);
    else report();
  });
}

void ResolveBench::change() {
  if (steps_) {  // the next channel, as the spin box beside the slider sets it
    auto* box = page_->findChild<QSpinBox*>("channel");
    times_.emplace_back();
    waiting_ = true;
    clock_.start();
    times_.back().started = 1e-9;
    box->setValue(box->value() < box->maximum() ? box->value() + 1 : 0);
    return;
  }
  // A ridge of 0 and 1e-12 in turn: the same work each time, a new result.
  SolveOptions o = doc_->options();
  o.ridge = o.ridge == 0 ? 1e-12 : 0;
  times_.emplace_back();
  waiting_ = true;
  clock_.start();
  doc_->setOptions(o);
}

void ResolveBench::report() {
  if (steps_) {
    std::vector<double> step;
    std::printf("{\"steps\": [");
    for (std::size_t k = 0; k < times_.size(); ++k) {
      const Times& t = times_[k];
      step.push_back(t.shown);
      std::printf("%s\n  {\"map_s\": %.4f, \"frame_s\": %.4f, \"step_to_picture_s\": %.4f}", k ? "," : "", t.drawn, t.shown - t.drawn, t.shown);
    }
    std::sort(step.begin(), step.end());
    std::printf("\n], \"median_step_s\": %.4f}\n", step.empty() ? 0.0 : step[step.size() / 2]);
    std::fflush(stdout);
    emit done();
    return;
  }
  std::printf("{\"changes\": [");
  std::vector<double> beyond;
  for (std::size_t k = 0; k < times_.size(); ++k) {
    const Times& t = times_[k];
    beyond.push_back(t.shown - t.engine);
    std::printf("%s\n  {\"queued_s\": %.4f, \"engine_s\": %.4f, \"handover_and_draw_s\": %.4f, \"frame_s\": %.4f, "
                "\"change_to_picture_s\": %.4f, \"beyond_engine_s\": %.4f}",
                k ? "," : "", t.started, t.engine, t.drawn - t.started - t.engine, t.shown - t.drawn, t.shown, t.shown - t.engine);
  }
  std::sort(beyond.begin(), beyond.end());
  std::printf("\n], \"median_beyond_engine_s\": %.4f}\n", beyond.empty() ? 0.0 : beyond[beyond.size() / 2]);
  std::fflush(stdout);
  emit done();
}

}  // namespace cubesolve::ui
