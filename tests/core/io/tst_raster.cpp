// Rasters through GDAL: files written here with GDAL's own drivers, read as
// cubes, solved by the CLI into GeoTIFF, and read back with GDAL.
#include "reference.hpp"

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/formats.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/workflow/results.hpp>

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <fstream>

#ifdef CUBESOLVE_TEST_NETCDF
#include <netcdf.h>
#endif

#include <cpl_conv.h>
#include <gdal.h>
#include <ogr_srs_api.h>

#include <cmath>
#include <cstring>
#include <tuple>

using namespace cubesolve;

namespace {

const double kTransform[6] = {500000.0, 30.0, 0.0, 4200000.0, 0.0, -30.0};
constexpr int N = 12, H = 10, W = 12;

std::string utm_wkt() {
  OGRSpatialReferenceH srs = OSRNewSpatialReference(nullptr);
  OSRImportFromEPSG(srs, 32633);
  char* wkt = nullptr;
  OSRExportToWkt(srs, &wkt);
  std::string s = wkt;
  CPLFree(wkt);
  OSRDestroySpatialReference(srs);
  return s;
}

// Value of band b at pixel p as stored in the file; -9999 marks nodata.
double stored(int b, int p) { return (p * 7 + b * 13) % 17 == 0 ? -9999.0 : std::sin(0.3 * p + b) * 10 + b; }

#ifdef CUBESOLVE_TEST_NETCDF
// A NetCDF file the way such cubes come: one (time, y, x) variable with a _FillValue.
void write_netcdf(const std::string& path) {
  int nc, dims[3], var;
  QCOMPARE(nc_create(path.c_str(), NC_CLOBBER | NC_NETCDF4, &nc), NC_NOERR);
  nc_def_dim(nc, "time", N, &dims[0]);
  nc_def_dim(nc, "y", H, &dims[1]);
  nc_def_dim(nc, "x", W, &dims[2]);
  int xv, yv;  // cell-centre coordinates, north-up like kTransform
  nc_def_var(nc, "y", NC_DOUBLE, 1, &dims[1], &yv);
  nc_def_var(nc, "x", NC_DOUBLE, 1, &dims[2], &xv);
  nc_put_att_text(nc, yv, "standard_name", 23, "projection_y_coordinate");
  nc_put_att_text(nc, xv, "standard_name", 23, "projection_x_coordinate");
  nc_put_att_text(nc, yv, "units", 1, "m");
  nc_put_att_text(nc, xv, "units", 1, "m");
  nc_def_var(nc, "displacement", NC_FLOAT, 3, dims, &var);
  const float fill = -9999.0f;
  nc_def_var_fill(nc, var, 0, &fill);
  nc_enddef(nc);
  std::vector<double> ys(H), xs(W);
  for (int r = 0; r < H; ++r) ys[static_cast<std::size_t>(r)] = kTransform[3] + kTransform[5] * (r + 0.5);
  for (int c = 0; c < W; ++c) xs[static_cast<std::size_t>(c)] = kTransform[0] + kTransform[1] * (c + 0.5);
  nc_put_var_double(nc, yv, ys.data());
  nc_put_var_double(nc, xv, xs.data());
  std::vector<float> v(static_cast<std::size_t>(N * H * W));
  for (int b = 0; b < N; ++b)
    for (int p = 0; p < H * W; ++p) v[static_cast<std::size_t>(b * H * W + p)] = static_cast<float>(stored(b, p));
  QCOMPARE(nc_put_var_float(nc, var, v.data()), NC_NOERR);
  nc_close(nc);
}
#endif

void write_raster(const char* driver, const std::string& path, bool georef, bool scale_band2) {
  GDALAllRegister();
#ifdef CUBESOLVE_TEST_NETCDF
  if (std::string(driver) == "netCDF") return write_netcdf(path);
#endif
  GDALDatasetH ds = GDALCreate(GDALGetDriverByName(driver), path.c_str(), W, H, N, GDT_Float32, nullptr);
  QVERIFY2(ds, driver);
  if (georef) {
    GDALSetGeoTransform(ds, const_cast<double*>(kTransform));
    GDALSetProjection(ds, utm_wkt().c_str());
  }
  std::vector<float> v(H * W);
  for (int b = 0; b < N; ++b) {
    GDALRasterBandH rb = GDALGetRasterBand(ds, b + 1);
    GDALSetRasterNoDataValue(rb, -9999.0);
    if (scale_band2 && b == 2) {
      GDALSetRasterScale(rb, 2.0);
      GDALSetRasterOffset(rb, 1.0);
    }
    for (int p = 0; p < H * W; ++p) v[static_cast<std::size_t>(p)] = static_cast<float>(stored(b, p));
    QCOMPARE(GDALRasterIO(rb, GF_Write, 0, 0, W, H, v.data(), W, H, GDT_Float32, 0, 0), CE_None);
  }
  GDALClose(ds);
}

}  // namespace

