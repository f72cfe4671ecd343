#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/stream.hpp>

#include "io/sizes.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

#ifdef CUBESOLVE_HAS_HDF5
#include <hdf5.h>
#endif

namespace cubesolve {

InsarStack kept_only(const InsarStack& s) {
  const std::size_t N = s.cube.dim(0), P = s.cube.dim(1) * s.cube.dim(2);
  const std::size_t kept = static_cast<std::size_t>(std::count(s.keep.begin(), s.keep.end(), true));
  InsarStack out{Array(s.cube.dtype(), {kept, s.cube.dim(1), s.cube.dim(2)}), {}, std::vector<bool>(kept, true)};
  const std::size_t item = dtype_size(s.cube.dtype());
  for (std::size_t i = 0, k = 0; i < N; ++i) {
    if (!s.keep[i]) continue;
    std::memcpy(static_cast<char*>(out.cube.raw()) + k * P * item, static_cast<const char*>(s.cube.raw()) + i * P * item, P * item);
    out.pairs.push_back(s.pairs[i]);
    ++k;
  }
  return out;
}

namespace {

/// Phase variance of distributed scatterers for MintPy's 200 coherence
/// values 0.0025, 0.0075, ..., 0.9975 (Tough et al. 1995, eq. 66, summed
/// over a 200-point phase grid as mintpy.simulation.decorrelation does).
const std::vector<double>& phase_variance_table(int L) {
  static std::mutex lock;
  static std::map<int, std::vector<double>> tables;
  const std::lock_guard<std::mutex> guard(lock);
  auto& var = tables[L];
  if (!var.empty()) return var;
  constexpr int kCount = 200;
  const double pi = 3.14159265358979323846, phi_step = 2 * pi / kCount;
  const double B = std::tgamma(2.0 * L - 1) / (std::tgamma(L) * std::tgamma(L) * std::pow(2.0, 2.0 * (L - 1)));
  std::vector<double> D(static_cast<std::size_t>(std::max(L - 1, 0)));  // the gamma factors of the sum's terms
  for (int r = 0; r < L - 1; ++r)
    D[static_cast<std::size_t>(r)] = std::tgamma(L - 0.5) / std::tgamma(L - 0.5 - r) * std::tgamma(L - 1.0 - r) / std::tgamma(L - 1.0);
  var.assign(kCount, 0.0);
  for (int c = 0; c < kCount; ++c) {
    const double coh = 0.005 + c * (1.0 - 0.005) / (kCount - 1) - 0.0025;
    const double A = std::pow(1 - coh * coh, L) / (2 * pi);
    for (int k = 0; k < kCount; ++k) {
      const double phi = -pi + k * (2 * pi) / (kCount - 1);
      const double beta = coh * std::cos(phi), b2 = 1 - beta * beta;
      const double C = (2.0 * L - 1) * beta / std::pow(b2, L + 0.5) * (pi / 2 + std::asin(beta)) + 1 / std::pow(b2, L);
      double sumD = 0;
      if (L > 1) {
        for (int r = 0; r < L - 1; ++r)
          sumD += D[static_cast<std::size_t>(r)] * (1 + (2 * r + 1) * beta * beta) / std::pow(b2, r + 2);
        sumD /= 2.0 * (L - 1);
      }
      var[c] += phi * phi * A * (B * C + sumD) * phi_step;
    }
  }
  double smallest = 0;  // non-positive values (coherence near 1) take the smallest positive one
  for (double v : var)
    if (v > 0 && (smallest == 0 || v < smallest)) smallest = v;
  for (double& v : var)
    if (v <= 0) v = smallest > 0 ? smallest : 2.220446049250313e-16;
  return var;
}

/// MintPy's weight function `weight` for L looks, ready for many values.
class WeightFunction {
public:
  WeightFunction(const std::string& weight, int looks) : L_(std::max(looks, 1)) {
    if (weight == "var") table_ = &phase_variance_table(std::min(L_, 80));
    else if (weight == "fim") fim_ = true;
    else if (weight != "coh") throw InputError("expected a weight function var, fim, coh or no, found '" + weight + "'");
  }
  double operator()(double coherence) const {
    const double epsilon = 0.05f;  // MintPy's, set into float32 coherence
    const double coh = std::isnan(coherence) || coherence < epsilon ? epsilon : coherence;
    double w = coh;
    if (table_) {
      const double lo = 0.0025, hi = 0.9975;
      const int k = static_cast<int>((std::clamp(coh, lo, hi) - lo) / 0.005);
      w = 1.0 / (*table_)[static_cast<std::size_t>(std::clamp(k, 0, 199))];
    } else if (fim_) {
      const double c = std::min(coh, 1 - 1e-3);
      w = 2.0 * L_ * c * c / (1 - c * c);
    }
    // MintPy stores the weight and its square root in float32 and scales the
    // rows by that root: the weight in effect is the root squared.
    const float root = std::sqrt(static_cast<float>(w));
    return static_cast<double>(root) * root;
  }

private:
  int L_;
  const std::vector<double>* table_ = nullptr;
  bool fim_ = false;
};

}  // namespace

double coherence_weight(const std::string& weight, double coherence, int looks) {
  return WeightFunction(weight, looks)(coherence);
}

std::string StackInfo::attribute(const std::string& name, const std::string& fallback) const {
  for (const auto& [key, value] : attributes)
    if (key == name) return value;
  return fallback;
}

bool is_stack_path(const std::string& path) { return has_extension(path, ".h5") || has_extension(path, ".he5"); }

GeoReference stack_geo(const StackInfo& stack) {
  std::vector<double> t;
  for (const char* name : {"X_FIRST", "X_STEP", "Y_FIRST", "Y_STEP"}) {
    const std::string text = stack.attribute(name);
    char* end = nullptr;
    const double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
    if (text.empty() || end == text.c_str() || !std::isfinite(v)) return {};
    t.push_back(v);
  }
  if (t[1] == 0 || t[3] == 0) return {};
  static const char* kWgs84 =
      "GEOGCS[\"WGS 84\",DATUM[\"WGS_1984\",SPHEROID[\"WGS 84\",6378137,298.257223563,AUTHORITY[\"EPSG\",\"7030\"]],"
      "AUTHORITY[\"EPSG\",\"6326\"]],PRIMEM[\"Greenwich\",0,AUTHORITY[\"EPSG\",\"8901\"]],UNIT[\"degree\",0.0174532925199433,"
      "AUTHORITY[\"EPSG\",\"9122\"]],AXIS[\"Latitude\",NORTH],AXIS[\"Longitude\",EAST],AUTHORITY[\"EPSG\",\"4326\"]]";
  return {{t[0], t[1], 0.0, t[2], 0.0, t[3]}, stack_degrees(stack) ? kWgs84 : "", {}};
}

bool stack_degrees(const StackInfo& stack) {
  const std::string unit = stack.attribute("X_UNIT");
  return unit.rfind("deg", 0) == 0 || (unit.empty() && std::fabs(std::strtod(stack.attribute("X_STEP", "1").c_str(), nullptr)) < 0.1);
}

void check_phase_unit(const std::string& unit) {
  if (unit != "radian" && unit != "m" && unit != "cm" && unit != "mm")
    throw InputError("unit: expected radian, mm, cm or m, found '" + unit + "'");
}

double phase_unit_scale(const StackInfo& stack, const std::string& unit, const std::string& path) {
  check_phase_unit(unit);
  if (unit == "radian") return 1.0;
  const double per_metre = unit == "m" ? 1.0 : unit == "cm" ? 100.0 : 1000.0;
  const std::string text = stack.attribute("WAVELENGTH");
  char* end = nullptr;
  const double wavelength = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end == text.c_str() || !(wavelength > 0) || !std::isfinite(wavelength))
    throw InputError(path + ": expected the stack's WAVELENGTH attribute (metres) for a displacement in " + unit + ", found " +
                     (text.empty() ? std::string("none") : "'" + text + "'") + " (use the unit radian instead)");
  return -wavelength / (4 * M_PI) * per_metre;
}

