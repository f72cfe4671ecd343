#pragma once
// Runs the core's solve on a worker thread (a plain QObject moved to a
// member QThread). Requests go in by start(); results come out by signal as
// immutable shared data. A newer request cancels the running one; cancel()
// stops it within a chunk of pixels.

#include <cubesolve/engine/engine.hpp>

#include <QMetaObject>
#include <QObject>
#include <QString>
#include <QThread>

#include <atomic>
#include <functional>
#include <memory>

namespace cubesolve::ui {

class SolveController : public QObject {
  Q_OBJECT
public:
  explicit SolveController(QObject* parent = nullptr);
  ~SolveController() override;

  /// Queues a solve and returns its id.
  int start(std::shared_ptr<const Array> cube, std::shared_ptr<const Design> design,
            std::shared_ptr<const Array> weights, const SolveOptions& options);
  void cancel();
  bool busy() const { return running_.load() > 0; }

  /// Runs `work` on the worker thread (after what is queued before it);
  /// `done` gets its result, or `failed` the message of what it threw, on
  /// this object's thread.
  template <class T>
  void run(std::function<T()> work, std::function<void(T)> done, std::function<void(const QString&)> failed) {
    QMetaObject::invokeMethod(
        worker_,
        [this, work, done, failed] {
          try {
            auto value = std::make_shared<T>(work());
            QMetaObject::invokeMethod(this, [done, value] { done(std::move(*value)); }, Qt::QueuedConnection);
          } catch (const std::exception& e) {
            const QString message = QString::fromUtf8(e.what());
            QMetaObject::invokeMethod(this, [failed, message] { failed(message); }, Qt::QueuedConnection);
          }
        },
        Qt::QueuedConnection);
  }

signals:
  void progress(int id, double fraction);
  void finished(int id, std::shared_ptr<const cubesolve::SolveResult> result);
  void failed(int id, const QString& message);
  void cancelled(int id);

private:
  QThread thread_;
  QObject* worker_ = nullptr;  // lives on thread_
  std::shared_ptr<std::atomic<bool>> token_;
  std::atomic<int> running_{0};
  int next_id_ = 0;
};

}  // namespace cubesolve::ui
