#pragma once
// Where the time from a parameter change to its picture goes: the desktop's
// `--bench-resolve K` changes a parameter K times once the first solve is
// shown and reports, for each change, the phases (queued before the solve
// starts, the engine, the rest until the result page has drawn it (thread
// hand-over, finishing, colour mapping), the frame) as JSON on standard
// output. `--bench-step K` steps the result's channel (the date of a time
// series) K times instead, as its spin box or slider does, and reports each
// step's colour mapping and frame. A benchmark, not a test.

#include <QElapsedTimer>
#include <QObject>

#include <vector>

namespace cubesolve::ui {

class Document;
class ResultPage;

class ResolveBench : public QObject {
  Q_OBJECT
public:
  /// Parameter changes, or with `steps` channel steps.
  ResolveBench(Document* doc, ResultPage* page, int changes, bool steps = false, QObject* parent = nullptr);

signals:
  /// The report is printed.
  void done();

private:
  void change();
  void report();

  struct Times {
    double started = 0, engine = 0, drawn = 0, shown = 0;
  };
  Document* doc_;
  ResultPage* page_;
  int left_;
  bool steps_;
  bool waiting_ = false, armed_ = false;
  QElapsedTimer clock_;
  std::vector<Times> times_;
};

}  // namespace cubesolve::ui