#ifndef CUBESOLVE_HAS_HDF5

bool stack_support() { return false; }

InsarStack read_mintpy_stack(const std::string& path, const StackOptions&) {
  throw InputError(path + ": expected a .npy cube (this build reads no HDF5 stacks: it was built without HDF5)");
}

std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>*, const StackOptions&,
                                              std::unique_ptr<CubeReader>*, StackInfo*) {
  read_mintpy_stack(path);
  return nullptr;
}

std::unique_ptr<CubeWriter> mintpy_writer(const std::string&, MintPyPart, const StackInfo&, std::size_t, std::size_t,
                                          const std::string&, double, const std::string& name, const std::string&) {
  throw InputError(name + ": expected a .npy output (this build writes no HDF5: it was built without HDF5)");
}

Array read_mintpy_maps(const std::string& path, std::vector<std::string>*, std::vector<std::string>*, StackInfo*) {
  read_mintpy_stack(path);
  return {};
}

bool is_mintpy_maps(const std::string&) { return false; }

#else

bool stack_support() { return true; }

namespace {

struct Handle {
  hid_t id = -1;
  herr_t (*close)(hid_t) = nullptr;
  Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  ~Handle() {
    if (id >= 0 && close) close(id);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

std::vector<hsize_t> dims_of(hid_t dataset) {
  Handle space(H5Dget_space(dataset), H5Sclose);
  const int nd = H5Sget_simple_extent_ndims(space.id);
  std::vector<hsize_t> d(static_cast<std::size_t>(std::max(nd, 0)));
  if (nd > 0) H5Sget_simple_extent_dims(space.id, d.data(), nullptr);
  return d;
}

std::string shape_text(const std::vector<hsize_t>& d) {
  Shape s(d.begin(), d.end());
  return shape_string(s);
}

/// A root attribute of the file as text (MintPy stores them as strings;
/// numbers are read too), or none.
std::optional<std::string> attribute(hid_t file, const char* name) {
  if (H5Aexists(file, name) <= 0) return std::nullopt;
  Handle a(H5Aopen(file, name, H5P_DEFAULT), H5Aclose);
  Handle t(H5Aget_type(a.id), H5Tclose);
  if (H5Tget_class(t.id) == H5T_STRING) {
    Handle space(H5Aget_space(a.id), H5Sclose);
    if (H5Sget_simple_extent_npoints(space.id) != 1) return std::nullopt;
    if (H5Tis_variable_str(t.id) > 0) {
      char* text = nullptr;
      Handle mt(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(mt.id, H5T_VARIABLE);
      H5Tset_cset(mt.id, H5Tget_cset(t.id));
      if (H5Aread(a.id, mt.id, &text) < 0 || !text) return std::nullopt;
      std::string out(text);
      H5free_memory(text);
      return out;
    }
    std::string out(H5Tget_size(t.id), '\0');
    if (H5Aread(a.id, t.id, out.data()) < 0) return std::nullopt;
    out.erase(std::find(out.begin(), out.end(), '\0'), out.end());
    return out;
  }
  double v = 0;
  if (H5Aread(a.id, H5T_NATIVE_DOUBLE, &v) < 0) return std::nullopt;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return std::string(buf);
}

/// Every root attribute of `file` as text, appended to `info`.
void root_attributes(hid_t file, StackInfo& info) {
  H5Aiterate2(
      file, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t loc, const char* name, const H5A_info_t*, void* data) -> herr_t {
        if (const auto text = attribute(loc, name)) static_cast<StackInfo*>(data)->attributes.emplace_back(name, *text);
        return 0;
      },
      &info);
}

/// A number from an attribute's text; none when absent, InputError when not a number.
std::optional<double> number_attribute(hid_t file, const char* name, const std::string& path) {
  const auto text = attribute(file, name);
  if (!text) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(text->c_str(), &end);
  if (end == text->c_str() || !std::isfinite(v))
    throw InputError(path + ": expected a number in the attribute " + name + ", found '" + *text + "'");
  return v;
}

/// An attribute that holds a pixel's row or column: a whole number >= 0.
std::optional<double> index_attribute(hid_t file, const char* name, const std::string& path) {
  const auto v = number_attribute(file, name, path);
  if (v && !(*v >= 0 && *v == std::floor(*v) && *v < 1e15))
    throw InputError(path + ": expected a pixel index (a whole number >= 0) in the attribute " + name + ", found '" +
                     *attribute(file, name) + "'");
  return v;
}

// unwrapPhase of a MintPy stack, read a block of rows at a time (HDF5
// hyperslabs), for the interferograms in `bands`: referenced, zero as no
// data and masked as the options say. A MintPy time series (timeseries.h5:
// `timeseries` (D, H, W) and `date` (D)) is read as the star network of its
// first date with each later one: band k is date k's value less the first
// date's, in radians (from the file's UNIT through its WAVELENGTH), so that
// the sbas design's solution is the time series itself, with its dates,
// reference and unit as a stack's.
class StackReader : public CubeReader {
public:
  StackReader(const std::string& path, std::vector<DatePair>* pairs, std::vector<bool>* keep, bool kept_only,
              const StackOptions& options = {})
      : path_(path), options_(options), file_(-1, H5Fclose), phase_(-1, H5Dclose), mask_(-1, H5Dclose) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);  // errors become messages, not prints
    detail::check_not_folder(path);
    if (H5Fis_hdf5(path.c_str()) <= 0) {
      if (FILE* f = std::fopen(path.c_str(), "rb")) std::fclose(f);
      else throw IoError(path + ": cannot open for reading: " + std::strerror(errno));
      throw InputError(path + ": expected an HDF5 file (a MintPy ifgramStack.h5), found something else");
    }
    file_.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file_.id < 0) throw IoError(path + ": cannot open the HDF5 file");
    phase_.id = open("unwrapPhase");
    if (phase_.id < 0 && (phase_.id = open("timeseries")) >= 0) name_ = "timeseries";
    if (phase_.id < 0) {  // MintPy's maps of one plane say what they are, and where their time series is
      const std::string type = attribute(file_.id, "FILE_TYPE").value_or("");
      throw InputError(path + ": expected a dataset 'unwrapPhase' (N, H, W) of an interferogram stack or 'timeseries' (D, H, W) "
                              "of a time series, found neither" +
                       (type.empty() ? std::string()
                                     : " (a MintPy " + type + " file: open the timeseries.h5 it comes from, whose velocity, "
                                       "its standard error and temporal coherence are layers of the result)"));
    }
    const auto d = dims_of(phase_.id);
    if (d.size() != 3)
      throw InputError(path + ": expected '" + name_ + "' of 3 dimensions (" + (series() ? "D" : "N") + ", H, W), found shape " + shape_text(d));
    if (series() && d[0] < 2) throw InputError(path + ": expected a time series of 2 dates or more, found " + std::to_string(d[0]));
    const std::size_t N = series() ? d[0] - 1 : d[0];
    std::vector<DatePair> all_pairs = series() ? series_pairs(d[0]) : read_dates(N);
    std::vector<bool> all_keep = series() ? std::vector<bool>(N, true) : read_keep(N);
    if (series()) to_radian_ = radians_per_unit();
    const std::size_t first = series() ? 1 : 0;  // a series' band i is date i + 1
    for (std::size_t i = 0; i < N; ++i)
      if (all_keep[i] || !kept_only) bands_.push_back(i + first);
    shape_ = {bands_.size(), d[1], d[2]};
    dtype_ = DType::Float32;
    if (pairs)
      for (std::size_t i : bands_) pairs->push_back(all_pairs[i - first]);
    if (keep)
      for (std::size_t i : bands_) keep->push_back(all_keep[i - first]);
    if (options.reference) read_reference();
    if (!options.mask.empty()) {
      if (series()) throw InputError(path + ": expected an interferogram stack for the mask " + options.mask + ", found a time series");
      if (options.mask != "connectComponent" && options.mask != "coherence")
        throw InputError(path + ": expected the mask dataset connectComponent or coherence, found '" + options.mask + "'");
      mask_.id = open_like_phase(options.mask.c_str());
    }
  }

