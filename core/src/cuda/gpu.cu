// CUDA backend: the fill-in form of the deletion and dual paths, one thread
// per pixel for the small systems, cuBLAS for the chunk's GEMM.
#include "gpu.hpp"

#include "../factors.hpp"

#include <cubesolve/error.hpp>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <string>
#include <vector>

namespace cubesolve::detail::gpu {

namespace {

constexpr int kMaxQ = 64;  // largest system a thread factors

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw NumericalError(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw NumericalError(std::string("cuBLAS: ") + what + " failed (status " + std::to_string(static_cast<int>(s)) + ")");
}

template <class T> struct Buffer {
  T* p = nullptr;
  std::size_t n = 0;
  void resize(std::size_t count) {
    if (count <= n) return;
    if (p) cudaFree(p);
    p = nullptr;
    n = 0;
    check(cudaMalloc(&p, count * sizeof(T)), "cudaMalloc");
    n = count;
  }
  ~Buffer() {
    if (p) cudaFree(p);
  }
};

// One thread per pixel: fill the missing rows of y with the model's values.
__global__ void fill_missing(double* y, const std::uint8_t* valid, const std::uint8_t* kind, int B, int N,
                             const double* hat, const double* qinv, double tau, double max_growth, int* rows,
                             double* scratch, std::uint8_t* ok) {
  const int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= B) return;
  const std::uint8_t kd = kind[k];
  ok[k] = 0;
  if (kd != kFull && kd != kDeletion && kd != kDual) return;
  if (kd == kFull) {
    ok[k] = 1;
    return;
  }
  double* yk = y + static_cast<std::size_t>(k) * N;
  const std::uint8_t* vk = valid + static_cast<std::size_t>(k) * N;
  int* I = rows + static_cast<std::size_t>(k) * N;
  int q = 0;
  for (int i = 0; i < N; ++i)
    if (!vk[i]) I[q++] = i;
  if (q == 0 || q > kMaxQ) return;
  const double* K = kd == kDeletion ? hat : qinv;
  double* S = scratch + static_cast<std::size_t>(k) * (kMaxQ * kMaxQ + kMaxQ);
  double* z = S + kMaxQ * kMaxQ;
  double ymax = 0;
  for (int i = 0; i < N; ++i) ymax = fmax(ymax, fabs(yk[i]));
  for (int a = 0; a < q; ++a) {
    const double* row = K + static_cast<std::size_t>(I[a]) * N;
    double s = 0;
    for (int i = 0; i < N; ++i) s += row[i] * yk[i];
    z[a] = s;
    for (int c = 0; c <= a; ++c) S[a * q + c] = (kd == kDeletion ? (a == c ? 1.0 : 0.0) - row[I[c]] : row[I[c]]);
  }
  // Cholesky with the CPU's pivot rule.
  double dmax = 0;
  for (int a = 0; a < q; ++a) dmax = fmax(dmax, S[a * q + a]);
  for (int j = 0; j < q; ++j) {
    double d = S[j * q + j];
    for (int c = 0; c < j; ++c) d -= S[j * q + c] * S[j * q + c];
    if (!(d > tau * dmax)) return;
    d = sqrt(d);
    S[j * q + j] = d;
    for (int i = j + 1; i < q; ++i) {
      double v = S[i * q + j];
      for (int c = 0; c < j; ++c) v -= S[i * q + c] * S[j * q + c];
      S[i * q + j] = v / d;
    }
  }
  for (int i = 0; i < q; ++i) {
    double v = z[i];
    for (int c = 0; c < i; ++c) v -= S[i * q + c] * z[c];
    z[i] = v / S[i * q + i];
  }
  for (int i = q - 1; i >= 0; --i) {
    double v = z[i];
    for (int c = i + 1; c < q; ++c) v -= S[c * q + i] * z[c];
    z[i] = v / S[i * q + i];
  }
  double zmax = 0;
  for (int a = 0; a < q; ++a) zmax = fmax(zmax, fabs(z[a]));
  if (!(zmax <= max_growth * fmax(ymax, 1e-300))) return;
  const double sign = kd == kDeletion ? 1.0 : -1.0;
  for (int a = 0; a < q; ++a) yk[I[a]] = sign * z[a];
  ok[k] = 1;
}

}  // namespace

