#include "worker.hpp"

#include <cubesolve/error.hpp>

namespace cubesolve::ui {

Worker::Worker(QObject* parent) : QObject(parent) {
  worker_ = new QObject;
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.setObjectName("cubesolve-worker");
  thread_.start();
}

Worker::~Worker() {
  if (token_) *token_ = true;
  if (job_token_) *job_token_ = true;
  thread_.requestInterruption();
  thread_.quit();
  thread_.wait();
}

void Worker::note(const char* job) {
  std::lock_guard<std::mutex> lock(log_mutex_);
  log_.emplace_back(QString::fromUtf8(job), QThread::currentThread() == &thread_);
}

std::vector<std::pair<QString, bool>> Worker::log() const {
  std::lock_guard<std::mutex> lock(log_mutex_);
  return log_;
}

int Worker::solve(std::function<SolveResult(const Progress&)> work) {
  if (token_) *token_ = true;  // a newer request replaces the running one
  auto token = std::make_shared<std::atomic<bool>>(false);
  token_ = token;
  const int id = ++next_id_;
  ++running_;
  QMetaObject::invokeMethod(
      worker_,
      [this, id, token, work] {
        note("solve");
        auto report = [this, id](auto emitter) { QMetaObject::invokeMethod(this, emitter, Qt::QueuedConnection); };
        try {
          if (*token) throw Cancelled();
          auto result = std::make_shared<SolveResult>(work([&](double f) {
            report([this, id, f] { emit progress(id, f); });
            return !token->load() && !QThread::currentThread()->isInterruptionRequested();
          }));
          --running_;
          report([this, id, result = std::shared_ptr<const SolveResult>(std::move(result))] { emit finished(id, result); });
        } catch (const Cancelled&) {
          --running_;
          report([this, id] { emit cancelled(id); });
        } catch (const std::exception& e) {
          --running_;
          const QString message = QString::fromUtf8(e.what());
          const int code = exit_code(e);
          report([this, id, message, code] { emit failed(id, message, code); });
        }
      },
      Qt::QueuedConnection);
  return id;
}

void Worker::cancel() {
  if (token_) *token_ = true;
}

void Worker::cancelJobs() {
  if (job_token_) *job_token_ = true;
  job_token_.reset();
}

}  // namespace cubesolve::ui