  Array rows(std::size_t r0, std::size_t r1) override {
    Array out = values(r0, r1);
    if (series()) {  // no zeros as no data: a referenced series is 0 on its reference pixel and date
      if (!referenced()) return out;
      const std::size_t per_band = (r1 - r0) * shape_[2];
      for (std::size_t k = 0; k < bands_.size(); ++k)
        for (std::size_t i = k * per_band; i < (k + 1) * per_band; ++i) out.data<float>()[i] -= ref_phase_[k];
      return out;
    }
    if (!options_.reference && !options_.zero_is_nodata && mask_.id < 0) return out;
    const Array mask = mask_.id >= 0 ? read_rows(mask_.id, options_.mask.c_str(), r0, r1) : Array();
    const std::size_t per_band = (r1 - r0) * shape_[2];
    float* v = out.data<float>();
    for (std::size_t k = 0; k < bands_.size(); ++k) {
      const float ref = ref_phase_.empty() ? 0.0f : ref_phase_[k];
      for (std::size_t i = k * per_band; i < (k + 1) * per_band; ++i) {
        if (v[i] != 0.0f) v[i] -= ref;  // MintPy references the non-zero values, in float32
        if (options_.zero_is_nodata && v[i] == 0.0f) v[i] = NAN;
        if (mask_.id >= 0) {
          const float m = std::isnan(mask.data<float>()[i]) ? 0.0f : mask.data<float>()[i];
          if (options_.mask == "connectComponent" ? m == 0.0f : m < options_.mask_threshold) v[i] = NAN;
        }
      }
    }
    return out;
  }

