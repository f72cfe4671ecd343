#pragma once
// The few BLAS/LAPACK routines the core calls, through their Fortran symbols
// so that any BLAS/LAPACK (OpenBLAS, reference, MKL) links without headers.
// Hidden string-length arguments are passed explicitly.

#include <cstddef>
#include <vector>

extern "C" {
void dgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const double* alpha,
            const double* a, const int* lda, const double* b, const int* ldb, const double* beta, double* c,
            const int* ldc, std::size_t, std::size_t);
void dgelsd_(const int* m, const int* n, const int* nrhs, double* a, const int* lda, double* b, const int* ldb,
             double* s, const double* rcond, int* rank, double* work, const int* lwork, int* iwork, int* info);
// OpenBLAS's thread control, when the BLAS is OpenBLAS (weak: null otherwise).
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads() __attribute__((weak));
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b, const int* ldb, int* info);
void dsyrk_(const char* uplo, const char* trans, const int* n, const int* k, const double* alpha, const double* a,
            const int* lda, const double* beta, double* c, const int* ldc, std::size_t, std::size_t);
void dgemv_(const char* trans, const int* m, const int* n, const double* alpha, const double* a, const int* lda,
            const double* x, const int* incx, const double* beta, double* y, const int* incy, std::size_t);
void dtrmm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t, std::size_t,
            std::size_t, std::size_t);
void dtrsm_(const char* side, const char* uplo, const char* transa, const char* diag, const int* m, const int* n,
            const double* alpha, const double* a, const int* lda, double* b, const int* ldb, std::size_t, std::size_t,
            std::size_t, std::size_t);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void dgetrs_(const char* trans, const int* n, const int* nrhs, const double* a, const int* lda, const int* ipiv, double* b,
             const int* ldb, int* info, std::size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, std::size_t);
void dpotrs_(const char* uplo, const int* n, const int* nrhs, const double* a, const int* lda, double* b, const int* ldb,
             int* info, std::size_t);
void sgemm_(const char* transa, const char* transb, const int* m, const int* n, const int* k, const float* alpha,
            const float* a, const int* lda, const float* b, const int* ldb, const float* beta, float* c, const int* ldc,
            std::size_t, std::size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s, double* u,
             const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork, int* iwork, int* info,
             std::size_t);
}

namespace cubesolve::lapack {

/// C = alpha * op(A) * op(B) + beta * C, all column-major.
inline void gemm(char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                 int ldb, double beta, double* c, int ldc) {
  dgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
}

/// The upper triangle of C = alpha * A A^T + beta * C, A column-major (n, k).
inline void syrk_upper(int n, int k, double alpha, const double* a, int lda, double beta, double* c, int ldc) {
  dsyrk_("U", "N", &n, &k, &alpha, a, &lda, &beta, c, &ldc, 1, 1);
}

/// y = A x, or A^T x (trans 'T'), A column-major (m, n).
inline void gemv(int m, int n, const double* a, int lda, const double* x, double* y, char trans = 'N') {
  const double one = 1.0, zero = 0.0;
  const int inc = 1;
  dgemv_(&trans, &m, &n, &one, a, &lda, x, &inc, &zero, y, &inc, 1);
}

/// B = U B in place, U upper triangular (m, m), B (m, n), column-major.
inline void trmm_upper(int m, int n, const double* u, int ldu, double* b, int ldb) {
  const double one = 1.0;
  dtrmm_("L", "U", "N", "N", &m, &n, &one, u, &ldu, b, &ldb, 1, 1, 1, 1);
}

/// B = U^-T B in place, U upper triangular (m, m), B (m, n), column-major.
inline void trsm_upper_transposed(int m, int n, const double* u, int ldu, double* b, int ldb) {
  const double one = 1.0;
  dtrsm_("L", "U", "T", "N", &m, &n, &one, u, &ldu, b, &ldb, 1, 1, 1, 1);
}

/// Cholesky U^T U of the upper triangle of the column-major (n, n) `a`, in
/// place. Returns LAPACK's info (0: done).
inline int cholesky_upper(int n, double* a, int lda) {
  int info = 0;
  dpotrf_("U", &n, a, &lda, &info, 1);
  return info;
}
/// Solves U^T U x = b in place, U from cholesky_upper.
inline void cholesky_upper_solve(int n, const double* a, int lda, double* b) {
  int info = 0;
  const int one = 1;
  dpotrs_("U", &n, &one, a, &lda, b, &n, &info, 1);
}

/// Thin SVD of the column-major (m, n) matrix `a` (overwritten), k = min(m, n):
/// s (k), u (m, k), vt (k, n). Returns LAPACK's info (0 = converged).
inline int svd(int m, int n, double* a, double* s, double* u, double* vt) {
  const int k = m < n ? m : n, lda = m > 1 ? m : 1, ldu = lda, ldvt = k > 1 ? k : 1;
  int lwork = -1, info = 0;
  std::vector<int> iwork(8 * static_cast<std::size_t>(k > 0 ? k : 1));
  double query = 0;
  dgesdd_("S", &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, &query, &lwork, iwork.data(), &info, 1);
  std::vector<double> work(static_cast<std::size_t>(query) + 1);
  lwork = static_cast<int>(work.size());
  dgesdd_("S", &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work.data(), &lwork, iwork.data(), &info, 1);
  return info;
}

/// Minimum-norm least squares by LAPACK's dgelsd: the column-major (m, n)
/// `a` (overwritten) against the nrhs columns of b (ldb >= max(m, n); their
/// first n entries become the solutions); s (min(m, n)) the singular values,
/// rank those above rcond·s[0]. Returns LAPACK's info (0 = converged).
inline int gelsd(int m, int n, int nrhs, double* a, double* b, int ldb, double* s, double rcond, int& rank) {
  const int lda = m > 1 ? m : 1;
  int lwork = -1, info = 0, iwq = 0;
  double query = 0;
  dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, &rank, &query, &lwork, &iwq, &info);
  std::vector<double> work(static_cast<std::size_t>(query) + 1);
  std::vector<int> iwork(static_cast<std::size_t>(iwq > 1 ? iwq : 1));
  lwork = static_cast<int>(work.size());
  dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, &rank, work.data(), &lwork, iwork.data(), &info);
  return info;
}

/// Sets the BLAS's thread count (when the BLAS is OpenBLAS) while it lives,
/// and restores it after.
class BlasThreads {
public:
  explicit BlasThreads(int threads) {
    if (openblas_set_num_threads && openblas_get_num_threads) {
      saved_ = openblas_get_num_threads();
      openblas_set_num_threads(threads);
    }
  }
  ~BlasThreads() {
    if (saved_ > 0) openblas_set_num_threads(saved_);
  }
  BlasThreads(const BlasThreads&) = delete;
  BlasThreads& operator=(const BlasThreads&) = delete;

private:
  int saved_ = 0;
};

/// Keeps BLAS single-threaded while it lives: the engine runs many small
/// calls on its own threads, and BLAS threads inside them only contend.
class SingleThreadedBlas : public BlasThreads {
public:
  SingleThreadedBlas() : BlasThreads(1) {}
};

}  // namespace cubesolve::lapack
