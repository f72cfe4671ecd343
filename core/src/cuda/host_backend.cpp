// The reference backend: the device pipeline's kernels as loops on the host,
// with a fixed amount of pretend device memory. It runs the same kernel
// bodies (device_kernels.hpp) and the same pipeline as CUDA does, so that
// both are tested where no GPU is.
#include "backend.hpp"

#include "engine/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

namespace cubesolve::detail::gpu {

namespace {

class HostBackend final : public Backend {
public:
  HostBackend(std::size_t memory, std::size_t largest) : memory_(memory), largest_(largest) {}
  ~HostBackend() override {
    drop_buffers();
    for (auto& [p, size] : sizes_) std::free(p);
  }

  std::string name() const override { return "host reference backend"; }
  std::size_t free_memory() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return memory_ - used_;
  }
  int lanes() const override { return 2; }

  void* alloc(std::size_t bytes) override {
    std::lock_guard<std::mutex> lock(mutex_);
    if (bytes > memory_ - used_ || bytes > largest_)
      throw OutOfMemory("out of device memory: " + std::to_string(bytes) + " bytes asked, " +
                        std::to_string(memory_ - used_) + " free");
    void* p = std::malloc(bytes > 0 ? bytes : 1);
    if (!p) throw OutOfMemory("out of host memory");
    used_ += bytes;
    sizes_[p] = bytes;
    return p;
  }
  void release(void* p) noexcept override {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return;
    used_ -= it->second;
    sizes_.erase(it);
    std::free(p);
  }
  void* alloc_host(std::size_t bytes) override {
    void* p = std::malloc(bytes > 0 ? bytes : 1);
    if (!p) throw OutOfMemory("out of host memory");
    return p;
  }
  void release_host(void* p) noexcept override { std::free(p); }

