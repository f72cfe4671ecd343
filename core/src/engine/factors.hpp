#pragma once
// What the engine derives from A alone, once per design matrix.

#include "engine/large.hpp"

#include <cstddef>
#include <memory>
#include <vector>

namespace cubesolve::detail {

namespace gpu {
class FactorCache;
}

struct DesignFactors {
  std::size_t n = 0, m = 0;  // A is (n, m)
  std::size_t rank = 0;      // numerical rank, rcond = eps * max(n, m)
  std::vector<double> sigma; // singular values, descending
  /// For A of rank r below both n and m: an orthonormal basis of its row
  /// space, (m, r) column-major (A's first r right singular vectors); else
  /// empty. (Of full row rank, r = n < m, the dual paths serve.)
  std::vector<double> row_basis;
  /// P = A^+ (m, n), column-major: column i (length m) starts at i*m.
  LargeDoubles pinv;
  /// H = A A^+ (n, n), symmetric. Empty when n is too large to keep.
  LargeDoubles hat;
  /// For full column rank (m < n): H's lower triangle packed by rows (row
  /// i's i + 1 entries from i(i + 1)/2), the rows kernel's source of the
  /// deletion systems: their scattered reads spread over half the memory.
  LargeDoubles hat_lower;
  /// For full column rank (rank == m <= n): U with U^T U = A^T A, (m, m)
  /// column-major upper triangle, so that |A x| = |U x|; else empty.
  LargeDoubles gram_root;
  /// C = A A^T (n, n), empty when n is too large to keep; for full row rank
  /// (rank == n) also Q = C^-1, else empty.
  LargeDoubles gram_rows, gram_rows_inv;
  /// For small m: the packed upper-triangle outer products of A's rows,
  /// (m(m+1)/2, n) column-major, so that one GEMM with a weight matrix gives
  /// every pixel's Gram matrix. Empty when too large.
  LargeDoubles outer;
  /// A's nonzeros by row (CSR: row i's are [row_start[i], row_start[i+1])),
  /// and the bandwidth of every A_V^T W A_V: the largest |p - q| of two
  /// nonzeros in one row. Designs of a few nonzeros a row and a narrow band
  /// (SBAS networks in either formulation) get their Gram matrices summed
  /// row by row and factored in band form instead of by the dense GEMM.
  std::vector<std::size_t> row_start, nz_col;
  std::vector<double> nz_val;
  std::size_t band = 0;
  bool banded_gram = false;
  /// A has at most one nonzero in eight: its rows' products (the rows
  /// kernel's A_I x0, the residuals A x) go over the nonzeros.
  bool sparse_rows = false;
  /// A network design (SBAS, either formulation): row i links the dates
  /// link_from[i] < link_to[i] of 0..m (date 0 the reference; -1 for a row
  /// of zeros). Phase rows: (-a, a) at unknowns from - 1 and to - 1, or a
  /// alone at to - 1 when from is 0. Velocity rows: the intervals t_j of the
  /// unknowns from..to - 1, one sign, each unknown's t_j the same in every
  /// row. The null space of any A_V is then spanned by one vector per
  /// component of its rows' dates that does not hold date 0, with entries
  /// null_to[j]·[j + 1 in C] - null_from[j]·[j in C] (phase: 1 and 0;
  /// velocity: 1/t_j both). Empty for other designs.
  std::vector<int> link_from, link_to;
  std::vector<double> null_to, null_from;
  bool network() const { return !link_to.empty(); }
  /// Their copies on a CUDA device, made when a device solve needs them.
  std::shared_ptr<gpu::FactorCache> device;

  bool full_column_rank() const { return rank == m && n >= m; }
  bool full_row_rank() const { return rank == n && n <= m && !gram_rows_inv.empty(); }
  std::size_t packed() const { return m * (m + 1) / 2; }
  /// Whether the rows kernel takes rss from |y~|^2 and |U x0|^2 (a dense
  /// A with U, see chunk_residuals_rows), so that gather_rows sums |y~|^2.
  bool rss_identity() const { return !sparse_rows && !gram_root.empty(); }
};

/// Computes the factors of a row-major (n, m) matrix. Throws NumericalError
/// when the SVD does not converge.
DesignFactors factor_design(const std::vector<double>& a, std::size_t n, std::size_t m);

}  // namespace cubesolve::detail
