// cubesolve-cli solve under mpirun: the same bytes as one process for NPY,
// GeoTIFF and MintPy-stack inputs with 1, 2 and 3 ranks; one exit code and
// one line for a bad input, a rank that fails and an interrupt, and no
// output left behind.
#include "reference.hpp"

#include <cubesolve/io/files.hpp>
#include <cubesolve/io/raster.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "stack.hpp"

#include <cmath>
#include <csignal>

using namespace cubesolve;

namespace {

struct Run {
  int code = -1;
  QString out, err;
};

QProcessEnvironment mpi_environment() {
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");  // CI runs as root
  env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  env.insert("OMPI_MCA_rmaps_base_oversubscribe", "1");  // more ranks than cores
  env.insert("OMPI_MCA_btl_vader_single_copy_mechanism", "none");  // containers without ptrace
  return env;
}

/// cubesolve-cli with `args`: alone (ranks 0) or under mpirun with that many ranks.
Run cli(int ranks, const QStringList& args, const QMap<QString, QString>& extra = {}) {
  QProcess p;
  QProcessEnvironment env = mpi_environment();
  QStringList command = args;
  QString program = CUBESOLVE_CLI;
  if (ranks > 0) {
    program = MPIEXEC;
    command = QStringList{"-n", QString::number(ranks)};
    for (auto it = extra.begin(); it != extra.end(); ++it) command << "-x" << it.key();
    command << CUBESOLVE_CLI << args;
  }
  for (auto it = extra.begin(); it != extra.end(); ++it) env.insert(it.key(), it.value());
  p.setProcessEnvironment(env);
  p.start(program, command);
  p.waitForFinished(300000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QByteArray bytes(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

}  // namespace

class TestMpi : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  QString file(const QString& name) const { return dir_.filePath(name); }

  // Outputs of `inputs` solved by one process and by 1, 2 and 3 ranks, in
  // row blocks (--memory 16): the same bytes, every file.
  void sameBytes(const QStringList& inputs, const QString& ext) {
    const QStringList parts{"x", "d_nvalid", "d_rank", "d_rss", "d_status", "d_cond"};
    for (int ranks : {0, 1, 2, 3}) {
      const QString tag = QString("r%1_").arg(ranks);
      const Run r = cli(ranks, QStringList{"solve"} + inputs +
                                   QStringList{"-o", file(tag + "x" + ext), "--diag", file(tag + "d"), "--memory", "16",
                                               "--json"});
      QVERIFY2(r.code == 0, qPrintable(r.err));
      const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
      QVERIFY(j["blocks"].toInt() >= 4);
      if (ranks > 0) {
        QCOMPARE(j["ranks"].toInt(), ranks);
        for (const QJsonValue& q : j["per_rank"].toArray()) QVERIFY(q.toObject()["blocks"].toInt() > 0);  // all busy
      }
      if (ranks == 0) continue;
      for (const QString& part : parts) {
        const QByteArray a = bytes(file("r0_" + part + ext)), b = bytes(file(tag + part + ext));
        QVERIFY2(!a.isEmpty() && a == b, qPrintable(tag + part));
      }
    }
    QCOMPARE(QDir(dir_.path()).entryList({"*partial*", "*staging*"}).size(), 0);
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    // 100 observations of 60 x 2000 pixels: --memory 16 cuts it into blocks of 13 rows.
    const std::size_t N = 100, M = 12, H = 60, W = 2000;
    testing::Rng rng(4);
    std::vector<double> y(N * H * W), a(N * M);
    for (auto& v : a) v = rng.normal();
    for (auto& v : y) v = rng.normal();
    for (std::size_t i = 0; i < N; ++i) {  // each observation loses a disc
      const double cr = rng.uniform() * H, cc = rng.uniform() * W, rad = 5 + 30 * rng.uniform();
      for (std::size_t p = 0; p < H * W; ++p) {
        const double dr = static_cast<double>(p / W) - cr, dc = static_cast<double>(p % W) - cc;
        if (dr * dr + dc * dc < rad * rad) y[i * H * W + p] = std::nan("");
      }
    }
    OutputSet out;
    const Array cube = testing::make_cube(DType::Float32, N, H, W, y);
    out.add_npy(file("cube.npy").toStdString(), cube);
    Array design(DType::Float64, {N, M});
    std::copy(a.begin(), a.end(), design.data<double>());
    out.add_npy(file("A.npy").toStdString(), design);
    if (raster_support()) write_geotiff(out.add_external(file("cube.tif").toStdString()), cube, {}, {});
    out.commit();
  }

  void npyInputSameBytes() { sameBytes({file("cube.npy"), file("A.npy")}, ".npy"); }

  void geoTiffSameBytes() {
    if (!raster_support()) QSKIP("built without GDAL");
    sameBytes({file("cube.tif"), file("A.npy")}, ".tif");
  }

  void mintpyStackSameBytes() {
#ifndef CUBESOLVE_TEST_HDF5
    QSKIP("built without HDF5");
#else
    // 40 dates, pairs up to 3 apart, 60 x 1500 pixels; a few interferograms dropped.
    std::vector<std::pair<int, int>> pairs;
    for (int i = 0; i < 40; ++i)
      for (int j = i + 1; j < 40 && j - i <= 3; ++j) pairs.emplace_back(i, j);
    const hsize_t N = pairs.size(), H = 60, W = 1500;
    std::vector<float> phase(N * H * W);
    testing::Rng rng(6);
    for (auto& v : phase) v = rng.uniform() < 0.1 ? NAN : static_cast<float>(rng.normal());
    std::string dates;
    auto date = [](int d) { return QDate(2020, 1, 1).addDays(12 * d).toString("yyyyMMdd").toStdString(); };
    for (const auto& [i, j] : pairs) dates += date(i) + date(j);
    std::vector<unsigned char> keep(N, 1);
    keep[5] = keep[50] = 0;
    for (hsize_t k = 0; k < N; ++k) phase[k * H * W + 7 * W + 11] = 0.5f + 0.01f * static_cast<float>(k);  // the reference pixel
    testing::StackExtras extras;
    extras.attributes = {{"REF_Y", "7"}, {"REF_X", "11"}};
    testing::write_stack(file("ifgramStack.h5").toStdString(), N, H, W, phase.data(), &dates, keep.data(), extras);
    sameBytes({file("ifgramStack.h5"), "sbas"}, ".npy");
#endif
  }

  // A bad input is found once: one line, the same exit code from every rank.
  void badInputOneLine() {
    const Run r = cli(3, {"solve", file("cube.npy"), file("missing.npy"), "-o", file("bad.npy")});
    QCOMPARE(r.code, 3);
    QCOMPARE(r.err.count("cubesolve-cli:"), 1);
    QVERIFY(r.err.contains("missing.npy: cannot open"));
    const Run same = cli(3, {"solve", file("cube.npy"), file("A.npy"), "-o", file("cube.npy")});
    QCOMPARE(same.code, 2);
    QCOMPARE(same.err.count("cubesolve-cli:"), 1);
    QVERIFY(!QFile::exists(file("bad.npy")));
  }

  // A rank that fails part way (a read error, injected) fails the run: its
  // message, its exit code, and nothing written, for NPY and GeoTIFF outputs.
  void failingRankLeavesNothing() {
    for (const QString& out : {QString("fail.npy"), QString("fail.tif")}) {
      if (out.endsWith(".tif") && !raster_support()) continue;
      const Run r = cli(3, {"solve", file("cube.npy"), file("A.npy"), "-o", file(out), "--diag", file("fd"), "--memory", "16"},
                        {{"CUBESOLVE_TEST_FAIL_RANK", "1"}});
      QCOMPARE(r.code, 3);
      QCOMPARE(r.err.count("cubesolve-cli:"), 1);
      QVERIFY2(r.err.contains("rank 1: a read failed"), qPrintable(r.err));
      QCOMPARE(QDir(dir_.path()).entryList({"fail*", "fd*", "*partial*", "*staging*"}).size(), 0);
    }
  }

  // Ctrl-C to mpirun: every rank stops, nothing is left behind.
  void interruptLeavesNothing() {
    QProcess p;
    p.setProcessEnvironment(mpi_environment());
    p.start(MPIEXEC, {"-n", "3", CUBESOLVE_CLI, "solve", file("cube.npy"), file("A.npy"), "-o", file("int.npy"), "--diag",
                      file("id"), "--method", "exact", "--memory", "16"});
    QVERIFY(p.waitForStarted());
    QElapsedTimer t;
    t.start();
    while (QDir(dir_.path()).entryList({"int*partial*"}).isEmpty() && t.elapsed() < 60000) QTest::qWait(10);
    QVERIFY(!QDir(dir_.path()).entryList({"int*partial*"}).isEmpty());
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    QVERIFY(p.waitForFinished(60000));
    QVERIFY(p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0);
    QVERIFY(QString::fromUtf8(p.readAllStandardError()).contains("no output written"));
    QCOMPARE(QDir(dir_.path()).entryList({"int*", "id*", "*partial*"}).size(), 0);
  }
};

QTEST_GUILESS_MAIN(TestMpi)
#include "tst_mpi.moc"
