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
#include <map>
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
constexpr int kMaxQ = 1024;            // larger systems stay on the CPU

std::size_t align(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// Systems are padded to a multiple of 8 (the identity below the pixel's own).
int padded(int q) { return (q + 7) / 8 * 8; }

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

Solver::Solver(const DesignFactors& f, const double* a, double tau, double max_growth, bool float32)
    : dev_(make_backend()), n_(f.n), m_(f.m), tau_(tau), growth_(max_growth), float32_(float32) {
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
  dual_ = d.qinv != nullptr;
  const int lanes = std::max(1, dev_->lanes());
  // Pieces are sized to the memory left, shared by the lanes, with room for
  // the libraries' own workspace.
  const std::size_t budget = dev_->free_memory() / 10 * 8 / static_cast<std::size_t>(lanes);
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

void Solver::solve(const double* y, const std::uint8_t* valid, const std::uint8_t* kind, std::size_t B, double* x,
                   std::uint8_t* ok) {
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
  run(*lane, y, valid, kind, B, x, ok);
}

void Solver::run(Lane& lane, const double* y, const std::uint8_t* valid, const std::uint8_t* kind, std::size_t B,
                 double* x, std::uint8_t* ok) {
  for (;;) {
    try {
      if (float32_) run_typed<float>(lane, y, valid, kind, B, x, ok);
      else run_typed<double>(lane, y, valid, kind, B, x, ok);
      return;
    } catch (const OutOfMemory&) {
      // Smaller pieces, from the start of the call (pieces already done are
      // simply done again); none smaller than kMinPiece.
      lane.drop();
      const std::size_t now = std::min(limit_.load(), B);
      if (now <= kMinPiece) throw;
      limit_ = std::max(kMinPiece, now / 2);
      ++shrinks_;
    }
  }
}

template <class T>
void Solver::run_typed(Lane& lane, const double* y, const std::uint8_t* valid, const std::uint8_t* kind,
                       std::size_t B, double* x, std::uint8_t* ok) {
  Backend& dev = *dev_;
  const Factors& d = *factors_;
  const int L = lane.index;
  const std::size_t n = n_, m = m_;
  const bool refine = std::is_same_v<T, float>;
  const T* hat = static_cast<const T*>(d.hat_work);
  const T* qinv = static_cast<const T*>(d.qinv_work);

  // Missing-row counts: a system per deletion or dual pixel the device can take.
  std::vector<int> q(B, 0);
  for (std::size_t k = 0; k < B; ++k) {
    ok[k] = 0;
    if (!(kind[k] == kDeletion && hat) && !(kind[k] == kDual && qinv)) continue;
    int c = 0;
    for (std::size_t i = 0; i < n; ++i) c += !valid[k * n + i];
    q[k] = c;
  }
  auto takes = [&](std::size_t k) { return q[k] > 0 && q[k] <= kMaxQ; };
  // The values travel as float32 when that loses nothing (a float32 cube).
  bool narrow = true;
  for (std::size_t e = 0; narrow && e < B * n; ++e) narrow = static_cast<double>(static_cast<float>(y[e])) == y[e];
  const std::size_t value_size = narrow ? sizeof(float) : sizeof(double);

  auto piece_bytes = [&](std::size_t count, std::size_t systems, std::size_t rows, std::size_t area, std::size_t len,
                         std::size_t* staging) {
    Layout dl, hl;
    dl.add(n * count * sizeof(double));             // y~
    if (narrow) dl.add(n * count * sizeof(float));  // the values as they came
    if (hat) dl.add(m * count * sizeof(double));    // P y~ for the deletions
    if (dual_) dl.add(n * count * sizeof(double));  // Q y~ for the duals
    dl.add(m * count * sizeof(double));             // x
    dl.add(count);                                  // ok
    dl.add((3 * systems + rows) * sizeof(int));     // pix, roff, q, rows
    dl.add(systems * sizeof(int));                  // info
    dl.add(area * sizeof(T));                       // systems
    dl.add(len * sizeof(T));                        // right-hand sides
    hl.add(n * count * value_size);
    hl.add(count);
    hl.add((3 * systems + rows) * sizeof(int));
    hl.add(m * count * sizeof(double));
    *staging = hl.bytes;
    return dl.bytes;
  };

  std::size_t begin = 0;
  while (begin < B) {
    // The piece: as many pixels as fit the lane's budget and the limit.
    std::size_t end = begin, systems = 0, rows = 0, area = 0, len = 0, staging = 0;
    const std::size_t limit = limit_.load();
    while (end < B && end - begin < limit) {
      const std::size_t qb = takes(end) ? static_cast<std::size_t>(padded(q[end])) : 0;
      const std::size_t s2 = systems + (qb > 0), r2 = rows + (qb > 0 ? static_cast<std::size_t>(q[end]) : 0);
      std::size_t stage = 0;
      const std::size_t bytes = piece_bytes(end - begin + 1, s2, r2, area + qb * qb, len + qb, &stage);
      if (bytes > lane.budget && end > begin) break;
      if (bytes > lane.budget) throw OutOfMemory("the device has too little free memory for one pixel's work");
      systems = s2;
      rows = r2;
      area += qb * qb;
      len += qb;
      ++end;
    }
    const std::size_t count = end - begin;
    const std::size_t bytes = piece_bytes(count, systems, rows, area, len, &staging);

    // Batches: systems of one kind and one padded size.
    std::map<std::pair<int, int>, std::vector<int>> groups;  // (kind, qb) -> pixels (piece-local)
    for (std::size_t k = begin; k < end; ++k)
      if (takes(k)) groups[{kind[k], padded(q[k])}].push_back(static_cast<int>(k - begin));

    // Device and host buffers, laid out as piece_bytes counted them.
    char* dbase = lane.device(bytes);
    char* hbase = lane.host(staging);
    Layout dl;
    double* yw = reinterpret_cast<double*>(dbase + dl.add(n * count * sizeof(double)));
    float* values = narrow ? reinterpret_cast<float*>(dbase + dl.add(n * count * sizeof(float))) : nullptr;
    double* tdel = hat ? reinterpret_cast<double*>(dbase + dl.add(m * count * sizeof(double))) : nullptr;
    double* tdual = dual_ ? reinterpret_cast<double*>(dbase + dl.add(n * count * sizeof(double))) : nullptr;
    double* xd = reinterpret_cast<double*>(dbase + dl.add(m * count * sizeof(double)));
    std::uint8_t* okd = reinterpret_cast<std::uint8_t*>(dbase + dl.add(count));
    int* ints = reinterpret_cast<int*>(dbase + dl.add((3 * systems + rows) * sizeof(int)));
    int* info = reinterpret_cast<int*>(dbase + dl.add(systems * sizeof(int)));
    T* sys = reinterpret_cast<T*>(dbase + dl.add(area * sizeof(T)));
    T* rhs = reinterpret_cast<T*>(dbase + dl.add(len * sizeof(T)));

    Layout hl;
    char* hvalues = hbase + hl.add(n * count * value_size);
    std::uint8_t* hok = reinterpret_cast<std::uint8_t*>(hbase + hl.add(count));
    int* hints = reinterpret_cast<int*>(hbase + hl.add((3 * systems + rows) * sizeof(int)));
    double* hx = reinterpret_cast<double*>(hbase + hl.add(m * count * sizeof(double)));

    // Host side: values, flags and the batches' index lists.
    const double* yp = y + begin * n;
    if (narrow) {
      float* v = reinterpret_cast<float*>(hvalues);
      for (std::size_t e = 0; e < count * n; ++e) v[e] = static_cast<float>(yp[e]);
    } else {
      std::memcpy(hvalues, yp, count * n * sizeof(double));
    }
    for (std::size_t k = 0; k < count; ++k) hok[k] = kind[begin + k] == kFull ? 1 : 0;
    std::vector<Batch<T>> batches;
    {
      int* pix = hints;
      int* roff = hints + systems;
      int* qs = hints + 2 * systems;
      int* rws = hints + 3 * systems;
      std::size_t s = 0, r = 0, a = 0, l = 0;
      for (const auto& [key, members] : groups) {
        Batch<T> b;
        b.n = static_cast<int>(n);
        b.m = static_cast<int>(m);
        b.kind = key.first;
        b.qb = key.second;
        b.count = static_cast<int>(members.size());
        b.pix = ints + s;
        b.roff = ints + systems + s;
        b.q = ints + 2 * systems + s;
        b.rows = ints + 3 * systems;
        b.K = b.kind == kDeletion ? hat : qinv;
        b.A = d.a;
        b.t = b.kind == kDeletion ? tdel : tdual;
        b.S = sys + a;
        b.z = rhs + l;
        b.y = yw;
        b.info = info + s;
        b.ok = okd;
        b.tau = tau_;
        b.growth = growth_;
        for (int k : members) {
          const std::size_t g = begin + static_cast<std::size_t>(k);
          pix[s] = k;
          roff[s] = static_cast<int>(r);
          qs[s] = q[g];
          for (std::size_t i = 0; i < n; ++i)
            if (!valid[g * n + i]) rws[r++] = static_cast<int>(i);
          ++s;
        }
        a += static_cast<std::size_t>(b.count) * b.qb * b.qb;
        l += static_cast<std::size_t>(b.count) * b.qb;
        batches.push_back(b);
      }
    }

    // Up, in one lane: values, flags and lists.
    if (narrow) {
      dev.upload(L, values, hvalues, count * n * sizeof(float));
      dev.widen(L, values, yw, count * n);
    } else {
      dev.upload(L, yw, hvalues, count * n * sizeof(double));
    }
    dev.upload(L, okd, hok, count);
    if (systems > 0) dev.upload(L, ints, hints, (3 * systems + rows) * sizeof(int));

    const int M = static_cast<int>(m), N = static_cast<int>(n), C = static_cast<int>(count);
    bool any_del = false, any_dual = false;
    for (const auto& b : batches) (b.kind == kDeletion ? any_del : any_dual) = true;
    // Pass 1 solves for the missing rows; in float32, pass 2 refines them
    // from the float64 residual with the same factors.
    for (int pass = 0; pass < (refine ? 2 : 1); ++pass) {
      if (any_del) dev.gemm(L, 'N', 'N', M, C, N, 1.0, d.pinv, M, yw, N, 0.0, tdel, M);
      if (any_dual) dev.gemm(L, 'N', 'N', N, C, N, 1.0, d.qinv, N, yw, N, 0.0, tdual, N);
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
    dev.gemm(L, 'N', 'N', M, C, N, 1.0, d.pinv, M, yw, N, 0.0, xd, M);
    dev.download(L, hx, xd, count * m * sizeof(double));
    dev.download(L, hok, okd, count);
    dev.sync(L);
    std::memcpy(x + begin * m, hx, count * m * sizeof(double));
    std::memcpy(ok + begin, hok, count);
    ++pieces_;
    begin = end;
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
