#pragma once
// Rasters through GDAL: any raster GDAL opens is a cube (bands =
// observations), and results can be written as GeoTIFF with the input's
// georeference. Without GDAL in the build every call throws InputError.

#include <cubesolve/data/array.hpp>

#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

/// Where a raster lies on the Earth: GDAL's affine geotransform (6 numbers,
/// empty when the file has none) and the projection as WKT.
struct GeoReference {
  std::vector<double> transform;
  std::string projection;
  /// Written with a GeoTIFF as dataset metadata items (how it was made).
  std::vector<std::pair<std::string, std::string>> metadata;
  bool empty() const { return transform.empty() && projection.empty(); }
};

/// True when this build reads and writes rasters through GDAL.
bool raster_support();

/// Reads every band of a raster (GeoTIFF, ENVI, NetCDF or HDF5 subdataset,
/// ...) as a cube (N, H, W): float64 when a band is stored in 64 bits, else
/// float32. Values equal to a band's nodata value become NaN; scale and
/// offset are applied. `geo`, when given, receives the georeference.
/// Throws IoError when GDAL cannot open the file, InputError for a file
/// without bands (the message lists its subdatasets), of complex values, or
/// without GDAL.
Array read_raster(const std::string& path, GeoReference* geo = nullptr);

/// Reads a cube by extension: .npy through the NumPy reader, anything else
/// through GDAL. Throws as those readers.
Array read_cube(const std::string& path, GeoReference* geo = nullptr);

/// Writes bands (B, H, W) to `path` as a float32 GeoTIFF: one band per
/// plane, NaN as nodata, `names` as band descriptions, `geo` when not empty.
/// Throws IoError.
void write_geotiff(const std::string& path, const Array& bands, const GeoReference& geo,
                   const std::vector<std::string>& names);

/// True for paths that name a GeoTIFF (.tif, .tiff).

}  // namespace cubesolve
