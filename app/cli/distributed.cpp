// The solve over MPI ranks. Rank 0 checks the inputs and plans the row
// blocks (the same blocks as one process makes, so the bytes are the same);
// every rank then takes blocks on demand from a counter on rank 0 (a block
// of ocean costs little, and its rank takes the next one), reads only those
// rows and solves them with its cores. NPY outputs are written by every rank
// at the rows' place in files rank 0 created; a GeoTIFF, which one process
// must write, is staged so (as NPY beside it) and copied into place by rank 0
// in row order at the end. Every step
// that can fail ends with all ranks agreeing on the worst outcome, so that a
// bad input or a rank that fails makes every rank exit with one code, only
// rank 0 speaks, and no output is left behind.
#include "distributed.hpp"

#include "common.hpp"

#include <cubesolve/io/formats.hpp>

#include <cubesolve/error.hpp>

#define OMPI_SKIP_MPICXX 1  // the C API only
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

namespace cubesolve::cli::mpi {

bool launched() {
  static const bool yes = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
  return yes;
}

Session::Session(int* argc, char*** argv) {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!launched() || ready) return;
  int provided = 0;
  MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
  started_ = true;
}

Session::~Session() {
  if (started_) MPI_Finalize();
}

int rank() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) return 0;
  int r = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

