// The CUDA backend: two streams, each with its cuBLAS and cuSOLVER handles;
// cuBLAS GEMMs, cuSOLVER's batched Cholesky, and the kernels of
// device_kernels.hpp.
#include "backend.hpp"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace cubesolve::detail::gpu {

namespace {

constexpr int kLanes = 2;
constexpr int kThreads = 256;

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error
  const std::string msg = std::string("CUDA: ") + what + ": " + cudaGetErrorString(e);
  if (e == cudaErrorMemoryAllocation) throw OutOfMemory(msg);
  throw NumericalError(msg);
}

void check(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuBLAS: ") + what + " failed (status " + std::to_string(static_cast<int>(s)) + ")";
  if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw NumericalError(msg);
}

void check(cusolverStatus_t s, const char* what) {
  if (s == CUSOLVER_STATUS_SUCCESS) return;
  const std::string msg = std::string("cuSOLVER: ") + what + " failed (status " + std::to_string(static_cast<int>(s)) + ")";
  if (s == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw NumericalError(msg);
}

int blocks_for(long long count) {
  const long long b = (count + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 ? (b > 0 ? b : 1) : 65535);  // grid-stride loops cover the rest
}

#define CUBESOLVE_GRID_LOOP(e, count) \
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < (count); \
       e += static_cast<long long>(gridDim.x) * blockDim.x)

template <class T> __global__ void k_build(Batch<T> b, long long count) {
  CUBESOLVE_GRID_LOOP(e, count) build_entry(b, e);
}
template <class T> __global__ void k_rhs(Batch<T> b, long long count) {
  CUBESOLVE_GRID_LOOP(e, count) rhs_entry(b, e);
}
template <class T> __global__ void k_check(Batch<T> b) {
  CUBESOLVE_GRID_LOOP(j, b.count) check_system(b, static_cast<int>(j));
}
template <class T> __global__ void k_scatter(Batch<T> b, bool bounded) {
  CUBESOLVE_GRID_LOOP(j, b.count) scatter_system(b, static_cast<int>(j), bounded);
}
template <class R> __global__ void k_prepare(Piece<R> p, int count) {
  CUBESOLVE_GRID_LOOP(k, count) prepare_pixel(p, static_cast<int>(k));
}
__global__ void k_mark(const std::uint64_t* keys, int* start, int count) {
  CUBESOLVE_GRID_LOOP(j, count) mark_start(keys, start, static_cast<int>(j));
}
__global__ void k_group(const int* start, const int* before, int* gid, int* lead, int count) {
  CUBESOLVE_GRID_LOOP(j, count) group_entry(start, before, gid, lead, static_cast<int>(j));
}
template <class R> __global__ void k_rss(const R* raw, const double* w, const double* r, int n, int ld, double* out) {
  CUBESOLVE_GRID_LOOP(k, ld) out[k] = rss_pixel(raw, w, r, n, ld, static_cast<int>(k));
}
__global__ void k_select(const std::uint8_t* kind, int want, const double* from, double* x, int ld, long long count) {
  CUBESOLVE_GRID_LOOP(e, count) select_entry(kind, want, from, x, ld, e);
}
__global__ void k_narrow(const double* src, float* dst, long long count) {
  CUBESOLVE_GRID_LOOP(e, count) narrow_entry(src, dst, e);
}
__global__ void k_weigh(const double* w, const double* y, double* t, long long count) {
  CUBESOLVE_GRID_LOOP(e, count) weigh_entry(w, y, t, e);
}
/// The pointer arrays of the batched routines: base + (which[j] - which0)
/// * stride, or base + j * stride without `which`.
template <class T>
__global__ void k_pointers(T** out, T* base, long long stride, int count, const int* which, int which0) {
  CUBESOLVE_GRID_LOOP(j, count) out[j] = base + (which ? which[j] - which0 : j) * stride;
}

cublasOperation_t op(char t) { return t == 'T' || t == 't' ? CUBLAS_OP_T : CUBLAS_OP_N; }

