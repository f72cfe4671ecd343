// The engine's machine-dependent parameters: derived from the machine,
// stored and read back per machine, set from the environment; a solve under
// any of them stays within the precision contract against per-pixel gelsd.
#include "cases.hpp"

#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/error.hpp>

#include "engine/planner.hpp"

#include <QTemporaryDir>
#include <QtTest>

#include <cstdlib>
#include <fstream>
#include <sstream>

using namespace cubesolve;
using namespace testing;

namespace {

MachineKey key(const char* cpu, int bits) {
  MachineKey k;
  k.cpu = cpu;
  k.vector_bits = bits;
  k.blas = "OpenBLAS 0.3.21 Zen";
  return k;
}

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class TstTuning : public QObject {
  Q_OBJECT
private slots:
  void cleanup() {
    set_tuning(std::nullopt);
    unsetenv("CUBESOLVE_TUNING");
    unsetenv("CUBESOLVE_TUNING_FILE");
  }

  void fromTheMachine() {
    MachineKey k = key("x", 256);
    k.l2_bytes = 2 << 20;  // a Xeon's 2 MiB: half of it for a chunk
    QCOMPARE(machine_tuning(k).chunk_bytes, std::size_t{1} << 20);
    QVERIFY(!machine_tuning(k).wide);
    k.vector_bits = 512;
    QVERIFY(machine_tuning(k).wide);
    k.l2_bytes = 0;  // not known: the default
    QCOMPARE(machine_tuning(k).chunk_bytes, Tuning{}.chunk_bytes);
    k.l2_bytes = 64 << 10;  // a small L2: never below 128 KiB
    QCOMPARE(machine_tuning(k).chunk_bytes, std::size_t{128} << 10);
    const MachineKey here = machine_key();
    QVERIFY(!here.cpu.empty());
    QVERIFY(here.vector_bits == 128 || here.vector_bits == 256 || here.vector_bits == 512);
    QVERIFY(!here.blas.empty());
    QVERIFY(here.text().find(" | ") != std::string::npos);
  }

  void parsed() {
    const Tuning t = parse_tuning("chunk_kib=256,mixed_min=96,wide=0", Tuning{});
    QCOMPARE(t.chunk_bytes, std::size_t{256} << 10);
    QCOMPARE(t.mixed_min, std::size_t{96});
    QVERIFY(!t.wide);
    QCOMPARE(parse_tuning("mixed_min=513", Tuning{}).chunk_bytes, Tuning{}.chunk_bytes);  // the rest from the base
    for (const char* bad : {"chunk_kib=0", "chunk_kib=-4", "mixed_min=abc", "wide=2", "lanes=8", "chunk_kib="}) {
      try {
        parse_tuning(bad, Tuning{});
        QFAIL(bad);
      } catch (const InputError& e) {
        const std::string what = e.what(), field = std::string(bad).substr(0, std::string(bad).find('='));
        QVERIFY2(what.find(field) != std::string::npos, e.what());
      }
    }
  }

  // One line per machine: storing keeps the others' and replaces its own.
  void storedPerMachine() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("sub/tuning.txt").toStdString();  // the folder is created
    const MachineKey a = key("AMD EPYC 9B45", 512), b = key("Intel Xeon Platinum 8481C", 512);
    Tuning ta, tb;
    ta.chunk_bytes = 256 << 10;
    tb.mixed_min = 128;
    tb.wide = false;
    store_tuning(path, a, ta, "2026-12-01");
    store_tuning(path, b, tb, "2026-12-02");
    ta.mixed_min = 32;
    store_tuning(path, a, ta, "2026-12-03");
    std::vector<std::string> warnings;
    std::string date;
    QCOMPARE(load_tuning(path, a, &warnings, &date).value(), ta);
    QCOMPARE(date, std::string("2026-12-03"));
    QCOMPARE(load_tuning(path, b, &warnings).value(), tb);
    QVERIFY(!load_tuning(path, key("AMD EPYC 9B45", 256), &warnings));  // another vector width: another machine
    QVERIFY(!load_tuning(dir.filePath("none.txt").toStdString(), a, &warnings));
    QVERIFY(warnings.empty());
    const std::string text = read_all(path);
    QCOMPARE(std::count(text.begin(), text.end(), '\n'), 4L);  // two comment lines, one line per machine
  }

