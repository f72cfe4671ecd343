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
  times_.emplace_back();
  waiting_ = true;
  clock_.start();
  if (steps_) {  // the next channel, as the spin box beside the slider sets it: no solve, the step starts now
    times_.back().started = 1e-9;
    auto* box = page_->findChild<QSpinBox*>("channel");
    box->setValue(box->value() < box->maximum() ? box->value() + 1 : 0);
    return;
  }
  // A ridge of 0 and 1e-12 in turn: the same work each time, a new result.
  SolveOptions o = doc_->options();
  o.ridge = o.ridge == 0 ? 1e-12 : 0;
  doc_->setOptions(o);
}

void ResolveBench::report() {
  std::vector<double> key;  // each change's picture beyond the engine, or each step's picture
  std::printf(steps_ ? "{\"steps\": [" : "{\"changes\": [");
  for (std::size_t k = 0; k < times_.size(); ++k) {
    const Times& t = times_[k];
    key.push_back(t.shown - t.engine);  // (a step's engine is 0)
    if (steps_)
      std::printf("%s\n  {\"map_s\": %.4f, \"frame_s\": %.4f, \"step_to_picture_s\": %.4f}", k ? "," : "", t.drawn, t.shown - t.drawn, t.shown);
    else
      std::printf("%s\n  {\"queued_s\": %.4f, \"engine_s\": %.4f, \"handover_and_draw_s\": %.4f, \"frame_s\": %.4f, "
                  "\"change_to_picture_s\": %.4f, \"beyond_engine_s\": %.4f}",
                  k ? "," : "", t.started, t.engine, t.drawn - t.started - t.engine, t.shown - t.drawn, t.shown, t.shown - t.engine);
  }
  std::sort(key.begin(), key.end());
  std::printf("\n], \"%s\": %.4f}\n", steps_ ? "median_step_s" : "median_beyond_engine_s", key.empty() ? 0.0 : key[key.size() / 2]);
  std::fflush(stdout);
  emit done();
}

}  // namespace cubesolve::ui
