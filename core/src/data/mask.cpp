#include <cubesolve/error.hpp>
#include <cubesolve/data/mask.hpp>

#include "data/mask_table.hpp"
#include "engine/parallel.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace cubesolve {

std::vector<std::size_t> MaskStats::valid_histogram() const {
  std::vector<std::size_t> h(n + 1, 0);
  for (std::int32_t v : n_valid) ++h[static_cast<std::size_t>(v)];
  return h;
}

std::vector<LogBin> group_histogram(const std::vector<std::size_t>& group_size) {
  std::vector<LogBin> bins;
  for (std::size_t s : group_size) {
    std::size_t b = 0;
    while ((std::size_t{2} << b) <= s) ++b;
    if (bins.size() <= b) {
      for (std::size_t k = bins.size(); k <= b; ++k) bins.push_back({std::size_t{1} << k, std::size_t{2} << k, 0, 0});
    }
    ++bins[b].groups;
    bins[b].pixels += s;
  }
  return bins;
}

std::vector<LogBin> MaskStats::group_histogram() const { return cubesolve::group_histogram(group_size); }

std::size_t pixels_in_groups_of_at_least(const std::vector<std::size_t>& group_size, std::size_t k) {
  std::size_t total = 0;
  for (std::size_t s : group_size)
    if (s >= k) total += s;
  return total;
}

std::size_t MaskStats::pixels_in_groups_of_at_least(std::size_t k) const {
  return cubesolve::pixels_in_groups_of_at_least(group_size, k);
}

std::vector<std::size_t> MaskStats::first_pixels() const {
  std::vector<std::size_t> first(distinct_masks(), 0);
  for (std::size_t p = pixels(); p-- > 0;) first[static_cast<std::size_t>(group_of[p])] = p;
  return first;
}

std::vector<std::uint8_t> MaskStats::pixels_in(const LogBin& bin) const {
  std::vector<std::uint8_t> in(pixels(), 0);
  for (std::size_t p = 0; p < in.size(); ++p) {
    const std::size_t size = group_size[static_cast<std::size_t>(group_of[p])];
    in[p] = size >= bin.lo && size < bin.hi;
  }
  return in;
}

double MaskStats::missing_fraction() const {
  const double total = static_cast<double>(n) * static_cast<double>(pixels());
  return total > 0 ? static_cast<double>(missing) / total : 0.0;
}

namespace {

/// Packs the masks of `cube`'s pixels, pixel p0 on, and counts what is
/// missing, in pixel blocks on all threads.
void pack_masks(MaskStats& s, std::size_t p0, const Array& cube, const Array* weights, const Progress& progress) {
  const std::size_t N = s.n, P = cube.dim(1) * cube.dim(2);
  const int threads = detail::thread_count(0);
  std::vector<std::array<std::size_t, 3>> counts(static_cast<std::size_t>(threads), {0, 0, 0});
  auto pack = [&](auto values) {
    detail::parallel_for(
        P, 4096, threads,
        [&](int t, std::size_t begin, std::size_t end) {
          std::size_t nan = 0, inf = 0, zero = 0;  // locals: no aliasing with the outputs
          std::uint64_t* masks = s.masks.data() + p0 * s.words;
          std::int32_t* n_valid = s.n_valid.data() + p0;
          const std::size_t words = s.words;
          for (std::size_t i = 0; i < N; ++i) {
            const std::uint64_t bit = std::uint64_t{1} << (i % 64);
            std::uint64_t* word = masks + i / 64;
            const auto* row = values + i * P;
            for (std::size_t p = begin; p < end; ++p) {  // branch-free: masks are often random
              const auto v = row[p];
              const bool is_nan = std::isnan(v), valid = std::isfinite(v);
              nan += is_nan;
              inf += !(valid || is_nan);
              word[p * words] |= bit & (std::uint64_t{0} - valid);
            }
            if (!weights) continue;
            for (std::size_t p = begin; p < end; ++p) {
              const double w = weights->value(i * P + p);
              if ((word[p * words] & bit) && (!(w > 0) || !std::isfinite(w))) {
                word[p * words] &= ~bit;
                ++zero;
              }
            }
          }
          for (std::size_t p = begin; p < end; ++p) {  // (counted once, from the masks: no second write per value)
            int count = 0;
            for (std::size_t k = 0; k < words; ++k) count += __builtin_popcountll(masks[p * words + k]);
            n_valid[p] = count;
          }
          auto& c = counts[static_cast<std::size_t>(t)];
          c[0] += nan;
          c[1] += inf;
          c[2] += zero;
        },
        progress);
  };
  if (cube.dtype() == DType::Float32) pack(cube.data<float>());
  else if (cube.dtype() == DType::Float64) pack(cube.data<double>());
  else throw InputError(std::string("cube: expected float32 or float64 values, found ") + dtype_name(cube.dtype()));
  for (const auto& c : counts) {
    s.nan_count += c[0];
    s.inf_count += c[1];
    s.zero_weight += c[2];
  }
  s.missing = s.nan_count + s.inf_count + s.zero_weight;
}

}  // namespace