  void upload(int, void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void download(int, void* dst, const void* src, std::size_t bytes) override { std::memcpy(dst, src, bytes); }
  void upload_rows(int, void* dst, const void* src, std::size_t pitch, std::size_t width, std::size_t rows) override {
    for (std::size_t i = 0; i < rows; ++i)
      std::memcpy(static_cast<char*>(dst) + i * width, static_cast<const char*>(src) + i * pitch, width);
  }
  void download_rows(int, void* dst, std::size_t pitch, const void* src, std::size_t width,
                     std::size_t rows) override {
    for (std::size_t i = 0; i < rows; ++i)
      std::memcpy(static_cast<char*>(dst) + i * pitch, static_cast<const char*>(src) + i * width, width);
  }
  void sync(int) override {}

  void gemm(int, char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
            int ldb, double beta, double* c, int ldc) override {
    lapack::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  }
  void gemm(int, char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
            float beta, float* c, int ldc) override {
    sgemm_(&ta, &tb, &m, &n, &k, &alpha, a, &lda, b, &ldb, &beta, c, &ldc, 1, 1);
  }

  void factor(int, double* s, int n, int count, int* info) override { factor_all(s, n, count, info); }
  void factor(int, float* s, int n, int count, int* info) override { factor_all(s, n, count, info); }
  void solve(int, const double* s, double* z, int n, int count, const int* which, int which0) override {
    solve_all(s, z, n, count, which, which0);
  }
  void solve(int, const float* s, float* z, int n, int count, const int* which, int which0) override {
    solve_all(s, z, n, count, which, which0);
  }
  void sort(int, const std::uint64_t* keys, std::uint64_t* keys_out, const int* values, int* values_out,
            int count) override {
    std::vector<std::pair<std::uint64_t, int>> pairs(static_cast<std::size_t>(count));
    for (int j = 0; j < count; ++j) pairs[static_cast<std::size_t>(j)] = {keys[j], values[j]};
    std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (int j = 0; j < count; ++j) {
      keys_out[j] = pairs[static_cast<std::size_t>(j)].first;
      values_out[j] = pairs[static_cast<std::size_t>(j)].second;
    }
  }
  void group(int, const std::uint64_t* keys, int* start, int* before, int* gid, int* lead, int count) override {
    int sum = 0;
    for (int j = 0; j < count; ++j) {
      mark_start(keys, start, j);
      before[j] = sum;
      sum += start[j];
    }
    for (int j = 0; j < count; ++j) group_entry(start, before, gid, lead, j);
  }
  void check_pivots(int, const Batch<double>& b) override { check_all(b); }
  void check_pivots(int, const Batch<float>& b) override { check_all(b); }
  void prepare(int, const Piece<float>& p, int count) override { prepare_all(p, count); }
  void prepare(int, const Piece<double>& p, int count) override { prepare_all(p, count); }
  void build(int, const Batch<double>& b) override { build_all(b); }
  void build(int, const Batch<float>& b) override { build_all(b); }
  void rhs(int, const Batch<double>& b) override { rhs_all(b); }
  void rhs(int, const Batch<float>& b) override { rhs_all(b); }
  void scatter(int, const Batch<double>& b, bool bounded) override { scatter_all(b, bounded); }
  void scatter(int, const Batch<float>& b, bool bounded) override { scatter_all(b, bounded); }
  void rss(int, const float* raw, const double* w, const double* r, int n, int ld, double* out) override {
    rss_all(raw, w, r, n, ld, out);
  }
  void rss(int, const double* raw, const double* w, const double* r, int n, int ld, double* out) override {
    rss_all(raw, w, r, n, ld, out);
  }
  void select(int, const std::uint8_t* kind, int want, const double* from, double* x, int ld, std::size_t n) override {
    for (std::size_t e = 0; e < n; ++e) select_entry(kind, want, from, x, ld, static_cast<long long>(e));
  }
  void weigh(int, const double* w, const double* y, double* t, std::size_t n) override {
    for (std::size_t e = 0; e < n; ++e) weigh_entry(w, y, t, static_cast<long long>(e));
  }
  void zero(int, void* p, std::size_t bytes) override { std::memset(p, 0, bytes); }
  void narrow(int, const double* src, float* dst, std::size_t n) override {
    for (std::size_t e = 0; e < n; ++e) narrow_entry(src, dst, static_cast<long long>(e));
  }

private:
  template <class R> static void prepare_all(const Piece<R>& p, int count) {
    for (int k = 0; k < count; ++k) prepare_pixel(p, k);
  }
  template <class R> static void rss_all(const R* raw, const double* w, const double* r, int n, int ld, double* out) {
    for (int k = 0; k < ld; ++k) out[k] = rss_pixel(raw, w, r, n, ld, k);
  }
  template <class T> static void build_all(const Batch<T>& b) {
    const long long area = static_cast<long long>(b.groups) * b.qb * b.qb;  // one system per group
    for (long long e = 0; e < area; ++e) build_entry(b, e);
    rhs_all(b);
  }
  template <class T> static void rhs_all(const Batch<T>& b) {
    const long long len = static_cast<long long>(b.count) * b.qb;
    for (long long e = 0; e < len; ++e) rhs_entry(b, e);
  }
  /// Like LAPACK's potrf (lower, column-major): info = c + 1 at the first
  /// pivot c that is not positive.
  template <class T> static void factor_all(T* s, int n, int count, int* info) {
    for (int j = 0; j < count; ++j) {
      T* S = s + static_cast<long long>(j) * n * n;
      info[j] = 0;
      for (int c = 0; c < n; ++c) {
        T d = S[c * n + c];
        for (int p = 0; p < c; ++p) d -= S[p * n + c] * S[p * n + c];
        if (!(d > T(0))) {
          info[j] = c + 1;
          break;
        }
        d = std::sqrt(d);
        S[c * n + c] = d;
        for (int r = c + 1; r < n; ++r) {
          T v = S[c * n + r];
          for (int p = 0; p < c; ++p) v -= S[p * n + r] * S[p * n + c];
          S[c * n + r] = v / d;
        }
      }
    }
  }
  template <class T> static void solve_all(const T* s, T* zs, int n, int count, const int* which, int which0) {
    for (int j = 0; j < count; ++j) {
      const T* S = s + static_cast<long long>(which ? which[j] - which0 : j) * n * n;
      T* z = zs + static_cast<long long>(j) * n;
      for (int r = 0; r < n; ++r) {
        T v = z[r];
        for (int p = 0; p < r; ++p) v -= S[p * n + r] * z[p];
        z[r] = v / S[r * n + r];
      }
      for (int r = n - 1; r >= 0; --r) {
        T v = z[r];
        for (int p = r + 1; p < n; ++p) v -= S[r * n + p] * z[p];
        z[r] = v / S[r * n + r];
      }
    }
  }
  template <class T> static void check_all(const Batch<T>& b) {
    for (int j = 0; j < b.count; ++j) check_system(b, j);
  }
  template <class T> static void scatter_all(const Batch<T>& b, bool bounded) {
    for (int j = 0; j < b.count; ++j) scatter_system(b, j, bounded);
  }

  std::mutex mutex_;
  std::size_t memory_, largest_, used_ = 0;
  std::map<void*, std::size_t> sizes_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend(std::size_t memory, std::size_t largest) {
  return std::make_unique<HostBackend>(memory, largest);
}

}  // namespace cubesolve::detail::gpu
