// The device pipeline, written against Backend: the same code drives CUDA
// and the reference backend on the host.
#include "gpu.hpp"

#include "../factors.hpp"
#include "backend.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

namespace cubesolve::detail::gpu {

namespace {

std::mutex factory_mutex;
std::function<std::unique_ptr<Backend>()> factory;

std::unique_ptr<Backend> make_backend() {
  {
    std::lock_guard<std::mutex> lock(factory_mutex);
    if (factory) return factory();
  }
  return make_cuda_backend();
}

constexpr std::size_t kAlign = 256;
constexpr std::size_t kMinPiece = 64;  // fewer pixels than this: the device gives up

std::size_t align(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// Lays out one piece's buffers in one allocation: offsets in bytes.
struct Layout {
  std::size_t bytes = 0;
  std::size_t add(std::size_t size) {
    const std::size_t at = bytes;
    bytes += align(size);
    return at;
  }
};

}  // namespace

void set_backend_factory(std::function<std::unique_ptr<Backend>()> f) {
  std::lock_guard<std::mutex> lock(factory_mutex);
  factory = std::move(f);
}

DeviceInfo query() {
  {
    std::lock_guard<std::mutex> lock(factory_mutex);
    if (factory) {
      DeviceInfo info;
      auto dev = factory();
      info.available = true;
      info.name = dev->name();
      info.memory = dev->free_memory();
      return info;
    }
  }
  return cuda_query();
}

/// The design's factors on the device: P, A and Q in float64 for the GEMMs
/// and residuals, H and Q in the work precision for the small systems.
struct Solver::Factors {
  Backend& dev;
  std::vector<void*> owned;
  const double *pinv = nullptr, *a = nullptr, *qinv = nullptr;
  const void *hat_work = nullptr, *qinv_work = nullptr;

  explicit Factors(Backend& d) : dev(d) {}
  ~Factors() {
    for (void* p : owned) dev.release(p);
  }
  template <class T> const T* put(const std::vector<double>& v) {
    if (v.empty()) return nullptr;
    void* p = dev.alloc(v.size() * sizeof(T));
    owned.push_back(p);
    if constexpr (std::is_same_v<T, double>) {
      dev.upload(0, p, v.data(), v.size() * sizeof(double));
      dev.sync(0);
    } else {
      std::vector<T> w(v.begin(), v.end());
      dev.upload(0, p, w.data(), w.size() * sizeof(T));
      dev.sync(0);  // w goes away
    }
    return static_cast<const T*>(p);
  }
};

/// One lane's buffers: device memory for a piece, page-locked host memory
/// for its transfers.
struct Solver::Lane {
  Backend& dev;
  int index = 0;
  bool busy = false;
  void* arena = nullptr;
  std::size_t arena_bytes = 0;
  void* staging = nullptr;
  std::size_t staging_bytes = 0;
  std::size_t budget = 0;  // device bytes this lane may take

