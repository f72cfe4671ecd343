#include <cubesolve/workflow/streamed.hpp>

#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/mintpy.hpp>

#include "io/sizes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <future>

#include <sys/mman.h>
#include <unistd.h>

namespace cubesolve {

void SolveTotals::add(const SolveResult& r) {
  device = r.device;
  device_pixels += r.device_pixels;
  no_std_error += r.no_dof();
  warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
  for (std::size_t i = 0; i < kPathCount; ++i) paths[i] += r.paths[i];
  for (std::size_t s = 0; s < status.size(); ++s) status[s] += r.count(static_cast<PixelStatus>(s));
  engine_seconds += r.engine_seconds;
  pixels += r.status.size();
  threads = r.threads;
}

std::size_t StreamPlan::end_row(std::size_t block) const { return std::min(height, (block + 1) * rows_per_block); }

StreamPlan plan_stream(const Inputs& in, const ResultPaths& out, const SolveOptions& options) {
  const Shape shape = in.cube->shape();
  const std::size_t N = shape[0], H = shape[1], W = shape[2], M = in.design.cols();
  StreamPlan plan;
  plan.height = H;
  plan.x_type = options.output.value_or(in.cube->dtype());
  // In floating point: a header may declare rows whose bytes overflow.
  const auto bytes_of = [](double n, DType t) { return n * static_cast<double>(dtype_size(t)); };
  const double n = static_cast<double>(N), w = static_cast<double>(W);
  const bool extra = ResultWriter::extra_bytes_per_row(out, {N, 1, 1}, plan.x_type) > 0 ||
                     (in.stack && options.residuals);  // the model and residuals
  plan.read_ahead = !in.stack && !out.mintpy() && !is_stack_path(in.cube_name) && !is_stack_path(in.weights_name);
  const double buffers = plan.read_ahead ? 2 : 1;
  const double row_bytes = w * (buffers * (bytes_of(n, in.cube->dtype()) + (in.weights ? bytes_of(n, in.weights->dtype()) : 0)) +
                                bytes_of(static_cast<double>(M) * (options.std_errors ? 2 : 1) + (options.covariance ? static_cast<double>(M * (M + 1) / 2) : 0), plan.x_type) + 34 + (extra ? 2 * bytes_of(n, plan.x_type) : 0));
  detail::check_row_fits(in.cube_name, W, row_bytes, options.memory, options.memory / 4 * 3);
  const auto per_row = static_cast<std::size_t>(row_bytes);
  plan.rows_per_block =
      std::clamp<std::size_t>(options.memory / 4 * 3 / std::max<std::size_t>(per_row, 1), 1, std::max<std::size_t>(H, 1));
  plan.blocks = H ? (H + plan.rows_per_block - 1) / plan.rows_per_block : 1;
  plan.engine = options;
  plan.engine.memory = options.memory / 4;
  return plan;
}

Progress block_progress(const StreamPlan& plan, std::size_t block, const Progress& progress) {
  if (!progress) return {};
  const double H = static_cast<double>(plan.height);
  const double done = plan.height ? static_cast<double>(plan.first_row(block)) / H : 0;
  const double share = plan.height ? static_cast<double>(plan.end_row(block) - plan.first_row(block)) / H : 1;
  return [=](double f) { return progress(done + share * f); };
}

namespace {

/// A block's rows of the cube and of the weights, and what reading them took.
struct ReadBlock {
  Array rows, weights;
  double seconds = 0;
};

ReadBlock read_block(const Inputs& in, const StreamPlan& plan, std::size_t block) {
  const auto start = std::chrono::steady_clock::now();
  ReadBlock b;
  b.rows = in.rows(plan.first_row(block), plan.end_row(block), &b.weights);
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return b;
}

SolveResult solve_rows(const Inputs& in, const StreamPlan& plan, std::size_t block, const Array& rows, const Array& weights,
                       const Progress& progress) {
  const Array* w = in.weights ? &weights : nullptr;
  SolveResult r = solve(rows, in.design, w, in.engine_options(plan.engine), progress);
  in.finish(r, rows, w, plan.engine, plan.first_row(block));
  return r;
}

/// Reads and solves the plan's blocks in order, with plan.read_ahead the
/// next block read on another thread while one is solved, so that a cube
/// read from disk costs about the larger of reading it and solving it;
/// `each(b, rows, result)` takes each block; `s` gets the counts and times.
template <class Each>
void solve_blocks(const Inputs& in, const StreamPlan& plan, const Progress& progress, StreamedSolve& s, Each&& each) {
  s.read_ahead = plan.read_ahead;
  s.rows_per_block = plan.rows_per_block;
  const auto read = [&in, &plan](std::size_t b) { return read_block(in, plan, b); };
  std::future<ReadBlock> next;
  if (plan.read_ahead) next = std::async(std::launch::async, read, std::size_t{0});
  for (std::size_t b = 0; b < plan.blocks; ++b) {
    const auto waited = std::chrono::steady_clock::now();
    ReadBlock block = plan.read_ahead ? next.get() : read(b);
    s.wait_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - waited).count();
    if (plan.read_ahead && b + 1 < plan.blocks) next = std::async(std::launch::async, read, b + 1);
    s.read_seconds += block.seconds;
    s.bytes_read += block.rows.nbytes() + block.weights.nbytes();
    const SolveResult r = solve_rows(in, plan, b, block.rows, block.weights, block_progress(plan, b, progress));
    s.totals.add(r);
    ++s.blocks;
    each(b, block.rows, r);
  }
}

/// `part`, rows [r0, ...) of a result `height` rows high, into `whole`,
/// allocated at the first part: in memory while `held` bytes stay within
/// `in_memory`, else in a scratch file of `folder` (see scratch_array).
void put_result_rows(Array& whole, const Array& part, std::size_t r0, std::size_t height, std::size_t& held,
                     std::size_t in_memory, const std::string& folder) {
  if (part.empty()) return;
  if (whole.empty()) {
    Shape shape = part.shape();
    shape[shape.size() - 2] = height;
    const std::size_t bytes = shape_size(shape) * dtype_size(part.dtype());
    if (held + bytes <= in_memory) {
      whole = Array::uninitialized(part.dtype(), shape);
      held += bytes;
    } else {
      whole = scratch_array(part.dtype(), shape, folder);
    }
  }
  put_rows(whole, r0, part);
}

/// stream_masks' pass over a cube of `shape` whose rows take `row_bytes`
/// (with their weights): `read(r0, r1, weights)` gives each block of rows
/// (and their weights, where `weighted`), `each(r0, block, weights)` is
/// given them once counted.
template <class Read, class Each>
MaskStats masks_pass(const Shape& shape, std::size_t row_bytes, bool weighted, std::size_t memory, const Progress& progress, Read&& read,
                     Each&& each) {
  MaskStats s = masks_for(shape[0], shape[1], shape[2]);
  for_row_blocks(
      shape[1], row_bytes, progress ? Progress([&progress](double f) { return progress(0.8 * f); }) : Progress(),
      [&](std::size_t r0, std::size_t r1) {
        Array w;
        const Array block = read(r0, r1, w);
        pack_rows(s, r0, block, weighted ? &w : nullptr);
        each(r0, block, w);
      },
      std::min(memory / 2, std::size_t{32} << 20));  // (within the budget, a report per 32 MB at most)
  group_masks(s, progress ? Progress([&progress](double f) { return progress(0.8 + 0.2 * f); }) : Progress());
  compact_masks(s);  // (a cube larger than memory has, mostly, large groups)
  if (progress && !progress(1.0)) throw Cancelled();
  return s;
}

/// The bytes of a row of a cube of `shape` in `cube`'s type, with its weights' in theirs.
std::size_t row_bytes(const Shape& shape, DType cube, std::optional<DType> weights) {
  return shape[0] * shape[2] * (dtype_size(cube) + (weights ? dtype_size(*weights) : 0));
}

/// masks_pass's `read` over a cube reader (and a weights reader, or null,
/// checked against the cube's shape).
auto reader_reads(CubeReader& cube, CubeReader* weights) {
  if (weights) check_like_cube(weights->shape(), cube.shape(), "weights");
  return [&cube, weights](std::size_t r0, std::size_t r1, Array& w) {
    if (weights) w = weights->rows(r0, r1);
    return cube.rows(r0, r1);
  };
}

std::optional<DType> dtype_of(const CubeReader* reader) { return reader ? std::optional<DType>(reader->dtype()) : std::nullopt; }

/// Lets the system take back the pages of rows [r0, r1) of every band of
/// `mapped`, an array of a shared file mapping (scratch_array's): what was
/// written stays in the file, and is paged in again when next read. (On an
/// array in memory it would lose the values: only for such mappings.)
void release_rows(const Array& mapped, std::size_t r0, std::size_t r1) {
  static const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t H = mapped.dim(1), row = mapped.dim(2) * dtype_size(mapped.dtype());
  for (std::size_t b = 0; b < mapped.dim(0); ++b) {
    const auto first = reinterpret_cast<std::uintptr_t>(mapped.raw()) + (b * H + r0) * row;
    const std::uintptr_t start = first / page * page, end = (first + (r1 - r0) * row + page - 1) / page * page;
    ::madvise(reinterpret_cast<void*>(start), end - start, MADV_DONTNEED);  // advice: where refused, the pages stay
  }
}

/// masks_pass whose blocks are copied, as they are read, into scratch
/// arrays of `folder`, their pages let go as written: the cube's, and the
/// weights' (of type *weights) where `copy_weights` and there are some.
template <class Read>
ScratchCopy copy_pass(const Shape& shape, DType cube, std::optional<DType> weights, bool copy_weights, std::size_t memory,
                      const std::string& folder, const Progress& progress, Read&& read) {
  ScratchCopy c;
  c.cube = scratch_array(cube, shape, folder, "a copy of the cube");
  if (copy_weights && weights) c.weights = scratch_array(*weights, shape, folder, "a copy of the weights");
  const auto put = [](Array& mapped, std::size_t r0, const Array& block) {
    put_rows(mapped, r0, block);
    release_rows(mapped, r0, r0 + block.dim(1));
  };
  c.masks = masks_pass(shape, row_bytes(shape, cube, weights), weights.has_value(), memory, progress, read,
                       [&c, &put](std::size_t r0, const Array& block, const Array& w) {
                         put(c.cube, r0, block);
                         if (!c.weights.empty()) put(c.weights, r0, w);
                       });
  return c;
}

}  // namespace

