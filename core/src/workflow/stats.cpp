#include <cubesolve/workflow/stats.hpp>

#include <cubesolve/error.hpp>

#include "data/mask_table.hpp"
#include "engine/planner.hpp"
#include "io/sizes.hpp"

#include <algorithm>

namespace cubesolve {

double CubeStats::missing_fraction() const {
  const double total = static_cast<double>(n) * static_cast<double>(pixels());
  return total > 0 ? static_cast<double>(missing) / total : 0.0;
}

namespace {
constexpr std::size_t kSample = 65536;     // pixels the estimate of the groups rests on
constexpr std::size_t kMinLimit = 65536;   // distinct masks counted exactly, at least
}  // namespace

CubeStats stream_stats(const std::string& name, const Shape& shape, const RowSource& rows, bool weighted, std::size_t memory,
                       const Progress& progress) {
  if (shape.size() != 3 || shape[0] == 0)
    throw InputError(name + ": expected 3 dimensions (N, H, W) with N >= 1, found shape " + shape_string(shape));
  CubeStats s;
  s.n = shape[0];
  s.height = shape[1];
  s.width = shape[2];
  const std::size_t N = s.n, W = s.width, P = s.pixels();
  s.words = std::max<std::size_t>(1, (N + 63) / 64);
  s.valid_histogram.assign(N + 1, 0);
  s.valid_per_observation.assign(N, 0);
  detail::MaskTable groups(s.words), sampled(s.words);
  // Half the budget for the groups, half for a block: its values (float64
  // at most, weights too) and what analyze_masks keeps for each pixel.
  s.limit = std::max(kMinLimit, memory / 2 / groups.bytes_per_group());
  const double row_bytes = static_cast<double>(W) * static_cast<double>(N * 8 * (weighted ? 2 : 1) + s.words * 8 + 24);
  detail::check_row_fits(name, W, row_bytes, memory, memory / 2);
  const auto per_row = std::max<std::size_t>(1, static_cast<std::size_t>(row_bytes));
  const std::size_t block_rows = std::clamp<std::size_t>(memory / 2 / per_row, 1, std::max<std::size_t>(s.height, 1));
  const std::size_t step = std::max<std::size_t>(1, P / kSample);  // every step-th pixel is in the sample
  for (std::size_t r0 = 0; r0 < s.height; r0 += block_rows) {
    const std::size_t r1 = std::min(s.height, r0 + block_rows);
    Array w;
    const Array block = rows(r0, r1, weighted ? &w : nullptr);
    const MaskStats m = analyze_masks(block, weighted ? &w : nullptr);
    s.nan_count += m.nan_count;
    s.inf_count += m.inf_count;
    s.zero_weight += m.zero_weight;
    for (std::int32_t v : m.n_valid) ++s.valid_histogram[static_cast<std::size_t>(v)];
    const std::vector<std::size_t> first = m.first_pixels();
    for (std::size_t g = 0; g < first.size(); ++g) {
      for (std::size_t i = 0; i < N; ++i) s.valid_per_observation[i] += m.valid(first[g], i) ? m.group_size[g] : 0;
      if (s.exact) groups.add(m.mask(first[g]), m.group_size[g]);
    }
    for (std::size_t q = (step - (r0 * W) % step) % step; q < m.pixels(); q += step) sampled.add(m.mask(q));
    if (s.exact && groups.groups() > s.limit) {  // past the limit: the sample decides
      s.exact = false;
      groups = detail::MaskTable(s.words);
    }
    if (progress && !progress(static_cast<double>(r1) / static_cast<double>(std::max<std::size_t>(s.height, 1))))
      throw Cancelled();
  }
  s.missing = s.nan_count + s.inf_count + s.zero_weight;
  detail::MaskTable& kept = s.exact ? groups : sampled;
  s.masks = std::move(kept.masks());
  s.sizes = std::move(kept.sizes());
  s.distinct = s.exact ? s.sizes.size() : s.limit + 1;
  if (!s.exact) {
    for (std::size_t v : s.sizes) s.sample += v;
    const double scale = static_cast<double>(P) / static_cast<double>(std::max<std::size_t>(s.sample, 1));
    std::size_t resolved = 0, singles = 0;
    for (std::size_t g = 0; g < s.sizes.size(); ++g) {
      if (s.sizes[g] < 2) {
        ++singles;
        continue;
      }
      std::copy_n(s.masks.begin() + static_cast<std::ptrdiff_t>(g * s.words), s.words,
                  s.masks.begin() + static_cast<std::ptrdiff_t>(resolved * s.words));
      s.sizes[resolved++] = static_cast<std::size_t>(static_cast<double>(s.sizes[g]) * scale + 0.5);
    }
    s.sizes.resize(resolved);
    s.masks.resize(resolved * s.words);
    s.unresolved = static_cast<std::size_t>(static_cast<double>(singles) * scale + 0.5);
  }
  return s;
}

PathCounts plan(const CubeStats& stats, const Design& design, bool weighted, const SolveOptions& options) {
  return detail::plan_groups(stats.valid_histogram, stats.masks, stats.words, stats.sizes, design, weighted, options);
}

}  // namespace cubesolve
