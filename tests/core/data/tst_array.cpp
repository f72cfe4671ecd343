// Array storage: large blocks on a mapping of their own (huge pages where
// offered), small ones on the heap; both behave the same.
#include <cubesolve/data/array.hpp>

#include <QtTest>

#include <cstdint>
#include <cstring>

using namespace cubesolve;

class TestArray : public QObject {
  Q_OBJECT
private slots:
  void largeAndSmallBlocksBehaveAlike() {
    // 12 MiB (mapped on Linux: 2 MiB-aligned, the last page partly used) and 4 KiB.
    for (const std::size_t h : {std::size_t{1536}, std::size_t{1}}) {
      const Array zeros(DType::Float64, {2, h, 512});
      const double* z = zeros.data<double>();
      for (std::size_t i = 0; i < zeros.size(); i += 4093) QCOMPARE(z[i], 0.0);
      QCOMPARE(z[zeros.size() - 1], 0.0);

      Array a = Array::uninitialized(DType::Float32, {3, h, 1000});
#ifdef __linux__
      if (a.nbytes() >= (std::size_t{8} << 20))
        QCOMPARE(reinterpret_cast<std::uintptr_t>(a.data<float>()) % (std::uintptr_t{1} << 21), std::uintptr_t{0});
#endif
      float* p = a.data<float>();
      for (std::size_t i = 0; i < a.size(); ++i) p[i] = static_cast<float>(i % 977);
      const Array copy = a;  // its own block
      QVERIFY(copy.data<float>() != p);
      QVERIFY(std::memcmp(copy.data<float>(), p, a.nbytes()) == 0);
      a = Array(DType::UInt8, {1});  // the large block goes; the copy stays whole
      QCOMPARE(copy.data<float>()[copy.size() - 1], static_cast<float>((copy.size() - 1) % 977));
    }
  }
};

QTEST_APPLESS_MAIN(TestArray)
#include "tst_array.moc"