/// The device this process uses: CUBESOLVE_CUDA_DEVICE, else its rank on the
/// node under an MPI launcher (one GPU per local rank), else the first.
int chosen_device(int count) {
  for (const char* name : {"CUBESOLVE_CUDA_DEVICE", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = std::getenv(name)) return count > 0 ? std::atoi(v) % count : 0;
  return 0;
}

class CudaBackend final : public Backend {
public:
  CudaBackend() {
    int count = 0;
    check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    device_ = chosen_device(count);
    check(cudaSetDevice(device_), "cudaSetDevice");
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, device_), "cudaGetDeviceProperties");
    name_ = prop.name;
    for (Lane& l : lanes_) {
      check(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking), "cudaStreamCreate");
      check(cublasCreate(&l.blas), "cublasCreate");
      check(cublasSetStream(l.blas, l.stream), "cublasSetStream");
      check(cusolverDnCreate(&l.solver), "cusolverDnCreate");
      check(cusolverDnSetStream(l.solver, l.stream), "cusolverDnSetStream");
      check(cudaMalloc(&l.status, sizeof(int)), "cudaMalloc");
    }
  }
  ~CudaBackend() override {
    drop_buffers();
    for (Lane& l : lanes_) {
      if (l.stream) cudaStreamSynchronize(l.stream);
      if (l.pointers) cudaFree(l.pointers);
      if (l.scratch) cudaFree(l.scratch);
      if (l.status) cudaFree(l.status);
      if (l.solver) cusolverDnDestroy(l.solver);
      if (l.blas) cublasDestroy(l.blas);
      if (l.stream) cudaStreamDestroy(l.stream);
    }
  }

  void bind() override { cudaSetDevice(device_); }
  std::string name() const override { return name_; }
  std::size_t free_memory() override {
    bind();
    std::size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return free;
  }
  int lanes() const override { return kLanes; }

  void* alloc(std::size_t bytes) override {
    bind();
    void* p = nullptr;
    check(cudaMalloc(&p, bytes > 0 ? bytes : 1), "cudaMalloc");
    return p;
  }
  void release(void* p) noexcept override { cudaFree(p); }
  void* alloc_host(std::size_t bytes) override {
    void* p = nullptr;
    check(cudaMallocHost(&p, bytes > 0 ? bytes : 1), "cudaMallocHost");
    return p;
  }
  void release_host(void* p) noexcept override { cudaFreeHost(p); }

  void upload_rows(int lane, void* dst, const void* src, std::size_t pitch, std::size_t width,
                   std::size_t rows) override {
    check(cudaMemcpy2DAsync(dst, width, src, pitch, width, rows, cudaMemcpyHostToDevice, lanes_[lane].stream),
          "upload");
  }
  void download_rows(int lane, void* dst, std::size_t pitch, const void* src, std::size_t width,
                     std::size_t rows) override {
    check(cudaMemcpy2DAsync(dst, pitch, src, width, width, rows, cudaMemcpyDeviceToHost, lanes_[lane].stream),
          "download");
  }
  void upload(int lane, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, lanes_[lane].stream), "upload");
  }
  void download(int lane, void* dst, const void* src, std::size_t bytes) override {
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, lanes_[lane].stream), "download");
  }
  void sync(int lane) override { check(cudaStreamSynchronize(lanes_[lane].stream), "a kernel or transfer"); }

  void gemm(int lane, char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
            int ldb, double beta, double* c, int ldc) override {
    check(cublasDgemm(lanes_[lane].blas, op(ta), op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc), "DGEMM");
  }
  void gemm(int lane, char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    check(cublasSgemm(lanes_[lane].blas, op(ta), op(tb), m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc), "SGEMM");
  }

  void factor(int lane, double* s, int n, int count, int* info) override { factor_batch(lane, s, n, count, info); }
  void factor(int lane, float* s, int n, int count, int* info) override { factor_batch(lane, s, n, count, info); }
  void solve(int lane, const double* s, double* z, int n, int count, const int* which, int which0) override {
    solve_batch(lane, s, z, n, count, which, which0);
  }
  void solve(int lane, const float* s, float* z, int n, int count, const int* which, int which0) override {
    solve_batch(lane, s, z, n, count, which, which0);
  }
  void check_pivots(int lane, const Batch<double>& b) override { check_batch(lane, b); }
  void check_pivots(int lane, const Batch<float>& b) override { check_batch(lane, b); }
  void build(int lane, const Batch<double>& b) override { build_batch(lane, b); }
  void build(int lane, const Batch<float>& b) override { build_batch(lane, b); }
  void rhs(int lane, const Batch<double>& b) override { rhs_batch(lane, b); }
  void rhs(int lane, const Batch<float>& b) override { rhs_batch(lane, b); }
  void scatter(int lane, const Batch<double>& b, bool bounded) override { scatter_batch(lane, b, bounded); }
  void scatter(int lane, const Batch<float>& b, bool bounded) override { scatter_batch(lane, b, bounded); }
  void prepare(int lane, const Piece<float>& p, int count) override { prepare_piece(lane, p, count); }
  void prepare(int lane, const Piece<double>& p, int count) override { prepare_piece(lane, p, count); }
  void sort(int lane, const std::uint64_t* keys, std::uint64_t* keys_out, const int* values, int* values_out,
            int count) override {
    Lane& l = lanes_[lane];
    std::size_t bytes = 0;
    check(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys, keys_out, values, values_out, count, 0, 64, l.stream),
          "sort (size)");
    check(cub::DeviceRadixSort::SortPairs(scratch(lane, bytes), bytes, keys, keys_out, values, values_out, count, 0, 64,
                                          l.stream),
          "sort");
  }
  void group(int lane, const std::uint64_t* keys, int* start, int* before, int* gid, int* lead, int count) override {
    Lane& l = lanes_[lane];
    k_mark<<<blocks_for(count), kThreads, 0, l.stream>>>(keys, start, count);
    check(cudaGetLastError(), "groups");
    std::size_t bytes = 0;
    check(cub::DeviceScan::ExclusiveSum(nullptr, bytes, start, before, count, l.stream), "scan (size)");
    check(cub::DeviceScan::ExclusiveSum(scratch(lane, bytes), bytes, start, before, count, l.stream), "scan");
    k_group<<<blocks_for(count), kThreads, 0, l.stream>>>(start, before, gid, lead, count);
    check(cudaGetLastError(), "groups");
  }
  void rss(int lane, const float* raw, const double* w, const double* r, int n, int ld, double* out) override {
    rss_piece(lane, raw, w, r, n, ld, out);
  }
  void rss(int lane, const double* raw, const double* w, const double* r, int n, int ld, double* out) override {
    rss_piece(lane, raw, w, r, n, ld, out);
  }
  void select(int lane, const std::uint8_t* kind, int want, const double* from, double* x, int ld,
              std::size_t n) override {
    const auto count = static_cast<long long>(n);
    k_select<<<blocks_for(count), kThreads, 0, lanes_[lane].stream>>>(kind, want, from, x, ld, count);
    check(cudaGetLastError(), "select");
  }
  void weigh(int lane, const double* w, const double* y, double* t, std::size_t n) override {
    const auto count = static_cast<long long>(n);
    k_weigh<<<blocks_for(count), kThreads, 0, lanes_[lane].stream>>>(w, y, t, count);
    check(cudaGetLastError(), "weigh");
  }
  void zero(int lane, void* p, std::size_t bytes) override {
    check(cudaMemsetAsync(p, 0, bytes, lanes_[lane].stream), "cudaMemsetAsync");
  }
  void narrow(int lane, const double* src, float* dst, std::size_t n) override {
    const auto count = static_cast<long long>(n);
    k_narrow<<<blocks_for(count), kThreads, 0, lanes_[lane].stream>>>(src, dst, count);
    check(cudaGetLastError(), "narrow");
  }

