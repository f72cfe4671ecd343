#include <cubesolve/io/formats.hpp>

#include <cubesolve/error.hpp>

namespace cubesolve {

std::vector<DataFormatInfo> data_formats() {
  std::vector<DataFormatInfo> f{{DataFormat::Npy, "NumPy arrays", {".npy"}, true}};
  if (raster_support()) f.push_back({DataFormat::GeoTiff, "GeoTIFF", {".tif", ".tiff"}, true});
#ifdef CUBESOLVE_HAS_HDF5
  f.push_back({DataFormat::MintPy, "MintPy time series", {".h5"}, false});
#endif
  return f;
}

std::optional<DataFormat> data_format_of(const std::string& path) {
  for (const auto& f : data_formats())
    for (const auto& e : f.extensions)
      if (has_extension(path, e)) return f.id;
  return std::nullopt;
}

std::string data_extensions() {
  std::vector<std::string> any;
  for (const auto& f : data_formats())
    if (f.any_array) any.push_back(f.extensions.front());
  std::string text;
  for (std::size_t k = 0; k < any.size(); ++k) text += (k == 0 ? "" : k + 1 == any.size() ? " or " : ", ") + any[k];
  return text;
}

std::string data_extension(DataFormat format) {
  for (const auto& f : data_formats())
    if (f.id == format) return f.extensions.front();
  return ".npy";
}

void write_array(OutputSet& out, const std::string& path, const Array& a, const GeoReference& geo,
                 const std::vector<std::string>& names) {
  switch (data_format_of(path).value_or(DataFormat::MintPy)) {
    case DataFormat::Npy: return out.add_npy(path, a);
    case DataFormat::GeoTiff: return write_geotiff(out.add_external(path), a, geo, names);
    case DataFormat::MintPy: break;
  }
  throw InputError(path + ": expected an array output ending in " + data_extensions() + ", found another extension");
}

}  // namespace cubesolve
