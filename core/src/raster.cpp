#include <cubesolve/error.hpp>
#include <cubesolve/io.hpp>
#include <cubesolve/raster.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#ifdef CUBESOLVE_HAS_GDAL
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal.h>
#endif

namespace cubesolve {

namespace {
bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  return std::equal(suffix.rbegin(), suffix.rend(), s.rbegin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}
}  // namespace

bool is_geotiff_path(const std::string& path) { return ends_with_ci(path, ".tif") || ends_with_ci(path, ".tiff"); }

Array read_cube(const std::string& path, GeoReference* geo) {
  if (ends_with_ci(path, ".npy")) return read_npy(path);
  return read_raster(path, geo);
}

#ifndef CUBESOLVE_HAS_GDAL

bool raster_support() { return false; }

Array read_raster(const std::string& path, GeoReference*) {
  throw InputError(path + ": expected a .npy file (this build reads no other rasters: it was built without GDAL)");
}

void write_geotiff(const std::string& path, const Array&, const GeoReference&, const std::vector<std::string>&) {
  throw InputError(path + ": expected an output ending in .npy (this build writes no GeoTIFF: it was built without GDAL)");
}

#else

bool raster_support() { return true; }

namespace {

struct Dataset {
  GDALDatasetH h = nullptr;
  ~Dataset() {
    if (h) GDALClose(h);
  }
};

std::string gdal_message() {
  const char* m = CPLGetLastErrorMsg();
  return m && *m ? m : "unknown GDAL error";
}

}  // namespace

Array read_raster(const std::string& path, GeoReference* geo) {
  GDALAllRegister();
  CPLErrorReset();
  Dataset ds;
  CPLPushErrorHandler(CPLQuietErrorHandler);
  ds.h = GDALOpenEx(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
  CPLPopErrorHandler();
  if (!ds.h) throw IoError(path + ": GDAL cannot open it as a raster: " + gdal_message());
  const int W = GDALGetRasterXSize(ds.h), H = GDALGetRasterYSize(ds.h), N = GDALGetRasterCount(ds.h);
  if (N == 0) {
    std::string list;
    char** sub = GDALGetMetadata(ds.h, "SUBDATASETS");
    for (int i = 0; sub && sub[i]; ++i) {
      const std::string item = sub[i];
      if (item.find("_NAME=") != std::string::npos) list += "\n  " + item.substr(item.find('=') + 1);
    }
    throw InputError(path + ": expected a raster with bands (observations), found none" +
                     (list.empty() ? std::string() : "; open one of its subdatasets:" + list));
  }
  bool wide = false;
  for (int b = 1; b <= N; ++b) {
    const GDALDataType t = GDALGetRasterDataType(GDALGetRasterBand(ds.h, b));
    wide = wide || t == GDT_Float64 || t == GDT_Int32 || t == GDT_UInt32 || t == GDT_CFloat64;
  }
  Array cube(wide ? DType::Float64 : DType::Float32,
             {static_cast<std::size_t>(N), static_cast<std::size_t>(H), static_cast<std::size_t>(W)});
  const std::size_t P = static_cast<std::size_t>(H) * static_cast<std::size_t>(W);
  std::vector<double> band(P);
  for (int b = 1; b <= N; ++b) {
    GDALRasterBandH rb = GDALGetRasterBand(ds.h, b);
    if (GDALRasterIO(rb, GF_Read, 0, 0, W, H, band.data(), W, H, GDT_Float64, 0, 0) != CE_None)
      throw IoError(path + ": band " + std::to_string(b) + " could not be read: " + gdal_message());
    int has_nodata = 0, has_scale = 0, has_offset = 0;
    const double nodata = GDALGetRasterNoDataValue(rb, &has_nodata);
    double scale = GDALGetRasterScale(rb, &has_scale), offset = GDALGetRasterOffset(rb, &has_offset);
    if (!has_scale) scale = 1;
    if (!has_offset) offset = 0;
    const std::size_t base = static_cast<std::size_t>(b - 1) * P;
    for (std::size_t p = 0; p < P; ++p) {
      double v = band[p];
      if (has_nodata && (v == nodata || (std::isnan(nodata) && std::isnan(v)))) v = std::numeric_limits<double>::quiet_NaN();
      else v = v * scale + offset;
      if (wide) cube.data<double>()[base + p] = v;
      else cube.data<float>()[base + p] = static_cast<float>(v);
    }
  }
  if (geo) {
    *geo = {};
    double t[6];
    if (GDALGetGeoTransform(ds.h, t) == CE_None) geo->transform.assign(t, t + 6);
    const char* wkt = GDALGetProjectionRef(ds.h);
    if (wkt) geo->projection = wkt;
  }
  return cube;
}

void write_geotiff(const std::string& path, const Array& bands, const GeoReference& geo,
                   const std::vector<std::string>& names) {
  GDALAllRegister();
  if (bands.ndim() != 3) throw IoError(path + ": expected bands (B, H, W) to write");
  const int B = static_cast<int>(bands.dim(0)), H = static_cast<int>(bands.dim(1)), W = static_cast<int>(bands.dim(2));
  GDALDriverH driver = GDALGetDriverByName("GTiff");
  if (!driver) throw IoError(path + ": GDAL has no GeoTIFF driver");
  char** options = nullptr;
  options = CSLSetNameValue(options, "COMPRESS", "DEFLATE");
  options = CSLSetNameValue(options, "TILED", "YES");
  options = CSLSetNameValue(options, "BIGTIFF", "IF_SAFER");
  CPLErrorReset();
  Dataset ds;
  ds.h = GDALCreate(driver, path.c_str(), W, H, B, GDT_Float32, options);
  CSLDestroy(options);
  if (!ds.h) throw IoError(path + ": cannot create the GeoTIFF: " + gdal_message());
  if (geo.transform.size() == 6) GDALSetGeoTransform(ds.h, const_cast<double*>(geo.transform.data()));
  if (!geo.projection.empty()) GDALSetProjection(ds.h, geo.projection.c_str());
  const std::size_t P = static_cast<std::size_t>(H) * static_cast<std::size_t>(W);
  std::vector<float> plane(P);
  for (int b = 0; b < B; ++b) {
    GDALRasterBandH rb = GDALGetRasterBand(ds.h, b + 1);
    GDALSetRasterNoDataValue(rb, std::numeric_limits<double>::quiet_NaN());
    if (static_cast<std::size_t>(b) < names.size()) GDALSetDescription(rb, names[static_cast<std::size_t>(b)].c_str());
    for (std::size_t p = 0; p < P; ++p) plane[p] = static_cast<float>(bands.value(static_cast<std::size_t>(b) * P + p));
    if (GDALRasterIO(rb, GF_Write, 0, 0, W, H, plane.data(), W, H, GDT_Float32, 0, 0) != CE_None)
      throw IoError(path + ": write failed: " + gdal_message());
  }
  GDALClose(ds.h);
  ds.h = nullptr;
  if (CPLGetLastErrorType() >= CE_Failure) throw IoError(path + ": write failed: " + gdal_message());
}

#endif

}  // namespace cubesolve