private:
  struct Lane {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    cusolverDnHandle_t solver = nullptr;
    void* pointers = nullptr;  // the batched routines' pointer arrays
    std::size_t pointer_bytes = 0;
    void* scratch = nullptr;   // CUB's temporary storage
    std::size_t scratch_bytes = 0;
    int* status = nullptr;     // potrsBatched's parameter check
  };

  /// A lane's buffer of at least `bytes`, grown (after the lane's work that
  /// may use it) when too small.
  static void* grow(Lane& l, void*& p, std::size_t& size, std::size_t bytes) {
    if (bytes > size) {
      check(cudaStreamSynchronize(l.stream), "a kernel or transfer");
      if (p) cudaFree(p);
      p = nullptr;
      size = 0;
      check(cudaMalloc(&p, bytes * 2), "cudaMalloc");
      size = bytes * 2;
    }
    return p;
  }
  void* scratch(int lane, std::size_t bytes) {
    Lane& l = lanes_[lane];
    return grow(l, l.scratch, l.scratch_bytes, bytes > 0 ? bytes : 1);
  }

  /// The pointer arrays of `count` systems (n x n each, from s; system j
  /// uses which[j] - which0 when `which` is given) and their right-hand
  /// sides (n each, from z; none when z is null).
  template <class T>
  T** pointer_arrays(int lane, const T* s, const T* z, int n, int count, const int* which, int which0) {
    Lane& l = lanes_[lane];
    T** p = static_cast<T**>(grow(l, l.pointers, l.pointer_bytes, 2 * static_cast<std::size_t>(count) * sizeof(T*)));
    const long long size = n;
    k_pointers<<<blocks_for(count), kThreads, 0, l.stream>>>(p, const_cast<T*>(s), size * size, count, which, which0);
    if (z)
      k_pointers<<<blocks_for(count), kThreads, 0, l.stream>>>(p + count, const_cast<T*>(z), size, count,
                                                                static_cast<const int*>(nullptr), 0);
    check(cudaGetLastError(), "pointer arrays");
    return p;
  }

  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, double** a, int* info, int count) {
    return cusolverDnDpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
  }
  static cusolverStatus_t potrf(cusolverDnHandle_t h, int n, float** a, int* info, int count) {
    return cusolverDnSpotrfBatched(h, CUBLAS_FILL_MODE_LOWER, n, a, n, info, count);
  }
  static cusolverStatus_t potrs(cusolverDnHandle_t h, int n, double** a, double** z, int* info, int count) {
    return cusolverDnDpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, z, n, info, count);
  }
  static cusolverStatus_t potrs(cusolverDnHandle_t h, int n, float** a, float** z, int* info, int count) {
    return cusolverDnSpotrsBatched(h, CUBLAS_FILL_MODE_LOWER, n, 1, a, n, z, n, info, count);
  }

  template <class T> void factor_batch(int lane, T* s, int n, int count, int* info) {
    if (count == 0) return;
    T** p = pointer_arrays<T>(lane, s, nullptr, n, count, nullptr, 0);
    check(potrf(lanes_[lane].solver, n, p, info, count), "batched Cholesky");
  }
  template <class T> void solve_batch(int lane, const T* s, T* z, int n, int count, const int* which, int which0) {
    if (count == 0) return;
    T** p = pointer_arrays<T>(lane, s, z, n, count, which, which0);
    check(potrs(lanes_[lane].solver, n, p, p + count, lanes_[lane].status, count), "batched triangular solves");
  }
  template <class T> void check_batch(int lane, const Batch<T>& b) {
    if (b.count == 0) return;
    k_check<<<blocks_for(b.count), kThreads, 0, lanes_[lane].stream>>>(b);
    check(cudaGetLastError(), "pivot check");
  }
  template <class R> void prepare_piece(int lane, const Piece<R>& p, int count) {
    k_prepare<<<blocks_for(count), kThreads, 0, lanes_[lane].stream>>>(p, count);
    check(cudaGetLastError(), "masks");
  }
  template <class R> void rss_piece(int lane, const R* raw, const double* w, const double* r, int n, int ld, double* out) {
    k_rss<<<blocks_for(ld), kThreads, 0, lanes_[lane].stream>>>(raw, w, r, n, ld, out);
    check(cudaGetLastError(), "residuals");
  }
  template <class T> void build_batch(int lane, const Batch<T>& b) {
    const long long area = static_cast<long long>(b.groups) * b.qb * b.qb;  // one system per group
    k_build<<<blocks_for(area), kThreads, 0, lanes_[lane].stream>>>(b, area);
    check(cudaGetLastError(), "systems");
    rhs_batch(lane, b);
  }
  template <class T> void rhs_batch(int lane, const Batch<T>& b) {
    const long long len = static_cast<long long>(b.count) * b.qb;
    k_rhs<<<blocks_for(len), kThreads, 0, lanes_[lane].stream>>>(b, len);
    check(cudaGetLastError(), "right-hand sides");
  }
  template <class T> void scatter_batch(int lane, const Batch<T>& b, bool bounded) {
    k_scatter<<<blocks_for(b.count), kThreads, 0, lanes_[lane].stream>>>(b, bounded);
    check(cudaGetLastError(), "fill");
  }

  std::string name_;
  int device_ = 0;
  Lane lanes_[kLanes];
};

}  // namespace

DeviceInfo cuda_query() {
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
  if (cudaGetDeviceProperties(&prop, chosen_device(count)) != cudaSuccess) {
    info.reason = "the device's properties cannot be read";
    return info;
  }
  info.available = true;
  info.name = prop.name;
  info.memory = prop.totalGlobalMem;
  return info;
}

std::unique_ptr<Backend> make_cuda_backend() { return std::make_unique<CudaBackend>(); }

}  // namespace cubesolve::detail::gpu
