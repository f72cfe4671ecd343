#pragma once
// The exact path: one pixel, LAPACK dgelsd on its weighted valid rows.
// It is the reference every faster path is measured against and the
// fallback for every pixel a faster path cannot vouch for.

#include <cubesolve/engine/engine.hpp>

#include <vector>

namespace cubesolve::detail {

class ExactSolver {
public:
  /// Workspace for pixels of up to `max_rows` valid rows of `design`.
  ExactSolver(const Design& design, std::size_t max_rows, bool ridge);

  struct Outcome {
    int rank = 0;
    double cond = 0;     // sigma_max / sigma_rank of the weighted A_V
    bool failed = false; // dgelsd did not converge: x is NaN
  };
  /// Solves min ||diag(sw)(A_rows x - y)|| (+ ridge ||x||^2) with minimum
  /// norm. `rows` holds nv row indices, `sw` their square-root weights (null
  /// for all ones), `y` their values. Writes M values to x.
  Outcome solve(const int* rows, const double* sw, const double* y, std::size_t nv, double rcond, double ridge,
                double* x);

private:
  const Design& design_;
  std::size_t max_rows_;
  std::vector<double> a_, b_, s_, work_;
  std::vector<int> iwork_;
};

/// Pixel p's valid rows of a cube (N, H, W) (its finite values): their
/// indices into rows and values into y, nv of each. Returns nv.
std::size_t valid_rows(const Array& cube, std::size_t p, int* rows, double* y);

/// The default rcond of a pixel with nv valid rows: eps * max(nv, M).
double default_rcond(std::size_t nv, std::size_t m);

}  // namespace cubesolve::detail