MaskStats stream_masks(CubeReader& cube, CubeReader* weights, std::size_t memory, const Progress& progress) {
  return masks_pass(cube.shape(), row_bytes(cube.shape(), cube.dtype(), dtype_of(weights)), weights != nullptr, memory, progress,
                    reader_reads(cube, weights), [](std::size_t, const Array&, const Array&) {});
}

ScratchCopy copy_to_scratch(CubeReader& cube, CubeReader* weights, std::size_t memory, const std::string& folder,
                            const Progress& progress) {
  auto read = reader_reads(cube, weights);
  return copy_pass(cube.shape(), cube.dtype(), dtype_of(weights), false, memory, folder, progress, read);
}

ScratchCopy copy_to_scratch(const Inputs& in, std::size_t memory, const std::string& folder, const Progress& progress) {
  const auto read = [&in](std::size_t r0, std::size_t r1, Array& w) { return in.rows(r0, r1, in.weights ? &w : nullptr); };
  return copy_pass(in.cube->shape(), in.cube->dtype(), dtype_of(in.weights.get()), true, memory, folder, progress, read);
}

SolveResult solve_in_blocks(const Inputs& in, const SolveOptions& options, const Progress& progress,
                            std::optional<std::size_t> in_memory, const std::string& scratch_folder) {
  const StreamPlan plan = plan_stream(in, ResultPaths{}, options);
  SolveResult whole;
  StreamedSolve s;
  std::size_t held = 0;
  const std::size_t limit = in_memory.value_or(available_memory() / 2);
  const std::string folder = scratch_folder.empty() ? cache_folder() : scratch_folder;
  solve_blocks(in, plan, progress, s, [&](std::size_t b, const Array&, const SolveResult& r) {
    const std::size_t r0 = plan.first_row(b);
    for (auto part : {&SolveResult::x, &SolveResult::n_valid, &SolveResult::rank, &SolveResult::rss, &SolveResult::status, &SolveResult::cond,
                      &SolveResult::std_error, &SolveResult::covariance, &SolveResult::iterations, &SolveResult::objective,
                      &SolveResult::temporal_coherence})
      put_result_rows(whole.*part, r.*part, r0, plan.height, held, limit, folder);
  });
  whole.paths = s.totals.paths;
  whole.engine_seconds = s.totals.engine_seconds;
  whole.threads = s.totals.threads;
  whole.device = s.totals.device;
  whole.device_pixels = s.totals.device_pixels;
  whole.warnings = s.totals.warnings;
  return whole;
}

