// .npy and CSV reading and writing, including files crafted byte by byte in
// every variant the reader supports, and malformed ones.
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/stream.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <QTemporaryDir>
#include <QtTest>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <random>
#include <sstream>

using namespace cubesolve;

namespace {

// A .npy file as NumPy would write it, of any version, byte order and memory order.
std::string craft_npy(int version, const std::string& descr, bool fortran, const std::string& shape,
                      const std::string& data) {
  std::string dict = "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  const std::size_t pre = version == 1 ? 10 : 12;
  while ((pre + dict.size() + 1) % 64) dict += ' ';
  dict += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const std::size_t len = dict.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (version != 1) out += std::string(2, '\0');
  return out + dict + data;
}

template <class T> std::string bytes_of(const std::vector<T>& v, bool big) {
  std::string s;
  for (T x : v) {
    char b[sizeof(T)];
    std::memcpy(b, &x, sizeof(T));
    if (big) std::reverse(b, b + sizeof(T));
    s.append(b, sizeof(T));
  }
  return s;
}

}  // namespace

class TestNpy : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string path(const char* name) { return dir_.filePath(name).toStdString(); }
  std::string write(const char* name, const std::string& content) {
    const std::string p = path(name);
    std::ofstream(p, std::ios::binary) << content;
    return p;
  }
  void expectInputError(const std::string& file, const char* fragment) {
    try {
      read_npy(file);
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      const QString msg = e.what();
      QVERIFY2(msg.startsWith(QString::fromStdString(file) + ":"), qPrintable(msg));
      QVERIFY2(msg.contains(fragment), qPrintable(msg));
    }
  }

  // The mappings of this process's scratch files in `folder` (removed files).
  static int scratch_mappings(const QString& folder) {
    std::ifstream maps("/proc/self/maps");
    std::string line;
    int n = 0;
    while (std::getline(maps, line))
      n += line.find(folder.toStdString() + "/results-") != std::string::npos && line.find("(deleted)") != std::string::npos;
    return n;
  }

