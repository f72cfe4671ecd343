#include <cubesolve/workflow/streamed.hpp>

#include <algorithm>

namespace cubesolve {

void SolveTotals::add(const SolveResult& r) {
  device = r.device;
  device_pixels += r.device_pixels;
  warnings.insert(warnings.end(), r.warnings.begin(), r.warnings.end());
  for (std::size_t i = 0; i < kPathCount; ++i) paths[i] += r.paths[i];
  for (std::size_t s = 0; s < status.size(); ++s) status[s] += r.count(static_cast<PixelStatus>(s));
  engine_seconds += r.engine_seconds;
  pixels += r.status.size();
  threads = r.threads;
}

StreamedSolve solve_streamed(const Inputs& in, const ResultPaths& out, SolveOptions options, const Progress& progress) {
  out.check(in.files);
  const Shape shape = in.cube->shape();
  const std::size_t N = shape[0], H = shape[1], W = shape[2], M = in.design.cols();
  const DType x_type = options.output.value_or(in.cube->dtype());
  ResultWriter writer(out, shape, M, x_type, in.cube->dtype(), in.cube->geo());

  // Three quarters of the memory budget for a block's data, a quarter for the engine's chunks.
  const std::size_t budget = options.memory;
  const std::size_t per_row = W * (N * dtype_size(in.cube->dtype()) +
                                   (in.weights ? N * dtype_size(in.weights->dtype()) : 0) + M * dtype_size(x_type) + 34) +
                              ResultWriter::extra_bytes_per_row(out, shape, x_type);
  StreamedSolve s;
  s.rows_per_block = std::clamp<std::size_t>(budget / 4 * 3 / std::max<std::size_t>(per_row, 1), 1, std::max<std::size_t>(H, 1));
  options.memory = budget / 4;
  for (std::size_t r0 = 0; r0 < H || (H == 0 && s.blocks == 0); r0 += s.rows_per_block) {
    const std::size_t r1 = std::min(H, r0 + s.rows_per_block);
    Array wblock;
    const Array block = in.rows(r0, r1, &wblock);
    const double done = H ? static_cast<double>(r0) / static_cast<double>(H) : 0;
    const double share = H ? static_cast<double>(r1 - r0) / static_cast<double>(H) : 1;
    Progress part;
    if (progress) part = [&](double f) { return progress(done + share * f); };
    const SolveResult r = solve(block, in.design, in.weights ? &wblock : nullptr, options, part);
    s.totals.add(r);
    ++s.blocks;
    writer.write(r0, r, in.design, block);
    if (H == 0) break;
  }
  s.outputs = writer.commit();
  return s;
}

}  // namespace cubesolve