  /// The bands read, rows [r0, r1), as stored: a stack's phase; a time
  /// series' dates after the first less the first, in radians.
  Array values(std::size_t r0, std::size_t r1) const {
    if (!series()) return read_rows(phase_.id, name_.c_str(), r0, r1);
    const std::vector<std::size_t> first{0};
    const Array base = read_rows(phase_.id, name_.c_str(), r0, r1, &first);
    Array out = read_rows(phase_.id, name_.c_str(), r0, r1);
    const std::size_t per_band = base.size();
    float* v = out.data<float>();
    for (std::size_t i = 0; i < out.size(); ++i)
      v[i] = static_cast<float>((static_cast<double>(v[i]) - base.data<float>()[i % per_band]) * to_radian_);
    return out;
  }

  /// Rows [r0, r1) of a dataset shaped like unwrapPhase, for the bands read
  /// (or `only` these), as float32.
  Array read_rows(hid_t dataset, const char* name, std::size_t r0, std::size_t r1, const std::vector<std::size_t>* only = nullptr) const {
    const std::vector<std::size_t>& bands = only ? *only : bands_;
    const std::size_t R = r1 - r0, W = shape_[2];
    Array out(DType::Float32, {bands.size(), R, W});
    Handle space(H5Dget_space(dataset), H5Sclose);
    const hsize_t count[3] = {1, R, W}, mem[1] = {R * W};
    Handle memspace(H5Screate_simple(1, mem, nullptr), H5Sclose);
    for (std::size_t k = 0; k < bands.size(); ++k) {
      const hsize_t start[3] = {bands[k], r0, 0};
      H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start, nullptr, count, nullptr);
      if (H5Dread(dataset, H5T_NATIVE_FLOAT, memspace.id, space.id, H5P_DEFAULT, out.data<float>() + k * R * W) < 0)
        throw IoError(path_ + ": cannot read '" + name + "' rows " + std::to_string(r0) + " to " + std::to_string(r1));
    }
    return out;
  }

  /// A dataset of unwrapPhase's shape (InputError when absent or of another shape).
  hid_t open_like_phase(const char* name) {
    const hid_t id = open(name);
    if (id < 0) throw InputError(path_ + ": expected a dataset '" + name + "' beside " + name_ + ", found none");
    if (dims_of(id) != dims_of(phase_.id)) {
      const std::string found = shape_text(dims_of(id));
      H5Dclose(id);
      throw InputError(path_ + ": expected '" + name + "' of " + name_ + "'s shape " + shape_text(dims_of(phase_.id)) +
                       ", found " + found);
    }
    return id;
  }

  /// The number of independent looks as MintPy takes it: NCORRLOOKS, or ALOOKS·RLOOKS/1.94, rounded, at least 1.
  int looks() const {
    if (options_.looks > 0) return std::max(1, static_cast<int>(std::lrint(options_.looks)));
    if (const auto n = number_attribute(file_.id, "NCORRLOOKS", path_)) return std::max(1, static_cast<int>(std::lrint(*n)));
    const auto a = number_attribute(file_.id, "ALOOKS", path_), r = number_attribute(file_.id, "RLOOKS", path_);
    if (!a || !r)
      throw InputError(path_ + ": expected the attribute NCORRLOOKS, or ALOOKS and RLOOKS, for the number of looks of the "
                               "coherence, found none (give the number of looks)");
    return std::max(1, static_cast<int>(std::lrint(static_cast<double>(static_cast<long>(*a) * static_cast<long>(*r)) / 1.94)));
  }

  bool referenced() const { return !ref_phase_.empty(); }
  std::pair<long, long> reference_pixel() const { return {ref_y_, ref_x_}; }

  /// The root attributes, dates, interferograms' bperp and reference pixel.
  void describe(StackInfo& info, const std::vector<DatePair>& pairs) const {
    root_attributes(file_.id, info);
    info.dates = pair_dates(pairs);
    info.ref_y = ref_y_;
    info.ref_x = ref_x_;
    info.ref_radius = ref_y_ >= 0 ? std::max(0L, options_.ref_radius) : 0;
    info.referenced = referenced();
    info.interferograms = bands_.size();
    Handle bperp(open("bperp"), H5Dclose);
    const std::size_t N = dims_of(phase_.id)[0];
    if (bperp.id >= 0 && dims_of(bperp.id) == std::vector<hsize_t>{N}) {
      std::vector<float> all(N);
      if (H5Dread(bperp.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) < 0) throw IoError(path_ + ": cannot read 'bperp'");
      for (std::size_t i : bands_) info.pair_bperp.push_back(series() ? all[i] - all[0] : all[i]);  // a series': per date
    }
  }

