#include <cubesolve/engine.hpp>
#include <cubesolve/error.hpp>

#include "exact.hpp"
#include "lapack.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <sstream>

namespace cubesolve {

const char* status_name(PixelStatus status) {
  switch (status) {
    case PixelStatus::Ok: return "ok";
    case PixelStatus::MinNorm: return "min-norm";
    case PixelStatus::NoData: return "no-data";
    case PixelStatus::TooFew: return "too-few";
    case PixelStatus::Failed: return "failed";
  }
  return "?";
}

const char* path_name(SolvePath path) {
  switch (path) {
    case SolvePath::Full: return "full";
    case SolvePath::Group: return "group";
    case SolvePath::Deletion: return "deletion";
    case SolvePath::Dual: return "dual";
    case SolvePath::Gram: return "gram";
    case SolvePath::Exact: return "exact";
    case SolvePath::Skipped: return "skipped";
  }
  return "?";
}

std::size_t SolveResult::count(PixelStatus s) const {
  if (status.empty()) return 0;
  const auto* st = status.data<std::uint8_t>();
  return static_cast<std::size_t>(std::count(st, st + status.size(), static_cast<std::uint8_t>(s)));
}

Design::Design(const Array& a, const std::string& name) {
  if (a.ndim() == 1) {
    rows_ = a.dim(0);
    cols_ = 1;
  } else if (a.ndim() == 2) {
    rows_ = a.dim(0);
    cols_ = a.dim(1);
  } else {
    throw InputError(name + ": expected a 2-D design matrix (N, M), found shape " + shape_string(a.shape()));
  }
  if (rows_ == 0 || cols_ == 0)
    throw InputError(name + ": expected a non-empty design matrix (N, M), found shape " + shape_string(a.shape()));
  a_.resize(rows_ * cols_);
  for (std::size_t i = 0; i < a_.size(); ++i) {
    a_[i] = a.value(i);
    if (!std::isfinite(a_[i])) {
      std::ostringstream msg;
      msg << name << ": expected finite values in the design matrix, found " << a_[i] << " at row " << i / cols_
          << ", column " << i % cols_;
      throw InputError(msg.str());
    }
  }
  // Singular values: column-major copy of A is A^T (M x N) with the same spectrum.
  std::vector<double> t = a_;
  int m = static_cast<int>(cols_), n = static_cast<int>(rows_), lda = m, ld1 = 1, lwork = -1, info = 0;
  sigma_.resize(std::min(rows_, cols_));
  std::vector<int> iwork(8 * sigma_.size());
  double wq = 0;
  dgesdd_("N", &m, &n, t.data(), &lda, sigma_.data(), nullptr, &ld1, nullptr, &ld1, &wq, &lwork, iwork.data(),
          &info, 1);
  std::vector<double> work(static_cast<std::size_t>(wq) + 1);
  lwork = static_cast<int>(work.size());
  dgesdd_("N", &m, &n, t.data(), &lda, sigma_.data(), nullptr, &ld1, nullptr, &ld1, work.data(), &lwork,
          iwork.data(), &info, 1);
  if (info != 0) throw NumericalError(name + ": the SVD of the design matrix did not converge");
  const double tol = detail::default_rcond(rows_, cols_) * sigma_.front();
  rank_ = static_cast<std::size_t>(std::count_if(sigma_.begin(), sigma_.end(), [&](double s) { return s > tol; }));
  cond_ = sigma_.back() > 0 ? sigma_.front() / sigma_.back() : std::numeric_limits<double>::infinity();
}

void check_inputs(const Array& cube, const Design& design, const Array* weights, const std::string& cube_name,
                  const std::string& design_name, const std::string& weights_name) {
  if (cube.ndim() != 3)
    throw InputError(cube_name + ": expected 3 dimensions (N, H, W), found shape " + shape_string(cube.shape()));
  if (cube.dtype() != DType::Float32 && cube.dtype() != DType::Float64)
    throw InputError(cube_name + ": expected float32 or float64 values, found " + dtype_name(cube.dtype()));
  if (cube.dim(0) != design.rows())
    throw InputError(design_name + ": expected " + std::to_string(cube.dim(0)) + " rows (one per observation of " +
                     cube_name + ", shape " + shape_string(cube.shape()) + "), found " +
                     std::to_string(design.rows()) + " rows");
  if (weights) {
    if (weights->shape() != cube.shape())
      throw InputError(weights_name + ": expected the cube's shape " + shape_string(cube.shape()) + ", found " +
                       shape_string(weights->shape()));
    const std::size_t P = cube.dim(1) * cube.dim(2);
    for (std::size_t i = 0; i < weights->size(); ++i) {
      const double w = weights->value(i);
      if (w < 0) {
        std::ostringstream msg;
        msg << weights_name << ": expected weights >= 0, found " << w << " at (observation " << i / P << ", row "
            << (i % P) / cube.dim(2) << ", column " << i % cube.dim(2) << ")";
        throw InputError(msg.str());
      }
    }
  }
}

namespace {

void check_options(const SolveOptions& o) {
  if (o.min_valid < 1) throw InputError("--min-valid: expected an integer >= 1, found " + std::to_string(o.min_valid));
  if (!(o.ridge >= 0) || !std::isfinite(o.ridge))
    throw InputError("--ridge: expected a finite value >= 0, found " + std::to_string(o.ridge));
  if (!std::isfinite(o.rcond)) throw InputError("--rcond: expected a finite value, found " + std::to_string(o.rcond));
  if (o.threads < 0) throw InputError("--threads: expected an integer >= 0, found " + std::to_string(o.threads));
}

template <class T> void store(Array& a, std::size_t i, double v) { a.data<T>()[i] = static_cast<T>(v); }

void store_value(Array& a, std::size_t i, double v) {
  if (a.dtype() == DType::Float32) store<float>(a, i, v);
  else store<double>(a, i, v);
}

}  // namespace

SolveResult solve(const Array& cube, const Design& design, const Array* weights, const SolveOptions& options,
                  const Progress& progress) {
  check_inputs(cube, design, weights);
  check_options(options);
  const auto t0 = std::chrono::steady_clock::now();

  const std::size_t N = cube.dim(0), H = cube.dim(1), W = cube.dim(2), P = H * W, M = design.cols();
  SolveResult r;
  const DType out_type = options.output.value_or(cube.dtype());
  r.x = Array(out_type, {M, H, W});
  r.n_valid = Array(DType::Int32, {H, W});
  r.rank = Array(DType::Int32, {H, W});
  r.rss = Array(DType::Float64, {H, W});
  r.status = Array(DType::UInt8, {H, W});
  r.cond = Array(DType::Float64, {H, W});
  r.threads = detail::thread_count(options.threads);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto min_valid = static_cast<std::size_t>(options.min_valid);
  constexpr std::size_t kChunk = 256;
  std::vector<detail::ExactSolver> solvers;
  for (int t = 0; t < r.threads; ++t) solvers.emplace_back(design, N, options.ridge > 0);
  std::vector<PathCounts> paths(static_cast<std::size_t>(r.threads), PathCounts{});

  auto body = [&](int t, std::size_t begin, std::size_t end) {
    const std::size_t B = end - begin;
    // This chunk's values and weights, observation-major, converted to double.
    std::vector<double> y(N * B), w(weights ? N * B : 0);
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < B; ++k) {
        y[i * B + k] = cube.value(i * P + begin + k);
        if (weights) w[i * B + k] = weights->value(i * P + begin + k);
      }
    std::vector<int> rows(N);
    std::vector<double> yv(N), sw(N), x(M);
    auto& solver = solvers[static_cast<std::size_t>(t)];
    auto& count = paths[static_cast<std::size_t>(t)];
    for (std::size_t k = 0; k < B; ++k) {
      const std::size_t p = begin + k;
      std::size_t nv = 0;
      for (std::size_t i = 0; i < N; ++i) {
        const double v = y[i * B + k];
        const double wi = weights ? w[i * B + k] : 1.0;
        if (!std::isfinite(v) || !(wi > 0) || !std::isfinite(wi)) continue;
        rows[nv] = static_cast<int>(i);
        yv[nv] = v;
        sw[nv] = std::sqrt(wi);
        ++nv;
      }
      r.n_valid.data<std::int32_t>()[p] = static_cast<std::int32_t>(nv);
      PixelStatus status;
      int rank = 0;
      double cond = nan, rss = nan;
      if (nv == 0 || nv < min_valid) {
        status = nv == 0 ? PixelStatus::NoData : PixelStatus::TooFew;
        std::fill(x.begin(), x.end(), nan);
        ++count[static_cast<std::size_t>(SolvePath::Skipped)];
      } else {
        const auto out = solver.solve(rows.data(), weights ? sw.data() : nullptr, yv.data(), nv, options.rcond,
                                      options.ridge, x.data());
        ++count[static_cast<std::size_t>(SolvePath::Exact)];
        rank = out.rank;
        if (out.failed) {
          status = PixelStatus::Failed;
        } else {
          status = (options.ridge > 0 || static_cast<std::size_t>(rank) == M) ? PixelStatus::Ok : PixelStatus::MinNorm;
          cond = out.cond;
          rss = 0;
          for (std::size_t i = 0; i < nv; ++i) {
            const double* a = design.values().data() + static_cast<std::size_t>(rows[i]) * M;
            double f = 0;
            for (std::size_t j = 0; j < M; ++j) f += a[j] * x[j];
            const double e = (f - yv[i]) * sw[i];
            rss += e * e;
          }
        }
      }
      r.status.data<std::uint8_t>()[p] = static_cast<std::uint8_t>(status);
      r.rank.data<std::int32_t>()[p] = rank;
      r.cond.data<double>()[p] = cond;
      r.rss.data<double>()[p] = rss;
      for (std::size_t j = 0; j < M; ++j) store_value(r.x, j * P + p, x[j]);
    }
  };
  {
    lapack::SingleThreadedBlas single;
    detail::parallel_for(P, kChunk, r.threads, body, progress);
  }
  for (const auto& c : paths)
    for (std::size_t i = 0; i < kPathCount; ++i) r.paths[i] += c[i];
  r.engine_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Array model_cube(const Design& design, const Array& x) {
  if (x.ndim() != 3 || x.dim(0) != design.cols())
    throw InputError("solution: expected shape (" + std::to_string(design.cols()) + ", H, W), found " +
                     shape_string(x.shape()));
  const std::size_t N = design.rows(), M = design.cols(), H = x.dim(1), W = x.dim(2), P = H * W;
  Array model(x.dtype(), {N, H, W});
  constexpr std::size_t kBlock = 4096;
  std::vector<double> xb(M * kBlock), mb(N * kBlock);
  for (std::size_t b = 0; b < P; b += kBlock) {
    const std::size_t B = std::min(kBlock, P - b);
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t k = 0; k < B; ++k) xb[k + j * B] = x.value(j * P + b + k);
    // (B x N) = (B x M) * (M x N), column-major: X block^T times A^T.
    lapack::gemm('N', 'N', static_cast<int>(B), static_cast<int>(N), static_cast<int>(M), 1.0, xb.data(),
                 static_cast<int>(B), design.values().data(), static_cast<int>(M), 0.0, mb.data(),
                 static_cast<int>(B));
    std::vector<char> solved(B, 1);  // NaN in X must give NaN whatever BLAS does with it
    for (std::size_t j = 0; j < M; ++j)
      for (std::size_t k = 0; k < B; ++k) solved[k] &= static_cast<char>(std::isfinite(xb[k + j * B]));
    for (std::size_t i = 0; i < N; ++i)
      for (std::size_t k = 0; k < B; ++k)
        store_value(model, i * P + b + k, solved[k] ? mb[k + i * B] : std::numeric_limits<double>::quiet_NaN());
  }
  return model;
}

Array residual_cube(const Array& cube, const Array& model) {
  if (cube.shape() != model.shape())
    throw InputError("model: expected the cube's shape " + shape_string(cube.shape()) + ", found " +
                     shape_string(model.shape()));
  Array res(cube.dtype(), cube.shape());
  for (std::size_t i = 0; i < cube.size(); ++i) {
    const double y = cube.value(i);
    store_value(res, i, std::isfinite(y) ? y - model.value(i) : std::numeric_limits<double>::quiet_NaN());
  }
  return res;
}

}  // namespace cubesolve
