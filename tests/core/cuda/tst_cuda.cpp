// The CUDA backend against the CPU engine. Without a usable device the
// device tests skip, saying why; what must hold everywhere is checked too.
#include "cases.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/workflow/bench.hpp>

#include "cuda/backend.hpp"
#include "cuda/gpu.hpp"
#include "engine/factors.hpp"

#include <QtTest>

#include <algorithm>

using namespace cubesolve;
using namespace testing;
namespace gpu = cubesolve::detail::gpu;

namespace {

/// While it lives, the engine's device is the reference backend with
/// `memory` bytes of device memory of which no allocation may exceed `largest`.
struct Emulated {
  explicit Emulated(std::size_t memory, std::size_t largest = 0) {
    gpu::set_backend_factory([=] { return gpu::make_host_backend(memory, largest ? largest : memory); });
  }
  ~Emulated() { gpu::set_backend_factory(nullptr); }
  Emulated(const Emulated&) = delete;
  Emulated& operator=(const Emulated&) = delete;
};

/// Data with a signal: y = A x + 0.01 noise on the valid rows.
Case signal_case(std::size_t n, std::size_t m, std::size_t side, double missing, std::uint64_t seed) {
  Case c = random_case(n, m, side, side, missing, 0.0, seed);
  Rng rng(seed + 1);
  const std::size_t P = side * side;
  std::vector<double> x(m);
  for (std::size_t p = 0; p < P; ++p) {
    for (auto& v : x) v = rng.normal();
    for (std::size_t i = 0; i < n; ++i) {
      double& y = c.y[i * P + p];
      if (std::isnan(y)) continue;
      double s = 0;
      for (std::size_t j = 0; j < m; ++j) s += c.a[i * m + j] * x[j];
      y = s + 0.01 * rng.normal();
    }
  }
  return c;
}

constexpr std::size_t kMiB = std::size_t{1} << 20;

/// One call of the device solver on a whole cube (N, H, W), outside the engine.
struct DirectRun {
  std::vector<double> x, rss;  // x observation-major: (M, H * W)
  std::vector<std::int32_t> nv;
  std::vector<std::uint8_t> kind, done;
  std::size_t pieces = 0, systems = 0;
  int shrinks = 0;
};

DirectRun solve_directly(const Array& cube, const Array& a, const std::vector<std::uint8_t>& table) {
  const Design design(a);
  const std::size_t B = cube.dim(1) * cube.dim(2), M = a.dim(1);
  gpu::Settings settings;
  settings.tau = 1e-4;
  settings.growth = 1e6;
  gpu::Solver s(design, table, settings);
  DirectRun o{std::vector<double>(B * M), std::vector<double>(B), std::vector<std::int32_t>(B),
              std::vector<std::uint8_t>(B), std::vector<std::uint8_t>(B)};
  gpu::Chunk in;
  in.cube = cube.raw();
  in.float32 = cube.dtype() == DType::Float32;
  in.stride = B;
  in.count = B;
  in.rss = true;
  gpu::ChunkResult out;
  out.x = o.x.data();
  out.x_stride = B;
  out.nv = o.nv.data();
  out.kind = o.kind.data();
  out.done = o.done.data();
  out.rss = o.rss.data();
  s.solve(in, out);
  o.pieces = s.pieces();
  o.systems = s.systems();
  o.shrinks = s.shrinks();
  return o;
}

/// The device's table for a design of full column rank: deletion from M valid rows up.
std::vector<std::uint8_t> deletion_table(std::size_t n, std::size_t m) {
  std::vector<std::uint8_t> table(n + 1, gpu::kDeletion);
  table[n] = gpu::kFull;
  for (std::size_t nv = 0; nv < m; ++nv) table[nv] = gpu::kSkip;
  return table;
}

std::string no_device_reason() {
  try {
    resolve_device(Device::Cuda);
    return {};
  } catch (const NumericalError& e) {
    return e.what();
  }
}

}  // namespace