namespace {

int size() {
  int n = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  return n;
}

/// Rank `root`'s string on every rank.
std::string broadcast(std::string s, int root) {
  unsigned long n = s.size();
  MPI_Bcast(&n, 1, MPI_UNSIGNED_LONG, root, MPI_COMM_WORLD);
  s.resize(n);
  MPI_Bcast(s.data(), static_cast<int>(n), MPI_CHAR, root, MPI_COMM_WORLD);
  return s;
}

/// The worst outcome over all ranks (the highest exit code, its message
/// from the lowest rank that has it). Collective.
Failure agree(const Failure& mine) {
  int in[2] = {mine.code, rank()}, out[2] = {0, 0};
  MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
  if (out[0] == 0) return {};
  return {out[0], broadcast(mine.message, out[1])};
}

/// Runs `step` on this rank and agrees on the outcome. Collective.
template <class F> Failure step(F&& f) {
  Failure mine;
  try {
    f();
  } catch (...) {
    mine = failure_of(std::current_exception());
  }
  return agree(mine);
}

/// The next block to take: a counter on rank 0, added to atomically.
class Counter {
public:
  Counter() {
    MPI_Win_allocate(rank() == 0 ? sizeof(long) : 0, sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &value_, &win_);
    if (rank() == 0) {
      MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win_);
      *value_ = 0;
      MPI_Win_unlock(0, win_);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
  ~Counter() { MPI_Win_free(&win_); }
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;
  long next() { return apply(1, MPI_SUM); }
  /// No more blocks for anyone (a rank failed).
  void stop(long blocks) { apply(blocks, MPI_REPLACE); }

private:
  long apply(long v, MPI_Op op) {
    long old = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win_);
    MPI_Fetch_and_op(&v, &old, MPI_LONG, 0, 0, op, win_);
    MPI_Win_unlock(0, win_);
    return old;
  }
  MPI_Win win_ = MPI_WIN_NULL;
  long* value_ = nullptr;
};

/// Where the ranks write when the outputs cannot be written by several
/// processes at once (GeoTIFF): NPY files beside them, which rank 0 copies
/// into the outputs in row order at the end (so the bytes are those of one
/// process). Empty names stay empty.
ResultPaths staging(const ResultPaths& out) {
  auto beside = [](const std::string& p) { return p.empty() ? p : p + ".staging.npy"; };
  ResultPaths s;
  s.x = beside(out.x);
  s.diagnostics = out.diagnostics.empty() ? "" : out.diagnostics + ".staging";
  s.std_error = out.std_error;
  s.covariance = out.covariance;
  s.temporal_coherence = out.temporal_coherence;
  s.robust = out.robust;
  s.model = beside(out.model);
  s.residual = beside(out.residual);
  return s;
}

bool all_npy(const ResultPaths& out) {
  for (const auto& [part, path] : out.files())
    if (data_format_of(path) != DataFormat::Npy) return false;
  return true;
}

/// Rank 0: the staged blocks into the outputs, in row order.
void copy_staged(const std::vector<std::string>& staged, const StreamPlan& plan, ResultWriter& out) {
  std::vector<std::unique_ptr<CubeReader>> readers;
  for (const auto& path : staged) readers.push_back(open_npy_cube(path, true));
  for (std::size_t b = 0; b < plan.blocks; ++b) {
    std::vector<Array> parts;
    for (auto& r : readers) parts.push_back(r->rows(plan.first_row(b), plan.end_row(b)));
    out.write_parts(plan.first_row(b), parts);
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Sums every rank's totals into rank 0's.
void reduce_totals(SolveTotals& t) {
  std::vector<unsigned long> counts(t.paths.begin(), t.paths.end());
  counts.insert(counts.end(), t.status.begin(), t.status.end());
  counts.push_back(t.no_std_error);
  counts.push_back(t.pixels);
  counts.push_back(t.device_pixels);
  std::vector<unsigned long> sum(counts.size());
  MPI_Reduce(counts.data(), sum.data(), static_cast<int>(counts.size()), MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  double engine = 0;
  MPI_Reduce(&t.engine_seconds, &engine, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  int device = static_cast<int>(t.device), any_device = 0;
  MPI_Reduce(&device, &any_device, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank() != 0) return;
  std::copy(sum.begin(), sum.begin() + kPathCount, t.paths.begin());
  std::copy(sum.begin() + kPathCount, sum.begin() + kPathCount + t.status.size(), t.status.begin());
  t.no_std_error = sum[sum.size() - 3];
  t.pixels = sum[sum.size() - 2];
  t.device_pixels = sum.back();
  t.engine_seconds = engine;
  t.device = static_cast<Device>(any_device);
}

/// Every rank's share, on rank 0.
std::vector<RankReport> gather_ranks(const RankReport& mine) {
  const double in[4] = {static_cast<double>(mine.blocks), static_cast<double>(mine.pixels), mine.seconds,
                        mine.engine_seconds};
  std::vector<double> all(4 * static_cast<std::size_t>(size()));
  MPI_Gather(in, 4, MPI_DOUBLE, all.data(), 4, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<RankReport> out;
  for (std::size_t k = 0; rank() == 0 && k < all.size(); k += 4)
    out.push_back({static_cast<std::size_t>(all[k]), static_cast<std::size_t>(all[k + 1]), all[k + 2], all[k + 3]});
  return out;
}

/// Ends the run on every rank: rank 0 prints the failure, every rank returns its code.
int fail(const Failure& f) {
  if (rank() == 0) std::cerr << "cubesolve-cli: " << f.message << "\n";
  return f.code;
}

/// A failure injected for the tests (CUBESOLVE_TEST_FAIL_RANK=r: rank r fails on its first block).
void maybe_fail(std::size_t taken) {
  const char* r = std::getenv("CUBESOLVE_TEST_FAIL_RANK");
  if (r && std::atoi(r) == rank() && taken == 0)
    throw IoError("rank " + std::to_string(rank()) + ": a read failed (injected by CUBESOLVE_TEST_FAIL_RANK)");
}

/// One solve on every rank, step by step; each step ends with all ranks
/// agreeing on the worst outcome.
class DistributedSolve {
public:
  explicit DistributedSolve(const SolveRequest& req) : req_(req), root_(rank() == 0) {}

  /// Rank 0 opens and checks the inputs and the outputs first, so that a bad
  /// input is found once; then every rank opens them and plans the blocks.
  Failure open() {
    if (Failure f = step([&] {
          if (!root_) return;
          if (req_.out.mintpy())
            throw InputError(req_.out.x + ": expected a .npy or .tif output under MPI, found MintPy's layout (.h5): "
                                          "write it from a single process");
          in_ = std::make_unique<Inputs>(open_inputs(req_.cube, req_.design, req_.weights, req_.input));
          req_.out.check(in_->files);
        });
        f.code)
      return f;
    return step([&] {
      if (!in_) in_ = std::make_unique<Inputs>(open_inputs(req_.cube, req_.design, req_.weights, req_.input));
      plan_ = plan_stream(*in_, req_.out, req_.options);
      if (root_) {
        ResultPaths out = req_.out;
        out.x_names = in_->x_names;  // GeoTIFF bands named by date or term, and by pair
        out.y_names = pair_names(in_->pairs);
        writer_ = std::make_unique<ResultWriter>(out, shape(), in_->design.cols(), plan_.x_type, in_->cube->dtype(), in_->cube->geo());
      }
    });
  }

  /// Every rank writes its rows into rank 0's temporary files: the outputs'
  /// own (NPY), or NPY files staged beside them (GeoTIFF).
  Failure writers() {
    const bool direct = all_npy(req_.out);
    const ResultPaths work = direct ? req_.out : staging(req_.out);
    std::string temps;
    if (Failure f = step([&] {
          if (!root_) return;
          if (!direct)
            staged_ = std::make_unique<ResultWriter>(work, shape(), in_->design.cols(), plan_.x_type, in_->cube->dtype(),
                                                     GeoReference{});
          for (const auto& t : (direct ? writer_ : staged_)->temp_paths()) temps += t + '\n';
        });
        f.code)
      return f;
    temps = broadcast(temps, 0);
    for (std::size_t a = 0, b; (b = temps.find('\n', a)) != std::string::npos; a = b + 1)
      temps_.push_back(temps.substr(a, b - a));
    return step([&] {
      if (!root_)
        attached_ = ResultWriter::attach(work, temps_, shape(), in_->design.cols(), plan_.x_type, in_->cube->dtype());
    });
  }

  /// The blocks, taken on demand until none is left or a rank failed; then
  /// the totals and the ranks' shares to rank 0.
  Failure work() {
    ResultWriter& local = root_ ? (staged_ ? *staged_ : *writer_) : *attached_;
    Counter counter;
    Failure mine;
    ProgressBar bar("solving");
    const auto t0 = std::chrono::steady_clock::now();
    try {
      for (long b; (b = counter.next()) < static_cast<long>(plan_.blocks);) {
        maybe_fail(me_.blocks);
        const auto block = static_cast<std::size_t>(b);
        Array rows;
        const Progress progress = root_ ? block_progress(plan_, block, bar.callback()) : bar.callback();
        const SolveResult r = solve_block(*in_, plan_, block, rows, progress);
        totals_.add(r);
        ++me_.blocks;
        me_.pixels += r.status.size();
        me_.engine_seconds += r.engine_seconds;
        local.write(plan_.first_row(block), r, in_->x_design(), rows);
      }
      if (!root_) local.finish();
    } catch (...) {
      mine = failure_of(std::current_exception());
      counter.stop(static_cast<long>(plan_.blocks));
    }
    me_.seconds = seconds_since(t0);
    reduce_totals(totals_);
    ranks_ = gather_ranks(me_);
    return agree(mine);  // on a failure rank 0's writers remove the temporary files
  }

  /// Rank 0 puts the files in place (after copying the staged blocks into them).
  Failure commit() {
    return step([&] {
      if (!root_) return;
      if (staged_) {
        staged_->finish();
        copy_staged(temps_, plan_, *writer_);
      }
      outputs_ = writer_->commit();
    });
  }

  void report() const {
    SolveReport r;
    r.run.totals = totals_;
    r.run.blocks = plan_.blocks;
    r.run.rows_per_block = plan_.rows_per_block;
    r.run.outputs = outputs_;
    r.x_shape = {in_->design.cols(), shape()[1], shape()[2]};
    r.x_type = plan_.x_type;
    r.loss = req_.options.loss;
    r.peak_memory_mb = peak_memory_mb();
    r.ranks = ranks_;
    std::vector<std::string> warnings = totals_.warnings;  // and what rank 0 did about dead runs' temporary files
    for (const ResultWriter* w : {writer_.get(), staged_.get()})
      if (w) warnings.insert(warnings.end(), w->notices().begin(), w->notices().end());
    print_warnings(warnings);
    if (req_.json) print_json(r);
    else print_text(r);
  }

private:
  const Shape& shape() const { return in_->cube->shape(); }

  const SolveRequest& req_;
  const bool root_;
  std::unique_ptr<Inputs> in_;
  StreamPlan plan_;
  std::unique_ptr<ResultWriter> writer_, staged_, attached_;
  std::vector<std::string> temps_, outputs_;
  SolveTotals totals_;
  RankReport me_;
  std::vector<RankReport> ranks_;
};

}  // namespace

int solve(const SolveRequest& req) {
  DistributedSolve run(req);
  for (Failure (DistributedSolve::*phase)() : {&DistributedSolve::open, &DistributedSolve::writers,
                                                &DistributedSolve::work, &DistributedSolve::commit})
    if (const Failure f = (run.*phase)(); f.code) return fail(f);
  if (rank() == 0) run.report();
  return 0;
}

}  // namespace cubesolve::cli::mpi
