#include "engine/exact.hpp"

#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace cubesolve::detail {

double default_rcond(std::size_t nv, std::size_t m) {
  return std::numeric_limits<double>::epsilon() * static_cast<double>(std::max(nv, m));
}

std::size_t valid_rows(const Array& cube, std::size_t p, int* rows, double* y) {
  const std::size_t N = cube.dim(0), P = cube.dim(1) * cube.dim(2);
  std::size_t nv = 0;
  for (std::size_t i = 0; i < N; ++i) {
    const double v = cube.value(i * P + p);
    if (!std::isfinite(v)) continue;
    rows[nv] = static_cast<int>(i);
    y[nv++] = v;
  }
  return nv;
}

namespace {
std::size_t query_work(int m, int n, std::vector<int>& iwork_size) {
  const int nrhs = 1, lda = std::max(1, m), ldb = std::max({1, m, n}), lwork = -1;
  double work = 0, rcond = -1;
  int rank = 0, info = 0, iwork = 0;
  dgelsd_(&m, &n, &nrhs, nullptr, &lda, nullptr, &ldb, nullptr, &rcond, &rank, &work, &lwork, &iwork, &info);
  iwork_size.push_back(std::max(1, iwork));
  return static_cast<std::size_t>(work) + 1;
}
}  // namespace

ExactSolver::ExactSolver(const Design& design, std::size_t max_rows, bool ridge)
    : design_(design), max_rows_(max_rows + (ridge ? design.cols() : 0)) {
  const int m = static_cast<int>(std::max<std::size_t>(1, max_rows_)), n = static_cast<int>(design.cols());
  std::vector<int> iw;
  std::size_t lwork = query_work(m, n, iw);
  if (m > n) lwork = std::max(lwork, query_work(n, n, iw));
  work_.resize(lwork);
  iwork_.resize(static_cast<std::size_t>(*std::max_element(iw.begin(), iw.end())));
  a_.resize(static_cast<std::size_t>(m) * static_cast<std::size_t>(n));
  b_.resize(static_cast<std::size_t>(std::max(m, n)));
  s_.resize(static_cast<std::size_t>(std::min(m, n)));
}

ExactSolver::Outcome ExactSolver::solve(const int* rows, const double* sw, const double* y, std::size_t nv,
                                        double rcond, double ridge, double* x) {
  const std::size_t M = design_.cols();
  const std::size_t mrows = nv + (ridge > 0 ? M : 0);
  const int m = static_cast<int>(mrows), n = static_cast<int>(M), nrhs = 1;
  const int lda = std::max(1, m), ldb = std::max({1, m, n});
  const double* A = design_.values().data();
  for (std::size_t j = 0; j < M; ++j) {
    double* col = a_.data() + j * static_cast<std::size_t>(lda);
    for (std::size_t i = 0; i < nv; ++i) col[i] = A[static_cast<std::size_t>(rows[i]) * M + j] * (sw ? sw[i] : 1.0);
    if (ridge > 0) {
      std::fill(col + nv, col + mrows, 0.0);
      col[nv + j] = std::sqrt(ridge);
    }
  }
  for (std::size_t i = 0; i < nv; ++i) b_[i] = y[i] * (sw ? sw[i] : 1.0);
  std::fill(b_.begin() + static_cast<std::ptrdiff_t>(nv), b_.end(), 0.0);
  if (rcond < 0) rcond = default_rcond(nv, M);

  Outcome out;
  const int lwork = static_cast<int>(work_.size());
  int info = 0;
  dgelsd_(&m, &n, &nrhs, a_.data(), &lda, b_.data(), &ldb, s_.data(), &rcond, &out.rank, work_.data(), &lwork,
          iwork_.data(), &info);
  if (info != 0) {
    out.failed = true;
    std::fill(x, x + M, std::numeric_limits<double>::quiet_NaN());
    return out;
  }
  std::copy(b_.begin(), b_.begin() + static_cast<std::ptrdiff_t>(M), x);
  out.cond = out.rank > 0 ? s_[0] / s_[static_cast<std::size_t>(out.rank - 1)]
                          : std::numeric_limits<double>::infinity();
  return out;
}

}  // namespace cubesolve::detail
