// The CUDA backend against the CPU engine. Without a usable device the
// device tests skip, saying why; what must hold everywhere is checked too.
#include "cases.hpp"

#include <cubesolve/demo.hpp>
#include <cubesolve/device.hpp>
#include <cubesolve/error.hpp>

#include <QtTest>

using namespace cubesolve;
using namespace testing;

namespace {

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
    QVERIFY(QString::fromStdString(why).contains("--device cuda: no usable CUDA device"));
    QVERIFY(describe_devices().size() == 2);
  }

  void agreesWithTheCpu_data() {
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("m");
    QTest::addColumn<double>("missing");
    QTest::newRow("deletion: N=100, M=50") << 100 << 50 << 0.2;
    QTest::newRow("dual: N=50, M=100 (the seed)") << 50 << 100 << 0.2;
    QTest::newRow("full data") << 30 << 8 << 0.0;
  }
  void agreesWithTheCpu() {
    const std::string why = no_device_reason();
    if (!why.empty()) QSKIP(why.c_str());
    QFETCH(int, n);
    QFETCH(int, m);
    QFETCH(double, missing);
    const Case c = random_case(static_cast<std::size_t>(n), static_cast<std::size_t>(m), 64, 64, missing, 0.0, 17);
    SolveOptions gpu;
    gpu.device = Device::Cuda;
    const SolveResult r = run(c, gpu);
    QCOMPARE(r.device, Device::Cuda);
    QVERIFY(r.warnings.empty());
    QVERIFY(max_error(c, r, gpu) <= 1e-9);
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
