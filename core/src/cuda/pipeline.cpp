// The device pipeline, written against Backend: the same code drives CUDA
// and the reference backend on the host.
#include "gpu.hpp"

#include <cubesolve/engine/engine.hpp>

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
std::function<std::shared_ptr<Backend>()> factory;


constexpr std::size_t kAlign = 256;
constexpr std::size_t kMinPiece = 64;  // fewer pixels than this: the device gives up
// Smallest relative pivot of a float32 system: each refinement step
// multiplies the error by about 2^-24 cond, so systems with cond above
// ~1e2 go to the CPU (float64) instead.
constexpr double kFloat32Tau = 1e-2;
// The float32 systems are refined twice (one step left 1e-8 of x where the
// test's pivots passed); the second step must be below this share of the
// unknowns it corrects, or the pixel goes to the CPU.
constexpr double kFloat32Step = 1e-10;

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

/// A device allocation, released when this goes.
struct Memory {
  Backend& dev;
  void* p;
  Memory(Backend& d, std::size_t bytes) : dev(d), p(d.alloc(bytes)) {}
  ~Memory() { dev.release(p); }
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Best of `reps` runs of f (which ends with the lane synchronised), in seconds.
template <class F> double best_of(int reps, F f) {
  double best = std::numeric_limits<double>::infinity();
  for (int rep = 0; rep < reps; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

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
  bind();
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

void set_backend_factory(std::function<std::shared_ptr<Backend>()> f) {
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

DeviceFactors::~DeviceFactors() {
  for (auto& row : arrays_)
    for (auto& u : row)
      if (u.p) dev_->release(const_cast<void*>(u.p));
}

DeviceFactors::Upload DeviceFactors::get(Which which, bool float32, const double* values, std::size_t n) {
  std::lock_guard<std::mutex> lock(mutex_);
  Upload& u = arrays_[which][float32 ? 1 : 0];
  if (u.p || n == 0) return u;
  const std::size_t bytes = n * (float32 ? sizeof(float) : sizeof(double));
  void* p = dev_->alloc(bytes);
  try {
    const LaneHold held(*dev_);
    if (float32) {
      const std::vector<float> w(values, values + n);
      dev_->upload(held.lane, p, w.data(), bytes);
      dev_->sync(held.lane);  // w goes away
    } else {
      dev_->upload(held.lane, p, values, bytes);
      dev_->sync(held.lane);
    }
  } catch (...) {
    dev_->release(p);
    throw;
  }
  u = {p, bytes};
  if (uploads_) ++*uploads_;
  return u;
}

std::shared_ptr<DeviceFactors> FactorCache::on(const std::shared_ptr<Backend>& dev) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!current_ || current_->dev_ != dev) {
    current_ = std::make_shared<DeviceFactors>(dev);
    current_->uploads_ = &uploads_;
  }
  return current_;
}

std::size_t FactorCache::uploads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return uploads_;
}

Solver::Solver(const Design& design, std::vector<std::uint8_t> table, const Settings& settings)
    : dev_(shared_backend()) {
  const DesignFactors& f = design.factors();
  Plan& d = plan_;
  d.n = f.n;
  d.m = f.m;
  d.settings = settings;
  d.table = std::move(table);
  d.table.resize(d.n + 1, kSkip);
  auto wanted = [&](std::uint8_t kind) { return std::find(d.table.begin(), d.table.end(), kind) != d.table.end(); };
  // P, A, Q, C and the packed row products in float64 for the GEMMs and
  // residuals; H, Q and C in the work precision for the small systems.
  factors_ = f.device->on(dev_);
  std::size_t factor_bytes = 0;
  auto get = [&](DeviceFactors::Which which, bool float32, const auto& v) {
    const DeviceFactors::Upload u = factors_->get(which, float32, v.data(), v.size());
    factor_bytes += u.bytes;
    return u.p;
  };
  const bool f32 = settings.float32;
  d.pinv = static_cast<const double*>(get(DeviceFactors::Pinv, false, f.pinv));
  d.a = static_cast<const double*>(get(DeviceFactors::A, false, design.values()));
  if (wanted(kDual)) d.qinv = static_cast<const double*>(get(DeviceFactors::Qinv, false, f.gram_rows_inv));
  if (wanted(kGather)) d.gram = static_cast<const double*>(get(DeviceFactors::Gram, false, f.gram_rows));
  if (wanted(kGram)) d.outer = static_cast<const double*>(get(DeviceFactors::Outer, false, f.outer));
  if (wanted(kDeletion)) d.hat_work = get(DeviceFactors::Hat, f32, f.hat);
  d.qinv_work = f32 && wanted(kDual) ? get(DeviceFactors::Qinv, true, f.gram_rows_inv) : d.qinv;
  d.gram_work = f32 && wanted(kGather) ? get(DeviceFactors::Gram, true, f.gram_rows) : d.gram;
  // Kinds the device cannot take (a factor too large to keep, a system too
  // large) stay on the CPU.
  for (std::size_t nv = 0; nv <= d.n; ++nv) {
    std::uint8_t& t = d.table[nv];
    if ((t == kDeletion && !d.hat_work) || (t == kDual && !d.qinv) || (t == kGather && !d.gram) ||
        (t == kGram && !d.outer))
      t = kSkip;
    const int q = t == kGather ? static_cast<int>(nv) : t == kGram ? static_cast<int>(d.m) : static_cast<int>(d.n - nv);
    if (t != kFull && q > kMaxQ) t = kSkip;  // larger systems stay on the CPU
    if (t == kDeletion || t == kDual || t == kGather) d.max_q = std::max(d.max_q, q);
  }
  // Pieces are sized to the memory left (with what the lanes keep from
  // earlier solves), shared by the lanes, with room for the libraries' own
  // workspace; a cap on the device memory counts the factors in.
  const int lanes = std::max(1, dev_->lanes());
  std::size_t free = dev_->free_memory() + dev_->cached_bytes();
  if (settings.memory > 0) {
    if (settings.memory <= factor_bytes)
      throw OutOfMemory("the design's factors alone take " + std::to_string(factor_bytes >> 20) + " MiB");
    free = std::min(free, settings.memory - factor_bytes);
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

/// The buffers of one piece: the kernels' view of it (pc) and what the
/// passes add, on the device; then the page-locked host side (h*).
template <class T, class R> struct PieceBuffers {
  Piece<R> pc;
  std::uint64_t* sorted;
  int *pix, *start, *before, *gid, *lead, *info;
  double *tdel, *tdual, *tgather, *ugather, *xgather, *g, *b, *ugram, *x, *rss;
  float* xf;
  T *sys, *rhs;
  double *gsys, *grhs;
  double *hweights, *hrss;
  char* hx;
  std::uint8_t *hkind, *hdone;
  int *hcounts, *hnv, *hgid;
};

/// A piece's batches: one per (kind, padded size); Gram systems in float64.
template <class T> struct Batches {
  std::vector<Batch<T>> small;
  std::vector<Batch<double>> gram;
  bool has[6] = {};
};

/// One call's work on one lane: the chunk in pieces that fit the lane's
/// budget, each uploaded, classified, solved in batches and copied out.
/// T: the work precision of the small systems; R: the cube's values.
template <class T, class R> class PieceWork {
public:
  PieceWork(Solver& s, int lane, const Chunk& in, const ChunkResult& out)
      : s_(s), d_(s.plan_), dev_(*s.dev_), lane_(lane), in_(in), out_(out),
        sys_per_pixel_(s.sys_per_pixel_[static_cast<std::size_t>(lane)]),
        x_size_(out.x_float32 ? sizeof(float) : sizeof(double)) {}

  void run() {
    LaneBuffers& lane = dev_.buffers(lane_);
    for (std::size_t begin = 0; begin < in_.count;) {
      std::size_t staging = 0;
      const std::size_t count = piece_size(in_.count - begin);
      PieceBuffers<T, R> bf{};
      const std::size_t bytes = lay_out(count, nullptr, nullptr, &bf, &staging);
      lay_out(count, lane.device(bytes), lane.host(staging), &bf, &staging);
      upload(bf, in_.begin + begin, count);
      classify(bf, count);
      const Batches<T> batches = make_batches(bf, count);
      solve_batches(bf, batches, count);
      products(bf, batches, count);
      copy_out(bf, begin, count);
      ++s_.pieces_;
      begin += count;
    }
  }

private:
  /// Counts the piece's buffers for `count` pixels (every one may need the
  /// largest system), and places them once the memory exists. Returns the
  /// device bytes; `staging` gets the page-locked bytes.
  std::size_t lay_out(std::size_t count, char* dbase, char* hbase, PieceBuffers<T, R>* bf, std::size_t* staging) const {
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
    PieceBuffers<T, R>& b = *bf;
    Piece<R>& pc = b.pc;
    const std::size_t n = d_.n, m = d_.m, nc = n * count, mc = m * count;
    const bool dual = d_.qinv, gather = d_.gram, gram = d_.outer, weighted = in_.weights;
    dv(pc.raw, nc);                                   // the values as stored
    dv(pc.weights, nc, weighted);
    dv(pc.table, d_.table.size());                    // kinds by valid count
    dv(pc.y, nc);                                     // y~
    dv(pc.r, nc, in_.rss);                            // y~ again, then the residuals
    dv(pc.w, nc, gram);                               // weights, 0 where missing
    dv(pc.wy, nc, gram);                              // w y
    dv(pc.rows, static_cast<std::size_t>(d_.max_q) * count);  // the systems' rows
    dv(pc.q, count);
    dv(pc.nv, count);
    dv(pc.ymax, count);
    dv(pc.key, count);                                // sort keys: batch, then the system's rows
    dv(b.sorted, count);
    dv(pc.order, count);
    dv(b.pix, count);                                 // pixels in batch order
    dv(b.start, count);                               // groups of equal keys
    dv(b.before, count);
    dv(b.gid, count);
    dv(b.lead, count);
    dv(pc.kind, count);
    dv(pc.done, count);
    dv(pc.counts, static_cast<std::size_t>(kBuckets));
    dv(b.tdel, mc, d_.hat_work != nullptr);           // P y~
    dv(b.tdual, nc, dual);                            // Q y~
    dv(b.tgather, nc, gather);                        // C w
    dv(b.ugather, nc, gather);                        // w
    dv(b.xgather, mc, gather);                        // A^T w
    dv(b.g, d_.m * (d_.m + 1) / 2 * count, gram);     // packed A^T W A
    dv(b.b, mc, gram);                                // A^T W y
    dv(b.ugram, mc, gram);                            // x of the Gram systems
    dv(b.x, mc);                                      // X, observation-major
    dv(b.xf, mc, out_.x_float32);
    dv(b.rss, count, in_.rss);
    dv(b.info, count);
    hv(b.hweights, nc, weighted);
    hv(b.hcounts, static_cast<std::size_t>(kBuckets));
    hv(b.hgid, count);
    hl.add(mc * x_size_);
    if (hbase) b.hx = hbase + hl.bytes - align(mc * x_size_);
    hv(b.hnv, count);
    hv(b.hkind, count);
    hv(b.hdone, count);
    hv(b.hrss, count, in_.rss);
    *staging = hl.bytes;
    return dl.bytes;
  }

  /// The most pixels of what is left that fit the lane's budget and the
  /// solver's limit, with the systems' memory per pixel that the last piece
  /// took (a quarter more), or at first the most any pixel may need.
  std::size_t piece_size(std::size_t left) const {
    const auto maxqb = static_cast<std::size_t>(padded(d_.max_q));
    const auto mb = static_cast<std::size_t>(padded(static_cast<int>(d_.m)));  // a Gram system's padded size
    const double worst =
        static_cast<double>((maxqb * maxqb + maxqb) * sizeof(T) + (d_.outer ? (mb * mb + mb) * 8 : 0));
    const double per = sys_per_pixel_ >= 0 ? std::min(worst, sys_per_pixel_ * 1.25) : worst;
    auto bytes = [&](std::size_t count) {
      PieceBuffers<T, R> none{};
      std::size_t staging = 0;
      return lay_out(count, nullptr, nullptr, &none, &staging) + static_cast<std::size_t>(per * static_cast<double>(count));
    };
    if (bytes(1) > s_.budget_) throw OutOfMemory("the device has too little free memory for one pixel's work");
    std::size_t count = std::min(left, s_.limit_.load());
    while (bytes(count) > s_.budget_) count = std::max<std::size_t>(1, count / 2);
    return count;
  }

  /// Up: the piece's rows of the cube (and weights) as stored, and the table.
  void upload(PieceBuffers<T, R>& bf, std::size_t first, std::size_t count) {
    const std::size_t n = d_.n;
    const R* cube = static_cast<const R*>(in_.cube);
    dev_.upload_rows(lane_, const_cast<R*>(bf.pc.raw), cube + first, in_.stride * sizeof(R), count * sizeof(R), n);
    if (in_.weights) {
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < count; ++k) {
          const std::size_t e = i * in_.stride + first + k;
          bf.hweights[i * count + k] = in_.weights_float32 ? static_cast<const float*>(in_.weights)[e]
                                                            : static_cast<const double*>(in_.weights)[e];
        }
      dev_.upload(lane_, const_cast<double*>(bf.pc.weights), bf.hweights, n * count * sizeof(double));
    }
    dev_.upload(lane_, const_cast<std::uint8_t*>(bf.pc.table), d_.table.data(), d_.table.size());
    std::fill(bf.hcounts, bf.hcounts + kBuckets, 0);
    dev_.upload(lane_, bf.pc.counts, bf.hcounts, kBuckets * sizeof(int));
  }

  /// Masks, kinds and batch sizes on the device; the pixels sorted by key
  /// (each batch's pixels together, those with the same rows next to each
  /// other, one system per group of them).
  void classify(PieceBuffers<T, R>& bf, std::size_t count) {
    Piece<R>& pc = bf.pc;
    pc.n = static_cast<int>(d_.n);
    pc.m = static_cast<int>(d_.m);
    pc.ld = static_cast<int>(count);
    pc.max_q = d_.max_q;
    dev_.prepare(lane_, pc, static_cast<int>(count));
    dev_.sort(lane_, pc.key, bf.sorted, pc.order, bf.pix, static_cast<int>(count));
    dev_.download(lane_, bf.hcounts, pc.counts, kBuckets * sizeof(int));
    dev_.sync(lane_);
    int total = 0;
    for (int bk = 0; bk < kBuckets; ++bk) total += bf.hcounts[bk];
    if (total > 0) {
      dev_.group(lane_, bf.sorted, bf.start, bf.before, bf.gid, bf.lead, total);
      dev_.download(lane_, bf.hgid, bf.gid, static_cast<std::size_t>(total) * sizeof(int));
      dev_.sync(lane_);
    }
  }

  /// The systems' memory, now that their number and sizes are known, and
  /// the batches laid out one after another in it.
  Batches<T> make_batches(PieceBuffers<T, R>& bf, std::size_t count) {
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
    char* sbase = dev_.buffers(lane_).systems(sl.bytes);
    bf.sys = reinterpret_cast<T*>(sbase + at_sys);
    bf.rhs = reinterpret_cast<T*>(sbase + at_rhs);
    bf.gsys = reinterpret_cast<double*>(sbase + at_gsys);
    bf.grhs = reinterpret_cast<double*>(sbase + at_grhs);
    sys_per_pixel_ = static_cast<double>(sl.bytes) / static_cast<double>(count);

    Batches<T> out;
    std::size_t s = 0, a = 0, l = 0, ga = 0, gl = 0;
    for (int bk = 0; bk < kBuckets; ++bk) {
      if (bf.hcounts[bk] == 0) continue;
      const int kind = kDeletion + bk / kSizes;
      if (kind == kGram) {
        Batch<double> gb = batch<double>(bf, bk, s, count);
        gb.g = bf.g;
        gb.b = bf.b;
        gb.ridge = d_.settings.ridge;
        gb.u = bf.ugram;
        gb.S = bf.gsys + ga;
        gb.z = bf.grhs + gl;
        gb.tau = d_.settings.gram_tau;
        ga += static_cast<std::size_t>(gb.groups) * gb.qb * gb.qb;
        gl += static_cast<std::size_t>(gb.count) * gb.qb;
        out.gram.push_back(gb);
      } else {
        Batch<T> bt = batch<T>(bf, bk, s, count);
        bt.S = bf.sys + a;
        bt.z = bf.rhs + l;
        bt.tau = std::is_same_v<T, float> ? std::max(d_.settings.tau, kFloat32Tau) : d_.settings.tau;
        if (kind == kDeletion || kind == kDual) {
          bt.K = static_cast<const T*>(kind == kDeletion ? d_.hat_work : d_.qinv_work);
          bt.t = kind == kDeletion ? bf.tdel : bf.tdual;
          bt.u = bf.pc.y;
          bt.growth = d_.settings.growth;
        } else {  // gather
          bt.K = static_cast<const T*>(d_.gram_work);
          bt.t = bf.tgather;
          bt.u = bf.ugather;
        }
        a += static_cast<std::size_t>(bt.groups) * bt.qb * bt.qb;
        l += static_cast<std::size_t>(bt.count) * bt.qb;
        out.small.push_back(bt);
      }
      out.has[kind] = true;
      const int count_bk = bf.hcounts[bk];
      s_.systems_ += static_cast<std::size_t>(bf.hgid[s + static_cast<std::size_t>(count_bk) - 1] - bf.hgid[s] + 1);
      s += static_cast<std::size_t>(count_bk);
    }
    return out;
  }

  /// What every batch of bucket bk has, in either precision; its pixels
  /// start at position s of the sorted order.
  template <class U> Batch<U> batch(const PieceBuffers<T, R>& bf, int bk, std::size_t s, std::size_t count) const {
    Batch<U> b;
    b.n = static_cast<int>(d_.n);
    b.m = static_cast<int>(d_.m);
    b.ld = static_cast<int>(count);
    b.kind = kDeletion + bk / kSizes;
    b.qb = (bk % kSizes + 1) * 8;
    b.count = bf.hcounts[bk];
    b.first = static_cast<int>(s);
    b.g0 = bf.hgid[s];
    b.groups = bf.hgid[s + static_cast<std::size_t>(b.count) - 1] - b.g0 + 1;
    b.gid = bf.gid + s;
    b.lead = bf.lead;
    b.pix = bf.pix + s;
    b.q = bf.pc.q;
    b.rows = bf.pc.rows;
    b.A = d_.a;
    b.y = bf.pc.y;
    b.ymax = bf.pc.ymax;
    b.info = bf.info + s;
    b.done = bf.pc.done;
    return b;
  }

  /// Pass 1 solves; in float32, pass 2 refines from the float64 residuals
  /// with the same factors; the Gram solutions are refined once against the
  /// least-squares residual (see Batch). Y~ and W are (C x N) column-major
  /// as stored, so the products take them transposed.
  void solve_batches(PieceBuffers<T, R>& bf, const Batches<T>& batches, std::size_t count) {
    const int M = static_cast<int>(d_.m), N = static_cast<int>(d_.n), C = static_cast<int>(count);
    const int L = lane_;
    if (batches.has[kGram]) {  // G = packed A^T W A and b = A^T W y for every pixel: two GEMMs
      const int TP = static_cast<int>(d_.m * (d_.m + 1) / 2);
      dev_.gemm(L, 'N', 'T', C, TP, N, 1.0, bf.pc.w, C, d_.outer, TP, 0.0, bf.g, C);
      dev_.gemm(L, 'N', 'T', C, M, N, 1.0, bf.pc.wy, C, d_.a, M, 0.0, bf.b, C);
      dev_.zero(L, bf.ugram, d_.m * count * sizeof(double));
    }
    if (batches.has[kGather]) dev_.zero(L, bf.ugather, d_.n * count * sizeof(double));
    // float32 systems: two refinements, the last step below kFloat32Step of
    // the pixel's unknowns or the CPU takes it (see scatter_system). Gathered
    // systems (C_VV, conditioned like A_V squared) are refined in float64
    // too, from A itself: their residual A_V (A_V^T w) - y_V, two products,
    // also takes out what forming C lost.
    constexpr bool f32 = std::is_same_v<T, float>;
    const int passes = f32 ? 3 : batches.has[kGather] ? 2 : 1;
    for (int pass = 0; pass < passes; ++pass) {
      if (batches.has[kDeletion]) dev_.gemm(L, 'N', 'T', M, C, N, 1.0, d_.pinv, M, bf.pc.y, C, 0.0, bf.tdel, M);
      if (batches.has[kDual]) dev_.gemm(L, 'N', 'T', N, C, N, 1.0, d_.qinv, N, bf.pc.y, C, 0.0, bf.tdual, N);
      if (batches.has[kGather] && pass == 0) dev_.gemm(L, 'N', 'T', N, C, N, 1.0, d_.gram, N, bf.ugather, C, 0.0, bf.tgather, N);
      if (batches.has[kGather] && pass > 0) {  // x = A^T w, then A x: where C w was
        dev_.gemm(L, 'N', 'T', C, M, N, 1.0, bf.ugather, C, d_.a, M, 0.0, bf.xgather, C);
        dev_.gemm(L, 'T', 'T', N, C, M, 1.0, d_.a, M, bf.xgather, C, 0.0, bf.tgather, N);
      }
      auto run_batch = [&](auto b) {
        if (pass > 0 && !f32 && b.kind != kGather) return;  // float64 systems: only the gathered ones are refined
        if (pass > 0 && pass == passes - 1) b.step = f32 ? kFloat32Step : d_.settings.gather_step;
        if (pass == 0) {
          dev_.build(L, b);
          dev_.factor(L, b.S, b.qb, b.groups, const_cast<int*>(b.info));
          dev_.check_pivots(L, b);
        } else {
          dev_.rhs(L, b);
        }
        dev_.solve(L, b.S, b.z, b.qb, b.count, b.gid, b.g0);
        dev_.scatter(L, b, pass == 0);
      };
      for (const auto& b : batches.small) run_batch(b);
      if (pass == 0)
        for (const auto& b : batches.gram) run_batch(b);
    }
    if (batches.has[kGram]) {  // one refinement of the Gram solutions against W (y - A x): three products
      dev_.gemm(L, 'N', 'N', C, N, M, 1.0, bf.ugram, C, d_.a, M, 0.0, bf.pc.wy, C);  // A u, where w y was
      dev_.weigh(L, bf.pc.w, bf.pc.y, bf.pc.wy, d_.n * count);
      dev_.gemm(L, 'N', 'T', C, M, N, 1.0, bf.pc.wy, C, d_.a, M, 0.0, bf.b, C);  // A^T W r, where A^T W y was
      for (Batch<double> b : batches.gram) {
        b.refine = bf.b;
        b.step = d_.settings.gram_step;
        dev_.rhs(L, b);
        dev_.solve(L, b.S, b.z, b.qb, b.count, b.gid, b.g0);
        dev_.scatter(L, b, false);
      }
    }
  }

  /// X observation-major like the output cube: (C x M) = Y~ P^T, then the
  /// gather pixels' W A and the Gram pixels' own x; the residuals; X in the
  /// output's type.
  void products(PieceBuffers<T, R>& bf, const Batches<T>& batches, std::size_t count) {
    const int M = static_cast<int>(d_.m), N = static_cast<int>(d_.n), C = static_cast<int>(count);
    const int L = lane_;
    dev_.gemm(L, 'N', 'T', C, M, N, 1.0, bf.pc.y, C, d_.pinv, M, 0.0, bf.x, C);
    if (batches.has[kGather]) {
      dev_.gemm(L, 'N', 'T', C, M, N, 1.0, bf.ugather, C, d_.a, M, 0.0, bf.xgather, C);
      dev_.select(L, bf.pc.kind, kGather, bf.xgather, bf.x, C, d_.m * count);
    }
    if (batches.has[kGram]) dev_.select(L, bf.pc.kind, kGram, bf.ugram, bf.x, C, d_.m * count);
    if (in_.rss) {  // r = y~ - X A^T over the valid values (weighted)
      dev_.gemm(L, 'N', 'N', C, N, M, -1.0, bf.x, C, d_.a, M, 1.0, bf.pc.r, C);
      dev_.rss(L, bf.pc.raw, bf.pc.w, bf.pc.r, N, C, bf.rss);
    }
    if (bf.xf) dev_.narrow(L, bf.x, bf.xf, count * d_.m);
  }

  /// The solutions of the pixels done here, row by row into the output:
  /// straight from the device when the piece is all done, else picked; and
  /// the per-pixel answers.
  void copy_out(PieceBuffers<T, R>& bf, std::size_t begin, std::size_t count) {
    const int L = lane_;
    dev_.download(L, bf.hnv, bf.pc.nv, count * sizeof(int));
    dev_.download(L, bf.hkind, bf.pc.kind, count);
    dev_.download(L, bf.hdone, bf.pc.done, count);
    if (in_.rss) dev_.download(L, bf.hrss, bf.rss, count * sizeof(double));
    dev_.sync(L);
    bool all = true;
    for (std::size_t k = 0; k < count && all; ++k) all = bf.hdone[k] != 0;
    char* rows_out = static_cast<char*>(out_.x) + begin * x_size_;
    const void* x = bf.xf ? static_cast<const void*>(bf.xf) : bf.x;
    if (all) dev_.download_rows(L, rows_out, out_.x_stride * x_size_, x, count * x_size_, d_.m);
    else dev_.download(L, bf.hx, x, count * d_.m * x_size_);
    dev_.sync(L);
    for (std::size_t j = 0; j < d_.m && !all; ++j) {
      const char* src = bf.hx + j * count * x_size_;
      char* dst = rows_out + j * out_.x_stride * x_size_;
      for (std::size_t k = 0; k < count; ++k)
        if (bf.hdone[k]) std::memcpy(dst + k * x_size_, src + k * x_size_, x_size_);
    }
    std::memcpy(out_.nv + begin, bf.hnv, count * sizeof(int));
    std::memcpy(out_.kind + begin, bf.hkind, count);
    std::memcpy(out_.done + begin, bf.hdone, count);
    if (in_.rss && out_.rss) std::memcpy(out_.rss + begin, bf.hrss, count * sizeof(double));
  }

  Solver& s_;
  const Solver::Plan& d_;
  Backend& dev_;
  const int lane_;
  const Chunk& in_;
  const ChunkResult& out_;
  double& sys_per_pixel_;
  const std::size_t x_size_;
};

void Solver::run(int lane, const Chunk& in, const ChunkResult& out) {
  for (;;) {
    try {
      if (plan_.settings.float32 && in.float32) PieceWork<float, float>(*this, lane, in, out).run();
      else if (plan_.settings.float32) PieceWork<float, double>(*this, lane, in, out).run();
      else if (in.float32) PieceWork<double, float>(*this, lane, in, out).run();
      else PieceWork<double, double>(*this, lane, in, out).run();
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

double normal_equations(const std::vector<double>& a, std::size_t m, const std::vector<PixelRows>& pixels,
                        std::vector<double>& x) {
  std::shared_ptr<Backend> dev = shared_backend();
  const std::size_t count = pixels.size(), n = a.size() / std::max<std::size_t>(m, 1);
  // Each pixel's A_V (column-major, rows V), built beforehand.
  std::vector<std::vector<double>> av(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::size_t nv = pixels[k].rows.size();
    av[k].resize(nv * m);
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t r = 0; r < nv; ++r) av[k][j * nv + r] = a[static_cast<std::size_t>(pixels[k].rows[r]) * m + j];
  }
  const Memory g(*dev, m * m * sizeof(double));
  const Memory rhs(*dev, count * m * sizeof(double));
  const Memory av_d(*dev, std::max<std::size_t>(n * m, 1) * sizeof(double));
  const Memory y_d(*dev, std::max<std::size_t>(n, 1) * sizeof(double));
  const Memory info(*dev, count * sizeof(int));
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
    const int nv = static_cast<int>(pixels[k].y.size());
    dev->upload(L, A, av[k].data(), av[k].size() * sizeof(double));
    dev->upload(L, Y, pixels[k].y.data(), pixels[k].y.size() * sizeof(double));
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
  const double seconds = seconds_since(t0);
  for (std::size_t k = 0; k < count; ++k)
    if (status[k] != 0 || pixels[k].y.empty()) std::fill(x.begin() + static_cast<long>(k * m), x.begin() + static_cast<long>((k + 1) * m), std::numeric_limits<double>::quiet_NaN());
  return seconds;
}

Floors floors(std::size_t m, std::size_t n, std::size_t pixels, const void* cube, std::size_t bytes,
              std::size_t x_bytes) {
  std::shared_ptr<Backend> dev = shared_backend();
  Floors out;
  const LaneHold held(*dev);
  const int L = held.lane;
  // The GEMM on up to 65,536 columns, scaled to all of them; fewer where the
  // device has too little memory left beside the solver's buffers.
  std::vector<double> a(m * n);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = std::sin(0.37 * static_cast<double>(i));  // not zeros
  for (std::size_t cols = std::max<std::size_t>(1, std::min<std::size_t>(pixels, 65536));; cols /= 2) {
    try {
      std::vector<double> b(n * cols);
      for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::cos(0.61 * static_cast<double>(i));
      const Memory da(*dev, a.size() * sizeof(double)), db(*dev, b.size() * sizeof(double)),
          dc(*dev, m * cols * sizeof(double));
      dev->upload(L, da.p, a.data(), a.size() * sizeof(double));
      dev->upload(L, db.p, b.data(), b.size() * sizeof(double));
      dev->sync(L);
      out.gemm = best_of(3, [&] {
        dev->gemm(L, 'N', 'N', static_cast<int>(m), static_cast<int>(cols), static_cast<int>(n), 1.0,
                  static_cast<const double*>(da.p), static_cast<int>(m), static_cast<const double*>(db.p),
                  static_cast<int>(n), 0.0, static_cast<double*>(dc.p), static_cast<int>(m));
        dev->sync(L);
      }) * static_cast<double>(pixels) / static_cast<double>(cols);
      break;
    } catch (const OutOfMemory&) {
      if (cols <= 256) throw;
    }
  }
  // The cube up, and X down, in pieces through one device buffer (at most
  // 256 MiB, less where the device has less); X into one host buffer of a
  // piece, written before so that the copies are all that is timed.
  const std::size_t most = std::max(bytes, x_bytes);
  for (std::size_t piece = std::max<std::size_t>(1, std::min<std::size_t>(most, std::size_t{256} << 20));; piece /= 2) {
    try {
      const Memory buffer(*dev, piece);
      const char* src = static_cast<const char*>(cube);
      out.upload = best_of(2, [&] {
        for (std::size_t at = 0; at < bytes; at += piece) dev->upload(L, buffer.p, src + at, std::min(piece, bytes - at));
        dev->sync(L);
      });
      std::vector<char> host(std::min(piece, x_bytes), 1);
      out.download = best_of(2, [&] {
        for (std::size_t at = 0; at < x_bytes; at += piece) dev->download(L, host.data(), buffer.p, std::min(piece, x_bytes - at));
        dev->sync(L);
      });
      break;
    } catch (const OutOfMemory&) {
      if (piece <= (std::size_t{1} << 20)) throw;
    }
  }
  return out;
}

}  // namespace cubesolve::detail::gpu