  // A line that cannot be read is skipped with a warning naming the file and line.
  void malformedLineSkipped() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("tuning.txt").toStdString();
    const MachineKey a = key("cpu", 256);
    {
      std::ofstream out(path);
      out << "# comment\n" << a.text() << "\tchunk_kib=huge\n";
    }
    std::vector<std::string> warnings;
    QVERIFY(!load_tuning(path, a, &warnings));
    QCOMPARE(warnings.size(), std::size_t{1});
    QVERIFY2(warnings[0].find(path + ":2") != std::string::npos, warnings[0].c_str());
    QVERIFY2(warnings[0].find("chunk_kib") != std::string::npos, warnings[0].c_str());
  }

  // What solves use: the stored line for this machine, the environment over it.
  void stateFollowsFileAndEnvironment() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("tuning.txt").toStdString();
    setenv("CUBESOLVE_TUNING_FILE", path.c_str(), 1);
    set_tuning(std::nullopt);
    QCOMPARE(tuning_state().source, TuningSource::Machine);
    QCOMPARE(tuning(), machine_tuning(machine_key()));
    Tuning t;
    t.chunk_bytes = 64 << 10;
    t.mixed_min = 513;
    store_tuning(path, machine_key(), t, "2026-12-07");
    QCOMPARE(tuning(), t);
    QCOMPARE(tuning_state().source, TuningSource::Stored);
    QVERIFY(tuning_state().origin().find(path) != std::string::npos);
    setenv("CUBESOLVE_TUNING", "mixed_min=48", 1);
    set_tuning(std::nullopt);
    QCOMPARE(tuning().mixed_min, std::size_t{48});
    QCOMPARE(tuning_state().source, TuningSource::Environment);
    setenv("CUBESOLVE_TUNING", "machine", 1);  // the stored file ignored
    set_tuning(std::nullopt);
    QCOMPARE(tuning(), machine_tuning(machine_key()));
    setenv("CUBESOLVE_TUNING", "wide=7", 1);  // refused with a warning: the stored line holds
    set_tuning(std::nullopt);
    QCOMPARE(tuning(), t);
    QCOMPARE(tuning_state().warnings.size(), std::size_t{1});
  }

  // The chunk follows the parameter: pixels x N doubles within it.
  void chunkFollowsParameter() {
    const std::size_t P = 1000000, memory = std::size_t{256} << 20;
    QCOMPARE(detail::cpu_chunk(P, 50, 100, 2, memory, false, std::size_t{512} << 10), std::size_t{1310});
    QCOMPARE(detail::cpu_chunk(P, 50, 100, 2, memory, false, std::size_t{256} << 10), std::size_t{655});
    QCOMPARE(detail::cpu_chunk(P, 50, 100, 2, memory, false, std::size_t{16} << 10), std::size_t{512});
  }

  // Every parameter changes speed only: each pixel stays within the
  // contract against gelsd, on deletion systems small and large (q up to
  // 80 of 120 rows), float32 or float64, with tiny chunks or large.
  void solvesAgreeUnderEveryParameter() {
    const Case c = random_case(120, 30, 16, 16, 0.35, 0.0, 41);
    const Tuning base = machine_tuning(machine_key());
    std::vector<Tuning> tunings(6, base);
    tunings[0].mixed_min = 8;    // float32 from the smallest deletions
    tunings[1].mixed_min = 513;  // none in float32
    tunings[2].chunk_bytes = 16 << 10;
    tunings[3].chunk_bytes = 8 << 20;
    tunings[4].wide = false;
    tunings[5].wide = true;
    SolveOptions o;
    o.residuals = true;
    for (const Tuning& t : tunings) {
      set_tuning(t);
      const SolveResult r = run(c, o);
      QVERIFY2(r.paths[static_cast<std::size_t>(SolvePath::Deletion)] > 0, t.describe().c_str());
      QVERIFY2(max_error(c, r, o) <= 1e-9, t.describe().c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TstTuning)
#include "tst_tuning.moc"
