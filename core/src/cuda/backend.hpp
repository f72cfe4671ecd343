#pragma once
// What the device pipeline (pipeline.cpp) needs from a device: memory,
// transfers, two BLAS/LAPACK-like primitives and the kernels of
// device_kernels.hpp. Implemented by CUDA (gpu.cu) and by a reference
// backend on the host (host_backend.cpp) that runs the same kernels and
// pipeline without a GPU. Work is queued on a lane (a CUDA stream); calls on
// one lane run in order, lanes run concurrently.

#include "device_kernels.hpp"
#include "gpu.hpp"

#include <cubesolve/error.hpp>

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace cubesolve::detail::gpu {

/// Device memory ran out (an allocation, or a library's workspace).
class OutOfMemory : public NumericalError {
public:
  using NumericalError::NumericalError;
};

class Backend;

/// A lane's working memory, kept between solves (allocating page-locked and
/// device memory costs far more than reusing it): a device arena for a
/// piece, one for its small systems, and page-locked host memory.
class LaneBuffers {
public:
  explicit LaneBuffers(Backend& dev) : dev_(dev) {}
  ~LaneBuffers() { drop(); }
  LaneBuffers(const LaneBuffers&) = delete;
  LaneBuffers& operator=(const LaneBuffers&) = delete;

  char* device(std::size_t bytes) { return grow(arena_, arena_bytes_, bytes, false); }
  char* systems(std::size_t bytes) { return grow(systems_, systems_bytes_, bytes, false); }
  char* host(std::size_t bytes) { return grow(staging_, staging_bytes_, bytes, true); }
  std::size_t device_bytes() const { return arena_bytes_ + systems_bytes_; }
  /// Gives all of it back.
  void drop();

private:
  void free(void*& p, bool on_host);
  char* grow(void*& p, std::size_t& size, std::size_t bytes, bool on_host);

  Backend& dev_;
  void *arena_ = nullptr, *systems_ = nullptr, *staging_ = nullptr;
  std::size_t arena_bytes_ = 0, systems_bytes_ = 0, staging_bytes_ = 0;
};

class Backend {
public:
  virtual ~Backend() = default;

  /// A lane for the caller alone (waits until one is free), and back.
  int acquire_lane();
  void release_lane(int lane);
  /// The lane's working memory (only its holder may use it).
  LaneBuffers& buffers(int lane);
  /// Device memory the lanes keep between solves.
  std::size_t cached_bytes();

  /// Makes the backend's device the calling thread's (a CUDA device is
  /// chosen per thread); acquire_lane() calls it.
  virtual void bind() {}

  virtual std::string name() const = 0;
  /// Free device memory in bytes.
  virtual std::size_t free_memory() = 0;
  /// Lanes the backend offers (streams with their library handles).
  virtual int lanes() const = 0;

  /// Device memory; throws OutOfMemory when there is not enough.
  virtual void* alloc(std::size_t bytes) = 0;
  virtual void release(void* p) noexcept = 0;
  /// Page-locked host memory for transfers.
  virtual void* alloc_host(std::size_t bytes) = 0;
  virtual void release_host(void* p) noexcept = 0;

  virtual void upload(int lane, void* dst, const void* src, std::size_t bytes) = 0;
  virtual void download(int lane, void* dst, const void* src, std::size_t bytes) = 0;
  /// `rows` rows of `width` bytes, `pitch` bytes apart on the host,
  /// contiguous on the device. The host side is the caller's own memory
  /// (the cube, the output), which is not page-locked: pinning it would
  /// cost more than it saves for one pass.
  virtual void upload_rows(int lane, void* dst, const void* src, std::size_t pitch, std::size_t width,
                           std::size_t rows) = 0;
  virtual void download_rows(int lane, void* dst, std::size_t pitch, const void* src, std::size_t width,
                             std::size_t rows) = 0;
  /// Waits for the lane's work; throws NumericalError when some of it failed.
  virtual void sync(int lane) = 0;

  /// C = alpha op(A) op(B) + beta C, column-major, op 'N' or 'T'.
  virtual void gemm(int lane, char ta, char tb, int m, int n, int k, double alpha, const double* a, int lda,
                    const double* b, int ldb, double beta, double* c, int ldc) = 0;
  virtual void gemm(int lane, char ta, char tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b,
                    int ldb, float beta, float* c, int ldc) = 0;

  /// Cholesky (lower) of `count` n x n column-major matrices stored one
  /// after another from s, in place; info[j] = 0 when system j succeeded.
  virtual void factor(int lane, double* s, int n, int count, int* info) = 0;
  virtual void factor(int lane, float* s, int n, int count, int* info) = 0;
  /// Solves `count` systems, one right-hand side each (n values one after
  /// another from z), in place; system j uses the factor which[j] - which0
  /// (j itself when which is null).
  virtual void solve(int lane, const double* s, double* z, int n, int count, const int* which, int which0) = 0;
  virtual void solve(int lane, const float* s, float* z, int n, int count, const int* which, int which0) = 0;

  /// Sorts `count` (key, value) pairs by key, stably, into the outputs.
  virtual void sort(int lane, const std::uint64_t* keys, std::uint64_t* keys_out, const int* values, int* values_out,
                    int count) = 0;
  /// Groups of equal neighbouring keys: mark_start, an exclusive prefix sum
  /// of the starts into `before`, then group_entry.
  virtual void group(int lane, const std::uint64_t* keys, int* start, int* before, int* gid, int* lead, int count) = 0;

  // The kernels of device_kernels.hpp, over a piece's pixels or a batch.
  virtual void prepare(int lane, const Piece<float>& p, int count) = 0;  // prepare_pixel
  virtual void prepare(int lane, const Piece<double>& p, int count) = 0;
  virtual void build(int lane, const Batch<double>& b) = 0;  // build_entry per group, then rhs_entry
  virtual void build(int lane, const Batch<float>& b) = 0;
  virtual void check_pivots(int lane, const Batch<double>& b) = 0;  // check_system after factor
  virtual void check_pivots(int lane, const Batch<float>& b) = 0;
  virtual void rhs(int lane, const Batch<double>& b) = 0;
  virtual void rhs(int lane, const Batch<float>& b) = 0;
  virtual void scatter(int lane, const Batch<double>& b, bool bounded) = 0;
  virtual void scatter(int lane, const Batch<float>& b, bool bounded) = 0;
  virtual void rss(int lane, const float* raw, const double* w, const double* r, int n, int ld, double* out) = 0;
  virtual void rss(int lane, const double* raw, const double* w, const double* r, int n, int ld, double* out) = 0;
  /// x[e] = from[e] where kind[e % ld] == want, n entries (select_entry).
  virtual void select(int lane, const std::uint8_t* kind, int want, const double* from, double* x, int ld,
                      std::size_t n) = 0;
  /// t[e] = w[e] (y[e] - t[e]), n entries (weigh_entry).
  virtual void weigh(int lane, const double* w, const double* y, double* t, std::size_t n) = 0;
  virtual void zero(int lane, void* p, std::size_t bytes) = 0;
  virtual void narrow(int lane, const double* src, float* dst, std::size_t n) = 0;  // narrow_entry

protected:
  /// Frees the lanes' memory; a backend's destructor calls it first, while
  /// its release functions still work.
  void drop_buffers();

private:
  std::mutex lane_mutex_;
  std::condition_variable lane_freed_;
  std::vector<char> lane_busy_;
  std::vector<std::unique_ptr<LaneBuffers>> buffers_;
};

/// The first CUDA device, or why there is none (never throws).
DeviceInfo cuda_query();
/// The CUDA backend on the first device; throws NumericalError when there is none.
std::unique_ptr<Backend> make_cuda_backend();
/// The reference backend: the pipeline on the host, with `memory` bytes of
/// pretend device memory; allocations beyond it, or larger than `largest`
/// (a fragmented device), fail as on a device.
std::unique_ptr<Backend> make_host_backend(std::size_t memory, std::size_t largest);

/// The backend solvers use: the CUDA device's, made once and kept for the
/// process (creating its streams and library handles takes milliseconds),
/// or a new one from the factory below. Throws NumericalError without a device.
std::shared_ptr<Backend> shared_backend();

/// Replaces the CUDA device by backends from `factory` (null: back to CUDA;
/// a factory may hand out the same backend every time, or a new one),
/// so that the engine's device branch runs where no GPU is. For tests.
void set_backend_factory(std::function<std::shared_ptr<Backend>()> factory);

}  // namespace cubesolve::detail::gpu