class TestRaster : public QObject {
  Q_OBJECT
  QTemporaryDir dir_;
  std::string file(const char* name) const { return dir_.filePath(name).toStdString(); }

private slots:
  void readsDriversWithNodataScaleOffset_data() {
    QTest::addColumn<QString>("driver");
    QTest::addColumn<QString>("name");
    QTest::newRow("GeoTIFF") << "GTiff" << "cube.tif";
    QTest::newRow("ENVI") << "ENVI" << "cube.img";
#ifdef CUBESOLVE_TEST_NETCDF
    QTest::newRow("NetCDF") << "netCDF" << "cube.nc";
#endif
  }
  void readsDriversWithNodataScaleOffset() {
    QFETCH(QString, driver);
    QFETCH(QString, name);
    const std::string path = file(name.toUtf8().constData());
    const bool scale = driver == "GTiff";
    write_raster(driver.toUtf8().constData(), path, true, scale);
    GeoReference geo;
    Array cube;
    try {
      cube = read_cube(path, &geo);
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
    QCOMPARE(cube.shape(), (Shape{N, H, W}));
    for (int b = 0; b < N; ++b)
      for (int p = 0; p < H * W; ++p) {
        const double v = cube.value(static_cast<std::size_t>(b * H * W + p)), s = stored(b, p);
        if (s == -9999.0) {
          QVERIFY(std::isnan(v));
          continue;
        }
        const double expect = scale && b == 2 ? 2 * static_cast<float>(s) + 1 : static_cast<float>(s);
        QVERIFY(std::fabs(v - expect) <= 1e-5 * std::max(1.0, std::fabs(expect)));
      }
    QCOMPARE(geo.transform.size(), std::size_t{6});
    for (int i = 0; i < 6; ++i) QVERIFY(std::fabs(geo.transform[static_cast<std::size_t>(i)] - kTransform[i]) < 1e-6);
    if (driver != "netCDF") QVERIFY(!geo.projection.empty());
  }

  void fileOfSeveralVariablesNamesThem() {
    // GDAL's netCDF writer stores each band as its own variable: opening the
    // file lists them; opening one works.
    const std::string path = file("vars.nc");
    GDALAllRegister();
    if (!GDALGetDriverByName("netCDF")) QSKIP("this GDAL has no netCDF driver");
    GDALDatasetH ds = GDALCreate(GDALGetDriverByName("netCDF"), path.c_str(), W, H, 2, GDT_Float32, nullptr);
    QVERIFY(ds);
    GDALClose(ds);
    try {
      read_cube(path);
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("subdatasets") && QString(e.what()).contains(":Band1"), e.what());
    }
    QCOMPARE(read_cube("NETCDF:\"" + path + "\":Band1").shape(), (Shape{1, H, W}));
  }

