#pragma once
// The formats arrays are written in, in one place: every output of the CLI
// and of the window is named by its extension and written through these, and
// the window's file dialogs list them. A format is added here.

#include <cubesolve/data/array.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/raster.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cubesolve {

enum class DataFormat { Npy, GeoTiff, MintPy };

struct DataFormatInfo {
  DataFormat id;
  const char* name;                     // as a file dialog names it
  std::vector<std::string> extensions;  // with the dot; the first is given to new files
  bool any_array;                       // holds any (B, H, W) array (MintPy's layout: a stack's result only)
};

/// The formats this build writes (GeoTIFF with GDAL, MintPy's with HDF5).
std::vector<DataFormatInfo> data_formats();
/// The format of `path` by its extension, where this build writes it.
std::optional<DataFormat> data_format_of(const std::string& path);
/// The extensions of the formats that hold any array, for messages: ".npy or .tif".
std::string data_extensions();
/// The first extension of a format (".npy", ".tif", ".h5").
std::string data_extension(DataFormat format);

/// Writes `a` (B, H, W) whole into `out` at `path` in the format its
/// extension names (one that holds any array): GeoTIFF bands described by
/// `names` and georeferenced by `geo`. Throws InputError for another
/// extension, IoError.
void write_array(OutputSet& out, const std::string& path, const Array& a, const GeoReference& geo,
                 const std::vector<std::string>& names);

}  // namespace cubesolve
