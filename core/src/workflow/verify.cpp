#include <cubesolve/workflow/verify.hpp>

#include <cubesolve/error.hpp>

#include <algorithm>
#include <limits>

namespace cubesolve {

Verification verify_result(const Inputs& in, CubeReader& x, const std::string& x_name, std::size_t sample,
                           const SolveOptions& options, const Progress& progress) {
  const Shape shape = in.cube->shape();
  const std::size_t N = shape[0], H = shape[1], W = shape[2], P = H * W, M = in.design.cols();
  if (x.shape() != Shape{M, H, W})
    throw InputError(x_name + ": expected the solution's shape " + shape_string({M, H, W}) + ", found " +
                     shape_string(x.shape()));
  const std::vector<std::size_t> pick = spread_pixels(P, sample == 0 ? P : sample);
  const std::size_t K = pick.size();

  // The sampled pixels, gathered a block of rows at a time into a (N, 1, K)
  // cube, with their x.
  Array sub(DType::Float64, {N, 1, K}), xs(DType::Float64, {M, 1, K});
  Array sub_w;
  if (in.weights) sub_w = Array(DType::Float64, {N, 1, K});
  const std::size_t rows = std::clamp<std::size_t>((std::size_t{64} << 20) / std::max<std::size_t>(1, W * (N + M) * 8), 1,
                                                   std::max<std::size_t>(H, 1));
  std::size_t next = 0;
  for (std::size_t r0 = 0; r0 < H && next < K; r0 += rows) {
    const std::size_t r1 = std::min(H, r0 + rows), B = (r1 - r0) * W;
    Array wb;
    const Array block = in.rows(r0, r1, &wb), xb = x.rows(r0, r1);
    for (; next < K && pick[next] < r1 * W; ++next) {
      const std::size_t p = pick[next] - r0 * W;
      for (std::size_t i = 0; i < N; ++i) {
        sub.data<double>()[i * K + next] = block.value(i * B + p);
        if (in.weights) sub_w.data<double>()[i * K + next] = wb.value(i * B + p);
      }
      for (std::size_t j = 0; j < M; ++j) xs.data<double>()[j * K + next] = xb.value(j * B + p);
    }
  }
  // A stack's reference pixel is 0 by definition (see Inputs::mark_reference),
  // where gelsd finds no data: it agrees when it is that.
  const std::size_t ref = in.stack && in.stack->pixel_reference()
                              ? static_cast<std::size_t>(in.stack->ref_y) * W + static_cast<std::size_t>(in.stack->ref_x)
                              : P;
  std::vector<std::size_t> all;
  for (std::size_t k = 0; k < K; ++k) {
    bool zero = pick[k] == ref;
    for (std::size_t j = 0; j < M && zero; ++j) zero = xs.value(j * K + k) == 0;
    if (!zero) all.push_back(k);
  }
  Verification v;
  // Well-conditioned pixels must agree to 1e-9 (float64 X) or 1e-6 (float32 X).
  v.tolerance = x.dtype() == DType::Float32 ? 1e-6 : 1e-9;
  v.max_cond = 1e8;
  in.to_velocity(xs);  // the formulation solved
  const SampleCheck check =
      check_pixels(sub, in.design, in.weights ? &sub_w : nullptr, xs, all, options, progress);
  v.summary = summarize(check.pixels, v.tolerance, v.max_cond);
  return v;
}

}  // namespace cubesolve