private:
  hid_t open(const char* name) const {
    if (H5Lexists(file_.id, name, H5P_DEFAULT) <= 0) return -1;
    return H5Dopen2(file_.id, name, H5P_DEFAULT);
  }

  /// Each band's value at the reference pixel, or the file's refPhase.
  void read_reference() {
    long y = options_.ref_y, x = options_.ref_x;
    if (y < 0 || x < 0) {
      const auto ry = index_attribute(file_.id, "REF_Y", path_), rx = index_attribute(file_.id, "REF_X", path_);
      if (ry && rx) {
        y = static_cast<long>(*ry);
        x = static_cast<long>(*rx);
      }
    }
    if (y >= 0 && x >= 0) {
      if (static_cast<std::size_t>(y) >= shape_[1] || static_cast<std::size_t>(x) >= shape_[2])
        throw InputError(path_ + ": expected the reference pixel within the " + std::to_string(shape_[1]) + " x " +
                         std::to_string(shape_[2]) + " pixels, found (" + std::to_string(y) + ", " + std::to_string(x) + ")");
      ref_y_ = y;
      ref_x_ = x;
      // The pixel's value, or the mean of the area's valid ones (a stack's zeros are no data), per interferogram.
      const long r = std::max(0L, options_.ref_radius), H = static_cast<long>(shape_[1]), W = static_cast<long>(shape_[2]);
      const long y0 = std::max(0L, y - r), y1 = std::min(H - 1, y + r), x0 = std::max(0L, x - r), x1 = std::min(W - 1, x + r);
      const Array area = values(static_cast<std::size_t>(y0), static_cast<std::size_t>(y1) + 1);
      const std::size_t per_band = static_cast<std::size_t>(y1 - y0 + 1) * shape_[2];
      for (std::size_t k = 0; k < bands_.size(); ++k) {
        double sum = 0;
        std::size_t count = 0;
        for (long yy = y0; yy <= y1; ++yy)
          for (long xx = x0; xx <= x1; ++xx) {
            const float v = area.data<float>()[k * per_band + static_cast<std::size_t>((yy - y0) * W + xx)];
            if (std::isfinite(v) && (r == 0 || series() || v != 0.0f)) sum += v, ++count;
          }
        if (!count)
          throw InputError(path_ + ": expected a value at the reference " +
                           (r ? "area of " + std::to_string(r) + " pixels about (" : std::string("pixel (")) + std::to_string(y) + ", " +
                           std::to_string(x) + ") in every interferogram, found none in interferogram " + std::to_string(bands_[k]) +
                           (r ? " (choose another reference area)" : " (choose another reference pixel)"));
        ref_phase_.push_back(static_cast<float>(sum / static_cast<double>(count)));
      }
      return;
    }
    if (series()) return;  // a series without a reference pixel is read as it is
    Handle ref(open("refPhase"), H5Dclose);
    if (ref.id < 0 && options_.unreferenced_if_none) return;
    if (ref.id < 0)
      throw InputError(path_ + ": expected a reference pixel (the attributes REF_Y and REF_X, set by MintPy's "
                               "reference_point.py) or a dataset 'refPhase', found neither (choose a reference pixel, or "
                               "solve it unreferenced)");
    const std::size_t N = dims_of(phase_.id)[0];
    if (dims_of(ref.id) != std::vector<hsize_t>{N})
      throw InputError(path_ + ": expected 'refPhase' of shape (" + std::to_string(N) + ",), found " + shape_text(dims_of(ref.id)));
    std::vector<float> all(N);
    if (H5Dread(ref.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, all.data()) < 0) throw IoError(path_ + ": cannot read 'refPhase'");
    for (std::size_t i : bands_) {
      if (!std::isfinite(all[i]))  // every value of that interferogram would become NaN
        throw InputError(path_ + ": expected a number in 'refPhase' for every interferogram, found " + std::to_string(all[i]) +
                         " for interferogram " + std::to_string(i) + " (choose a reference pixel, or solve it unreferenced)");
      ref_phase_.push_back(all[i]);
    }
  }
  std::vector<DatePair> read_dates(std::size_t N) {
    Handle date(open("date"), H5Dclose);
    if (date.id < 0) throw InputError(path_ + ": expected a dataset 'date' (N x 2 dates YYYYMMDD) for the sbas design, found none");
    const auto dd = dims_of(date.id);
    if (dd.size() != 2 || dd[0] != N || dd[1] != 2)
      throw InputError(path_ + ": expected 'date' of shape (" + std::to_string(N) + ", 2), found " + shape_text(dd));
    const std::vector<std::string> text = read_strings(date.id, 2 * N);
    std::vector<DatePair> pairs;
    for (std::size_t i = 0; i < N; ++i) pairs.emplace_back(text[2 * i], text[2 * i + 1]);
    return pairs;
  }

  /// The `count` fixed-length strings of the dataset 'date', trimmed.
  std::vector<std::string> read_strings(hid_t date, std::size_t count) const {
    Handle ftype(H5Dget_type(date), H5Tclose);
    if (H5Tget_class(ftype.id) != H5T_STRING || H5Tis_variable_str(ftype.id) > 0)
      throw InputError(path_ + ": expected 'date' as fixed-length strings YYYYMMDD, found another type");
    const std::size_t len = H5Tget_size(ftype.id);
    Handle mtype(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mtype.id, len);
    H5Tset_strpad(mtype.id, H5T_STR_NULLPAD);
    std::vector<char> buf(count * len);
    if (H5Dread(date, mtype.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0) throw IoError(path_ + ": cannot read 'date'");
    std::vector<std::string> out;
    for (std::size_t k = 0; k < count; ++k) {
      std::string t(buf.data() + k * len, len);
      t.erase(std::find(t.begin(), t.end(), '\0'), t.end());
      t.erase(t.find_last_not_of(' ') + 1);
      out.push_back(std::move(t));
    }
    return out;
  }

  bool series() const { return name_ == "timeseries"; }

  /// A time series' star network: its first date with each later one.
  std::vector<DatePair> series_pairs(std::size_t D) {
    Handle date(open("date"), H5Dclose);
    if (date.id < 0) throw InputError(path_ + ": expected a dataset 'date' (D dates YYYYMMDD) beside 'timeseries', found none");
    if (dims_of(date.id) != std::vector<hsize_t>{D})
      throw InputError(path_ + ": expected 'date' of shape (" + std::to_string(D) + ",), found " + shape_text(dims_of(date.id)));
    const std::vector<std::string> dates = read_strings(date.id, D);
    for (std::size_t k = 0; k < D; ++k) {
      decimal_year(dates[k], path_ + ": 'date' " + std::to_string(k));
      if (k && dates[k] <= dates[k - 1])
        throw InputError(path_ + ": expected 'date' as increasing dates YYYYMMDD, found " + dates[k] + " after " + dates[k - 1]);
    }
    std::vector<DatePair> pairs;
    for (std::size_t k = 1; k < D; ++k) pairs.emplace_back(dates[0], dates[k]);
    return pairs;
  }

  /// Radians per unit of a time series' values (its UNIT: m, cm, mm or
  /// radian; m without one), through its WAVELENGTH, by MintPy's sign.
  double radians_per_unit() const {
    const std::string unit = attribute(file_.id, "UNIT").value_or("m");
    if (unit == "radian") return 1.0;
    if (unit != "m" && unit != "cm" && unit != "mm")
      throw InputError(path_ + ": expected the time series' UNIT m, cm, mm or radian, found '" + unit + "'");
    const auto wavelength = number_attribute(file_.id, "WAVELENGTH", path_);
    if (!wavelength || !(*wavelength > 0))
      throw InputError(path_ + ": expected the attribute WAVELENGTH (metres, positive) to read a time series in " + unit +
                       " as phase, found " + (wavelength ? "'" + *attribute(file_.id, "WAVELENGTH") + "'" : std::string("none")));
    StackInfo info;
    info.attributes.emplace_back("WAVELENGTH", *attribute(file_.id, "WAVELENGTH"));
    return 1.0 / phase_unit_scale(info, unit, path_);
  }

  std::vector<bool> read_keep(std::size_t N) {
    std::vector<bool> keep(N, true);
    Handle drop(open("dropIfgram"), H5Dclose);
    if (drop.id < 0) return keep;
    if (dims_of(drop.id) != std::vector<hsize_t>{N})
      throw InputError(path_ + ": expected 'dropIfgram' of shape (" + std::to_string(N) + ",), found " + shape_text(dims_of(drop.id)));
    // NumPy booleans are an 8-bit enum in HDF5; read them as stored.
    Handle t(H5Dget_type(drop.id), H5Tclose);
    if (H5Tget_size(t.id) != 1)
      throw InputError(path_ + ": expected 'dropIfgram' of booleans, found " + std::to_string(H5Tget_size(t.id)) + "-byte values");
    std::vector<unsigned char> flags(N);
    if (H5Dread(drop.id, t.id, H5S_ALL, H5S_ALL, H5P_DEFAULT, flags.data()) < 0) throw IoError(path_ + ": cannot read 'dropIfgram'");
    for (std::size_t i = 0; i < N; ++i) keep[i] = flags[i] != 0;
    return keep;
  }

  std::string path_;
  StackOptions options_;
  Handle file_, phase_, mask_;
  std::string name_ = "unwrapPhase";  // or "timeseries"
  double to_radian_ = 1.0;           // a time series' radians per unit of its values
  std::vector<std::size_t> bands_;
  std::vector<float> ref_phase_;
  long ref_y_ = -1, ref_x_ = -1;
};

