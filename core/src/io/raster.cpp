#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>

#include "io/sizes.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cctype>
#include <cmath>
#include <limits>

#ifdef CUBESOLVE_HAS_GDAL
#include <cpl_error.h>
#include <cpl_string.h>
#include <gdal.h>
#endif

namespace cubesolve {


Array read_cube(const std::string& path, GeoReference* geo) {
  if (has_extension(path, ".npy")) return read_npy(path);
  return read_raster(path, geo);
}

std::unique_ptr<CubeReader> open_raster_cube(const std::string& path);

void for_row_blocks(std::size_t height, std::size_t bytes_per_row, const Progress& progress,
                    const std::function<void(std::size_t, std::size_t)>& each, std::size_t block_bytes) {
  const std::size_t step = std::max<std::size_t>(1, block_bytes / std::max<std::size_t>(bytes_per_row, 1));
  for (std::size_t r0 = 0; r0 < height; r0 += step) {
    const std::size_t r1 = std::min(height, r0 + step);
    each(r0, r1);
    if (progress && !progress(static_cast<double>(r1) / static_cast<double>(height))) throw Cancelled();
  }
}

Array read_all(CubeReader& reader, const Progress& progress) {
  const Shape& s = reader.shape();
  Array whole = Array::uninitialized(reader.dtype(), s);
  for_row_blocks(s[1], s[0] * s[2] * dtype_size(reader.dtype()), progress,
                 [&](std::size_t r0, std::size_t r1) { put_rows(whole, r0, reader.rows(r0, r1)); });
  return whole;
}

namespace {
class ArrayReader : public CubeReader {
public:
  explicit ArrayReader(std::shared_ptr<const Array> cube) : cube_(std::move(cube)) {
    shape_ = cube_->shape();
    dtype_ = cube_->dtype();
  }
  Array rows(std::size_t r0, std::size_t r1) override { return take_rows(*cube_, r0, r1); }

private:
  std::shared_ptr<const Array> cube_;
};
}  // namespace

std::unique_ptr<CubeReader> array_reader(std::shared_ptr<const Array> cube) { return std::make_unique<ArrayReader>(std::move(cube)); }

std::unique_ptr<CubeReader> open_cube(const std::string& path) {
  auto reader = has_extension(path, ".npy") ? open_npy_cube(path) : open_raster_cube(path);
  check_cube_shape(reader->shape(), reader->dtype(), path);
  return reader;
}

#ifndef CUBESOLVE_HAS_GDAL

bool raster_support() { return false; }

Array read_raster(const std::string& path, GeoReference*) {
  throw InputError(path + ": expected a .npy file (this build reads no other rasters: it was built without GDAL)");
}

void write_geotiff(const std::string& path, const Array&, const GeoReference&, const std::vector<std::string>&) {
  throw InputError(path + ": expected an output ending in .npy (this build writes no GeoTIFF: it was built without GDAL)");
}

std::unique_ptr<CubeReader> open_raster_cube(const std::string& path) {
  read_raster(path, nullptr);
  return nullptr;
}

std::unique_ptr<CubeWriter> geotiff_writer(const std::string& path, const Shape&, const GeoReference&,
                                           const std::vector<std::string>&, const std::string&) {
  write_geotiff(path, Array(), {}, {});
  return nullptr;
}

#else

bool raster_support() { return true; }

namespace {

std::string gdal_message() {
  const char* m = CPLGetLastErrorMsg();
  return m && *m ? m : "unknown GDAL error";
}

/// While it lives, GDAL's messages on this thread go to gdal_message() and
/// the tool's own message, not to stderr.
struct QuietGdal {
  QuietGdal() {
    CPLErrorReset();
    CPLPushErrorHandler(CPLQuietErrorHandler);
  }
  ~QuietGdal() { CPLPopErrorHandler(); }
  QuietGdal(const QuietGdal&) = delete;
  QuietGdal& operator=(const QuietGdal&) = delete;
};

/// Raw rasters (ENVI) whose header promises more data than the data file
/// holds: GDAL would read the missing part as zeros.
void check_raw_size(GDALDatasetH ds) {
  if (std::string(GDALGetDriverShortName(GDALGetDatasetDriver(ds))) != "ENVI") return;
  char** files = GDALGetFileList(ds);
  const std::string data = files && files[0] ? files[0] : "";
  CSLDestroy(files);
  if (data.empty()) return;
  const char* offset = CSLFetchNameValue(GDALGetMetadata(ds, "ENVI"), "header_offset");
  const Shape shape{static_cast<std::size_t>(GDALGetRasterCount(ds)), static_cast<std::size_t>(GDALGetRasterYSize(ds)),
                    static_cast<std::size_t>(GDALGetRasterXSize(ds))};
  const GDALDataType type = GDALGetRasterDataType(GDALGetRasterBand(ds, 1));
  const auto item = static_cast<std::size_t>(GDALGetDataTypeSizeBytes(type));
  detail::check_file_holds(data, offset ? std::strtoull(offset, nullptr, 10) : 0, detail::data_bytes(shape, item, data),
                           "data for " + shape_string(shape) + " " + GDALGetDataTypeName(type) +
                               " values (as its ENVI header says)");
}

/// A band's stored numbers to values: its nodata missing (NaN), the rest
/// scaled and offset, in double precision.
struct Values {
  bool has_nodata;
  double nodata, scale, offset;
  template <class T>
  void apply(T* v, std::size_t n) const {
    if (!has_nodata && scale == 1 && offset == 0) return;
    const bool nan_nodata = std::isnan(nodata);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = v[i];
      v[i] = has_nodata && (x == nodata || (nan_nodata && std::isnan(x))) ? std::numeric_limits<T>::quiet_NaN()
                                                                          : static_cast<T>(x * scale + offset);
    }
  }
};

class GdalReader : public CubeReader {
public:
  explicit GdalReader(const std::string& path) : path_(path) {
    detail::check_not_folder(file_of(path));
    GDALAllRegister();
    const QuietGdal quiet;
    ds_ = GDALOpenEx(path.c_str(), GDAL_OF_RASTER | GDAL_OF_READONLY, nullptr, nullptr, nullptr);
    if (!ds_) {
      // A file that is there and readable but no raster is bad input.
      const std::string file = file_of(path);
      if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
        std::fclose(f);
        throw InputError(path + ": expected a raster GDAL reads (GeoTIFF, ENVI, NetCDF, HDF5, ...), found a file it "
                                "does not recognise: " + gdal_message());
      }
      throw IoError(path + ": cannot open for reading: " + gdal_message());
    }
    try {
      check_raw_size(ds_);
    } catch (...) {
      GDALClose(ds_);
      throw;
    }
    const int W = GDALGetRasterXSize(ds_), H = GDALGetRasterYSize(ds_), N = GDALGetRasterCount(ds_);
    if (N == 0) {
      std::string list;
      char** sub = GDALGetMetadata(ds_, "SUBDATASETS");
      for (int i = 0; sub && sub[i]; ++i) {
        const std::string item = sub[i];
        if (item.find("_NAME=") != std::string::npos) list += "\n  " + item.substr(item.find('=') + 1);
      }
      GDALClose(ds_);
      throw InputError(path + ": expected a raster with bands (observations), found none" +
                       (list.empty() ? std::string() : "; open one of its subdatasets:" + list));
    }
    bool wide = false;
    for (int b = 1; b <= N; ++b) {
      const GDALDataType t = GDALGetRasterDataType(GDALGetRasterBand(ds_, b));
      if (GDALDataTypeIsComplex(t)) {  // read as real, only the real part would remain
        GDALClose(ds_);
        throw InputError(path + ": expected real values, found complex ones (" + GDALGetDataTypeName(t) + ") in band " +
                         std::to_string(b) + "; take their phase or amplitude first");
      }
      wide = wide || t == GDT_Float64 || t == GDT_Int32 || t == GDT_UInt32;
    }
    shape_ = {static_cast<std::size_t>(N), static_cast<std::size_t>(H), static_cast<std::size_t>(W)};
    dtype_ = wide ? DType::Float64 : DType::Float32;
    double t[6];
    if (GDALGetGeoTransform(ds_, t) == CE_None) geo_.transform.assign(t, t + 6);
    if (const char* wkt = GDALGetProjectionRef(ds_)) geo_.projection = wkt;
    std::vector<std::string> names;  // each band's DATE item, else its description
    for (int b = 1; b <= N; ++b) {
      GDALRasterBandH rb = GDALGetRasterBand(ds_, b);
      const char* date = GDALGetMetadataItem(rb, "DATE", nullptr);
      names.emplace_back(date && *date ? date : GDALGetDescription(rb));
    }
    band_dates_ = cubesolve::band_dates(names);
    limit_cache();
  }
  ~GdalReader() override { GDALClose(ds_); }