SolveResult solve_block(const Inputs& in, const StreamPlan& plan, std::size_t block, Array& rows,
                        const Progress& progress) {
  ReadBlock b = read_block(in, plan, block);
  rows = std::move(b.rows);
  return solve_rows(in, plan, block, rows, b.weights, progress);
}

void describe_outputs(ResultPaths& out, const Inputs& in) {
  out.stack = in.stack;  // the time series in MintPy's layout carries the stack's dates and attributes
  out.x_names = in.x_names;  // GeoTIFF bands named by date or term, and by pair
  out.y_names = pair_names(in.pairs);
}

StreamedSolve solve_streamed(const Inputs& in, const ResultPaths& out, SolveOptions options, const Progress& progress) {
  const auto start = std::chrono::steady_clock::now();
  out.check(in.files);
  const StreamPlan plan = plan_stream(in, out, options);
  ResultWriter writer(out, in.cube->shape(), in.design.cols(), plan.x_type, in.cube->dtype(), in.cube->geo());
  StreamedSolve s;
  s.totals.warnings = writer.notices();
  solve_blocks(in, plan, progress, s,
               [&](std::size_t b, const Array& rows, const SolveResult& r) { writer.write(plan.first_row(b), r, in.x_design(), rows); });
  s.outputs = writer.commit();
  s.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return s;
}

}  // namespace cubesolve