// The weights of a stack's interferograms from its coherence.
class WeightReader : public CubeReader {
public:
  WeightReader(std::shared_ptr<StackReader> stack, const std::string& weight)
      : stack_(std::move(stack)), coherence_(stack_->open_like_phase("coherence"), H5Dclose),
        function_(weight, stack_->looks()) {
    shape_ = stack_->shape();
    dtype_ = DType::Float64;
  }
  Array rows(std::size_t r0, std::size_t r1) override {
    const Array coh = stack_->read_rows(coherence_.id, "coherence", r0, r1);
    Array w(DType::Float64, coh.shape());
    const float* c = coh.data<float>();
    double* out = w.data<double>();
    for (std::size_t i = 0; i < coh.size(); ++i) out[i] = function_(c[i]);
    return w;
  }

private:
  std::shared_ptr<StackReader> stack_;
  Handle coherence_;
  WeightFunction function_;
};

/// A reader that shares the stack's reader (the weights read beside it).
class SharedReader : public CubeReader {
public:
  SharedReader(std::shared_ptr<StackReader> r, GeoReference geo) : r_(std::move(r)) {
    shape_ = r_->shape();
    dtype_ = r_->dtype();
    geo_ = std::move(geo);
  }
  Array rows(std::size_t r0, std::size_t r1) override { return r_->rows(r0, r1); }

private:
  std::shared_ptr<StackReader> r_;
};

}  // namespace

std::unique_ptr<CubeReader> open_mintpy_stack(const std::string& path, std::vector<DatePair>* pairs,
                                              const StackOptions& options, std::unique_ptr<CubeReader>* weights,
                                              StackInfo* info) {
  std::vector<DatePair> kept;
  auto stack = std::make_shared<StackReader>(path, &kept, nullptr, true, options);
  if (weights && options.weight != "no") *weights = std::make_unique<WeightReader>(stack, options.weight);
  StackInfo described;
  stack->describe(info ? *info : described, kept);
  if (pairs) *pairs = kept;
  return std::make_unique<SharedReader>(stack, stack_geo(info ? *info : described));
}