  Array rows(std::size_t r0, std::size_t r1) override {
    const std::size_t N = shape_[0], W = shape_[2], R = r1 - r0, P = R * W;
    const QuietGdal quiet;
    // Every band in one call, in the cube's own type (exact for the types
    // read as float32: 8 and 16-bit integers, float32), straight into the block.
    Array out = Array::uninitialized(dtype_, {N, R, W});
    const GDALDataType type = dtype_ == DType::Float64 ? GDT_Float64 : GDT_Float32;
    if (GDALDatasetRasterIO(ds_, GF_Read, 0, static_cast<int>(r0), static_cast<int>(W), static_cast<int>(R), out.raw(),
                            static_cast<int>(W), static_cast<int>(R), type, static_cast<int>(N), nullptr, 0, 0, 0) != CE_None)
      throw IoError(path_ + ": rows " + std::to_string(r0) + " to " + std::to_string(r1) + " could not be read: " + gdal_message());
    for (std::size_t b = 0; b < N; ++b) {
      GDALRasterBandH rb = GDALGetRasterBand(ds_, static_cast<int>(b) + 1);
      int has_nodata = 0, has_scale = 0, has_offset = 0;
      const double nodata = GDALGetRasterNoDataValue(rb, &has_nodata);
      const double scale = GDALGetRasterScale(rb, &has_scale), offset = GDALGetRasterOffset(rb, &has_offset);
      const Values v{has_nodata != 0, nodata, has_scale ? scale : 1.0, has_offset ? offset : 0.0};
      if (dtype_ == DType::Float64) v.apply(out.data<double>() + b * P, P);
      else v.apply(out.data<float>() + b * P, P);
    }
    return out;
  }

private:
  std::string path_;
  GDALDatasetH ds_ = nullptr;