class TestCuda : public QObject {
  Q_OBJECT
private slots:
  void withoutADeviceAutoIsTheCpu() {
    const std::string why = no_device_reason();
    if (why.empty()) QSKIP("a CUDA device is present");
    QCOMPARE(resolve_device(Device::Auto), Device::Cpu);
    QVERIFY(QString::fromStdString(why).contains("no usable CUDA device"));
    QVERIFY(describe_devices().size() == 2);
  }

  // The device pipeline on the reference backend (the same kernels and
  // pipeline as on a GPU, run by the host), and on a real device when there is one.
  void pipelineMatchesGelsd_data() { pipelineCases(); }
  void pipelineMatchesGelsd() {
    const Emulated device(256 * kMiB);
    checkPipeline();
  }
  void deviceMatchesGelsd_data() { pipelineCases(); }
  void deviceMatchesGelsd() {
    const std::string why = no_device_reason();
    if (!why.empty()) QSKIP(why.c_str());
    checkPipeline();
  }

  // Deletions that break the rank (a bridge of the network among the
  // missing rows) are left to the CPU's paths, in both device precisions;
  // those that keep it stay on the device.
  void bridgesLeaveTheDevice_data() { bridgeCases(); }
  void bridgesLeaveTheDevice() {
    const Emulated device(256 * kMiB);
    checkBridges();
  }
  void bridgesLeaveTheRealDevice_data() { bridgeCases(); }
  void bridgesLeaveTheRealDevice() {
    const std::string why = no_device_reason();
    if (!why.empty()) QSKIP(why.c_str());
    checkBridges();
  }

private:
  static void bridgeCases() {
    QTest::addColumn<bool>("float64");
    QTest::newRow("float32 + refinement") << false;
    QTest::newRow("float64") << true;
  }
  static void checkBridges() {
    QFETCH(bool, float64);
    SolveOptions o;
    o.device = Device::Cuda;
    o.device_float64 = float64;
    const Case one = bridge_report_case();
    const SolveResult r1 = run(one, o);
    QCOMPARE(r1.rank.data<std::int32_t>()[0], 4);
    QVERIFY(max_error(one, r1, o) <= 1e-9);
    const Case c = bridged_network_case();
    {  // rounding leaves some bridge's 1 - h_ii above 0: a tiny pivot, not a negative one, to catch
      const std::vector<double> d = deletion_pivots(c.a, c.n, c.m);
      QVERIFY(std::any_of(d.begin(), d.begin() + kBridges, [](double v) { return v > 0; }));
    }
    const SolveResult r = run(c, o);
    QCOMPARE(r.device, Device::Cuda);
    // Only the pixels that keep the bridge (16, most of which keep the rank) may stay.
    QVERIFY2(r.device_pixels >= 12 && r.device_pixels <= 16, qPrintable(QString::number(r.device_pixels)));
    QVERIFY(r.count(PixelStatus::MinNorm) >= 48);
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }
  static void pipelineCases() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::addColumn<bool>("float64");
    QTest::addColumn<bool>("signal");
    QTest::addColumn<bool>("weighted");
    QTest::addColumn<double>("ridge");
    QTest::newRow("deletion, float64") << 100 << 50 << 0.2 << true << false << false << 0.0;
    QTest::newRow("dual (the seed's shape), float64") << 50 << 100 << 0.2 << true << false << false << 0.0;
    QTest::newRow("deletion, float32 + refinement") << 100 << 50 << 0.2 << false << true << false << 0.0;
    QTest::newRow("dual, float32 + refinement") << 50 << 100 << 0.2 << false << true << false << 0.0;
    QTest::newRow("deletion, pure noise, float32 + refinement") << 100 << 50 << 0.2 << false << false << false << 0.0;
    QTest::newRow("many system sizes, float32 + refinement") << 150 << 100 << 0.15 << false << true << false << 0.0;
    QTest::newRow("full data, float32 + refinement") << 30 << 8 << 0.0 << false << true << false << 0.0;
    QTest::newRow("gather (C_VV), float32 + refinement") << 50 << 100 << 0.6 << false << true << false << 0.0;
    QTest::newRow("gather (C_VV), float64") << 50 << 100 << 0.6 << true << true << false << 0.0;
    QTest::newRow("weights (Gram), float32 + refinement") << 30 << 8 << 0.2 << false << true << true << 0.0;
    QTest::newRow("weights (Gram), float64") << 30 << 8 << 0.2 << true << false << true << 0.0;
    QTest::newRow("ridge (Gram), float32 + refinement") << 20 << 6 << 0.2 << false << true << false << 0.5;
    QTest::newRow("weights and ridge, underdetermined") << 8 << 12 << 0.2 << false << true << true << 0.1;
    QTest::newRow("some pixels for the CPU paths") << 20 << 5 << 0.5 << false << true << false << 0.0;
    QTest::newRow("mostly missing (no-data pixels)") << 4 << 2 << 0.7 << false << false << false << 0.0;
  }
  static void checkPipeline() {
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    QFETCH(bool, float64);
    QFETCH(bool, signal);
    QFETCH(bool, weighted);
    QFETCH(double, ridge);
    const auto N = static_cast<std::size_t>(n), M = static_cast<std::size_t>(m);
    Case c = signal ? signal_case(N, M, 40, missing, 23) : random_case(N, M, 40, 40, missing, 0.0, 23);
    if (weighted) {  // weights in (0.2, 2), and a few zeros (missing too)
      Rng rng(77);
      c.wt.resize(c.y.size());
      for (auto& w : c.wt) w = rng.uniform() < 0.05 ? 0.0 : 0.2 + 1.8 * rng.uniform();
    }
    SolveOptions o;
    o.device = Device::Cuda;
    o.device_float64 = float64;
    o.ridge = ridge;
    o.threads = 2;
    SolveResult r64;
    for (DType dtype : {DType::Float64, DType::Float32}) {  // a float32 cube goes up, and X comes back, in float32
      const SolveResult r = run(c, o, dtype);
      QCOMPARE(r.device, Device::Cuda);
      QVERIFY2(r.warnings.empty(), r.warnings.empty() ? "" : r.warnings.front().c_str());
      qInfo("pixels solved on the device: %zu of %zu", r.device_pixels, c.h * c.w);
      QVERIFY(r.device_pixels > c.h * c.w / 20);
      if (dtype == DType::Float64) {
        const double err = max_error(c, r, o);
        qInfo("max rel error vs gelsd %.3g", err);
        // float64 work, and float32 work after one refinement step, reach 1e-9.
        QVERIFY(err <= 1e-9);
        r64 = r;
        continue;
      }
      // The float32 cube's values are the float64 ones rounded: X agrees to float32 accuracy.
      QCOMPARE(r.x.dtype(), DType::Float32);
      const std::size_t P = c.h * c.w;
      for (std::size_t p = 0; p < P; ++p) {
        double d = 0, norm = 0;
        for (std::size_t j = 0; j < c.m; ++j) {
          const double u = r.x.value(j * P + p), v = r64.x.value(j * P + p);
          d += (u - v) * (u - v);
          norm += v * v;
        }
        if (std::isnan(norm)) {
          QVERIFY(std::isnan(d));
          continue;
        }
        QVERIFY(std::sqrt(d) <= 1e-4 * std::max(std::sqrt(norm), 1e-3));
      }
    }
  }