  Lane(Backend& d, int i) : dev(d), index(i) {}
  ~Lane() { drop(); }
  void drop() {
    if (arena) dev.release(arena);
    if (staging) dev.release_host(staging);
    arena = staging = nullptr;
    arena_bytes = staging_bytes = 0;
  }
  char* device(std::size_t bytes) {
    if (bytes > arena_bytes) {
      if (arena) dev.release(arena);
      arena = nullptr;
      arena_bytes = 0;
      arena = dev.alloc(bytes);
      arena_bytes = bytes;
    }
    return static_cast<char*>(arena);
  }
  char* host(std::size_t bytes) {
    if (bytes > staging_bytes) {
      if (staging) dev.release_host(staging);
      staging = nullptr;
      staging_bytes = 0;
      staging = dev.alloc_host(bytes);
      staging_bytes = bytes;
    }
    return static_cast<char*>(staging);
  }
};

Solver::Solver(const DesignFactors& f, const double* a, std::vector<std::uint8_t> table, double tau,
               double max_growth, bool float32, std::size_t memory)
    : dev_(make_backend()), table_(std::move(table)), n_(f.n), m_(f.m), tau_(tau), growth_(max_growth),
      float32_(float32) {
  const std::size_t free_before = dev_->free_memory();
  factors_ = std::make_unique<Factors>(*dev_);
  Factors& d = *factors_;
  d.pinv = d.put<double>(f.pinv);
  d.a = d.put<double>(std::vector<double>(a, a + f.n * f.m));
  d.qinv = d.put<double>(f.gram_rows_inv);
  if (float32_) {
    d.hat_work = d.put<float>(f.hat);
    d.qinv_work = d.put<float>(f.gram_rows_inv);
  } else {
    d.hat_work = d.put<double>(f.hat);
    d.qinv_work = d.qinv;
  }
  // Kinds the device cannot take (no H or no Q) stay on the CPU.
  table_.resize(n_ + 1, kSkip);
  for (std::size_t nv = 0; nv <= n_; ++nv) {
    std::uint8_t& t = table_[nv];
    if ((t == kDeletion && !d.hat_work) || (t == kDual && !d.qinv)) t = kSkip;
    if (t == kDeletion || t == kDual) max_q_ = std::max(max_q_, std::min(static_cast<int>(n_ - nv), kMaxQ));
  }
  const int lanes = std::max(1, dev_->lanes());
  // Pieces are sized to the memory left, shared by the lanes, with room for
  // the libraries' own workspace.
  std::size_t free = dev_->free_memory();
  if (memory > 0) {
    const std::size_t factors = free_before > free ? free_before - free : 0;
    if (memory <= factors) throw OutOfMemory("the design's factors alone take " + std::to_string(factors >> 20) + " MiB");
    free = std::min(free, memory - factors);
  }
  const std::size_t budget = free / 10 * 8 / static_cast<std::size_t>(lanes);
  for (int i = 0; i < lanes; ++i) {
    lanes_.push_back(std::make_unique<Lane>(*dev_, i));
    lanes_.back()->budget = budget;
  }
  limit_ = std::size_t{1} << 30;
}

Solver::~Solver() {
  lanes_.clear();
  factors_.reset();
}

std::string Solver::name() const { return dev_->name(); }

void Solver::solve(const Chunk& in, const ChunkResult& out) {
  Lane* lane = nullptr;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    freed_.wait(lock, [&] {
      for (auto& l : lanes_)
        if (!l->busy) return true;
      return false;
    });
    for (auto& l : lanes_)
      if (!l->busy) {
        lane = l.get();
        break;
      }
    lane->busy = true;
  }
  struct Release {
    Solver& s;
    Lane& l;
    ~Release() {
      std::lock_guard<std::mutex> lock(s.mutex_);
      l.busy = false;
      s.freed_.notify_one();
    }
  } release{*this, *lane};
  run(*lane, in, out);
}

void Solver::run(Lane& lane, const Chunk& in, const ChunkResult& out) {
  for (;;) {
    try {
      if (float32_ && in.float32) run_typed<float, float>(lane, in, out);
      else if (float32_) run_typed<float, double>(lane, in, out);
      else if (in.float32) run_typed<double, float>(lane, in, out);
      else run_typed<double, double>(lane, in, out);
      return;
    } catch (const OutOfMemory&) {
      // Smaller pieces, from the start of the call (pieces already done are
      // simply done again); none smaller than kMinPiece.
      lane.drop();
      const std::size_t now = std::min(limit_.load(), in.count);
      if (now <= kMinPiece) throw;
      limit_ = std::max(kMinPiece, now / 2);
      ++shrinks_;
    }
  }
}

/// T: the work precision of the small systems; R: the cube's values.
template <class T, class R> void Solver::run_typed(Lane& lane, const Chunk& in, const ChunkResult& out) {
  Backend& dev = *dev_;
  const Factors& d = *factors_;
  const int L = lane.index;
  const std::size_t n = n_, m = m_;
  const bool refine = std::is_same_v<T, float>;
  const T* hat = static_cast<const T*>(d.hat_work);
  const T* qinv = static_cast<const T*>(d.qinv_work);
  const auto maxq = static_cast<std::size_t>(max_q_), maxqb = static_cast<std::size_t>(padded(max_q_));

  // Device memory for a piece of `count` pixels (every one may need the
  // largest system), and its page-locked transfer buffers.
  auto piece_bytes = [&](std::size_t count, std::size_t* staging) {
    Layout dl, hl;
    dl.add(n * count * sizeof(R));                   // the values as stored
    if (in.skip) dl.add(count);                      // pixels solved elsewhere
    dl.add(table_.size());                           // kinds by valid count
    dl.add(n * count * sizeof(double));              // y~
    if (in.rss) dl.add(n * count * sizeof(double));  // y~ again, then the residuals
    dl.add(maxq * count * sizeof(int));              // missing rows
    for (int i = 0; i < 4; ++i) dl.add(count * sizeof(int));  // q, nv, bucket, pix
    dl.add(count);                                   // kind
    dl.add(count);                                   // done
    dl.add(3 * kBuckets * sizeof(int));              // counts, offsets, fill
    if (hat) dl.add(m * count * sizeof(double));     // P y~ for the deletions
    if (qinv) dl.add(n * count * sizeof(double));    // Q y~ for the duals
    dl.add(m * count * sizeof(double));              // x, observation-major
    if (out.x_float32) dl.add(m * count * sizeof(float));
    if (in.rss) dl.add(count * sizeof(double));      // rss
    dl.add(count * sizeof(int));                     // info
    dl.add(maxqb * maxqb * count * sizeof(T));       // systems
    dl.add(maxqb * count * sizeof(T));               // right-hand sides
    hl.add(n * count * sizeof(R));
    if (in.skip) hl.add(count);
    hl.add(3 * kBuckets * sizeof(int));
    hl.add(m * count * (out.x_float32 ? sizeof(float) : sizeof(double)));
    hl.add(count * sizeof(int));
    hl.add(count);
    hl.add(count);
    if (in.rss) hl.add(count * sizeof(double));
    *staging = hl.bytes;
    return dl.bytes;
  };

  std::size_t begin = 0;
  while (begin < in.count) {
    // The piece: as many pixels as fit the lane's budget and the limit.
    std::size_t count = std::min(in.count - begin, limit_.load()), staging = 0;
    if (piece_bytes(1, &staging) > lane.budget)
      throw OutOfMemory("the device has too little free memory for one pixel's work");
    while (piece_bytes(count, &staging) > lane.budget) count = std::max<std::size_t>(1, count / 2);
    const std::size_t bytes = piece_bytes(count, &staging);
    char* dbase = lane.device(bytes);
    char* hbase = lane.host(staging);

    // Buffers, laid out as piece_bytes counted them.
    Layout dl;
    auto dev_at = [&](std::size_t size) { return dbase + dl.add(size); };
    R* raw = reinterpret_cast<R*>(dev_at(n * count * sizeof(R)));
    std::uint8_t* skip = in.skip ? reinterpret_cast<std::uint8_t*>(dev_at(count)) : nullptr;
    std::uint8_t* table = reinterpret_cast<std::uint8_t*>(dev_at(table_.size()));
    double* y = reinterpret_cast<double*>(dev_at(n * count * sizeof(double)));
    double* r = in.rss ? reinterpret_cast<double*>(dev_at(n * count * sizeof(double))) : nullptr;
    int* rows = reinterpret_cast<int*>(dev_at(maxq * count * sizeof(int)));
    int* q = reinterpret_cast<int*>(dev_at(count * sizeof(int)));
    int* nv = reinterpret_cast<int*>(dev_at(count * sizeof(int)));
    int* bucket = reinterpret_cast<int*>(dev_at(count * sizeof(int)));
    int* pix = reinterpret_cast<int*>(dev_at(count * sizeof(int)));
    std::uint8_t* kind = reinterpret_cast<std::uint8_t*>(dev_at(count));
    std::uint8_t* done = reinterpret_cast<std::uint8_t*>(dev_at(count));
    int* counts = reinterpret_cast<int*>(dev_at(3 * kBuckets * sizeof(int)));
    int* offsets = counts + kBuckets;
    int* fill = counts + 2 * kBuckets;
    double* tdel = hat ? reinterpret_cast<double*>(dev_at(m * count * sizeof(double))) : nullptr;
    double* tdual = qinv ? reinterpret_cast<double*>(dev_at(n * count * sizeof(double))) : nullptr;
    double* x = reinterpret_cast<double*>(dev_at(m * count * sizeof(double)));
    float* xf = out.x_float32 ? reinterpret_cast<float*>(dev_at(m * count * sizeof(float))) : nullptr;
    double* rss = in.rss ? reinterpret_cast<double*>(dev_at(count * sizeof(double))) : nullptr;
    int* info = reinterpret_cast<int*>(dev_at(count * sizeof(int)));
    T* sys = reinterpret_cast<T*>(dev_at(maxqb * maxqb * count * sizeof(T)));
    T* rhs = reinterpret_cast<T*>(dev_at(maxqb * count * sizeof(T)));

    Layout hl;
    auto host_at = [&](std::size_t size) { return hbase + hl.add(size); };
    R* hraw = reinterpret_cast<R*>(host_at(n * count * sizeof(R)));
    std::uint8_t* hskip = in.skip ? reinterpret_cast<std::uint8_t*>(host_at(count)) : nullptr;
    int* hcounts = reinterpret_cast<int*>(host_at(3 * kBuckets * sizeof(int)));
    const std::size_t x_size = out.x_float32 ? sizeof(float) : sizeof(double);
    char* hx = host_at(m * count * x_size);
    int* hnv = reinterpret_cast<int*>(host_at(count * sizeof(int)));
    std::uint8_t* hkind = reinterpret_cast<std::uint8_t*>(host_at(count));
    std::uint8_t* hdone = reinterpret_cast<std::uint8_t*>(host_at(count));
    double* hrss = in.rss ? reinterpret_cast<double*>(host_at(count * sizeof(double))) : nullptr;

    // Up: the piece's rows of the cube as they are stored, the flags, the table.
    const R* cube = static_cast<const R*>(in.cube);
    const std::size_t first = in.begin + begin;
    for (std::size_t i = 0; i < n; ++i) std::memcpy(hraw + i * count, cube + i * in.stride + first, count * sizeof(R));
    dev.upload(L, raw, hraw, n * count * sizeof(R));
    if (skip) {
      for (std::size_t k = 0; k < count; ++k) hskip[k] = in.skip[begin + k] ? 1 : 0;
      dev.upload(L, skip, hskip, count);
    }
    dev.upload(L, table, table_.data(), table_.size());
    std::fill(hcounts, hcounts + 3 * kBuckets, 0);
    dev.upload(L, counts, hcounts, 3 * kBuckets * sizeof(int));

    // Masks, kinds and batch sizes on the device; the sizes come back.
    Piece<R> pc;
    pc.n = static_cast<int>(n);
    pc.ld = static_cast<int>(count);
    pc.max_q = max_q_;
    pc.raw = raw;
    pc.skip = skip;
    pc.table = table;
    pc.y = y;
    pc.r = r;
    pc.rows = rows;
    pc.q = q;
    pc.nv = nv;
    pc.kind = kind;
    pc.done = done;
    pc.bucket = bucket;
    pc.counts = counts;
    dev.prepare(L, pc, static_cast<int>(count));
    dev.download(L, hcounts, counts, kBuckets * sizeof(int));
    dev.sync(L);

    // Batches: one per (kind, padded size), laid out one after another.
    std::vector<Batch<T>> batches;
    {
      int* hoffsets = hcounts + kBuckets;
      std::size_t s = 0, a = 0, l = 0;
      for (int b = 0; b < kBuckets; ++b) {
        hoffsets[b] = static_cast<int>(s);
        if (hcounts[b] == 0) continue;
        Batch<T> bt;
        bt.n = static_cast<int>(n);
        bt.m = static_cast<int>(m);
        bt.ld = static_cast<int>(count);
        bt.kind = b < kSizes ? kDeletion : kDual;
        bt.qb = (b % kSizes + 1) * 8;
        bt.count = hcounts[b];
        bt.pix = pix + s;
        bt.q = q;
        bt.rows = rows;
        bt.K = bt.kind == kDeletion ? hat : qinv;
        bt.A = d.a;
        bt.t = bt.kind == kDeletion ? tdel : tdual;
        bt.S = sys + a;
        bt.z = rhs + l;
        bt.y = y;
        bt.info = info + s;
        bt.done = done;
        bt.tau = tau_;
        bt.growth = growth_;
        s += static_cast<std::size_t>(bt.count);
        a += static_cast<std::size_t>(bt.count) * bt.qb * bt.qb;
        l += static_cast<std::size_t>(bt.count) * bt.qb;
        batches.push_back(bt);
      }
      dev.upload(L, offsets, hoffsets, kBuckets * sizeof(int));
      dev.assign(L, bucket, offsets, fill, pix, static_cast<int>(count));
    }

    const int M = static_cast<int>(m), N = static_cast<int>(n), C = static_cast<int>(count);
    bool any_del = false, any_dual = false;
    for (const auto& b : batches) (b.kind == kDeletion ? any_del : any_dual) = true;
    // Pass 1 solves for the missing rows; in float32, pass 2 refines them
    // from the float64 residual with the same factors. Y~ is (C x N)
    // column-major as stored, so the products take it transposed.
    for (int pass = 0; pass < (refine ? 2 : 1); ++pass) {
      if (any_del) dev.gemm(L, 'N', 'T', M, C, N, 1.0, d.pinv, M, y, C, 0.0, tdel, M);
      if (any_dual) dev.gemm(L, 'N', 'T', N, C, N, 1.0, d.qinv, N, y, C, 0.0, tdual, N);
      for (const auto& b : batches) {
        if (pass == 0) {
          dev.build(L, b);
          dev.factor(L, b.S, b.qb, b.count, info + (b.info - info));
          dev.check_pivots(L, b);
        } else {
          dev.rhs(L, b);
        }
        dev.solve(L, b.S, b.z, b.qb, b.count);
        dev.scatter(L, b, pass == 0);
      }
    }
    // X observation-major like the output cube: (C x M) = Y~ P^T.
    dev.gemm(L, 'N', 'T', C, M, N, 1.0, y, C, d.pinv, M, 0.0, x, C);
    if (in.rss) {  // r = y~ - X A^T over the valid values
      dev.gemm(L, 'N', 'N', C, N, M, -1.0, x, C, d.a, M, 1.0, r, C);
      dev.rss(L, raw, r, N, C, rss);
    }
    if (xf) {
      dev.narrow(L, x, xf, count * m);
      dev.download(L, hx, xf, count * m * sizeof(float));
    } else {
      dev.download(L, hx, x, count * m * sizeof(double));
    }
    dev.download(L, hnv, nv, count * sizeof(int));
    dev.download(L, hkind, kind, count);
    dev.download(L, hdone, done, count);
    if (in.rss) dev.download(L, hrss, rss, count * sizeof(double));
    dev.sync(L);
    // The solutions of the pixels done here, row by row into the output.
    bool all = true;
    for (std::size_t k = 0; k < count && all; ++k) all = hdone[k] != 0;
    for (std::size_t j = 0; j < m; ++j) {
      const char* src = hx + j * count * x_size;
      char* dst = static_cast<char*>(out.x) + (j * out.x_stride + begin) * x_size;
      if (all) {
        std::memcpy(dst, src, count * x_size);
        continue;
      }
      for (std::size_t k = 0; k < count; ++k)
        if (hdone[k]) std::memcpy(dst + k * x_size, src + k * x_size, x_size);
    }
    std::memcpy(out.nv + begin, hnv, count * sizeof(int));
    std::memcpy(out.kind + begin, hkind, count);
    std::memcpy(out.done + begin, hdone, count);
    if (in.rss && out.rss) std::memcpy(out.rss + begin, hrss, count * sizeof(double));
    ++pieces_;
    begin += count;
  }
}

double normal_equations(const std::vector<double>& a, std::size_t n, std::size_t m, const std::vector<double>& y,
                        std::size_t count, std::vector<double>& x) {
  std::unique_ptr<Backend> dev = make_backend();
  // Each pixel's A_V (column-major, rows V) and y_V, gathered beforehand.
  std::vector<std::vector<double>> av(count), yv(count);
  for (std::size_t k = 0; k < count; ++k) {
    for (std::size_t i = 0; i < n; ++i)
      if (std::isfinite(y[k * n + i])) yv[k].push_back(y[k * n + i]);
    const std::size_t nv = yv[k].size();
    av[k].resize(nv * m);
    std::size_t r = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isfinite(y[k * n + i])) continue;
      for (std::size_t j = 0; j < m; ++j) av[k][j * nv + r] = a[i * m + j];
      ++r;
    }
  }
  struct Memory {
    Backend& dev;
    void* p;
    ~Memory() { dev.release(p); }
  };
  const Memory g{*dev, dev->alloc(m * m * sizeof(double))};
  const Memory rhs{*dev, dev->alloc(count * m * sizeof(double))};
  const Memory av_d{*dev, dev->alloc(std::max<std::size_t>(n * m, 1) * sizeof(double))};
  const Memory y_d{*dev, dev->alloc(std::max<std::size_t>(n, 1) * sizeof(double))};
  const Memory info{*dev, dev->alloc(count * sizeof(int))};
  auto* G = static_cast<double*>(g.p);
  auto* R = static_cast<double*>(rhs.p);
  auto* A = static_cast<double*>(av_d.p);
  auto* Y = static_cast<double*>(y_d.p);
  auto* I = static_cast<int*>(info.p);
  const int M = static_cast<int>(m);
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < count; ++k) {
    const int nv = static_cast<int>(yv[k].size());
    dev->upload(0, A, av[k].data(), av[k].size() * sizeof(double));
    dev->upload(0, Y, yv[k].data(), yv[k].size() * sizeof(double));
    dev->gemm(0, 'T', 'N', M, M, nv, 1.0, A, std::max(nv, 1), A, std::max(nv, 1), 0.0, G, M);
    dev->gemm(0, 'T', 'N', M, 1, nv, 1.0, A, std::max(nv, 1), Y, std::max(nv, 1), 0.0, R + k * m, M);
    dev->factor(0, G, M, 1, I + k);
    dev->solve(0, G, R + k * m, M, 1);
  }
  x.resize(count * m);
  std::vector<int> status(count);
  dev->download(0, x.data(), R, count * m * sizeof(double));
  dev->download(0, status.data(), I, count * sizeof(int));
  dev->sync(0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t k = 0; k < count; ++k)
    if (status[k] != 0 || yv[k].empty()) std::fill(x.begin() + static_cast<long>(k * m), x.begin() + static_cast<long>((k + 1) * m), std::numeric_limits<double>::quiet_NaN());
  return seconds;
}

}  // namespace cubesolve::detail::gpu