namespace {

// One of MintPy's HDF5 outputs, written a block of rows at a time.
class MintPyWriter : public CubeWriter {
public:
  MintPyWriter(const std::string& path, MintPyPart part, const StackInfo& info, std::size_t height, std::size_t width,
               const std::string& unit, double scale, const std::string& name, const std::string& ref_date)
      : name_(name), part_(part), info_(info), H_(height), W_(width), scale_(scale), file_(-1, H5Fclose), data_(-1, H5Dclose) {
    if (!ref_date.empty()) {
      const auto at = std::find(info.dates.begin(), info.dates.end(), ref_date);
      if (at == info.dates.end())
        throw InputError("--ref-date: expected a date of the time series (" + (info.dates.empty() ? std::string("none") : info.dates.front() + " to " + info.dates.back()) +
                         "), found '" + ref_date + "'");
      ref_ = static_cast<std::size_t>(at - info.dates.begin());
    }
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    file_.id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file_.id < 0) throw IoError(name_ + ": cannot create the HDF5 file");
    // The stack's attributes, then what this file is (as MintPy's ifgram_inversion.py sets them).
    std::vector<std::pair<std::string, std::string>> attrs;
    const char* type = part == MintPyPart::TimeSeries ? "timeseries" : part == MintPyPart::TemporalCoherence ? "temporalCoherence" : "mask";
    const std::vector<std::pair<std::string, std::string>> own{
        {"FILE_TYPE", type},
        {"UNIT", part == MintPyPart::TimeSeries ? unit : "1"},
        {"LENGTH", std::to_string(H_)},
        {"WIDTH", std::to_string(W_)},
        {"REF_DATE", part == MintPyPart::TimeSeries && !info.dates.empty() ? info.dates[ref_] : ""}};
    for (const auto& a : info.attributes) {
      bool replaced = a.first == "NO_DATA_VALUE" && part == MintPyPart::NumInvIfgram;
      for (const auto& o : own) replaced = replaced || o.first == a.first;
      if (!replaced) attrs.push_back(a);
    }
    for (const auto& o : own)
      if (!o.second.empty()) attrs.push_back(o);
    for (const auto& [key, value] : attrs) write_attribute(key, value);
    if (part == MintPyPart::TimeSeries) {
      const std::size_t D = info.dates.size();
      Handle st(H5Tcopy(H5T_C_S1), H5Tclose);
      H5Tset_size(st.id, 8);
      H5Tset_strpad(st.id, H5T_STR_NULLPAD);
      std::string dates;
      for (const auto& d : info.dates) dates += (d + std::string(8, '\0')).substr(0, 8);
      write_vector("date", st.id, D, dates.data());
      std::vector<float> bperp = info.bperp;
      bperp.resize(D, 0.0f);
      write_vector("bperp", H5T_NATIVE_FLOAT, D, bperp.data());
      data_.id = create("timeseries", {D, H_, W_});
    } else {
      data_.id = create(part == MintPyPart::TemporalCoherence ? "temporalCoherence" : "mask", {H_, W_});
    }
  }

  void rows(std::size_t r0, const Array& block) override {
    const std::size_t R = block.dim(1), B = block.dim(0);
    const bool series = part_ == MintPyPart::TimeSeries;
    const std::size_t bands = series ? B + 1 : 1;
    std::vector<float> out(bands * R * W_, 0.0f);  // the time series' first date: zero
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t i = 0; i < R * W_; ++i) {
        const double v = block.value(b * R * W_ + i);
        out[(series ? b + 1 : b) * R * W_ + i] = static_cast<float>(series ? v * scale_ : v);
      }
    if (series && ref_ > 0)  // relative to the reference date (MintPy's reference_date.py)
      for (std::size_t i = 0; i < R * W_; ++i) {
        const float at_ref = out[ref_ * R * W_ + i];
        for (std::size_t b = 0; b < bands; ++b) out[b * R * W_ + i] -= at_ref;
      }
    // The reference pixel: zero by definition, coherent, every interferogram used.
    if (info_.ref_y >= static_cast<long>(r0) && info_.ref_y < static_cast<long>(r0 + R) && info_.ref_x >= 0) {
      const std::size_t i = (static_cast<std::size_t>(info_.ref_y) - r0) * W_ + static_cast<std::size_t>(info_.ref_x);
      for (std::size_t b = 0; b < bands; ++b)
        out[b * R * W_ + i] = series ? 0.0f : part_ == MintPyPart::TemporalCoherence ? 1.0f : static_cast<float>(info_.interferograms);
    }
    Handle space(H5Dget_space(data_.id), H5Sclose);
    std::vector<hsize_t> start{r0, 0}, count{R, W_};
    if (series) {
      start.insert(start.begin(), 0);
      count.insert(count.begin(), bands);
    }
    H5Sselect_hyperslab(space.id, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    Handle mem(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose);
    if (H5Dwrite(data_.id, H5T_NATIVE_FLOAT, mem.id, space.id, H5P_DEFAULT, out.data()) < 0)
      throw IoError(name_ + ": cannot write rows " + std::to_string(r0) + " to " + std::to_string(r0 + R));
  }

