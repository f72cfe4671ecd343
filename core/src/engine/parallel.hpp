#pragma once
#include <cubesolve/progress.hpp>

#include <cstddef>
#include <functional>

namespace cubesolve::detail {

/// Number of threads for a request (0 = all hardware threads).
int thread_count(int requested);

/// Runs body(thread, begin, end) over [0, n) in chunks of `chunk` items on
/// `threads` threads. The calling thread reports progress (fraction done of
/// this call) a few times a second; when the callback returns false the
/// workers stop after their current chunk and Cancelled is thrown. The first
/// exception a worker throws is rethrown here.
void parallel_for(std::size_t n, std::size_t chunk, int threads,
                  const std::function<void(int thread, std::size_t begin, std::size_t end)>& body,
                  const Progress& progress = {});

}  // namespace cubesolve::detail
