// The device pipeline, written against Backend: the same code drives CUDA
// and the reference backend on the host.
#include "gpu.hpp"

#include "engine/factors.hpp"
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


constexpr std::size_t kAlign = 256;
constexpr std::size_t kMinPiece = 64;  // fewer pixels than this: the device gives up
// Smallest relative pivot of a float32 system: one refinement step leaves an
// error of about (2^-24 cond)^2, so systems with cond above ~1e2 go to the
// CPU (float64) instead.
constexpr double kFloat32Tau = 1e-2;

std::size_t align(std::size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// One of a backend's lanes, held while it lives.
struct LaneHold {
  Backend& dev;
  const int lane;
  explicit LaneHold(Backend& d) : dev(d), lane(d.acquire_lane()) {}
  ~LaneHold() { dev.release_lane(lane); }
  LaneHold(const LaneHold&) = delete;
  LaneHold& operator=(const LaneHold&) = delete;
};

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

void LaneBuffers::free(void*& p, bool on_host) {
  if (p) on_host ? dev_.release_host(p) : dev_.release(p);
  p = nullptr;
}

char* LaneBuffers::grow(void*& p, std::size_t& size, std::size_t bytes, bool on_host) {
  if (bytes > size) {
    free(p, on_host);
    size = 0;
    p = on_host ? dev_.alloc_host(bytes) : dev_.alloc(bytes);
    size = bytes;
  }
  return static_cast<char*>(p);
}

void LaneBuffers::drop() {
  free(arena_, false);
  free(systems_, false);
  free(staging_, true);
  arena_bytes_ = systems_bytes_ = staging_bytes_ = 0;
}

LaneBuffers& Backend::buffers(int lane) { return *buffers_[static_cast<std::size_t>(lane)]; }

std::size_t Backend::cached_bytes() {
  std::lock_guard<std::mutex> lock(lane_mutex_);
  std::size_t bytes = 0;
  for (const auto& b : buffers_) bytes += b->device_bytes();
  return bytes;
}

void Backend::drop_buffers() {
  std::lock_guard<std::mutex> lock(lane_mutex_);
  buffers_.clear();
}

int Backend::acquire_lane() {
  std::unique_lock<std::mutex> lock(lane_mutex_);
  lane_busy_.resize(static_cast<std::size_t>(std::max(1, lanes())), 0);
  while (buffers_.size() < lane_busy_.size()) buffers_.push_back(std::make_unique<LaneBuffers>(*this));
  for (;;) {
    for (std::size_t i = 0; i < lane_busy_.size(); ++i)
      if (!lane_busy_[i]) {
        lane_busy_[i] = 1;
        return static_cast<int>(i);
      }
    lane_freed_.wait(lock);
  }
}

void Backend::release_lane(int lane) {
  {
    std::lock_guard<std::mutex> lock(lane_mutex_);
    lane_busy_[static_cast<std::size_t>(lane)] = 0;
  }
  lane_freed_.notify_one();
}

std::shared_ptr<Backend> shared_backend() {
  {
    std::lock_guard<std::mutex> lock(factory_mutex);
    if (factory) return factory();
  }
  // Never destroyed: its streams and handles must not outlive the CUDA
  // runtime, which tears down at exit in an order of its own.
  static Backend* const device = make_cuda_backend().release();
  return std::shared_ptr<Backend>(device, [](Backend*) {});
}

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

/// The design's factors on the device: P, A, Q, C and the packed row
/// products in float64 for the GEMMs and residuals; H, Q and C in the work
/// precision for the small systems.
struct Solver::Factors {
  Backend& dev;
  std::vector<void*> owned;
  const double *pinv = nullptr, *a = nullptr, *qinv = nullptr, *gram = nullptr, *outer = nullptr;
  const void *hat_work = nullptr, *qinv_work = nullptr, *gram_work = nullptr;

  explicit Factors(Backend& d) : dev(d) {}
  ~Factors() {
    for (void* p : owned) dev.release(p);
  }
  template <class T> const T* put(const std::vector<double>& v) {
    if (v.empty()) return nullptr;
    void* p = dev.alloc(v.size() * sizeof(T));
    owned.push_back(p);
    const LaneHold held(dev);
    if constexpr (std::is_same_v<T, double>) {
      dev.upload(held.lane, p, v.data(), v.size() * sizeof(double));
      dev.sync(held.lane);
    } else {
      std::vector<T> w(v.begin(), v.end());
      dev.upload(held.lane, p, w.data(), w.size() * sizeof(T));
      dev.sync(held.lane);  // w goes away
    }
    return static_cast<const T*>(p);
  }
};

Solver::Solver(const DesignFactors& f, const double* a, std::vector<std::uint8_t> table, const Settings& settings)
    : dev_(shared_backend()), table_(std::move(table)), n_(f.n), m_(f.m), settings_(settings) {
  const std::size_t free_before = dev_->free_memory();
  table_.resize(n_ + 1, kSkip);
  auto wanted = [&](std::uint8_t kind) { return std::find(table_.begin(), table_.end(), kind) != table_.end(); };
  factors_ = std::make_unique<Factors>(*dev_);
  Factors& d = *factors_;
  d.pinv = d.put<double>(f.pinv);
  d.a = d.put<double>(std::vector<double>(a, a + f.n * f.m));
  if (wanted(kDual)) d.qinv = d.put<double>(f.gram_rows_inv);
  if (wanted(kGather)) d.gram = d.put<double>(f.gram_rows);
  if (wanted(kGram)) d.outer = d.put<double>(f.outer);
  if (settings_.float32) {
    if (wanted(kDeletion)) d.hat_work = d.put<float>(f.hat);
    if (wanted(kDual)) d.qinv_work = d.put<float>(f.gram_rows_inv);
    if (wanted(kGather)) d.gram_work = d.put<float>(f.gram_rows);
  } else {
    if (wanted(kDeletion)) d.hat_work = d.put<double>(f.hat);
    d.qinv_work = d.qinv;
    d.gram_work = d.gram;
  }
  // Kinds the device cannot take (a factor too large to keep, a system too
  // large) stay on the CPU.
  for (std::size_t nv = 0; nv <= n_; ++nv) {
    std::uint8_t& t = table_[nv];
    if ((t == kDeletion && !d.hat_work) || (t == kDual && !d.qinv) || (t == kGather && !d.gram) ||
        (t == kGram && !d.outer))
      t = kSkip;
    const int q = t == kGather ? static_cast<int>(nv) : t == kGram ? static_cast<int>(m_) : static_cast<int>(n_ - nv);
    if (t != kFull && q > kMaxQ) t = kSkip;  // larger systems stay on the CPU
    if (t == kDeletion || t == kDual || t == kGather) max_q_ = std::max(max_q_, q);
  }
  const int lanes = std::max(1, dev_->lanes());
  // Pieces are sized to the memory left (with what the lanes keep from
  // earlier solves), shared by the lanes, with room for the libraries' own
  // workspace.
  std::size_t free = dev_->free_memory() + dev_->cached_bytes();
  if (settings_.memory > 0) {
    const std::size_t factors = free_before > free ? free_before - free : 0;
    if (settings_.memory <= factors)
      throw OutOfMemory("the design's factors alone take " + std::to_string(factors >> 20) + " MiB");
    free = std::min(free, settings_.memory - factors);
  }
  budget_ = free / 10 * 8 / static_cast<std::size_t>(lanes);
  sys_per_pixel_.assign(static_cast<std::size_t>(lanes), -1.0);
  limit_ = std::size_t{1} << 30;
}

Solver::~Solver() = default;

void Solver::solve(const Chunk& in, const ChunkResult& out) {
  const LaneHold held(*dev_);
  run(held.lane, in, out);
}

void Solver::run(int lane, const Chunk& in, const ChunkResult& out) {
  for (;;) {
    try {
      if (settings_.float32 && in.float32) run_typed<float, float>(lane, in, out);
      else if (settings_.float32) run_typed<float, double>(lane, in, out);
      else if (in.float32) run_typed<double, float>(lane, in, out);
      else run_typed<double, double>(lane, in, out);
      return;
    } catch (const OutOfMemory&) {
      // Smaller pieces, from the start of the call (pieces already done are
      // simply done again); none smaller than kMinPiece.
      dev_->buffers(lane).drop();
      const std::size_t now = std::min(limit_.load(), in.count);
      if (now <= kMinPiece) throw;
      limit_ = std::max(kMinPiece, now / 2);
      ++shrinks_;
    }
  }
}

/// T: the work precision of the small systems; R: the cube's values.
template <class T, class R> void Solver::run_typed(int L, const Chunk& in, const ChunkResult& out) {
  Backend& dev = *dev_;
  LaneBuffers& lane = dev.buffers(L);
  double& sys_per_pixel = sys_per_pixel_[static_cast<std::size_t>(L)];
  const Factors& d = *factors_;
  const std::size_t n = n_, m = m_, packed = m * (m + 1) / 2;
  const bool refine = std::is_same_v<T, float>;
  const bool del = d.hat_work != nullptr, dual = d.qinv != nullptr, gather = d.gram != nullptr;
  const bool gram = d.outer != nullptr, weighted = in.weights != nullptr;
  const auto maxq = static_cast<std::size_t>(max_q_), maxqb = static_cast<std::size_t>(padded(max_q_));
  const auto mb = static_cast<std::size_t>(padded(static_cast<int>(m)));  // a Gram system's padded size
  const std::size_t x_size = out.x_float32 ? sizeof(float) : sizeof(double);

  // The buffers of a piece of `count` pixels (every one may need the largest
  // system): device memory, then page-locked host memory. Called once to
  // count and once to place them.
  struct Buffers {
    R* raw;
    double *weights, *y, *r, *w, *wy, *tdel, *tdual, *tgather, *ugather, *xgather, *g, *b, *ugram, *x, *rss;
    float* xf;
    std::uint8_t *table, *kind, *done;
    int *rows, *q, *nv, *order, *pix, *counts, *start, *before, *gid, *lead, *info;
    std::uint64_t *key, *sorted;
    T *sys, *rhs;
    double *gsys, *grhs;
    double *hweights, *hrss;
    char* hx;
    std::uint8_t *hkind, *hdone;
    int *hcounts, *hnv, *hgid;
  };
  auto lay_out = [&](std::size_t count, char* dbase, char* hbase, Buffers* bf, std::size_t* staging) {
    Layout dl, hl;
    // Counts `elements` of *ptr in the layout, and points ptr there once the memory exists.
    auto place = [](Layout& l, char* base, auto*& ptr, std::size_t elements, bool want) {
      using P = std::remove_reference_t<decltype(*ptr)>;
      ptr = nullptr;
      if (!want) return;
      const std::size_t at = l.add(elements * sizeof(P));
      if (base) ptr = reinterpret_cast<P*>(base + at);
    };
    auto dv = [&](auto*& ptr, std::size_t elements, bool want = true) { place(dl, dbase, ptr, elements, want); };
    auto hv = [&](auto*& ptr, std::size_t elements, bool want = true) { place(hl, hbase, ptr, elements, want); };
    Buffers& b = *bf;
    const std::size_t nc = n * count, mc = m * count;
    dv(b.raw, nc);                                    // the values as stored
    dv(b.weights, nc, weighted);
    dv(b.table, table_.size());                       // kinds by valid count
    dv(b.y, nc);                                      // y~
    dv(b.r, nc, in.rss);                              // y~ again, then the residuals
    dv(b.w, nc, gram);                                // weights, 0 where missing
    dv(b.wy, nc, gram);                               // w y
    dv(b.rows, maxq * count);                         // the systems' rows
    dv(b.q, count);
    dv(b.nv, count);
    dv(b.key, count);                                 // sort keys: batch, then the system's rows
    dv(b.sorted, count);
    dv(b.order, count);
    dv(b.pix, count);                                 // pixels in batch order
    dv(b.start, count);                               // groups of equal keys
    dv(b.before, count);
    dv(b.gid, count);
    dv(b.lead, count);
    dv(b.kind, count);
    dv(b.done, count);
    dv(b.counts, static_cast<std::size_t>(kBuckets));
    dv(b.tdel, mc, del);                              // P y~
    dv(b.tdual, nc, dual);                            // Q y~
    dv(b.tgather, nc, gather);                        // C w
    dv(b.ugather, nc, gather);                        // w
    dv(b.xgather, mc, gather);                        // A^T w
    dv(b.g, packed * count, gram);                    // packed A^T W A
    dv(b.b, mc, gram);                                // A^T W y
    dv(b.ugram, mc, gram);                            // x of the Gram systems
    dv(b.x, mc);                                      // X, observation-major
    dv(b.xf, mc, out.x_float32);
    dv(b.rss, count, in.rss);
    dv(b.info, count);
    hv(b.hweights, nc, weighted);
    hv(b.hcounts, static_cast<std::size_t>(kBuckets));
    hv(b.hgid, count);
    hl.add(mc * x_size);
    if (hbase) b.hx = hbase + hl.bytes - align(mc * x_size);
    hv(b.hnv, count);
    hv(b.hkind, count);
    hv(b.hdone, count);
    hv(b.hrss, count, in.rss);
    *staging = hl.bytes;
    return dl.bytes;
  };

  // The systems' memory per pixel: what the last piece took (a quarter
  // more), or at first the most any pixel may need.
  const double worst = static_cast<double>((maxqb * maxqb + maxqb) * sizeof(T) + (gram ? (mb * mb + mb) * 8 : 0));
  auto with_systems = [&](std::size_t count, std::size_t* staging) {
    Buffers none{};
    const double per = sys_per_pixel >= 0 ? std::min(worst, sys_per_pixel * 1.25) : worst;
    return lay_out(count, nullptr, nullptr, &none, staging) + static_cast<std::size_t>(per * static_cast<double>(count));
  };

  std::size_t begin = 0;
  while (begin < in.count) {
    // The piece: as many pixels as fit the lane's budget and the limit.
    Buffers bf{};
    std::size_t count = std::min(in.count - begin, limit_.load()), staging = 0;
    if (with_systems(1, &staging) > budget_)
      throw OutOfMemory("the device has too little free memory for one pixel's work");
    while (with_systems(count, &staging) > budget_) count = std::max<std::size_t>(1, count / 2);
    const std::size_t bytes = lay_out(count, nullptr, nullptr, &bf, &staging);
    char* dbase = lane.device(bytes);
    char* hbase = lane.host(staging);
    lay_out(count, dbase, hbase, &bf, &staging);

    // Up: the piece's rows of the cube (and weights) as stored, and the table.
    const std::size_t first = in.begin + begin;
    const R* cube = static_cast<const R*>(in.cube);
    dev.upload_rows(L, bf.raw, cube + first, in.stride * sizeof(R), count * sizeof(R), n);
    if (weighted) {
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < count; ++k) {
          const std::size_t e = i * in.stride + first + k;
          bf.hweights[i * count + k] = in.weights_float32 ? static_cast<const float*>(in.weights)[e]
                                                           : static_cast<const double*>(in.weights)[e];
        }
      dev.upload(L, bf.weights, bf.hweights, n * count * sizeof(double));
    }
    dev.upload(L, bf.table, table_.data(), table_.size());
    std::fill(bf.hcounts, bf.hcounts + kBuckets, 0);
    dev.upload(L, bf.counts, bf.hcounts, kBuckets * sizeof(int));

    // Masks, kinds and batch sizes on the device; the sizes come back.
    Piece<R> pc;
    pc.n = static_cast<int>(n);
    pc.m = static_cast<int>(m);
    pc.ld = static_cast<int>(count);
    pc.max_q = max_q_;
    pc.raw = bf.raw;
    pc.weights = bf.weights;
    pc.table = bf.table;
    pc.y = bf.y;
    pc.r = bf.r;
    pc.w = bf.w;
    pc.wy = bf.wy;
    pc.rows = bf.rows;
    pc.q = bf.q;
    pc.nv = bf.nv;
    pc.kind = bf.kind;
    pc.done = bf.done;
    pc.counts = bf.counts;
    pc.key = bf.key;
    pc.order = bf.order;
    dev.prepare(L, pc, static_cast<int>(count));
    // Pixels sorted by key: each batch's pixels together, those with the same
    // rows next to each other, one system per group of them.
    dev.sort(L, bf.key, bf.sorted, bf.order, bf.pix, static_cast<int>(count));
    dev.download(L, bf.hcounts, bf.counts, kBuckets * sizeof(int));
    dev.sync(L);
    int total = 0;
    for (int bk = 0; bk < kBuckets; ++bk) total += bf.hcounts[bk];
    if (total > 0) {
      dev.group(L, bf.sorted, bf.start, bf.before, bf.gid, bf.lead, total);
      dev.download(L, bf.hgid, bf.gid, static_cast<std::size_t>(total) * sizeof(int));
      dev.sync(L);
    }

    // Batches: one per (kind, padded size), laid out one after another.
    std::vector<Batch<T>> batches;
    std::vector<Batch<double>> gram_batches;
    bool has[6] = {};
    {
      // The systems' memory, now that their number and sizes are known.
      std::size_t area = 0, len = 0, garea = 0, glen = 0;
      for (std::size_t bk = 0, s = 0; bk < static_cast<std::size_t>(kBuckets); ++bk) {
        const auto cnt = static_cast<std::size_t>(bf.hcounts[bk]);
        if (cnt == 0) continue;
        const auto qb = (bk % kSizes + 1) * 8, groups = static_cast<std::size_t>(bf.hgid[s + cnt - 1] - bf.hgid[s] + 1);
        const bool is_gram = kDeletion + static_cast<int>(bk) / kSizes == kGram;
        (is_gram ? garea : area) += groups * qb * qb;
        (is_gram ? glen : len) += cnt * qb;
        s += cnt;
      }
      Layout sl;
      const std::size_t at_sys = sl.add(area * sizeof(T)), at_rhs = sl.add(len * sizeof(T));
      const std::size_t at_gsys = sl.add(garea * sizeof(double)), at_grhs = sl.add(glen * sizeof(double));
      char* sbase = lane.systems(sl.bytes);
      bf.sys = reinterpret_cast<T*>(sbase + at_sys);
      bf.rhs = reinterpret_cast<T*>(sbase + at_rhs);
      bf.gsys = reinterpret_cast<double*>(sbase + at_gsys);
      bf.grhs = reinterpret_cast<double*>(sbase + at_grhs);
      sys_per_pixel = static_cast<double>(sl.bytes) / static_cast<double>(count);

      std::size_t s = 0, a = 0, l = 0, ga = 0, gl = 0;
      for (int bk = 0; bk < kBuckets; ++bk) {
        if (bf.hcounts[bk] == 0) continue;
        const int kind = kDeletion + bk / kSizes, qb = (bk % kSizes + 1) * 8;
        auto common = [&](auto& b) {  // what every batch of either precision has
          b.n = static_cast<int>(n);
          b.m = static_cast<int>(m);
          b.ld = static_cast<int>(count);
          b.kind = kind;
          b.qb = qb;
          b.count = bf.hcounts[bk];
          b.first = static_cast<int>(s);
          b.g0 = bf.hgid[s];
          b.groups = bf.hgid[s + static_cast<std::size_t>(b.count) - 1] - b.g0 + 1;
          b.gid = bf.gid + s;
          b.lead = bf.lead;
          b.pix = bf.pix + s;
          b.q = bf.q;
          b.rows = bf.rows;
          b.A = d.a;
          b.y = bf.y;
          b.info = bf.info + s;
          b.done = bf.done;
        };
        Batch<T> bt;
        common(bt);
        bt.S = bf.sys + a;
        bt.z = bf.rhs + l;
        bt.tau = refine ? std::max(settings_.tau, kFloat32Tau) : settings_.tau;
        if (kind == kDeletion || kind == kDual) {
          bt.K = static_cast<const T*>(kind == kDeletion ? d.hat_work : d.qinv_work);
          bt.t = kind == kDeletion ? bf.tdel : bf.tdual;
          bt.u = bf.y;
          bt.growth = settings_.growth;
        } else if (kind == kGather) {
          bt.K = static_cast<const T*>(d.gram_work);
          bt.t = bf.tgather;
          bt.u = bf.ugather;
        } else {  // Gram, in float64
          Batch<double> gb;
          common(gb);
          gb.g = bf.g;
          gb.b = bf.b;
          gb.ridge = settings_.ridge;
          gb.u = bf.ugram;
          gb.S = bf.gsys + ga;
          gb.z = bf.grhs + gl;
          gb.tau = settings_.gram_tau;
          ga += static_cast<std::size_t>(gb.groups) * gb.qb * gb.qb;
          gl += static_cast<std::size_t>(gb.count) * gb.qb;
          gram_batches.push_back(gb);
        }
        has[bt.kind] = true;
        systems_ += static_cast<std::size_t>(bt.groups);
        s += static_cast<std::size_t>(bt.count);
        if (bt.kind == kGram) continue;
        a += static_cast<std::size_t>(bt.groups) * bt.qb * bt.qb;
        l += static_cast<std::size_t>(bt.count) * bt.qb;
        batches.push_back(bt);
      }
    }

    const int M = static_cast<int>(m), N = static_cast<int>(n), C = static_cast<int>(count);
    const int TP = static_cast<int>(packed);
    if (has[kGram]) {  // G = packed A^T W A and b = A^T W y for every pixel: two GEMMs
      dev.gemm(L, 'N', 'T', C, TP, N, 1.0, bf.w, C, d.outer, TP, 0.0, bf.g, C);
      dev.gemm(L, 'N', 'T', C, M, N, 1.0, bf.wy, C, d.a, M, 0.0, bf.b, C);
      dev.zero(L, bf.ugram, m * count * sizeof(double));
    }
    if (has[kGather]) dev.zero(L, bf.ugather, n * count * sizeof(double));
    // Pass 1 solves; in float32, pass 2 refines from the float64 residuals
    // with the same factors. Y~ and W are (C x N) column-major as stored,
    // so the products take them transposed.
    for (int pass = 0; pass < (refine ? 2 : 1); ++pass) {
      if (has[kDeletion]) dev.gemm(L, 'N', 'T', M, C, N, 1.0, d.pinv, M, bf.y, C, 0.0, bf.tdel, M);
      if (has[kDual]) dev.gemm(L, 'N', 'T', N, C, N, 1.0, d.qinv, N, bf.y, C, 0.0, bf.tdual, N);
      if (has[kGather]) dev.gemm(L, 'N', 'T', N, C, N, 1.0, d.gram, N, bf.ugather, C, 0.0, bf.tgather, N);
      auto run_batch = [&](const auto& b) {
        if (pass == 0) {
          dev.build(L, b);
          dev.factor(L, b.S, b.qb, b.groups, const_cast<int*>(b.info));
          dev.check_pivots(L, b);
        } else {
          dev.rhs(L, b);
        }
        dev.solve(L, b.S, b.z, b.qb, b.count, b.gid, b.g0);
        dev.scatter(L, b, pass == 0);
      };
      for (const auto& b : batches) run_batch(b);
      if (pass == 0)
        for (const auto& b : gram_batches) run_batch(b);
    }
    // X observation-major like the output cube: (C x M) = Y~ P^T, then the
    // gather pixels' W A and the Gram pixels' own x.
    dev.gemm(L, 'N', 'T', C, M, N, 1.0, bf.y, C, d.pinv, M, 0.0, bf.x, C);
    if (has[kGather]) {
      dev.gemm(L, 'N', 'T', C, M, N, 1.0, bf.ugather, C, d.a, M, 0.0, bf.xgather, C);
      dev.select(L, bf.kind, kGather, bf.xgather, bf.x, C, m * count);
    }
    if (has[kGram]) dev.select(L, bf.kind, kGram, bf.ugram, bf.x, C, m * count);
    if (in.rss) {  // r = y~ - X A^T over the valid values (weighted)
      dev.gemm(L, 'N', 'N', C, N, M, -1.0, bf.x, C, d.a, M, 1.0, bf.r, C);
      dev.rss(L, bf.raw, bf.w, bf.r, N, C, bf.rss);
    }
    if (bf.xf) dev.narrow(L, bf.x, bf.xf, count * m);
    dev.download(L, bf.hnv, bf.nv, count * sizeof(int));
    dev.download(L, bf.hkind, bf.kind, count);
    dev.download(L, bf.hdone, bf.done, count);
    if (in.rss) dev.download(L, bf.hrss, bf.rss, count * sizeof(double));
    dev.sync(L);
    // The solutions of the pixels done here, row by row into the output:
    // straight from the device when the piece is all done, else picked.
    bool all = true;
    for (std::size_t k = 0; k < count && all; ++k) all = bf.hdone[k] != 0;
    char* rows_out = static_cast<char*>(out.x) + begin * x_size;
    if (all) {
      dev.download_rows(L, rows_out, out.x_stride * x_size, bf.xf ? static_cast<const void*>(bf.xf) : bf.x,
                        count * x_size, m);
    } else {
      dev.download(L, bf.hx, bf.xf ? static_cast<const void*>(bf.xf) : bf.x, count * m * x_size);
    }
    dev.sync(L);
    for (std::size_t j = 0; j < m && !all; ++j) {
      const char* src = bf.hx + j * count * x_size;
      char* dst = rows_out + j * out.x_stride * x_size;
      for (std::size_t k = 0; k < count; ++k)
        if (bf.hdone[k]) std::memcpy(dst + k * x_size, src + k * x_size, x_size);
    }
    std::memcpy(out.nv + begin, bf.hnv, count * sizeof(int));
    std::memcpy(out.kind + begin, bf.hkind, count);
    std::memcpy(out.done + begin, bf.hdone, count);
    if (in.rss && out.rss) std::memcpy(out.rss + begin, bf.hrss, count * sizeof(double));
    ++pieces_;
    begin += count;
  }
}

