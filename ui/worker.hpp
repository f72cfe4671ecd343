#pragma once
// The worker thread every job of the application runs on: reading files,
// building demo cubes, solving and exporting (a plain QObject moved to a
// member QThread). Requests go in by call; results come out on the caller's
// thread as immutable shared data. A newer solve cancels the running one;
// cancel() stops it within a chunk of pixels.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/progress.hpp>

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

namespace cubesolve::ui {

class Worker : public QObject {
  Q_OBJECT
public:
  explicit Worker(QObject* parent = nullptr);
  ~Worker() override;

  /// Queues a solve and returns its id: `work` runs on the worker thread
  /// with a Progress that reports progress() and says whether to go on.
  int solve(std::function<SolveResult(const Progress&)> work);
  void cancel();
  bool busy() const { return running_.load() > 0; }

  /// Runs `work` on the worker thread (after what is queued before it),
  /// handing it a Progress that reports jobProgress() and says whether to go
  /// on; `done` gets its result, or `failed` the message of what it threw and
  /// its exit code (cubesolve::exit_code: 130 for a job cancelled by
  /// cancelJobs()), on this object's thread. `job` names it in the log.
  template <class T>
  void run(const char* job, std::function<T(const Progress&)> work, std::function<void(T)> done,
           std::function<void(const QString&, int)> failed) {
    if (!job_token_) job_token_ = std::make_shared<std::atomic<bool>>(false);
    auto token = job_token_;
    ++jobs_;
    emit jobStarted(QString::fromUtf8(job));
    auto end = [this] {
      --jobs_;
      emit jobEnded();
    };
    QMetaObject::invokeMethod(
        worker_,
        [this, job, work, done, failed, token, end] {
          note(job);
          const Progress progress = [this, token](double f) {
            QMetaObject::invokeMethod(this, [this, f] { emit jobProgress(f); }, Qt::QueuedConnection);
            return !token->load() && !QThread::currentThread()->isInterruptionRequested();
          };
          try {
            if (*token) throw Cancelled();
            auto value = std::make_shared<T>(work(progress));
            QMetaObject::invokeMethod(this, [done, value, end] { end(), done(std::move(*value)); }, Qt::QueuedConnection);
          } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            const int code = exit_code(e);
            QMetaObject::invokeMethod(this, [failed, message, code, end] { end(), failed(message, code); }, Qt::QueuedConnection);
          }
        },
        Qt::QueuedConnection);
  }
  /// Cancels the jobs queued or running (reads, exports): each ends in
  /// `failed` with code 130 at its next progress report.
  void cancelJobs();
  /// Whether a job (not a solve) is queued or running (this object's thread).
  bool jobsRunning() const { return jobs_ > 0; }

  /// Every job so far: its name and whether it ran on the worker thread.
  std::vector<std::pair<QString, bool>> log() const;

signals:
  void jobStarted(const QString& job);
  void jobProgress(double fraction);
  void jobEnded();
  void progress(int id, double fraction);
  void finished(int id, std::shared_ptr<const cubesolve::SolveResult> result);
  void failed(int id, const QString& message, int code);
  void cancelled(int id);

private:
  void note(const char* job);

  QThread thread_;
  QObject* worker_ = nullptr;  // lives on thread_
  std::shared_ptr<std::atomic<bool>> token_;
  std::shared_ptr<std::atomic<bool>> job_token_;  // shared by the jobs queued since the last cancelJobs()
  int jobs_ = 0;
  std::atomic<int> running_{0};
  int next_id_ = 0;
  mutable std::mutex log_mutex_;
  std::vector<std::pair<QString, bool>> log_;
};

}  // namespace cubesolve::ui
