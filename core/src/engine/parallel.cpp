#include "engine/parallel.hpp"

#include <cubesolve/error.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace cubesolve::detail {

int thread_count(int requested) {
  if (requested > 0) return requested;
  const unsigned hw = std::thread::hardware_concurrency();
  return hw ? static_cast<int>(hw) : 1;
}

void parallel_for(std::size_t n, std::size_t chunk, int threads,
                  const std::function<void(int, std::size_t, std::size_t)>& body, const Progress& progress) {
  if (n == 0) return;
  chunk = std::max<std::size_t>(1, chunk);
  const std::size_t chunks = (n + chunk - 1) / chunk;
  threads = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(1, threads)), chunks));

  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<bool> stop{false};
  std::exception_ptr error;
  std::mutex mutex;
  std::condition_variable finished;
  int running = threads;

  auto work = [&](int t) {
    try {
      for (;;) {
        if (stop.load(std::memory_order_relaxed)) break;
        const std::size_t c = next.fetch_add(1);
        if (c >= chunks) break;
        const std::size_t begin = c * chunk, end = std::min(n, begin + chunk);
        body(t, begin, end);
        done.fetch_add(end - begin);
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex);
      if (!error) error = std::current_exception();
      stop = true;
    }
    std::lock_guard<std::mutex> lock(mutex);
    if (--running == 0) finished.notify_all();
  };

  // With a progress callback the caller's thread only reports; otherwise it works too.
  std::vector<std::thread> pool;
  for (int t = progress ? 0 : 1; t < threads; ++t) pool.emplace_back(work, t);
  bool cancelled = false;
  if (!progress) {
    work(0);
  } else {
    std::unique_lock<std::mutex> lock(mutex);
    while (running > 0) {
      finished.wait_for(lock, std::chrono::milliseconds(50));
      if (running == 0) break;
      lock.unlock();
      const bool go_on = progress(static_cast<double>(done.load()) / static_cast<double>(n));
      lock.lock();
      if (!go_on) {
        cancelled = true;
        stop = true;
      }
    }
  }
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
  if (cancelled) throw Cancelled();
  if (progress && !progress(1.0)) throw Cancelled();
}

}  // namespace cubesolve::detail