double normal_equations(const std::vector<double>& a, std::size_t n, std::size_t m, const std::vector<double>& y,
                        std::size_t count, std::vector<double>& x) {
  std::shared_ptr<Backend> dev = shared_backend();
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
  const LaneHold held(*dev);
  const int L = held.lane;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t k = 0; k < count; ++k) {
    const int nv = static_cast<int>(yv[k].size());
    dev->upload(L, A, av[k].data(), av[k].size() * sizeof(double));
    dev->upload(L, Y, yv[k].data(), yv[k].size() * sizeof(double));
    dev->gemm(L, 'T', 'N', M, M, nv, 1.0, A, std::max(nv, 1), A, std::max(nv, 1), 0.0, G, M);
    dev->gemm(L, 'T', 'N', M, 1, nv, 1.0, A, std::max(nv, 1), Y, std::max(nv, 1), 0.0, R + k * m, M);
    dev->factor(L, G, M, 1, I + k);
    dev->solve(L, G, R + k * m, M, 1, nullptr, 0);
  }
  x.resize(count * m);
  std::vector<int> status(count);
  dev->download(L, x.data(), R, count * m * sizeof(double));
  dev->download(L, status.data(), I, count * sizeof(int));
  dev->sync(L);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (std::size_t k = 0; k < count; ++k)
    if (status[k] != 0 || yv[k].empty()) std::fill(x.begin() + static_cast<long>(k * m), x.begin() + static_cast<long>((k + 1) * m), std::numeric_limits<double>::quiet_NaN());
  return seconds;
}

}  // namespace cubesolve::detail::gpu