DeviceInfo query() {
  DeviceInfo info;
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    info.reason = cudaGetErrorString(e);
    cudaGetLastError();  // clear it
    return info;
  }
  if (count == 0) {
    info.reason = "no CUDA device found";
    return info;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    info.reason = "the device's properties cannot be read";
    return info;
  }
  info.available = true;
  info.name = prop.name;
  info.memory = prop.totalGlobalMem;
  return info;
}

struct Solver::Impl {
  std::size_t n = 0, m = 0;
  double tau = 0, growth = 0;
  bool has_q = false;
  cublasHandle_t blas = nullptr;
  Buffer<double> pinv, hat, qinv, y, x, scratch;
  Buffer<std::uint8_t> valid, kind, ok;
  Buffer<int> rows;
};

Solver::Solver(const DesignFactors& f, double tau, double max_growth) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.n = f.n;
  s.m = f.m;
  s.tau = tau;
  s.growth = max_growth;
  check(cublasCreate(&s.blas), "cublasCreate");
  s.pinv.resize(f.pinv.size());
  check(cudaMemcpy(s.pinv.p, f.pinv.data(), f.pinv.size() * sizeof(double), cudaMemcpyHostToDevice), "upload P");
  if (!f.hat.empty()) {
    s.hat.resize(f.hat.size());
    check(cudaMemcpy(s.hat.p, f.hat.data(), f.hat.size() * sizeof(double), cudaMemcpyHostToDevice), "upload H");
  }
  s.has_q = !f.gram_rows_inv.empty();
  if (s.has_q) {
    s.qinv.resize(f.gram_rows_inv.size());
    check(cudaMemcpy(s.qinv.p, f.gram_rows_inv.data(), f.gram_rows_inv.size() * sizeof(double), cudaMemcpyHostToDevice),
          "upload Q");
  }
}

Solver::~Solver() {
  if (impl_ && impl_->blas) cublasDestroy(impl_->blas);
}

void Solver::solve(const double* y, const std::uint8_t* valid, const std::uint8_t* kind, std::size_t B, double* x,
                   std::uint8_t* ok) {
  Impl& s = *impl_;
  const std::size_t N = s.n, M = s.m;
  s.y.resize(B * N);
  s.x.resize(B * M);
  s.valid.resize(B * N);
  s.kind.resize(B);
  s.ok.resize(B);
  s.rows.resize(B * N);
  s.scratch.resize(B * (kMaxQ * kMaxQ + kMaxQ));
  check(cudaMemcpy(s.y.p, y, B * N * sizeof(double), cudaMemcpyHostToDevice), "upload y");
  check(cudaMemcpy(s.valid.p, valid, B * N, cudaMemcpyHostToDevice), "upload masks");
  check(cudaMemcpy(s.kind.p, kind, B, cudaMemcpyHostToDevice), "upload kinds");
  const int threads = 128, blocks = static_cast<int>((B + threads - 1) / threads);
  fill_missing<<<blocks, threads>>>(s.y.p, s.valid.p, s.kind.p, static_cast<int>(B), static_cast<int>(N), s.hat.p,
                                    s.has_q ? s.qinv.p : s.hat.p, s.tau, s.growth, s.rows.p, s.scratch.p, s.ok.p);
  check(cudaGetLastError(), "fill_missing launch");
  const double one = 1.0, zero = 0.0;
  check(cublasDgemm(s.blas, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(M), static_cast<int>(B), static_cast<int>(N), &one,
                    s.pinv.p, static_cast<int>(M), s.y.p, static_cast<int>(N), &zero, s.x.p, static_cast<int>(M)),
        "GEMM P*Y");
  check(cudaMemcpy(x, s.x.p, B * M * sizeof(double), cudaMemcpyDeviceToHost), "download x");
  check(cudaMemcpy(ok, s.ok.p, B, cudaMemcpyDeviceToHost), "download flags");
}

}  // namespace cubesolve::detail::gpu
