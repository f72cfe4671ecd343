#pragma once
// The CPU paths, each over the pixels of a chunk that the planner sent to
// it (the lists in the Workspace), on the values a gather put there:
//
//   systems   deletion   (I - H_II) z = H_I y~     fills y's missing rows with the model's values
//             dual       Q_II t = Q_I y~           fills them with -t
//             gathered   C_VV z = y_V              x = A_V^T z
//   product   x = P·y^ for the pixels whose rows were filled (and full pixels): one GEMM
//   gram      A_V^T W A_V + λI from one GEMM of A's packed row products, Cholesky
//             (banded designs: summed over A's nonzeros, band Cholesky; a split
//             network tied down, then of minimum norm)
//   exact     LAPACK dgelsd on the weighted valid rows
//   group     one SVD of a mask group's A_V, one GEMM for its pixels
//
// A pixel whose pivots fall below the safety threshold, or whose fill is out
// of all proportion to its data, moves to ws.exact_list.

#include "engine/chunk.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace cubesolve::detail {

/// max w / min w over pixel k's valid rows (a weighted solve's pixel-major
/// copy): with a custom rcond, gelsd's rank is that of W^1/2 A_V, whose
/// condition number is up to its square root times A_V's (see Planner).
double weight_ratio(const Workspace& ws, std::size_t k, std::size_t N);
/// The small systems of the pixels in ws.buckets, from pixel-major values.
void solve_systems(const Job& job, Workspace& ws);
/// The same for the rows kernel: each deletion corrects ws.x0 from the
/// observation-major copy, x = x0 + P[:, I] z; other pixels as above.
void solve_systems_rows(const Job& job, Workspace& ws, std::size_t B);
/// x = P·y^ for the chunk's full, deletion and dual (Schur) pixels.
void solve_product(const Job& job, Workspace& ws, std::size_t B);
/// The pixels of ws.gram; those whose Gram matrix is too close to singular
/// move to the exact path.
void solve_gram(const Job& job, Workspace& ws);
/// The pixels of ws.exact_list (chunk pixel k is pixel begin + k); their
/// diagnostics are written here.
void solve_exact(Job& job, Workspace& ws, std::size_t begin);
/// rss of the chunk's fast-path pixels, from one product A·X.
void chunk_residuals(const Job& job, Workspace& ws, std::size_t B);
/// The same for the rows kernel, from its observation-major values and masks.
void chunk_residuals_rows(const Job& job, Workspace& ws, std::size_t B);
/// Whether the band Gram matrix A_V^T A_V of a banded design (see
/// DesignFactors::banded_gram) for the rows set in `mask` passes its
/// Cholesky, after the free components of a network design are tied down as
/// the Gram path ties them: where it does not, every pixel of that mask
/// leaves the Gram path for gelsd.
bool band_rank_holds(const DesignFactors& f, const std::uint64_t* mask);
/// Pixels [begin, end) of `pixels`, which share the mask `mask`: one SVD of
/// A_V, one GEMM. Writes them and counts them in `paths`.
void solve_group_block(Job& job, const std::uint64_t* mask, const std::vector<std::size_t>& pixels, std::size_t begin,
                       std::size_t end, PathCounts& paths);

}  // namespace cubesolve::detail