MaskStats masks_for(std::size_t n, std::size_t height, std::size_t width) {
  MaskStats s;
  s.n = n;
  s.height = height;
  s.width = width;
  const std::size_t P = height * width;
  s.words = std::max<std::size_t>(1, (n + 63) / 64);
  s.n_valid.assign(P, 0);
  s.masks.assign(P * s.words, 0);
  return s;
}

void pack_rows(MaskStats& s, std::size_t r0, const Array& rows, const Array* weights) {
  if (rows.ndim() != 3 || rows.dim(0) != s.n || rows.dim(2) != s.width || r0 + rows.dim(1) > s.height)
    throw InputError("cube rows: expected (" + std::to_string(s.n) + ", R, " + std::to_string(s.width) + ") within " +
                     std::to_string(s.height) + " rows, found " + shape_string(rows.shape()) + " at row " + std::to_string(r0));
  if (weights) check_like_cube(weights->shape(), rows.shape(), "weights");
  pack_masks(s, r0 * s.width, rows, weights, {});
}

void group_masks(MaskStats& s, const Progress& progress) {
  const std::size_t P = s.pixels();
  detail::MaskTable table(s.words);
  s.group_of.assign(P, 0);
  for (std::size_t p = 0; p < P; ++p) {
    s.group_of[p] = static_cast<std::int32_t>(table.add(s.mask(p)));
    if (progress && (p & 0xfffff) == 0xfffff && !progress(static_cast<double>(p) / static_cast<double>(P)))
      throw Cancelled();
  }
  s.group_size = std::move(table.sizes());
}

void compact_masks(MaskStats& s) {
  if (s.compact) return;
  std::vector<std::uint64_t> groups(s.distinct_masks() * s.words);
  const std::vector<std::size_t> first = s.first_pixels();
  for (std::size_t g = 0; g < first.size(); ++g) std::copy_n(s.mask(first[g]), s.words, groups.begin() + static_cast<std::ptrdiff_t>(g * s.words));
  s.masks = std::move(groups);
  s.compact = true;
}

MaskStats analyze_masks(const Array& cube, const Array* weights, const Progress& progress) {
  if (cube.ndim() != 3)
    throw InputError("cube: expected 3 dimensions (N, H, W), found shape " + shape_string(cube.shape()));
  if (weights) check_like_cube(weights->shape(), cube.shape(), "weights");
  MaskStats s = masks_for(cube.dim(0), cube.dim(1), cube.dim(2));
  auto share = [&](double lo, double hi) {
    return progress ? Progress([=](double f) { return progress(lo + (hi - lo) * f); }) : Progress();
  };
  pack_masks(s, 0, cube, weights, share(0, 0.8));
  group_masks(s, share(0.8, 1.0));
  return s;
}

}  // namespace cubesolve