private slots:

  void outOfDeviceMemory() {
    const Case c = signal_case(100, 50, 48, 0.2, 5);
    SolveOptions o;
    o.device = Device::Cuda;
    o.threads = 2;
    SolveResult ample;
    {
      const Emulated device(256 * kMiB);
      ample = run(c, o);
      QVERIFY(ample.warnings.empty());
    }
    auto same = [&](const SolveResult& r) {  // up to the GEMMs' rounding, which depends on their sizes
      for (std::size_t i = 0; i < r.x.size(); ++i)
        if (!(std::fabs(r.x.value(i) - ample.x.value(i)) <= 1e-12 * std::max(1.0, std::fabs(ample.x.value(i)))))
          return false;
      return true;
    };
    auto warned = [](const SolveResult& r, const char* what) {
      for (const auto& w : r.warnings)
        if (w.find(what) != std::string::npos) return true;
      return false;
    };
    {  // allocations above 1 MiB fail: smaller pieces, the same answers
      const Emulated device(256 * kMiB, kMiB);
      const SolveResult r = run(c, o);
      QCOMPARE(r.device, Device::Cuda);
      QVERIFY(warned(r, "cut into pieces of"));
      QVERIFY(same(r));
    }
    {  // the factors fit (none over 320 KiB), no piece does (64 pixels need over 700 KiB): the CPU, with a warning
      const Case tall = signal_case(200, 10, 24, 0.2, 6);
      const Emulated device(256 * kMiB, 400 * 1024);
      const SolveResult r = run(tall, o);
      QCOMPARE(r.device, Device::Cuda);
      QCOMPARE(r.device_pixels, std::size_t{0});
      QVERIFY(warned(r, "they were solved on the CPU"));
      QVERIFY(max_error(tall, r, o) <= 1e-9);
    }
    {  // not even the design's factors fit
      const Emulated device(16 * 1024);
      const SolveResult r = run(c, o);
      QCOMPARE(r.device, Device::Cpu);
      QVERIFY(warned(r, "too little free memory"));
      QVERIFY(max_error(c, r, o) <= 1e-9);
    }
    {  // a cap on the device memory used: more pieces, nothing to warn about
      const Emulated device(256 * kMiB);
      SolveOptions capped = o;
      capped.device_memory = 2 * kMiB;
      const SolveResult r = run(c, capped);
      QCOMPARE(r.device, Device::Cuda);
      QVERIFY(r.warnings.empty());
      QVERIFY(same(r));
      capped.device_memory = 64 * 1024;  // less than the factors
      const SolveResult cpu = run(c, capped);
      QCOMPARE(cpu.device, Device::Cpu);
      QVERIFY(warned(cpu, "factors alone take"));
    }
  }

  // An InSAR network that a block of pixels splits (they lose every
  // interferogram across one gap): the device leaves those pixels, whose
  // deletion systems fail the pivot rule, and the CPU solves them as gelsd
  // does, with one SVD for the block's shared mask.
  void splitNetworkLeftToTheCpu() {
    const Emulated device(64 * kMiB);
    const Case c = split_network_case(true);
    const std::size_t P = 400, M = 13;
    SolveOptions o;
    o.device = Device::Cuda;
    const SolveResult r = run(c, o);
    QVERIFY(r.warnings.empty());
    QCOMPARE(r.device_pixels, P - kSplitBlock);
    QCOMPARE(r.paths[static_cast<std::size_t>(SolvePath::Group)], kSplitBlock);  // one SVD for the block
    QCOMPARE(r.rank.data<std::int32_t>()[0], int(M - 1));
    QCOMPARE(static_cast<PixelStatus>(r.status.data<std::uint8_t>()[0]), PixelStatus::MinNorm);
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  // The design's factors go up once and stay while the Design lives: solving
  // again (a streamed solve's next row block) uploads nothing; another
  // precision uploads its own copies once.
  void factorsStayOnTheDevice() {
    const std::shared_ptr<gpu::Backend> dev = gpu::make_host_backend(256 * kMiB, 256 * kMiB);
    gpu::set_backend_factory([dev] { return dev; });
    struct Reset {
      ~Reset() { gpu::set_backend_factory(nullptr); }
    } reset;
    const Case c = signal_case(40, 10, 16, 0.15, 21);
    const Array cube = make_cube(DType::Float32, c.n, c.h, c.w, c.y);
    Array a(DType::Float64, {c.n, c.m});
    std::copy(c.a.begin(), c.a.end(), a.data<double>());
    const Design design(a);
    const auto& cache = *design.factors().device;
    SolveOptions o;
    o.device = Device::Cuda;
    QCOMPARE(cache.uploads(), std::size_t{0});
    const SolveResult first = solve(cube, design, nullptr, o);
    QCOMPARE(first.device_pixels, std::size_t{256});
    const std::size_t uploads = cache.uploads();
    QVERIFY(uploads >= 3);  // P, A and H at least
    for (int block = 0; block < 3; ++block) QCOMPARE(solve(cube, design, nullptr, o).device_pixels, std::size_t{256});
    QCOMPARE(cache.uploads(), uploads);
    o.device_float64 = true;
    QCOMPARE(solve(cube, design, nullptr, o).device_pixels, std::size_t{256});
    QCOMPARE(cache.uploads(), uploads + 1);  // H in float64
    QCOMPARE(solve(cube, design, nullptr, o).device_pixels, std::size_t{256});
    QCOMPARE(cache.uploads(), uploads + 1);
  }

  // A device whose set-up fails (a driver error, say): the CPU, with a warning.
  void deviceThatCannotBeSetUp() {
    gpu::set_backend_factory([]() -> std::shared_ptr<gpu::Backend> { throw NumericalError("cuBLAS: cublasCreate failed"); });
    const Case c = random_case(30, 8, 10, 10, 0.2, 0.0, 8);
    SolveOptions o;
    o.device = Device::Cuda;
    const SolveResult r = run(c, o);
    gpu::set_backend_factory(nullptr);
    QCOMPARE(r.device, Device::Cpu);
    QCOMPARE(r.warnings.size(), std::size_t{1});
    QVERIFY(r.warnings.front().find("could not be set up (cuBLAS: cublasCreate failed)") != std::string::npos);
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  // The device does not check each pixel's condition: an explicit rcond is
  // solved on the CPU, with a warning, and still matches gelsd at that rcond.
  void explicitRcondOnTheCpu() {
    Emulated device(256 * kMiB);
    const Case c = random_case(30, 8, 10, 10, 0.2, 0.0, 8);
    SolveOptions o;
    o.device = Device::Cuda;
    o.rcond = 1e-5;
    const SolveResult r = run(c, o);
    QCOMPARE(r.device, Device::Cpu);
    QCOMPARE(r.device_pixels, std::size_t{0});
    QCOMPARE(r.warnings.size(), std::size_t{1});
    QCOMPARE(r.warnings.front(), std::string("an explicit rcond is solved on the CPU"));
    QVERIFY(max_error(c, r, o) <= 1e-9);
  }

  // A chunk larger than the device's memory is cut into pieces by the free
  // memory alone (no allocation fails), with the same answers.
  void chunkLargerThanTheDevice() {
    const Case c = signal_case(100, 50, 64, 0.2, 9);
    const Array cube = make_cube(DType::Float32, c.n, c.h, c.w, c.y);
    Array a(DType::Float64, {c.n, c.m});
    std::copy(c.a.begin(), c.a.end(), a.data<double>());
    const std::size_t B = c.h * c.w, M = c.m;
    DirectRun big, small;
    {
      const Emulated device(512 * kMiB);
      big = solve_directly(cube, a, deletion_table(c.n, M));
    }
    {
      const Emulated device(4 * kMiB);  // the chunk needs about 22 MiB
      small = solve_directly(cube, a, deletion_table(c.n, M));
    }
    qInfo("pieces with 4 MiB of device memory: %zu", small.pieces);
    QCOMPARE(big.pieces, std::size_t{1});
    QVERIFY(small.pieces >= 4);
    QCOMPARE(small.shrinks, 0);  // cut by the free memory, not by failed allocations
    QVERIFY(big.done == small.done);
    QVERIFY(big.kind == small.kind);
    QVERIFY(big.nv == small.nv);
    std::size_t vouched = 0;
    for (std::size_t k = 0; k < B; ++k) {
      if (!big.done[k]) continue;
      ++vouched;
      QVERIFY(std::fabs(big.rss[k] - small.rss[k]) <= 1e-9 * std::max(1.0, big.rss[k]));
      for (std::size_t j = 0; j < M; ++j)  // up to the GEMMs' rounding, which depends on their sizes
        QVERIFY(std::fabs(big.x[j * B + k] - small.x[j * B + k]) <= 1e-12 * std::max(1.0, std::fabs(big.x[j * B + k])));
    }
    QVERIFY(vouched > B * 9 / 10);
  }

  // Pixels whose masks are the same share one factorization on the device.
  void identicalMasksShareOneSystem() {
    const Emulated device(64 * kMiB);
    const std::size_t N = 60, M = 20, B = 400;
    Case c = signal_case(N, M, 20, 0.0, 4);
    for (std::size_t k = 0; k < B; ++k)  // five masks, each losing rows (k % 5) * 3 + {0, 1, 2} and row 50 + k % 5
      for (std::size_t i : {(k % 5) * 3, (k % 5) * 3 + 1, (k % 5) * 3 + 2, 50 + k % 5}) c.y[i * B + k] = kNaN;
    const Array cube = make_cube(DType::Float64, N, 20, 20, c.y);
    Array a(DType::Float64, {N, M});
    std::copy(c.a.begin(), c.a.end(), a.data<double>());
    const DirectRun r = solve_directly(cube, a, deletion_table(N, M));
    QCOMPARE(r.systems, std::size_t{5});
    for (std::size_t k = 0; k < B; ++k) QCOMPARE(int(r.done[k]), 1);
    QVERIFY(max_lstsq_error(c.a, N, M, B, [&](std::size_t i, std::size_t k) { return c.y[i * B + k]; },
                            [&](std::size_t j, std::size_t k) { return r.x[j * B + k]; }) <= 1e-9);
  }

  // A solution that grows beyond `growth` times the pixel's largest value is
  // refused (left to the CPU) and not applied; one within it is applied. The
  // scale is each pixel's own, found when its values are read.
  void growthLimitIsPerPixel() {
    constexpr int n = 4, m = 2, ld = 2;
    const double raw[n * ld] = {1, -300, kNaN, 2, -5, kNaN, 0.5, 1};  // pixel 0: row 1 missing, |y| <= 5; pixel 1: row 2, 300
    std::uint8_t table[n + 1] = {gpu::kSkip, gpu::kSkip, gpu::kDeletion, gpu::kDeletion, gpu::kFull};
    double y[n * ld], ymax[ld];
    int rows[ld], q[ld], nv[ld], counts[gpu::kBuckets] = {}, order[ld];
    std::uint64_t key[ld];
    std::uint8_t kind[ld], done[ld];
    gpu::Piece<double> pc;
    pc.n = n;
    pc.m = m;
    pc.ld = ld;
    pc.max_q = 1;
    pc.raw = raw;
    pc.table = table;
    pc.y = y;
    pc.rows = rows;
    pc.q = q;
    pc.nv = nv;
    pc.ymax = ymax;
    pc.kind = kind;
    pc.done = done;
    pc.counts = counts;
    pc.key = key;
    pc.order = order;
    for (int k = 0; k < ld; ++k) gpu::prepare_pixel(pc, k);
    QCOMPARE(ymax[0], 5.0);
    QCOMPARE(ymax[1], 300.0);
    QCOMPARE(int(kind[0]), int(gpu::kDeletion));
    const int pix[ld] = {0, 1};
    double z[ld] = {-4000, -4000};  // 800 times pixel 0's scale, 13 times pixel 1's
    gpu::Batch<double> b;
    b.n = n;
    b.m = m;
    b.ld = ld;
    b.qb = 1;
    b.count = ld;
    b.pix = pix;
    b.q = q;
    b.rows = rows;
    b.z = z;
    b.y = y;
    b.u = y;
    b.ymax = ymax;
    b.done = done;
    b.growth = 100;
    done[0] = done[1] = 1;
    for (int j = 0; j < ld; ++j) gpu::scatter_system(b, j, true);
    QCOMPARE(int(done[0]), 0);  // refused, y~ left as it was
    QCOMPARE(y[1 * ld + 0], 0.0);
    QCOMPARE(int(done[1]), 1);  // applied: y~_I -= z
    QCOMPARE(y[2 * ld + 1], 4000.0);
  }

  // Per-pixel normal equations, pixel after pixel, on the device (the bench's comparison)
  // solves the normal equations: gelsd's answer where A_V has full rank.
  void normalEquationsLoop() {
    const Emulated device(64 * kMiB);
    const Case c = signal_case(30, 8, 6, 0.2, 3);
    const std::size_t P = c.h * c.w;
    std::vector<double> y(P * c.n), x;
    std::vector<gpu::PixelRows> pixels(P);
    for (std::size_t p = 0; p < P; ++p)
      for (std::size_t i = 0; i < c.n; ++i) {
        y[p * c.n + i] = c.y[i * P + p];
        if (std::isnan(y[p * c.n + i])) continue;
        pixels[p].rows.push_back(static_cast<int>(i));
        pixels[p].y.push_back(y[p * c.n + i]);
      }
    const double seconds = gpu::normal_equations(c.a, c.m, pixels, x);
    QVERIFY(seconds > 0);
    QCOMPARE(x.size(), P * c.m);
    for (std::size_t p = 0; p < P; ++p)  // A_V of full rank: the normal equations give gelsd's answer
      QCOMPARE(static_cast<std::size_t>(lstsq(c.a, c.n, c.m, y.data() + p * c.n, nullptr).rank), c.m);
    QVERIFY(max_lstsq_error(c.a, c.n, c.m, P, [&](std::size_t i, std::size_t p) { return y[p * c.n + i]; },
                            [&](std::size_t j, std::size_t p) { return x[p * c.m + j]; }) <= 1e-8);
  }

  // bench on a device times the device's own floors (its GEMM and the
  // cube's upload) besides the host's, and the per-pixel loop there.
  void benchTimesTheDevicesFloors() {
    const Emulated device(256 * kMiB);
    bench::BenchSettings b;
    b.n = 30;
    b.m = 8;
    b.size = 24;
    b.sample = 20;
    b.repeat = 1;
    b.options.device = Device::Cuda;
    const bench::BenchReport r = bench::run_bench(b);
    QCOMPARE(r.device, Device::Cuda);
    QVERIFY(r.device_pixels > 0);
    QVERIFY(r.floor_device_gemm > 0);
    QVERIFY(r.floor_upload > 0);
    QVERIFY(r.floor_download > 0);
    QVERIFY(r.normal_device > 0);
    QVERIFY(r.floor_gemm > 0);  // the host's, as without a device
    // A device with little room: the floors are timed on less at a time.
    const Emulated small(64 * kMiB, kMiB);
    const std::vector<float> cube(1 << 20, 1.0f);  // 4 MiB
    const gpu::Floors f = gpu::floors(50, 100, 250000, cube.data(), cube.size() * sizeof(float), 8 << 20);
    QVERIFY(f.gemm > 0);
    QVERIFY(f.upload > 0);
    QVERIFY(f.download > 0);
  }

  void insarDemoOnTheDevice() {
    const std::string why = no_device_reason();
    if (!why.empty()) QSKIP(why.c_str());
    const DemoCube d = make_demo("insar", 160);
    const Design design(d.design);
    SolveOptions gpu, cpu;
    gpu.device = Device::Cuda;
    gpu.output = cpu.output = DType::Float64;
    const SolveResult a = solve(d.cube, design, nullptr, gpu), b = solve(d.cube, design, nullptr, cpu);
    QVERIFY(a.warnings.empty());
    for (std::size_t i = 0; i < a.x.size(); ++i) {
      const double u = a.x.value(i), v = b.x.value(i);
      QVERIFY(std::isnan(u) == std::isnan(v));
      if (!std::isnan(u)) QVERIFY(std::fabs(u - v) <= 1e-9 * std::max(1.0, std::fabs(v)));
    }
  }
};

QTEST_GUILESS_MAIN(TestCuda)
#include "tst_cuda.moc"
