#pragma once
// Robust losses (SolveOptions::loss), after the least-squares solve.

#include <cubesolve/engine/engine.hpp>

namespace cubesolve::detail {

/// Replaces r's least-squares solution of every solved pixel (Ok, MinNorm)
/// by its minimiser under options.loss, with its iterations and objective
/// (SolveResult::iterations, objective) and rss at it; a pixel that does not
/// converge gets NaN and NotConverged. r holds the solve's rank. Throws
/// Cancelled when progress returns false.
void robust_pass(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options, SolveResult& r,
                 const Progress& progress = {});

}  // namespace cubesolve::detail