  void finish() override {
    if (data_.id >= 0) H5Dclose(data_.id);
    data_.id = -1;
    if (H5Fflush(file_.id, H5F_SCOPE_GLOBAL) < 0 || H5Fclose(file_.id) < 0) throw IoError(name_ + ": cannot complete the HDF5 file");
    file_.id = -1;
  }

private:
  void write_attribute(const std::string& key, const std::string& value) {
    Handle t(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(t.id, H5T_VARIABLE);
    H5Tset_cset(t.id, H5T_CSET_UTF8);
    Handle sp(H5Screate(H5S_SCALAR), H5Sclose);
    Handle a(H5Acreate2(file_.id, key.c_str(), t.id, sp.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
    const char* text = value.c_str();
    if (a.id < 0 || H5Awrite(a.id, t.id, &text) < 0) throw IoError(name_ + ": cannot write the attribute " + key);
  }
  void write_vector(const char* dataset, hid_t type, std::size_t n, const void* data) {
    const hsize_t d[1] = {n};
    Handle sp(H5Screate_simple(1, d, nullptr), H5Sclose);
    Handle ds(H5Dcreate2(file_.id, dataset, type, sp.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
    if (ds.id < 0 || (n && H5Dwrite(ds.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0))
      throw IoError(name_ + ": cannot write '" + dataset + "'");
  }
  hid_t create(const char* dataset, const std::vector<hsize_t>& dims) {
    Handle sp(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
    const hid_t ds = H5Dcreate2(file_.id, dataset, H5T_NATIVE_FLOAT, sp.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (ds < 0) throw IoError(name_ + ": cannot create '" + dataset + "'");
    return ds;
  }

  std::string name_;
  MintPyPart part_;
  StackInfo info_;
  std::size_t H_, W_;
  double scale_;
  std::size_t ref_ = 0;  // the reference date's index
  Handle file_, data_;
};

}  // namespace

std::unique_ptr<CubeWriter> mintpy_writer(const std::string& path, MintPyPart part, const StackInfo& info, std::size_t height,
                                          std::size_t width, const std::string& unit, double scale, const std::string& name,
                                          const std::string& ref_date) {
  return std::make_unique<MintPyWriter>(path, part, info, height, width, unit, scale, name, ref_date);
}

namespace {

/// The names of the links at the root of `file` (datasets, groups), in its order.
std::vector<std::string> root_datasets(hid_t file) {
  std::vector<std::string> names;
  H5Literate(
      file, H5_INDEX_NAME, H5_ITER_INC, nullptr,
      [](hid_t, const char* name, const H5L_info_t*, void* data) -> herr_t {
        static_cast<std::vector<std::string>*>(data)->emplace_back(name);
        return 0;
      },
      &names);
  return names;
}

/// The 2-D numeric datasets of `names` in `file` that have the first one's shape.
std::vector<std::string> plane_datasets(hid_t file, const std::vector<std::string>& names, std::vector<hsize_t>& shape) {
  std::vector<std::string> planes;
  for (const auto& name : names) {
    Handle d(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
    if (d.id < 0) continue;
    Handle t(H5Dget_type(d.id), H5Tclose);
    const H5T_class_t c = H5Tget_class(t.id);
    const auto dims = dims_of(d.id);
    if ((c != H5T_FLOAT && c != H5T_INTEGER) || dims.size() != 2 || dims[0] == 0 || dims[1] == 0) continue;
    if (shape.empty()) shape = dims;
    if (dims == shape) planes.push_back(name);
  }
  return planes;
}

}  // namespace

bool is_mintpy_maps(const std::string& path) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  if (!is_stack_path(path) || H5Fis_hdf5(path.c_str()) <= 0) return false;
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.id < 0) return false;
  const auto names = root_datasets(file.id);
  for (const char* cube : {"unwrapPhase", "timeseries"})
    if (std::find(names.begin(), names.end(), cube) != names.end()) return false;
  std::vector<hsize_t> shape;
  return !plane_datasets(file.id, names, shape).empty();
}

Array read_mintpy_maps(const std::string& path, std::vector<std::string>* names, std::vector<std::string>* units, StackInfo* info) {
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  detail::check_not_folder(path);
  if (H5Fis_hdf5(path.c_str()) <= 0) throw InputError(path + ": expected an HDF5 file of MintPy maps, found something else");
  Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (file.id < 0) throw IoError(path + ": cannot open the HDF5 file");
  std::vector<hsize_t> shape;
  auto planes = plane_datasets(file.id, root_datasets(file.id), shape);
  const auto main = std::find(planes.begin(), planes.end(), attribute(file.id, "FILE_TYPE").value_or(""));
  if (main != planes.end()) std::rotate(planes.begin(), main, main + 1);  // what the file is, first
  if (planes.empty()) throw InputError(path + ": expected a 2-D dataset (H, W) of a map, found none");
  const std::size_t H = shape[0], W = shape[1];
  Array out(DType::Float32, {planes.size(), H, W});
  for (std::size_t k = 0; k < planes.size(); ++k) {
    Handle d(H5Dopen2(file.id, planes[k].c_str(), H5P_DEFAULT), H5Dclose);
    if (H5Dread(d.id, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data<float>() + k * H * W) < 0)
      throw IoError(path + ": cannot read '" + planes[k] + "'");
    if (units) units->push_back(attribute(d.id, "UNIT").value_or(attribute(file.id, "UNIT").value_or("")));
  }
  if (names) *names = planes;
  if (info) {
    root_attributes(file.id, *info);
    info->ref_y = static_cast<long>(index_attribute(file.id, "REF_Y", path).value_or(-1));
    info->ref_x = static_cast<long>(index_attribute(file.id, "REF_X", path).value_or(-1));
    if (info->ref_y >= static_cast<long>(H) || info->ref_x >= static_cast<long>(W) || info->ref_y < 0 || info->ref_x < 0) info->ref_y = info->ref_x = -1;
  }
  return out;
}

InsarStack read_mintpy_stack(const std::string& path, const StackOptions& options) {
  InsarStack s;
  StackReader reader(path, &s.pairs, &s.keep, false, options);
  s.cube = reader.rows(0, reader.shape()[1]);
  s.referenced = reader.referenced();
  std::tie(s.ref_y, s.ref_x) = reader.reference_pixel();
  return s;
}

#endif

}  // namespace cubesolve