  /// GDAL's block cache (by default 5 % of the memory, more than a block
  /// of rows's budget) needs to hold only what a block of rows leaves to
  /// the next: a row of the file's blocks of every band, so that each is
  /// decoded once. At least 64 MB, at most GDAL's own; GDAL_CACHEMAX, where
  /// the user sets it, rules.
  void limit_cache() const {
    if (CPLGetConfigOption("GDAL_CACHEMAX", nullptr)) return;
    GDALRasterBandH rb = GDALGetRasterBand(ds_, 1);
    int bx = 0, by = 0;
    GDALGetBlockSize(rb, &bx, &by);
    const GIntBig floor = GIntBig{64} << 20, own = std::max(GDALGetCacheMax64(), floor);
    const auto need = static_cast<GIntBig>(shape_[0] * shape_[2] * static_cast<std::size_t>(std::max(by, 1)) *
                                           static_cast<std::size_t>(GDALGetDataTypeSizeBytes(GDALGetRasterDataType(rb))));
    GDALSetCacheMax64(std::clamp(need, floor, own));
  }
};

class GeoTiffWriter : public CubeWriter {
public:
  GeoTiffWriter(const std::string& path, const Shape& shape, const GeoReference& geo,
                const std::vector<std::string>& names, const std::string& name)
      : path_(name.empty() ? path : name), shape_(shape) {
    GDALAllRegister();
    const QuietGdal quiet;
    if (shape.size() != 3) throw IoError(path_ + ": expected bands (B, H, W) to write");
    GDALDriverH driver = GDALGetDriverByName("GTiff");
    if (!driver) throw IoError(path_ + ": GDAL has no GeoTIFF driver");
    char** options = nullptr;
    options = CSLSetNameValue(options, "COMPRESS", "DEFLATE");
    options = CSLSetNameValue(options, "TILED", "YES");
    options = CSLSetNameValue(options, "BIGTIFF", "IF_SAFER");
    CPLErrorReset();
    ds_ = GDALCreate(driver, path.c_str(), static_cast<int>(shape[2]), static_cast<int>(shape[1]),
                     static_cast<int>(shape[0]), GDT_Float32, options);
    CSLDestroy(options);
    if (!ds_) throw IoError(path_ + ": cannot create the GeoTIFF: " + gdal_message());
    if (geo.transform.size() == 6) GDALSetGeoTransform(ds_, const_cast<double*>(geo.transform.data()));
    if (!geo.projection.empty()) GDALSetProjection(ds_, geo.projection.c_str());
    for (const auto& [key, value] : geo.metadata) GDALSetMetadataItem(ds_, key.c_str(), value.c_str(), nullptr);
    for (std::size_t b = 0; b < shape[0]; ++b) {
      GDALRasterBandH rb = GDALGetRasterBand(ds_, static_cast<int>(b) + 1);
      GDALSetRasterNoDataValue(rb, std::numeric_limits<double>::quiet_NaN());
      if (b < names.size()) GDALSetDescription(rb, names[b].c_str());
      if (b < names.size() && is_calendar_date(names[b])) GDALSetMetadataItem(rb, "DATE", names[b].c_str(), nullptr);  // other tools' date
    }
  }
  ~GeoTiffWriter() override {
    if (ds_) GDALClose(ds_);
  }

