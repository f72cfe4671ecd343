#pragma once
// Cubes read and results written a block of rows at a time, so that a cube
// larger than memory is solved within a memory budget.

#include <cubesolve/data/array.hpp>
#include <cubesolve/io/raster.hpp>

#include <cubesolve/progress.hpp>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cubesolve {

/// A cube (N, H, W) on disk: a .npy file (any variant read_npy reads) or a
/// raster GDAL opens.
class CubeReader {
public:
  virtual ~CubeReader() = default;
  const Shape& shape() const { return shape_; }
  /// The element type rows() returns (float32 or float64).
  DType dtype() const { return dtype_; }
  const GeoReference& geo() const { return geo_; }
  /// The bands' dates (YYYYMMDD) where every band has one (a raster's DATE
  /// band metadata, or band names ending in a date), increasing; else none.
  const std::vector<std::string>& band_dates() const { return band_dates_; }
  /// Rows [r0, r1) of every band, (N, r1 - r0, W). Throws IoError, InputError.
  virtual Array rows(std::size_t r0, std::size_t r1) = 0;

protected:
  Shape shape_;
  DType dtype_ = DType::Float32;
  GeoReference geo_;
  std::vector<std::string> band_dates_;
};

/// Calls `each(r0, r1)` for consecutive blocks of rows covering [0, height),
/// each about `block_bytes` (32 MiB by default) at `bytes_per_row`, with
/// `progress` (where given) after each block. Throws what `each` throws, and
/// Cancelled when progress returns false.
void for_row_blocks(std::size_t height, std::size_t bytes_per_row, const Progress& progress,
                    const std::function<void(std::size_t, std::size_t)>& each, std::size_t block_bytes = std::size_t{32} << 20);
/// Every row of `reader`, (N, H, W), read a block of rows at a time with
/// `progress` after each. Throws as rows(), and Cancelled.
Array read_all(CubeReader& reader, const Progress& progress = {});

/// Opens `path` by extension (.npy, else GDAL) and checks that it is a cube
/// (N, H, W). Throws IoError, InputError naming the file.
std::unique_ptr<CubeReader> open_cube(const std::string& path);

/// A .npy file of any name, read a block of rows at a time; an (H, W) file
/// as (1, H, W) with `plane_as_band`. Throws IoError, InputError.
std::unique_ptr<CubeReader> open_npy_cube(const std::string& path, bool plane_as_band = false);

/// A cube already in memory, (N, H, W), read as a file's would be.
std::unique_ptr<CubeReader> array_reader(std::shared_ptr<const Array> cube);

/// An array (B, H, W) written a block of rows at a time.
class CubeWriter {
public:
  virtual ~CubeWriter() = default;
  /// Writes block (B, rows, W) at rows [r0, r0 + rows). Throws IoError.
  virtual void rows(std::size_t r0, const Array& block) = 0;
  /// Completes the file. Throws IoError.
  virtual void finish() = 0;
};

/// A .npy file (v1, little-endian, C order) of `dtype` holding `shape`
/// (B, H, W); its header says `header_shape` when given (e.g. (H, W) for B = 1).
/// Messages name the file `name` (the output the user asked for, where
/// `path` is its temporary file), or `path`. With `attach`, the file exists
/// already (another writer made it, header and all) and only rows are
/// written, at their place: several processes may fill one file so. Throws
/// IoError when the file cannot be made or opened, InputError for a shape
/// whose size overflows.
std::unique_ptr<CubeWriter> npy_writer(const std::string& path, DType dtype, const Shape& shape,
                                       const Shape& header_shape = {}, const std::string& name = "",
                                       bool attach = false);
/// A float32 GeoTIFF at `path`; `names` describe the bands; messages name
/// the file `name`, or `path`. Throws IoError when GDAL cannot make it,
/// InputError without GDAL in the build.
std::unique_ptr<CubeWriter> geotiff_writer(const std::string& path, const Shape& shape, const GeoReference& geo,
                                           const std::vector<std::string>& names, const std::string& name = "");

}  // namespace cubesolve
