// cubesolve-cli end to end: files written here, the binary run as a user
// would, results read back and compared with per-pixel gelsd.
#include "reference.hpp"

#include <cubesolve/data/mask.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QFile>
#include <QProcess>
#include <QProcessEnvironment>
#include <QTemporaryDir>
#include <QtTest>

#include <cmath>
#include <csignal>
#include <QElapsedTimer>
#include <fstream>

using namespace cubesolve;

namespace {

struct Run {
  int code = -1;
  QString out, err;
};

Run cli(const QStringList& args, const QProcessEnvironment& env = QProcessEnvironment::systemEnvironment()) {
  QProcess p;
  p.setProcessEnvironment(env);
  p.start(CUBESOLVE_CLI, args);
  p.waitForFinished(240000);
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

void save(const std::string& path, const Array& a) {
  OutputSet out;
  out.add_npy(path, a);
  out.commit();
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  const std::size_t N = 20, M = 6, H = 9, W = 11;
  std::vector<double> a_, y_;

  QString file(const char* name) const { return dir_.filePath(name); }
  std::string sfile(const char* name) const { return file(name).toStdString(); }

  // A cube (40 x 160 x 160, 30% missing) and a dense A (40 x 20) whose solve
  // with --method exact and --memory 16 runs long enough to be interrupted.
  void saveSlowInputs(const std::string& cube, const std::string& design, std::uint64_t seed) {
    testing::Rng rng(seed);
    const std::size_t n = 40, m = 20, side = 160;
    std::vector<double> y(n * side * side);
    for (auto& v : y) v = rng.uniform() < 0.3 ? std::nan("") : rng.normal();
    save(sfile(cube.c_str()), testing::make_cube(DType::Float32, n, side, side, y));
    Array a(DType::Float64, {n, m});
    for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = rng.normal();
    save(sfile(design.c_str()), a);
  }

  // Runs the CLI expecting failure: exit code, message fragments, no output file.
  void expectFailure(const QStringList& args, int code, const QStringList& fragments, const QString& output) {
    const Run r = cli(args);
    QVERIFY2(r.code == code, qPrintable(QString("exit %1, stderr: %2").arg(r.code).arg(r.err)));
    QCOMPARE(r.err.count('\n'), 1);
    for (const QString& f : fragments) QVERIFY2(r.err.contains(f), qPrintable(r.err));
    QVERIFY(!QFile::exists(output));
    QCOMPARE(QDir(dir_.path()).entryList({"*partial*"}).size(), 0);
  }

private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    testing::Rng rng(99);
    a_.resize(N * M);
    for (auto& v : a_) v = rng.normal();
    y_.resize(N * H * W);
    for (auto& v : y_) v = rng.uniform() < 0.25 ? std::nan("") : static_cast<float>(rng.normal());
    for (std::size_t i = 0; i < N; ++i) y_[i * H * W + 5] = std::nan("");  // one pixel with no data
    save(sfile("cube.npy"), testing::make_cube(DType::Float32, N, H, W, y_));
    Array a(DType::Float64, {N, M});
    std::copy(a_.begin(), a_.end(), a.data<double>());
    save(sfile("A.npy"), a);
  }

  void solveMatchesGelsd() {
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("x64.npy"), "--dtype", "float64",
                       "--diag", file("d")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Array x = read_npy(sfile("x64.npy"));
    QCOMPARE(x.shape(), (Shape{M, H, W}));
    QCOMPARE(x.dtype(), DType::Float64);
    const Array nvalid = read_npy(sfile("d_nvalid.npy")), status = read_npy(sfile("d_status.npy"));
    QVERIFY(QFile::exists(file("d_rank.npy")) && QFile::exists(file("d_rss.npy")));
    const std::size_t P = H * W;
    QVERIFY(testing::max_lstsq_error(a_, N, M, P, [&](std::size_t i, std::size_t p) { return y_[i * P + p]; },
                                     [&](std::size_t j, std::size_t p) { return x.value(j * P + p); }) <= 1e-9);
    for (std::size_t p = 0; p < P; ++p) {
      double valid = 0;
      for (std::size_t i = 0; i < N; ++i) valid += std::isfinite(y_[i * P + p]);
      QCOMPARE(nvalid.value(p), valid);
      if (valid == 0) QCOMPARE(status.value(p), 2.0);
    }
    // Default output keeps the cube's float32.
    QCOMPARE(cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("x32.npy")}).code, 0);
    const Array x32 = read_npy(sfile("x32.npy"));
    QCOMPARE(x32.dtype(), DType::Float32);
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!std::isnan(x.value(i))) QCOMPARE(x32.value(i), static_cast<double>(static_cast<float>(x.value(i))));
  }

  void jsonReport() {
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xj.npy"), "--json", "--threads", "2"});
    QCOMPARE(r.code, 0);
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QVERIFY(j.contains("engine_seconds"));
    QCOMPARE(j["pixels"].toInt(), int(H * W));
    QCOMPARE(j["device"].toString(), QString("cpu"));
    QCOMPARE(j["device_pixels"].toInt(), 0);
    const QJsonObject paths = j["paths"].toObject();
    int total = 0;
    for (const auto& v : paths) total += v.toInt();
    QCOMPARE(total, int(H * W));
    QCOMPARE(paths["skipped"].toInt(), 1);
  }

  // --stderr adds PREFIX_stderr (M, H, W) to --diag's files: the engine's
  // standard errors (checked against the reference in tst_uncertainty);
  // without --diag it is refused.
  void standardErrors() {
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xse.npy"), "--diag", file("se"), "--stderr",
                       "--cov", "--dtype", "float64", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Array se = read_npy(sfile("se_stderr.npy")), cov = read_npy(sfile("se_cov.npy"));
    QCOMPARE(se.shape(), (Shape{M, H, W}));
    QCOMPARE(cov.shape(), (Shape{M * (M + 1) / 2, H, W}));
    SolveOptions o;
    o.std_errors = o.covariance = true;
    o.output = DType::Float64;
    Array a(DType::Float64, {N, M});
    std::copy(a_.begin(), a_.end(), a.data<double>());
    const SolveResult ref = solve(read_npy(sfile("cube.npy")), Design(a), nullptr, o);
    for (std::size_t i = 0; i < se.size(); ++i) {
      const double v = se.value(i), e = ref.std_error.value(i);
      QVERIFY2(std::isnan(v) == std::isnan(e) && (std::isnan(e) || std::fabs(v - e) <= 1e-12 * e), qPrintable(QString::number(i)));
    }
    for (std::size_t i = 0; i < cov.size(); ++i)
      QVERIFY(cov.value(i) == ref.covariance.value(i) || (std::isnan(cov.value(i)) && std::isnan(ref.covariance.value(i))));
    for (std::size_t j = 0, at = 0; j < M; at += M - j, ++j)  // the packed diagonal: the errors squared
      for (std::size_t p = 0; p < H * W; ++p)
        if (const double e = se.value(j * H * W + p); std::isfinite(e))
          QVERIFY(std::fabs(cov.value(at * H * W + p) - e * e) <= 1e-12 * e * e);
    QVERIFY(std::isnan(se.value(5)));  // the pixel without data
    QVERIFY(!QFile::exists(file("se_tcoh.npy")));  // temporal coherence is a phase stack's
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["no_stderr"].toInt(), int(ref.no_dof()));
    QVERIFY(j["outputs"].toArray().contains(QJsonValue(file("se_stderr.npy"))));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("xse2.npy"), "--stderr"}, 2, {"--stderr", "--diag"},
                  file("xse2.npy"));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("xse2.npy"), "--cov"}, 2, {"--cov", "--diag"},
                  file("xse2.npy"));
  }

  // --loss l1|huber[:D]: the engine's robust fit (checked against SciPy in
  // the Python tests), its iterations and objective among --diag's files.
  void robustLoss() {
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xl1.npy"), "--diag", file("l1"), "--loss", "l1",
                       "--dtype", "float64", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(QJsonDocument::fromJson(r.out.toUtf8()).object()["loss"].toString(), QString("l1"));
    SolveOptions o;
    o.loss = Loss::L1;
    o.output = DType::Float64;
    Array a(DType::Float64, {N, M});
    std::copy(a_.begin(), a_.end(), a.data<double>());
    const SolveResult ref = solve(read_npy(sfile("cube.npy")), Design(a), nullptr, o);
    const Array x = read_npy(sfile("xl1.npy")), it = read_npy(sfile("l1_iterations.npy")), obj = read_npy(sfile("l1_objective.npy"));
    QCOMPARE(it.shape(), (Shape{H, W}));
    for (std::size_t i = 0; i < x.size(); ++i) QVERIFY(x.value(i) == ref.x.value(i) || std::isnan(ref.x.value(i)));
    for (std::size_t p = 0; p < H * W; ++p)
      QVERIFY(obj.value(p) == ref.objective.value(p) || (std::isnan(obj.value(p)) && std::isnan(ref.objective.value(p))));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("xl2.npy"), "--loss", "l3"}, 2, {"--loss", "huber:DELTA", "l3"},
                  file("xl2.npy"));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("xl2.npy"), "--loss", "huber:-1"}, 2, {"--loss"}, file("xl2.npy"));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("xl2.npy"), "--loss", "l1", "--diag", file("l1b"), "--stderr"}, 2,
                  {"standard errors", "l1"}, file("xl2.npy"));
  }

  void modelAndResidualFiles() {
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xm.npy"), "--model", file("model.npy"),
                       "--residual", file("res.npy")});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QCOMPARE(read_npy(sfile("model.npy")).shape(), (Shape{N, H, W}));
    QCOMPARE(read_npy(sfile("res.npy")).shape(), (Shape{N, H, W}));
  }

  void weightsCsvAndRidge() {
    testing::Rng rng(5);
    std::vector<double> w(N * H * W);
    for (auto& v : w) v = rng.uniform() < 0.1 ? 0 : 0.5 + rng.uniform();
    save(sfile("w.npy"), testing::make_cube(DType::Float64, N, H, W, w));
    {
      std::ofstream csv(sfile("A.csv"));
      csv.precision(17);
      for (std::size_t i = 0; i < N; ++i)
        for (std::size_t j = 0; j < M; ++j) csv << a_[i * M + j] << (j + 1 < M ? ", " : "\n");
    }
    const Run r = cli({"solve", file("cube.npy"), file("A.csv"), "-o", file("xw.npy"), "--weights", file("w.npy"),
                       "--dtype", "float64"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const Array x = read_npy(sfile("xw.npy"));
    const std::size_t P = H * W;
    QVERIFY(testing::max_lstsq_error(
                a_, N, M, P, [&](std::size_t i, std::size_t p) { return y_[i * P + p]; },
                [&](std::size_t j, std::size_t p) { return x.value(j * P + p); },
                [&](std::size_t i, std::size_t p) { return w[i * P + p]; }) <= 1e-9);
    QCOMPARE(cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xr.npy"), "--ridge", "0.3"}).code, 0);
    QCOMPARE(cli({"verify", file("cube.npy"), file("A.npy"), file("xr.npy"), "--ridge", "0.3"}).code, 0);
  }

  void verifyCommand() {
    QCOMPARE(cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xv.npy"), "--dtype", "float64"}).code, 0);
    const Run ok = cli({"verify", file("cube.npy"), file("A.npy"), file("xv.npy"), "--sample", "0", "--json"});
    QVERIFY2(ok.code == 0, qPrintable(ok.err));
    const QJsonObject j = QJsonDocument::fromJson(ok.out.toUtf8()).object();
    QVERIFY(j["ok"].toBool());
    QCOMPARE(j["pixels"].toInt(), int(H * W));
    QVERIFY(j["max_rel_error"].toDouble() <= 1e-9);
    Array x = read_npy(sfile("xv.npy"));
    x.data<double>()[3] += 0.01;  // a wrong number
    save(sfile("xbad.npy"), x);
    const Run bad = cli({"verify", file("cube.npy"), file("A.npy"), file("xbad.npy"), "--sample", "0"});
    QCOMPARE(bad.code, 4);
    QVERIFY(bad.out.contains("FAILED"));
  }

  void infoReportsMasks() {
    const Run r = cli({"info", file("cube.npy"), file("A.npy"), "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["no_data_pixels"].toInt(), 1);
    QCOMPARE(j["pixels"].toInt(), int(H * W));
    QVERIFY(j["distinct_masks"].toInt() > 1);
    QCOMPARE(j["design"].toObject()["rank"].toInt(), int(M));
    int planned = 0;
    for (const auto& v : j["paths"].toObject()) planned += v.toInt();
    QCOMPARE(planned, int(H * W));
    QCOMPARE(j["paths"].toObject()["skipped"].toInt(), 1);
    const Run text = cli({"info", file("cube.npy")});
    QCOMPARE(text.code, 0);
    QVERIFY(text.out.contains("distinct"));
  }

  // info reads the cube a block of rows at a time within --memory: the
  // statistics match the whole cube's (mask groups exact while they fit),
  // its peak memory does not grow with the cube, and past the limit of
  // distinct masks the groups are estimated from a sample, and say so.
  void infoStreamsWithinMemory() {
    testing::Rng rng(17);
    const std::size_t n = 40, h = 400, w = 1000;  // 64 MB of float32, 400,000 pixels of random masks
    std::vector<double> y(n * h * w);
    for (auto& v : y) v = rng.uniform() < 0.2 ? std::nan("") : rng.normal();
    save(sfile("wide.npy"), testing::make_cube(DType::Float32, n, h, w, y));
    save(sfile("narrow.npy"), testing::make_cube(DType::Float32, n, 4, 10, std::vector<double>(y.begin(), y.begin() + n * 40)));
    auto info = [&](const char* name, const char* memory) {
      const Run r = cli({"info", file(name), "--memory", memory, "--json"});
      if (r.code != 0) qWarning("%s", qPrintable(r.err));
      return QJsonDocument::fromJson(r.out.toUtf8()).object();
    };
    const QJsonObject big = info("wide.npy", "256"), small = info("wide.npy", "16"), tiny = info("narrow.npy", "16");
    QVERIFY(big["groups_exact"].toBool());  // 391,000 distinct masks fit 256 MB
    const MaskStats exact = analyze_masks(read_npy(sfile("wide.npy")));
    QCOMPARE(big["distinct_masks"].toInt(), int(exact.distinct_masks()));
    QCOMPARE(big["pixels_in_groups_ge_2"].toInt(), int(exact.pixels_in_groups_of_at_least(2)));
    const std::vector<std::size_t> hist = exact.valid_histogram();
    for (const QJsonObject& j : {big, small}) {
      QCOMPARE(j["nan"].toInt(), int(exact.nan_count));
      const QJsonArray vh = j["valid_count_histogram"].toArray(), po = j["valid_per_observation"].toArray();
      for (std::size_t k = 0; k <= n; ++k) QCOMPARE(vh[int(k)].toInt(), int(hist[k]));
      std::size_t first = 0;  // observation 0's valid pixels
      for (std::size_t p = 0; p < h * w; ++p) first += exact.valid(p, 0);
      QCOMPARE(po[0].toInt(), int(first));
    }
    QVERIFY(!small["groups_exact"].toBool());  // 16 MB holds fewer masks than the cube has
    QVERIFY(small["group_sample"].toInt() >= 65536 && small["unresolved_group_pixels"].toInt() > 300000);
#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's quarantine keeps every freed block resident
    const double grown = small["peak_memory_mb"].toDouble() - tiny["peak_memory_mb"].toDouble();
    QVERIFY2(grown < 40, qPrintable(QString("peak memory grew by %1 MB for a 64 MB cube").arg(grown)));
#endif
    QVERIFY(cli({"info", file("wide.npy"), "--memory", "16"}).out.contains("estimated from a sample"));
  }

  void demoWritesFiles() {
    const QString out = file("demo");
    const Run r = cli({"demo", "-o", out, "--size", "24", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    for (const char* name : {"insar", "seed"}) {
      const QString base = out + "/" + name;
      const Array cube = read_npy((base + "_cube.npy").toStdString());
      const Array x = read_npy((base + "_x.npy").toStdString());
      QCOMPARE(cube.dim(1), std::size_t{24});
      QCOMPARE(x.dim(1), std::size_t{24});
      QFile png(base + "_x0.png");
      QVERIFY(png.open(QIODevice::ReadOnly));
      QCOMPARE(png.read(8), QByteArray("\x89PNG\r\n\x1a\n", 8));
      const Run v = cli({"verify", base + "_cube.npy", base + "_design.npy", base + "_x.npy"});
      QVERIFY2(v.code == 0, qPrintable(v.out + v.err));
    }
    QCOMPARE(read_npy((out + "/seed_design.npy").toStdString()).shape(), (Shape{50, 100}));
  }

  void benchCommand() {
    const Run r = cli({"bench", "--size", "40", "--n", "30", "--m", "10", "--sample", "50", "--repeat", "1", "--json"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* k : {"engine_seconds", "engine_seconds_with_rss", "gemm_floor_seconds", "read_seconds", "engine_over_floor", "exact_seconds",
                          "exact_speedup", "normal_equations_seconds", "max_rel_error"})
      QVERIFY2(j.contains(k) && j[k].toDouble() >= 0, k);
    QVERIFY(j["max_rel_error"].toDouble() <= 1e-9);
    QCOMPARE(j["pixels"].toInt(), 1600);
    QVERIFY(j["paths"].toObject()["deletion"].toInt() > 1000);
    // A row per combination of options, with and without an explicit rcond,
    // which keeps the fast paths (this design is well conditioned).
    const QJsonArray options = j["options"].toArray();
    QCOMPARE(options.size(), 4);
    QCOMPARE(j["options_rcond"].toDouble(), 1e-5);
    for (const auto& o : options) {
      const QJsonObject row = o.toObject();
      QVERIFY(row["engine_seconds"].toDouble() > 0 && row["engine_seconds_rcond"].toDouble() > 0);
      QCOMPARE(row["paths"].toObject()["exact"].toInt(), 0);
    }
    QCOMPARE(options[0].toObject()["options"].toString(), QString("ridge 0.1"));
    const Run blobs = cli({"bench", "--size", "128", "--n", "40", "--m", "8", "--nan", "0.3", "--masks", "blobs",
                           "--sample", "20", "--repeat", "1", "--json"});
    QVERIFY2(blobs.code == 0, qPrintable(blobs.err));
    QVERIFY(QJsonDocument::fromJson(blobs.out.toUtf8()).object()["paths"].toObject()["group"].toInt() > 0);
    // Weighted: the Gram path against its own floor and the exact engine.
    for (const char* w : {"random", "coherence"}) {
      const Run weighted = cli({"bench", "--size", "40", "--n", "30", "--m", "10", "--sample", "50", "--repeat", "1", "--weights", w, "--json"});
      QVERIFY2(weighted.code == 0, qPrintable(weighted.err));
      const QJsonObject wj = QJsonDocument::fromJson(weighted.out.toUtf8()).object();
      QCOMPARE(wj["weights"].toString(), QString(w));
      QVERIFY(wj["gram_floor_seconds"].toDouble() > 0 && wj["engine_over_gram_floor"].toDouble() > 0);
      QVERIFY(wj["max_rel_error"].toDouble() <= 1e-9);
      QVERIFY(wj["paths"].toObject()["gram"].toInt() > 1000);
      QVERIFY(!wj.contains("normal_equations_seconds"));  // the per-pixel loop it stands for is unweighted
    }
    QCOMPARE(cli({"bench", "--weights", "heavy"}).code, 2);
    // An SBAS network (sparse rows) instead of a Gaussian design.
    const Run sbas = cli({"bench", "--size", "32", "--n", "60", "--m", "20", "--nan", "0.1", "--design", "sbas", "--sample", "30",
                          "--repeat", "1", "--json"});
    QVERIFY2(sbas.code == 0, qPrintable(sbas.err));
    const QJsonObject sj = QJsonDocument::fromJson(sbas.out.toUtf8()).object();
    QCOMPARE(sj["design"].toString(), QString("sbas"));
    QVERIFY(sj["max_rel_error"].toDouble() <= 1e-9 && sj["paths"].toObject()["deletion"].toInt() > 500);
    QCOMPARE(cli({"bench", "--design", "sbas", "--n", "10", "--m", "20"}).code, 2);
    QCOMPARE(cli({"bench", "--design", "ring"}).code, 2);
    // --scaling: a row per grown dimension, each against its floor.
    const Run scaling = cli({"bench", "--scaling", "--size", "24", "--n", "12", "--m", "4", "--repeat", "1", "--json"});
    QVERIFY2(scaling.code == 0, qPrintable(scaling.err));
    const QJsonArray rows = QJsonDocument::fromJson(scaling.out.toUtf8()).object()["rows"].toArray();
    QCOMPARE(rows.size(), 9);
    QCOMPARE(rows[2].toObject()["pixels"].toInt(), 48 * 48);  // four times the pixels
    QCOMPARE(rows[4].toObject()["n"].toInt(), 48);
    QCOMPARE(rows[6].toObject()["m"].toInt(), 16);
    for (const auto& row : rows) QVERIFY(row.toObject()["engine_seconds"].toDouble() > 0 && row.toObject()["gemm_floor_seconds"].toDouble() > 0);
  }

  // bench --tune searches the parameters and stores them for this machine;
  // later runs say so, and a line that cannot be read is passed over, said.
  void benchTune() {
    const QString path = file("cache/cubesolve/tuning.txt");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert("CUBESOLVE_TUNING_FILE", path);
    env.remove("CUBESOLVE_TUNING");
    const QStringList small{"bench", "--size", "24", "--n", "20", "--m", "5", "--sample", "5", "--repeat", "1", "--json"};
    const QJsonObject before = QJsonDocument::fromJson(cli(small, env).out.toUtf8()).object();
    QVERIFY2(before["tuning"].toObject()["origin"].toString().startsWith("derived from this machine"),
             qPrintable(before["tuning"].toObject()["origin"].toString()));
    const Run r = cli({"bench", "--tune", "--tune-seconds", "5", "--json"}, env);
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QJsonObject j = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(j["stored"].toString(), path);
    QCOMPARE(j["shapes"].toArray().size(), 3);
    QVERIFY(j["trials"].toArray().size() >= 9);  // each parameter's values but the machine's own
    for (const auto& t : j["trials"].toArray()) QVERIFY(t.toObject()["seconds"].toArray().size() == 3);
    QFile stored(path);
    QVERIFY(stored.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(stored.readAll());
    QVERIFY2(text.contains(j["machine"].toString() + "\tchunk_kib="), qPrintable(text));
    stored.close();
    const QJsonObject after = QJsonDocument::fromJson(cli(small, env).out.toUtf8()).object();
    QCOMPARE(after["tuning"].toObject()["origin"].toString().left(27 + path.size()), "stored by bench --tune in " + path + " ");
    QVERIFY(stored.open(QIODevice::WriteOnly | QIODevice::Truncate));
    stored.write((j["machine"].toString() + "\tchunk_kib=huge\n").toUtf8());
    stored.close();
    const Run bad = cli(small, env);
    QCOMPARE(bad.code, 0);
    QVERIFY2(bad.err.contains(path + ":1: ignored") && bad.err.contains("chunk_kib"), qPrintable(bad.err));
    QVERIFY(QJsonDocument::fromJson(bad.out.toUtf8()).object()["tuning"].toObject()["origin"].toString().startsWith("derived"));
    const Run solved = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("tuned_x.npy")}, env);  // a solve says so too
    QVERIFY2(solved.code == 0 && solved.err.contains(path + ":1: ignored"), qPrintable(solved.err));
    QCOMPARE(cli({"bench", "--tune", "--tune-seconds", "1"}, env).code, 2);
  }

  void cubeLargerThanTheMemoryBudget() {
    // 96 MB of cube solved within a 16 MB budget: read, solved and written in
    // row blocks; the result is the one solved in a single block.
    const std::size_t n = 40, h = 1200, w = 500, m = 8;
    {
      testing::Rng rng(8);
      Array cube(DType::Float32, {n, h, w});
      for (std::size_t i = 0; i < cube.size(); ++i)
        cube.data<float>()[i] = rng.uniform() < 0.2 ? NAN : static_cast<float>(rng.normal());
      Array a(DType::Float64, {n, m});
      for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = rng.normal();
      OutputSet o;
      o.add_npy(sfile("big.npy"), cube);
      o.add_npy(sfile("bigA.npy"), a);
      o.commit();
    }
    const Run small = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xs.npy"), "--json"});
    QCOMPARE(small.code, 0);
    const Run streamed = cli({"solve", file("big.npy"), file("bigA.npy"), "-o", file("big16.npy"), "--diag", file("b16"),
                              "--memory", "16", "--json"});
    QVERIFY2(streamed.code == 0, qPrintable(streamed.err));
    const QJsonObject j = QJsonDocument::fromJson(streamed.out.toUtf8()).object();
    QVERIFY(j["blocks"].toInt() > 4);
    // Each block read once, the next beside the solve of the one before.
    QCOMPARE(j["bytes_read"].toDouble(), double(n * h * w * sizeof(float)));
    QVERIFY(j["read_ahead"].toBool() && j["read_seconds"].toDouble() > 0 && j["read_rate_mb_s"].toDouble() > 0);
    QVERIFY(j["wall_seconds"].toDouble() >= j["engine_seconds"].toDouble() && j["wait_seconds"].toDouble() <= j["wall_seconds"].toDouble());
    {  // a file cut short: the block read ahead fails, and nothing is written
      QFile full(file("big.npy")), cut(file("cut.npy"));
      QVERIFY(full.open(QIODevice::ReadOnly) && cut.open(QIODevice::WriteOnly));
      cut.write(full.read(full.size() * 2 / 3));
    }
    const Run failed = cli({"solve", file("cut.npy"), file("bigA.npy"), "-o", file("cut_x.npy"), "--memory", "16"});
    QVERIFY2(failed.code == 3 || failed.code == 2, qPrintable(failed.err));
    QVERIFY2(failed.err.contains("cut.npy") && failed.err.contains("truncated"), qPrintable(failed.err));
    QVERIFY(!QFile::exists(file("cut_x.npy")));
    const Run whole = cli({"solve", file("big.npy"), file("bigA.npy"), "-o", file("bigall.npy"), "--diag", file("ball"),
                           "--memory", "4096", "--json"});
    QCOMPARE(whole.code, 0);
    QCOMPARE(QJsonDocument::fromJson(whole.out.toUtf8()).object()["blocks"].toInt(), 1);
#ifndef __SANITIZE_ADDRESS__  // AddressSanitizer's shadow memory and quarantine dwarf the budget
    auto peak = [](const Run& r) { return QJsonDocument::fromJson(r.out.toUtf8()).object()["peak_memory_mb"].toDouble(); };
    // The process's own footprint (code, libraries, BLAS buffers) is what the
    // small solve peaks at; the big one may add its budget and a little more.
    QVERIFY2(peak(streamed) - peak(small) < 16 * 1.5 + 8,
             qPrintable(QString("peak %1 MB vs %2 MB").arg(peak(streamed)).arg(peak(small))));
    QVERIFY2(peak(whole) - peak(small) > 90, qPrintable(QString("whole %1 small %2").arg(peak(whole)).arg(peak(small))));  // the whole cube was in memory there
#endif
    for (const char* pair : {"big16.npy|bigall.npy", "b16_status.npy|ball_status.npy", "b16_nvalid.npy|ball_nvalid.npy"}) {
      const QStringList f = QString(pair).split('|');
      QFile a(file(f[0].toUtf8().constData())), b(file(f[1].toUtf8().constData()));
      QVERIFY(a.open(QIODevice::ReadOnly) && b.open(QIODevice::ReadOnly));
      QVERIFY2(a.readAll() == b.readAll(), pair);
    }
    // rss comes from a product A·X over chunks of other sizes: equal to rounding.
    const Array r16 = read_npy(sfile("b16_rss.npy")), rall = read_npy(sfile("ball_rss.npy"));
    QCOMPARE(r16.shape(), (Shape{h, w}));
    for (std::size_t i = 0; i < r16.size(); ++i)
      QVERIFY(std::fabs(r16.value(i) - rall.value(i)) <= 1e-10 * std::max(1.0, std::fabs(rall.value(i))));
  }

  void badInputs() {
    const QString out = file("never.npy");
    // A 2-D cube.
    save(sfile("flat.npy"), Array(DType::Float32, {N, H * W}));
    expectFailure({"solve", file("flat.npy"), file("A.npy"), "-o", out}, 2,
                  {"flat.npy", "expected 3 dimensions (N, H, W)", "found shape (20, 99)"}, out);
    // N of the cube differs from N of the design.
    save(sfile("short.npy"), Array(DType::Float32, {N - 1, H, W}));
    expectFailure({"solve", file("short.npy"), file("A.npy"), "-o", out}, 2, {"A.npy", "expected 19 rows", "found 20"}, out);
    // Truncated data.
    {
      std::ifstream in(sfile("cube.npy"), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      std::ofstream(sfile("trunc.npy"), std::ios::binary) << bytes.substr(0, bytes.size() - 100);
    }
    expectFailure({"solve", file("trunc.npy"), file("A.npy"), "-o", out}, 2,
                  {"trunc.npy", "expected 7920 bytes of data", "found 7820", "truncated"}, out);
    // Unknown dtype.
    {
      std::ifstream in(sfile("cube.npy"), std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      bytes.replace(bytes.find("<f4"), 3, "<c8");
      std::ofstream(sfile("complex.npy"), std::ios::binary) << bytes;
    }
    expectFailure({"solve", file("complex.npy"), file("A.npy"), "-o", out}, 2, {"complex.npy", "'<c8'"}, out);
    // Missing file.
    expectFailure({"solve", file("nope.npy"), file("A.npy"), "-o", out}, 3, {"nope.npy", "cannot open"}, out);
    // Weights of another shape.
    save(sfile("w_bad.npy"), Array(DType::Float64, {N, H, W + 1}));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--weights", file("w_bad.npy")}, 2,
                  {"w_bad.npy", "expected the cube's shape (20, 9, 11)", "found (20, 9, 12)"}, out);
    // A negative weight: the message says where it is (rows count from the top of the cube).
    {
      Array w(DType::Float64, {N, H, W});
      for (std::size_t i = 0; i < w.size(); ++i) w.data<double>()[i] = 1.0;
      w.data<double>()[2 * H * W + 7 * W + 3] = -0.5;  // observation 2, row 7, column 3
      save(sfile("w_neg.npy"), w);
    }
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--weights", file("w_neg.npy"), "--memory", "16"}, 2,
                  {"w_neg.npy", "expected finite weights >= 0", "found -0.5 at (observation 2, row 7, column 3)"}, out);
    // NaN in the design matrix.
    Array a(DType::Float64, {N, M});
    std::copy(a_.begin(), a_.end(), a.data<double>());
    a.data<double>()[7] = std::nan("");
    save(sfile("A_nan.npy"), a);
    expectFailure({"solve", file("cube.npy"), file("A_nan.npy"), "-o", out}, 2,
                  {"A_nan.npy", "expected finite values", "row 1, column 1"}, out);
    // Bad arguments.
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--rcond", "abc"}, 2, {"--rcond", "'abc'"}, out);
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--bogus"}, 2, {"unknown option --bogus"}, out);
    expectFailure({"solve", file("cube.npy"), file("A.npy")}, 2, {"expected -o X.npy"}, out);
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--diag", file("nodir/d")}, 3,
                  {"nodir/d_nvalid.npy", "cannot open for writing"}, out);
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--device-precision", "half"}, 2,
                  {"--device-precision", "mixed or float64", "'half'"}, out);
    QCOMPARE(cli({"frobnicate"}).code, 2);
  }

  // No output may be one of the run's inputs, however it is named; each
  // output is a file of its own.
  void outputsNeverReplaceInputs() {
    QVERIFY(QFile::copy(file("cube.npy"), file("cube_copy.npy")));
    QVERIFY(QFile::link(file("cube_copy.npy"), file("cube_link.npy")));
    Array w(DType::Float64, {N, H, W});
    for (std::size_t i = 0; i < w.size(); ++i) w.data<double>()[i] = 1.0;
    save(sfile("w1.npy"), w);
    const QByteArray before = [&] {
      QFile f(file("cube_copy.npy"));
      return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
    }();
    const QString cube = file("cube_copy.npy"), design = file("A.npy"), weights = file("w1.npy");
    const QString dotted = dir_.path() + "/./cube_copy.npy";
    for (const QStringList& out : {QStringList{"-o", cube}, QStringList{"-o", dotted}, QStringList{"-o", file("cube_link.npy")},
                                   QStringList{"-o", design}, QStringList{"-o", file("ok.npy"), "--model", weights},
                                   QStringList{"-o", file("ok.npy"), "--residual", file("ok.npy")}}) {
      const Run r = cli(QStringList{"solve", cube, design, "--weights", weights} + out);
      QVERIFY2(r.code == 2, qPrintable(r.err));
      QCOMPARE(r.err.count('\n'), 1);
      QVERIFY2(r.err.contains("apart from the inputs") || r.err.contains("a file of its own"), qPrintable(r.err));
      QVERIFY(!QFile::exists(file("ok.npy")));
      QCOMPARE(QDir(dir_.path()).entryList({"*partial*"}).size(), 0);
    }
    // The JSON written beside X (how it was made) is an output too: never an input's file.
    {
      QFile times(file("times.json"));
      QVERIFY(times.open(QIODevice::WriteOnly));
      for (std::size_t i = 0; i < N; ++i) times.write(QByteArray::number(2020.0 + static_cast<double>(i) / 12) + "\n");
    }
    const Run side = cli({"solve", cube, "poly:1", "--times", file("times.json"), "-o", file("times.npy")});
    QVERIFY2(side.code == 2 && side.err.contains("times.json: expected how the outputs were made") && side.err.contains("apart from the inputs"),
             qPrintable(side.err));
    QVERIFY(!QFile::exists(file("times.npy")));
    // Read through the link, written by the name of what it points to.
    const Run r = cli({"solve", file("cube_link.npy"), design, "-o", cube});
    QCOMPARE(r.code, 2);
    QFile f(cube);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll() == before);
  }

  // SIGINT, SIGTERM and SIGHUP while a solve writes: the exit code says
  // which, one line says nothing was written, and nothing is left behind.
  void signalsLeaveNothing() {
    saveSlowInputs("slow.npy", "slowA.npy", 5);
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      QProcess p;
      p.start(CUBESOLVE_CLI, {"solve", file("slow.npy"), file("slowA.npy"), "-o", file("slow_x.npy"), "--diag",
                              file("slow_d"), "--method", "exact", "--memory", "16", "--threads", "1"});
      QVERIFY(p.waitForStarted());
      QElapsedTimer t;  // wait until it is writing its temporary files
      t.start();
      while (QDir(dir_.path()).entryList({"slow_*partial*"}).isEmpty() && t.elapsed() < 30000) QTest::qWait(5);
      QVERIFY(!QDir(dir_.path()).entryList({"slow_*partial*"}).isEmpty());
      ::kill(static_cast<pid_t>(p.processId()), sig);
      QVERIFY(p.waitForFinished(60000));
      QCOMPARE(p.exitStatus(), QProcess::NormalExit);
      QCOMPARE(p.exitCode(), 128 + sig);
      const QString err = QString::fromUtf8(p.readAllStandardError());
      QVERIFY2(err.count('\n') == 1 && err.contains("interrupted") && err.contains("no output written"), qPrintable(err));
      QCOMPARE(QDir(dir_.path()).entryList({"slow_*"}).size(), 0);
    }
  }

  // A run killed outright (SIGKILL: no chance to clean up) leaves its
  // temporary files; the next run writing those outputs removes them,
  // saying so on stderr, and writes its own.
  void killedRunsTemporariesAreRemovedLater() {
    saveSlowInputs("kill.npy", "killA.npy", 6);
    const QStringList args{"solve", file("kill.npy"), file("killA.npy"), "-o", file("killed_x.npy"), "--diag", file("killed_d"),
                           "--memory", "16", "--threads", "1"};
    QProcess p;
    p.start(CUBESOLVE_CLI, QStringList(args) << "--method" << "exact");
    QVERIFY(p.waitForStarted());
    QElapsedTimer t;
    t.start();
    while (QDir(dir_.path()).entryList({"killed_*partial*"}).size() < 7 && t.elapsed() < 30000) QTest::qWait(5);
    ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(QDir(dir_.path()).entryList({"killed_*partial*"}).size(), 7);  // X, five diagnostics, how they were made
    const Run again = cli(args);
    QVERIFY2(again.code == 0, qPrintable(again.err));
    QCOMPARE(again.err.count("no longer running"), 7);
    QCOMPARE(QDir(dir_.path()).entryList({"killed_*partial*"}).size(), 0);
    QCOMPARE(QDir(dir_.path()).entryList({"killed_*"}).size(), 7);  // the set, its JSON beside it
  }

  // An output whose name is a folder's is refused before the solve, and
  // none of the set is written.
  void aFolderAmongTheOutputsWritesNone() {
    QVERIFY(QDir(dir_.path()).mkdir("dd_rss.npy"));
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", file("dd_x.npy"), "--diag", file("dd")}, 2,
                  {"dd_rss.npy", "expected a file for the rss output, found a folder"}, file("dd_x.npy"));
    QCOMPARE(QDir(dir_.path()).entryList({"dd_*"}).size(), 1);  // the folder alone
  }

  // An output's name may be as long as the file system allows (255 bytes):
  // its temporary file's name is shorter.
  void longOutputNames() {
    const QString name = dir_.filePath(QString(251, QChar('x')) + ".npy");
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", name});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(name));
  }

  void badWeightsAndFullDisk() {
    // An infinite weight is refused like a negative one.
    Array w(DType::Float64, {N, H, W});
    for (std::size_t i = 0; i < w.size(); ++i) w.data<double>()[i] = 1.0;
    w.data<double>()[3 * H * W + 2 * W + 4] = HUGE_VAL;
    save(sfile("w_inf.npy"), w);
    const QString out = file("never.npy");
    expectFailure({"solve", file("cube.npy"), file("A.npy"), "-o", out, "--weights", file("w_inf.npy")}, 2,
                  {"w_inf.npy", "expected finite weights >= 0", "found inf at (observation 3, row 2, column 4)"}, out);
    // A write that fails (a file size limit standing in for a full disk)
    // names the output asked for, not its temporary file.
    QProcess p;
    p.start("bash", {"-c", QString("trap '' XFSZ; ulimit -f 4; exec '%1' solve '%2' '%3' -o '%4' --dtype float64 --diag '%5'")
                               .arg(CUBESOLVE_CLI, file("cube.npy"), file("A.npy"), file("full_x.npy"), file("full_d"))});
    QVERIFY(p.waitForFinished(60000));
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(p.exitCode() == 3, qPrintable(err));
    QVERIFY2(err.count('\n') == 1 && err.contains("write failed") && !err.contains("partial"), qPrintable(err));
    QCOMPARE(QDir(dir_.path()).entryList({"full_*"}).size(), 0);
  }

  void cudaWithoutBackendIsExit4() {
    bool device = true;
    try {
      resolve_device(Device::Cuda);
    } catch (const NumericalError&) {
      device = false;
    }
    if (device) QSKIP("a CUDA device is present");
    const Run r = cli({"solve", file("cube.npy"), file("A.npy"), "-o", file("xc.npy"), "--device", "cuda"});
    QCOMPARE(r.code, 4);
    QVERIFY(r.err.contains("--device cuda"));
    QVERIFY(!QFile::exists(file("xc.npy")));
  }
};

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