  void rows(std::size_t r0, const Array& block) override {
    const std::size_t W = shape_[2], R = block.dim(1), P = R * W;
    const QuietGdal quiet;
    std::vector<float> plane(P);
    for (std::size_t b = 0; b < shape_[0]; ++b) {
      for (std::size_t p = 0; p < P; ++p) plane[p] = static_cast<float>(block.value(b * P + p));
      if (GDALRasterIO(GDALGetRasterBand(ds_, static_cast<int>(b) + 1), GF_Write, 0, static_cast<int>(r0),
                       static_cast<int>(W), static_cast<int>(R), plane.data(), static_cast<int>(W), static_cast<int>(R),
                       GDT_Float32, 0, 0) != CE_None)
        throw IoError(path_ + ": write failed: " + gdal_message());
    }
  }

  void finish() override {
    const QuietGdal quiet;
    GDALClose(ds_);
    ds_ = nullptr;
    if (CPLGetLastErrorType() >= CE_Failure) throw IoError(path_ + ": write failed: " + gdal_message());
  }

private:
  std::string path_;  // as messages name it
  Shape shape_;
  GDALDatasetH ds_ = nullptr;
};

}  // namespace

std::unique_ptr<CubeReader> open_raster_cube(const std::string& path) { return std::make_unique<GdalReader>(path); }

std::unique_ptr<CubeWriter> geotiff_writer(const std::string& path, const Shape& shape, const GeoReference& geo,
                                           const std::vector<std::string>& names, const std::string& name) {
  return std::make_unique<GeoTiffWriter>(path, shape, geo, names, name);
}

Array read_raster(const std::string& path, GeoReference* geo) {
  GdalReader reader(path);
  if (geo) *geo = reader.geo();
  return reader.rows(0, reader.shape()[1]);
}

void write_geotiff(const std::string& path, const Array& bands, const GeoReference& geo,
                   const std::vector<std::string>& names) {
  if (bands.ndim() != 3) throw IoError(path + ": expected bands (B, H, W) to write");
  GeoTiffWriter writer(path, bands.shape(), geo, names, path);
  writer.rows(0, bands);
  writer.finish();
}

#endif

}  // namespace cubesolve