  void cliSolvesIntoGeoTiff() {
    const std::string cube = file("in.tif");
    write_raster("GTiff", cube, true, false);
    testing::Rng rng(4);
    Array a(DType::Float64, {N, 4});
    for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = rng.normal();
    OutputSet o;
    o.add_npy(file("A.npy"), a);
    o.commit();
    QProcess run;
    run.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), dir_.filePath("A.npy"), "-o", dir_.filePath("x.tif"),
                              "--diag", dir_.filePath("d")});
    QVERIFY(run.waitForFinished(60000));
    QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
    QVERIFY(QFile::exists(dir_.filePath("d_status.tif")));

    GDALDatasetH ds = GDALOpen(file("x.tif").c_str(), GA_ReadOnly);
    QVERIFY(ds);
    QCOMPARE(GDALGetRasterCount(ds), 4);
    double t[6];
    QCOMPARE(GDALGetGeoTransform(ds, t), CE_None);
    for (int i = 0; i < 6; ++i) QCOMPARE(t[i], kTransform[i]);
    OGRSpatialReferenceH srs = OSRNewSpatialReference(GDALGetProjectionRef(ds));
    QCOMPARE(QString(OSRGetAuthorityCode(srs, nullptr)), QString("32633"));
    OSRDestroySpatialReference(srs);
    QCOMPARE(QString(GDALGetDescription(GDALGetRasterBand(ds, 1))), QString("x0"));
    int has = 0;
    QVERIFY(std::isnan(GDALGetRasterNoDataValue(GDALGetRasterBand(ds, 1), &has)) && has);
    std::vector<float> x(4 * H * W);
    for (int b = 0; b < 4; ++b)
      QCOMPARE(GDALRasterIO(GDALGetRasterBand(ds, b + 1), GF_Read, 0, 0, W, H, x.data() + b * H * W, W, H, GDT_Float32, 0, 0),
               CE_None);
    GDALClose(ds);

    // Against gelsd on the same values (nodata missing).
    const Array in = read_cube(cube);
    const std::vector<double> av(a.data<double>(), a.data<double>() + a.size());
    const std::size_t P = H * W;
    QVERIFY(testing::max_lstsq_error(av, N, 4, P, [&](std::size_t i, std::size_t p) { return in.value(i * P + p); },
                                     [&](std::size_t j, std::size_t p) { return double(x[j * P + p]); }) <= 1e-5);
    // A design that names its unknowns names the bands: a CSV header, a built design's terms.
    {
      std::ofstream csv(file("A_named.csv"));
      csv << "offset,trend,annual_cos,annual_sin\n";
      for (std::size_t i = 0; i < N; ++i) csv << a.value(i * 4) << "," << a.value(i * 4 + 1) << "," << a.value(i * 4 + 2) << "," << a.value(i * 4 + 3) << "\n";
    }
    QProcess named;
    named.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), dir_.filePath("A_named.csv"), "-o", dir_.filePath("named.tif")});
    QVERIFY(named.waitForFinished(60000));
    QVERIFY2(named.exitCode() == 0, named.readAllStandardError().constData());
    GDALDatasetH nd = GDALOpen(file("named.tif").c_str(), GA_ReadOnly);
    QVERIFY(nd);
    for (int b = 0; b < 4; ++b)
      QCOMPARE(QString(GDALGetDescription(GDALGetRasterBand(nd, b + 1))),
               QStringList({"offset", "trend", "annual_cos", "annual_sin"})[b]);
    // How it was made, as the dataset's metadata.
    QCOMPARE(QString(GDALGetMetadataItem(nd, "CUBESOLVE_DESIGN", nullptr)), dir_.filePath("A_named.csv"));
    QCOMPARE(QString(GDALGetMetadataItem(nd, "CUBESOLVE_RIDGE", nullptr)), QString("0"));
    QVERIFY(QString(GDALGetMetadataItem(nd, "CUBESOLVE_SOFTWARE", nullptr)).startsWith("CubeSolve "));
    GDALClose(nd);
    // An SBAS design names the unknowns' bands by date and the model's and residuals' by pair.
    {
      std::ofstream pairs(file("pairs.txt"));
      for (int k = 0; k < N; ++k) pairs << "202001" << 10 + k << "_202001" << 11 + k + k % 2 << "\n";
    }
    QProcess sbas;
    sbas.start(CUBESOLVE_CLI, {"solve", QString::fromStdString(cube), "sbas", "--pairs", dir_.filePath("pairs.txt"), "-o",
                               dir_.filePath("sbas.tif"), "--model", dir_.filePath("model.tif"), "--diag", dir_.filePath("sbas")});
    QVERIFY(sbas.waitForFinished(60000));
    QVERIFY2(sbas.exitCode() == 0, sbas.readAllStandardError().constData());
    for (const auto& [name, band, description] : std::vector<std::tuple<const char*, int, QString>>{
             {"sbas.tif", 1, "20200111"}, {"model.tif", 1, "20200110_20200111"}, {"model.tif", 2, "20200111_20200113"},
             {"model.tif", N, "20200121_20200123"}, {"sbas_rank.tif", 1, "rank"}}) {
      GDALDatasetH band_ds = GDALOpen(file(name).c_str(), GA_ReadOnly);
      QVERIFY2(band_ds, name);
      QCOMPARE(QString(GDALGetDescription(GDALGetRasterBand(band_ds, band))), description);
      GDALClose(band_ds);
    }
  }

  // One list of the formats arrays are written in: what each front end
  // accepts, names in its messages and lists in its dialogs.
  void outputFormats() {
    std::vector<std::string> extensions;
    for (const auto& f : data_formats()) extensions.insert(extensions.end(), f.extensions.begin(), f.extensions.end());
    QCOMPARE(std::vector<std::string>(extensions.begin(), extensions.begin() + 3), (std::vector<std::string>{".npy", ".tif", ".tiff"}));
    QVERIFY(extensions.size() == 3 || (extensions.size() == 4 && extensions[3] == ".h5"));  // MintPy's with HDF5
    QCOMPARE(data_format_of("a/x.TIF"), std::optional<DataFormat>(DataFormat::GeoTiff));
    QCOMPARE(data_format_of("x.npy"), std::optional<DataFormat>(DataFormat::Npy));
    QVERIFY(!data_format_of("x.png"));
    QCOMPARE(data_extensions(), std::string(".npy or .tif"));
    Array a(DType::Float32, {2, 3, 4});
    OutputSet out;
    write_array(out, file("w.tif"), a, {}, {"b0", "b1"});
    write_array(out, file("w.npy"), a, {}, {});
    QVERIFY_THROWS_EXCEPTION(InputError, write_array(out, file("w.h5"), a, {}, {}));
    out.commit();
    QCOMPARE(read_cube(file("w.tif")).shape(), (Shape{2, 3, 4}));
    QCOMPARE(read_npy(file("w.npy")).shape(), (Shape{2, 3, 4}));
    // Every output is checked against the same list.
    ResultPaths bad;
    bad.x = file("x.jpg");
    try {
      bad.check();
      QFAIL("expected InputError");
    } catch (const InputError& e) {
      QVERIFY2(QString(e.what()).contains("to end in .npy or .tif"), e.what());
    }
  }

  void geoTiffInRowBlocks() {
    // A 55 MB raster within a 16 MB budget: GDAL windows in, GeoTIFF rows out.
    const std::size_t n = 12, h = 2000, w = 600;
    {
      testing::Rng rng(6);
      Array cube(DType::Float32, {n, h, w});
      for (std::size_t i = 0; i < cube.size(); ++i)
        cube.data<float>()[i] = rng.uniform() < 0.1 ? NAN : static_cast<float>(rng.normal());
      Array a(DType::Float64, {n, 3});
      for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = rng.normal();
      OutputSet o;
      write_geotiff(o.add_external(file("big.tif")), cube, {{0, 1, 0, 0, 0, -1}, "", {}}, {});
      o.add_npy(file("A3.npy"), a);
      o.commit();
    }
    auto run = [&](const char* out, const char* memory) {
      QProcess p;
      p.start(CUBESOLVE_CLI, {"solve", dir_.filePath("big.tif"), dir_.filePath("A3.npy"), "-o", dir_.filePath(out), "--memory",
                              memory, "--json"});
      p.waitForFinished(120000);
      return std::make_pair(p.exitCode(), QString(p.readAllStandardOutput()));
    };
    const auto blocks = run("b16.tif", "16"), whole = run("ball.tif", "4096");
    QCOMPARE(blocks.first, 0);
    QCOMPARE(whole.first, 0);
    QVERIFY(blocks.second.contains("\"blocks\": ") && !blocks.second.contains("\"blocks\": 1,"));
    const Array a = read_cube(file("b16.tif")), b = read_cube(file("ball.tif"));
    QCOMPARE(a.shape(), (Shape{3, h, w}));
    QVERIFY(std::memcmp(a.raw(), b.raw(), a.nbytes()) == 0);
  }

  // Bands carry dates: CubeSolve writes a date-named band's DATE item (as
  // other tools date bands), and reads a raster's bands' dates from DATE
  // items or from names ending in dates; none unless every band has one.
  void bandDates() {
    Array cube(DType::Float32, {3, 2, 2});
    for (std::size_t i = 0; i < cube.size(); ++i) cube.data<float>()[i] = static_cast<float>(i);
    {
      OutputSet o;
      write_geotiff(o.add_external(file("dated.tif")), cube, {}, {"20200101", "20200113", "20200125"});
      write_geotiff(o.add_external(file("named.tif")), cube, {}, {"ifg_20190301", "ifg_2019-03-13", "ifg_20190325"});
      write_geotiff(o.add_external(file("undated.tif")), cube, {}, {"20200101", "offset", "20200125"});
      o.commit();
    }
    QCOMPARE(open_cube(file("dated.tif"))->band_dates(), (std::vector<std::string>{"20200101", "20200113", "20200125"}));
    QCOMPARE(open_cube(file("named.tif"))->band_dates(), (std::vector<std::string>{"20190301", "20190313", "20190325"}));
    QVERIFY(open_cube(file("undated.tif"))->band_dates().empty());
    GDALAllRegister();
    GDALDatasetH ds = GDALOpen(file("dated.tif").c_str(), GA_ReadOnly);
    QVERIFY(ds);
    QCOMPARE(QString(GDALGetMetadataItem(GDALGetRasterBand(ds, 2), "DATE", nullptr)), QString("20200113"));
    GDALClose(ds);
    // A DATE item wins over the band's name.
    ds = GDALOpen(file("undated.tif").c_str(), GA_Update);
    GDALSetMetadataItem(GDALGetRasterBand(ds, 2), "DATE", "2020-01-13", nullptr);
    GDALClose(ds);
    QCOMPARE(open_cube(file("undated.tif"))->band_dates(), (std::vector<std::string>{"20200101", "20200113", "20200125"}));
    QVERIFY(band_dates({"20200113", "20200101"}).empty());  // not increasing
    QVERIFY(band_dates({"20200230"}).empty());              // no such day
  }

  void badRasters() {
    {
      QFile f(dir_.filePath("junk.tif"));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("this is not a raster");
    }
    QProcess run;
    run.start(CUBESOLVE_CLI, {"solve", dir_.filePath("junk.tif"), dir_.filePath("A.npy"), "-o", dir_.filePath("j.tif")});
    QVERIFY(run.waitForFinished(60000));
    QCOMPARE(run.exitCode(), 2);  // readable, but not a raster: bad input
    const QString err = run.readAllStandardError();
    QVERIFY2(err.contains("junk.tif") && err.contains("expected a raster GDAL reads"), qPrintable(err));
    QCOMPARE(err.count('\n'), 1);
    QVERIFY(!QFile::exists(dir_.filePath("j.tif")));
    // Design rows must match the bands.
    Array a(DType::Float64, {N + 1, 2});
    OutputSet o;
    o.add_npy(file("A13.npy"), a);
    o.commit();
    write_raster("GTiff", file("in2.tif"), false, false);
    QProcess rows;
    rows.start(CUBESOLVE_CLI, {"solve", dir_.filePath("in2.tif"), dir_.filePath("A13.npy"), "-o", dir_.filePath("r.tif")});
    QVERIFY(rows.waitForFinished(60000));
    QCOMPARE(rows.exitCode(), 2);
    QVERIFY(QString(rows.readAllStandardError()).contains("expected 12 rows"));
    QVERIFY(!QFile::exists(dir_.filePath("r.tif")));
  }

  // Rasters cut short: an ENVI header that promises more than its data file
  // holds (GDAL would read zeros), and a GeoTIFF missing its end. One line
  // from the tool, exit 2, nothing written.
  void truncatedRasters() {
    Array a(DType::Float64, {N, 2});
    for (std::size_t i = 0; i < a.size(); ++i) a.data<double>()[i] = std::cos(static_cast<double>(i));
    OutputSet o;
    o.add_npy(file("A_trunc.npy"), a);
    o.commit();
    write_raster("ENVI", file("short.img"), true, false);
    QVERIFY(QFile::resize(dir_.filePath("short.img"), 5000));  // GDAL itself refuses much shorter ones
    write_raster("GTiff", file("short.tif"), true, false);
    QVERIFY(QFile::resize(dir_.filePath("short.tif"), QFileInfo(dir_.filePath("short.tif")).size() / 2));
    for (const auto& [name, fragments] :
         {std::pair{QString("short.img"), QStringList{"short.img", "expected 5760 bytes of data", "found 5000"}},
          std::pair{QString("short.tif"), QStringList{"short.tif", "could not be read"}}}) {
      QProcess run;
      run.start(CUBESOLVE_CLI, {"solve", dir_.filePath(name), dir_.filePath("A_trunc.npy"), "-o", dir_.filePath("t.npy")});
      QVERIFY(run.waitForFinished(60000));
      const QString err = run.readAllStandardError();
      QVERIFY2(run.exitCode() == (name.endsWith(".tif") ? 3 : 2), qPrintable(err));  // a read that fails part way: I/O
      QVERIFY2(err.count('\n') == 1 && !err.contains("ERROR 1"), qPrintable(err));
      for (const QString& f : fragments) QVERIFY2(err.contains(f), qPrintable(err));
      QVERIFY(!QFile::exists(dir_.filePath("t.npy")));
      QCOMPARE(QDir(dir_.path()).entryList({"*partial*"}).size(), 0);
    }
  }

  // Complex values (a GeoTIFF of CFloat32, an ENVI cube of data type 6):
  // refused, where reading them as real would keep the real part alone;
  // and a raster whose declared rows cannot fit in memory: bad input, before
  // anything is allocated.
  void complexAndHugeRastersAreRefused() {
    GDALAllRegister();
    for (const char* driver : {"GTiff", "ENVI"}) {
      const std::string path = file(std::string(driver) == "GTiff" ? "complex.tif" : "complex.img");
      GDALDatasetH ds = GDALCreate(GDALGetDriverByName(driver), path.c_str(), 4, 3, 2, GDT_CFloat32, nullptr);
      QVERIFY(ds);
      GDALClose(ds);
      try {
        read_raster(path);
        QFAIL("expected InputError");
      } catch (const InputError& e) {
        QVERIFY2(QString(e.what()).contains("expected real values, found complex ones (CFloat32) in band 1"), e.what());
      }
    }
    {
      QFile f(dir_.filePath("huge.vrt"));
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("<VRTDataset rasterXSize=\"2000000000\" rasterYSize=\"2000000000\">\n"
              "  <VRTRasterBand dataType=\"Float32\" band=\"1\"/>\n  <VRTRasterBand dataType=\"Float32\" band=\"2\"/>\n"
              "</VRTDataset>\n");
    }
    Array a(DType::Float64, {2, 1});
    a.data<double>()[0] = 1;
    OutputSet o;
    o.add_npy(file("A2.npy"), a);
    o.commit();
    // solve and info alike refuse a row that alone passes the memory budget
    for (const QStringList& args : {QStringList{"solve", dir_.filePath("huge.vrt"), dir_.filePath("A2.npy"), "-o", dir_.filePath("h.npy")},
                                    QStringList{"info", dir_.filePath("huge.vrt")}}) {
      QProcess run;
      run.start(CUBESOLVE_CLI, args);
      QVERIFY(run.waitForFinished(60000));
      const QString err = run.readAllStandardError();
      QVERIFY2(run.exitCode() == 2 && err.contains("huge.vrt: expected rows that fit the memory budget"), qPrintable(err));
    }
    QVERIFY(!QFile::exists(dir_.filePath("h.npy")));
  }
};

QTEST_GUILESS_MAIN(TestRaster)
#include "tst_raster.moc"