private slots:
  // A result larger than what may be held is kept in scratch files, mapped:
  // the same values to the bit, no file left behind, and a folder that
  // cannot take it is a clear error.
  void resultsKeptInScratchFiles() {
    QTemporaryDir dir;
    const std::size_t N = 30, H = 37, W = 41, M = 5;
    Array y(DType::Float32, {N, H, W}), a(DType::Float64, {N, M});
    std::mt19937 rng(5);
    std::normal_distribution<double> normal;
    for (std::size_t i = 0; i < y.size(); ++i) y.data<float>()[i] = i % 9 == 4 ? NAN : static_cast<float>(normal(rng));
    for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = normal(rng);
    const std::string cube = dir.filePath("y.npy").toStdString(), design = dir.filePath("a.npy").toStdString();
    {
      OutputSet out;
      out.add_npy(cube, y);
      out.add_npy(design, a);
      out.commit();
    }
    const Inputs in = open_inputs(cube, DesignSpec{design, "", ""});
    SolveOptions o;
    o.memory = std::size_t{1} << 20;  // a block of a few rows
    o.residuals = true;
    const QString folder = dir.filePath("scratch");
    const SolveResult held = solve_in_blocks(in, o);
    QCOMPARE(scratch_mappings(folder), 0);
    {
      const SolveResult kept = solve_in_blocks(in, o, {}, std::size_t{0}, folder.toStdString());
      QCOMPARE(scratch_mappings(folder), 6);  // x, n_valid, rank, rss, status, cond
      QCOMPARE(kept.x.shape(), held.x.shape());
      QCOMPARE(std::memcmp(kept.x.raw(), held.x.raw(), held.x.nbytes()), 0);
      QCOMPARE(std::memcmp(kept.status.raw(), held.status.raw(), held.status.nbytes()), 0);
      QCOMPARE(std::memcmp(kept.rss.raw(), held.rss.raw(), held.rss.nbytes()), 0);
      // Only what does not fit: x (the first part) held within its own bytes, the diagnostics in files.
      const SolveResult part = solve_in_blocks(in, o, {}, held.x.nbytes(), folder.toStdString());
      QCOMPARE(scratch_mappings(folder), 6 + 5);
      QCOMPARE(std::memcmp(part.x.raw(), held.x.raw(), held.x.nbytes()), 0);
    }
    QCOMPARE(scratch_mappings(folder), 0);
    QVERIFY(std::filesystem::is_empty(folder.toStdString()));  // removed as soon as made
    const std::string blocked = dir.filePath("y.npy/scratch").toStdString();  // under a file: no folder there
    try {
      solve_in_blocks(in, o, {}, std::size_t{0}, blocked);
      QFAIL("expected an IoError");
    } catch (const IoError& e) {
      QVERIFY2(std::string(e.what()).find(blocked) != std::string::npos, e.what());
    }
    const Array z = scratch_array(DType::Float64, {3, 4}, folder.toStdString());
    for (std::size_t i = 0; i < z.size(); ++i) QCOMPARE(z.value(i), 0.0);
  }

  void roundTrip_data() {
    QTest::addColumn<int>("dtype");
    QTest::newRow("float32") << int(DType::Float32);
    QTest::newRow("float64") << int(DType::Float64);
    QTest::newRow("int32") << int(DType::Int32);
    QTest::newRow("uint8") << int(DType::UInt8);
  }
  void roundTrip() {
    QFETCH(int, dtype);
    Array a(static_cast<DType>(dtype), {3, 4, 5});
    for (std::size_t i = 0; i < a.size(); ++i) {
      switch (a.dtype()) {
        case DType::Float32: a.data<float>()[i] = static_cast<float>(i) * 0.5f - 7; break;
        case DType::Float64: a.data<double>()[i] = static_cast<double>(i) / 3.0 - 7; break;
        case DType::Int32: a.data<std::int32_t>()[i] = static_cast<std::int32_t>(i) - 30; break;
        case DType::UInt8: a.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i); break;
      }
    }
    OutputSet out;
    out.add_npy(path("rt.npy"), a);
    out.commit();
    const Array b = read_npy(path("rt.npy"));
    QCOMPARE(b.shape(), a.shape());
    // Floats keep their type; integers come back as float64.
    QCOMPARE(b.dtype(), a.dtype() == DType::Float32 ? DType::Float32 : DType::Float64);
    for (std::size_t i = 0; i < a.size(); ++i) QCOMPARE(b.value(i), a.value(i));
  }

  void craftedVariants_data() {
    QTest::addColumn<int>("version");
    QTest::addColumn<bool>("big");
    QTest::addColumn<bool>("fortran");
    QTest::addColumn<bool>("f32");
    for (int v : {1, 2, 3})
      for (bool big : {false, true})
        for (bool fortran : {false, true})
          for (bool f32 : {false, true})
            QTest::addRow("v%d %s %s %s", v, big ? "big" : "little", fortran ? "F" : "C", f32 ? "f4" : "f8")
                << v << big << fortran << f32;
  }
  void craftedVariants() {
    QFETCH(int, version);
    QFETCH(bool, big);
    QFETCH(bool, fortran);
    QFETCH(bool, f32);
    // Logical array a[i][j][k] = 100 i + 10 j + k, shape (2, 3, 4).
    std::vector<double> values;
    if (fortran) {
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 3; ++j)
          for (int i = 0; i < 2; ++i) values.push_back(100 * i + 10 * j + k);
    } else {
      for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 4; ++k) values.push_back(100 * i + 10 * j + k);
    }
    const std::string data = f32 ? bytes_of(std::vector<float>(values.begin(), values.end()), big) : bytes_of(values, big);
    const std::string descr = std::string(big ? ">" : "<") + (f32 ? "f4" : "f8");
    const Array a = read_npy(write("v.npy", craft_npy(version, descr, fortran, "(2, 3, 4)", data)));
    QCOMPARE(a.shape(), (Shape{2, 3, 4}));
    QCOMPARE(a.dtype(), f32 ? DType::Float32 : DType::Float64);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) QCOMPARE(a.value(static_cast<std::size_t>(i * 12 + j * 4 + k)), 100.0 * i + 10 * j + k);
  }

  void takePixelsKeepsTypeAndOrder() {
    Array cube(DType::Float32, {3, 2, 4});  // value 100 i + p
    for (std::size_t i = 0; i < 3; ++i)
      for (std::size_t p = 0; p < 8; ++p) cube.data<float>()[i * 8 + p] = static_cast<float>(100 * i + p);
    const Array sub = take_pixels(cube, {6, 1, 1});
    QCOMPARE(sub.dtype(), DType::Float32);
    QVERIFY(sub.shape() == (Shape{3, 1, 3}));
    for (std::size_t i = 0; i < 3; ++i) {
      QCOMPARE(sub.value(i * 3 + 0), 100.0 * double(i) + 6);
      QCOMPARE(sub.value(i * 3 + 1), 100.0 * double(i) + 1);
      QCOMPARE(sub.value(i * 3 + 2), 100.0 * double(i) + 1);
    }
  }

  void integerTypesBecomeFloat64() {
    const Array a = read_npy(write("i2.npy", craft_npy(1, ">i2", false, "(3,)", bytes_of(std::vector<std::int16_t>{-5, 0, 300}, true))));
    QCOMPARE(a.dtype(), DType::Float64);
    QCOMPARE(a.value(0), -5.0);
    QCOMPARE(a.value(2), 300.0);
    const Array b = read_npy(write("u8.npy", craft_npy(1, "<u8", false, "(2, 1)", bytes_of(std::vector<std::uint64_t>{7, 9}, false))));
    QCOMPARE(b.shape(), (Shape{2, 1}));
    QCOMPARE(b.value(1), 9.0);
    const Array c = read_npy(write("b1.npy", craft_npy(1, "|b1", false, "(2,)", std::string("\x01\x00", 2))));
    QCOMPARE(c.value(0), 1.0);
    QCOMPARE(c.value(1), 0.0);
  }

  void malformed() {
    const std::string good = bytes_of(std::vector<double>{1, 2, 3, 4}, false);
    // What the file starts with, readable (no raw escape such as \x93).
    expectInputError(write("magic.npy", "PK\x03\x04 not a npy file"), "found a file starting with \"PK.. not\"");
    expectInputError(write("empty.npy", ""), "expected a NumPy .npy file, found an empty file");
    expectInputError(write("ver.npy", craft_npy(4, "<f8", false, "(4,)", good)), "version 1, 2 or 3");
    expectInputError(write("complex.npy", craft_npy(1, "<c16", false, "(2,)", good)), "found dtype '<c16'");
    expectInputError(write("str.npy", craft_npy(1, "<U4", false, "(2,)", good)), "found dtype '<U4'");
    expectInputError(write("trunc.npy", craft_npy(1, "<f8", false, "(5,)", good)),
                     "expected 40 bytes of data for shape (5,) of '<f8'");
    expectInputError(write("hdr.npy", craft_npy(1, "<f8", false, "(4,)", good).substr(0, 30)), "truncated .npy header");
    expectInputError(write("shape.npy", craft_npy(1, "<f8", false, "(-4,)", good)), "expected non-negative integer dimensions");
    try {
      read_npy(path("does-not-exist.npy"));
      QFAIL("expected IoError");
    } catch (const IoError& e) {
      QVERIFY(QString(e.what()).contains("does-not-exist.npy: cannot open"));
    }
  }

  // Headers that claim what no file holds: the size is checked, in 64 bits,
  // against the file before anything is allocated, by read_npy and by the
  // row-block reader alike.
  void lyingHeaders_data() {
    QTest::addColumn<QString>("shape");
    QTest::addColumn<QString>("fragment");
    QTest::newRow("bytes wrap to 0") << "(1, 4611686018427387904, 4611686018427387904)" << "more than 2^64 bytes";
    QTest::newRow("elements fit, bytes do not") << "(4611686018427387904, 3, 1)" << "more than 2^64 bytes";
    QTest::newRow("a dimension of 2^64 + 5") << "(18446744073709551621, 3, 1)" << "fit in 64 bits";
    QTest::newRow("terabytes in 64 bytes") << "(100000, 1000, 1000)" << "expected 800000000000 bytes of data";
    QTest::newRow("a design of 80 GB") << "(100000, 100000)" << "expected 80000000000 bytes of data";
  }
  void lyingHeaders() {
    QFETCH(QString, shape);
    QFETCH(QString, fragment);
    const std::string file = write("lie.npy", craft_npy(1, "<f8", false, shape.toStdString(), std::string(64, '\0')));
    expectInputError(file, fragment.toUtf8().constData());
    if (shape.count(',') == 2) {
      try {
        open_cube(file)->rows(0, 1);
        QFAIL("expected InputError");
      } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(fragment), e.what());
      }
    }
  }

  void csvMatrices() {
    const Array a = read_csv_matrix(write("a.csv", "t0,t1,t2\n1,2,3\n4, 5, 6\r\n# comment\n\n7,8,9e-1\n"));
    QCOMPARE(a.shape(), (Shape{3, 3}));
    QCOMPARE(a.value(8), 0.9);
    const Array b = read_array(write("b.txt", "1 2\n3\t4\n"));
    QCOMPARE(b.shape(), (Shape{2, 2}));
    QCOMPARE(b.value(3), 4.0);
    try {
      read_csv_matrix(write("ragged.csv", "1,2,3\n4,5\n"));
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY(QString(e.what()).contains("line 2: expected 3 values like the first row, found 2"));
    }
    try {
      read_csv_matrix(write("word.csv", "1,2\n3,x\n"));
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY(QString(e.what()).contains("line 2: expected numbers, found 'x'"));
    }
    QVERIFY_THROWS_EXCEPTION(InputError, read_csv_matrix(write("empty.csv", "only,a,header\n")));
  }

  // What spreadsheets write: a byte order mark first, ';' between values
  // and ',' as the decimal mark; what cannot be told apart is refused,
  // naming the line.
  void csvDialects() {
    const Array bom = read_csv_matrix(write("bom.csv", "\xEF\xBB\xBF" "1,2\n3,4\n"));
    QCOMPARE(bom.shape(), (Shape{2, 2}));  // the first line is data, not a header
    QCOMPARE(bom.value(0), 1.0);
    const Array eu = read_csv_matrix(write("eu.csv", "\xEF\xBB\xBF" "a;b\n0,51;0,95\n-1,5 ; 2;\n"));
    QCOMPARE(eu.shape(), (Shape{2, 2}));
    QCOMPARE(eu.value(0), 0.51);
    QCOMPARE(eu.value(2), -1.5);
    QCOMPARE(eu.value(3), 2.0);
    const Array one = read_csv_matrix(write("eu1.csv", "x;\n0,5\n1,25\n"));  // one column, ';' after the header
    QCOMPARE(one.shape(), (Shape{2, 1}));
    QCOMPARE(one.value(1), 1.25);
    auto refused = [&](const char* name, const char* text, const char* fragment) {
      try {
        read_csv_matrix(write(name, text));
        QFAIL(qPrintable(QString("%1: expected InputError").arg(name)));
      } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains(fragment), e.what());
      }
    };
    refused("spaced.csv", "0,51 0,95\n0,1 0,2\n", "line 1: expected one separator between values");
    refused("mixed.csv", "0,5;1,5\n0,25\n", "line 2: expected ';' between values as on line 1");
    refused("thousands.csv", "1.234,5;2\n", "line 1: expected one decimal comma in '1.234,5'");
    refused("commas.csv", "1;2\n3,4,5;6\n", "line 2: expected one decimal comma in '3,4,5'");
    QCOMPARE(read_csv_matrix(write("plain.csv", "1, 2, 3\n+4,5,6\n")).value(3), 4.0);  // spaces after commas
  }

  void outputsAppearTogetherOrNotAtAll() {
    const std::string p1 = path("o1.npy"), p2 = path("o2.npy");
    {
      OutputSet out;
      out.add_npy(p1, Array(DType::Float64, {2}));
      out.add_npy(p2, Array(DType::Float64, {2}));
      // destroyed without commit: nothing remains
    }
    QVERIFY(!QFile::exists(QString::fromStdString(p1)));
    QVERIFY(!QFile::exists(QString::fromStdString(p2)));
    QCOMPARE(QDir(dir_.path()).entryList({"*partial*"}).size(), 0);
    OutputSet out;
    out.add_npy(p1, Array(DType::Float64, {2}));
    out.commit();
    QVERIFY(QFile::exists(QString::fromStdString(p1)));
    QVERIFY_THROWS_EXCEPTION(IoError, OutputSet().add(path("no-such-dir/x.npy")));
    QVERIFY_THROWS_EXCEPTION(InputError, OutputSet().add(dir_.path().toStdString()));  // a folder
  }

  // A set that cannot be put in place (here a folder appears where its last
  // file goes) leaves the files it would have replaced as they were, and
  // nothing else.
  void aFailedCommitKeepsTheOldSet() {
    const std::string p1 = path("k1.npy"), p2 = path("k2.npy"), p3 = path("k3.npy");
    for (const std::string& p : {p1, p2}) std::ofstream(p) << "old";
    {
      OutputSet out;
      for (const std::string& p : {p1, p2, p3}) out.add_npy(p, Array(DType::Float64, {2}));
      QVERIFY(QDir().mkdir(QString::fromStdString(p3)));
      QVERIFY_THROWS_EXCEPTION(IoError, out.commit());
    }
    for (const std::string& p : {p1, p2}) {
      std::ifstream in(p);
      std::string text;
      in >> text;
      QCOMPARE(text, std::string("old"));
    }
    QVERIFY(QFileInfo(QString::fromStdString(p3)).isDir());
    QCOMPARE(QDir(dir_.path()).entryList({"*cubesolve*"}).size(), 0);
  }

  // The temporary file's name stays within the file-name limit (255 bytes)
  // whatever the output's, and tells whose it is.
  void temporaryNamesFitAndTellWhose() {
    const std::string name(250, 'n'), p = path((name + ".npy").c_str());
    const std::string temp = temporary_path(p);
    QVERIFY(temp.size() - temp.find_last_of('/') - 1 < 120);
    QVERIFY(QString::fromStdString(temp).endsWith(QString("-%1.partial").arg(QCoreApplication::applicationPid())));
    OutputSet out;
    out.add_npy(p, Array(DType::Float64, {3}));
    out.commit();
    QCOMPARE(read_npy(p).size(), std::size_t{3});
  }

  // A later run removes what a dead process of this host left beside its
  // outputs (and says so), puts back a file it was replacing, and leaves
  // other hosts' and living processes' files alone.
  void deadProcessesTemporariesAreRemoved() {
    const std::string p = path("stale.npy"), q = path("gone.npy");
    const pid_t child = fork();
    if (child == 0) _exit(0);
    waitpid(child, nullptr, 0);  // its pid names no process now
    auto of = [&](const std::string& out, const char* kind, const std::string& pid) {
      std::string t = temporary_path(out, kind);
      const std::string mine = "-" + std::to_string(QCoreApplication::applicationPid()) + ".";
      return t.replace(t.rfind(mine), mine.size(), "-" + pid + ".");
    };
    const std::string dead = of(p, "partial", std::to_string(child)), alive = of(p, "partial", "1");
    std::string other = dead;
    other.replace(other.rfind(".cubesolve-") + 11, 0, "elsewhere");  // another host's
    const std::string previous = of(q, "previous", std::to_string(child));
    for (const std::string& f : {dead, alive, other, previous}) std::ofstream(f) << "x";
    OutputSet out;
    out.add(p);
    QCOMPARE(out.notices().size(), std::size_t{1});
    QVERIFY(QString::fromStdString(out.notices()[0]).contains("no longer running"));
    QVERIFY(!QFile::exists(QString::fromStdString(dead)));
    QVERIFY(QFile::exists(QString::fromStdString(alive)) && QFile::exists(QString::fromStdString(other)));
    out.add(q);  // its replaced file goes back where it was
    QVERIFY(QFile::exists(QString::fromStdString(q)) && !QFile::exists(QString::fromStdString(previous)));
    for (const std::string& f : {alive, other, q}) std::remove(f.c_str());
  }
};

QTEST_GUILESS_MAIN(TestNpy)
#include "tst_npy.moc"
