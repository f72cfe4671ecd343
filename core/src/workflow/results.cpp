#include <cubesolve/workflow/results.hpp>

#include <cubesolve/engine/device.hpp>
#include <cubesolve/error.hpp>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <algorithm>
#include <filesystem>


namespace cubesolve {

namespace {

bool is_diagnostic(ResultPart p) {
  return p != ResultPart::X && p != ResultPart::StdError && p != ResultPart::Covariance && p != ResultPart::Model &&
         p != ResultPart::Residual;
}

bool is_mintpy_part(ResultPart p, const ResultPaths& paths) {
  return paths.mintpy() && (p == ResultPart::X || p == ResultPart::TemporalCoherence || p == ResultPart::NumInvIfgram);
}

/// A (H, W) array as one band (1, H, W), sharing nothing.
Array as_band(const Array& a) {
  Array b = a;
  b.reshape({1, a.dim(0), a.dim(1)});
  return b;
}

}  // namespace

const char* part_name(ResultPart part) {
  switch (part) {
    case ResultPart::X: return "x";
    case ResultPart::NValid: return "n_valid";
    case ResultPart::Rank: return "rank";
    case ResultPart::Rss: return "rss";
    case ResultPart::Status: return "status";
    case ResultPart::Cond: return "cond";
    case ResultPart::StdError: return "stderr";
    case ResultPart::Covariance: return "covariance";
    case ResultPart::Coherence: return "temporal_coherence";
    case ResultPart::Iterations: return "iterations";
    case ResultPart::Objective: return "objective";
    case ResultPart::Model: return "model";
    case ResultPart::Residual: return "residual";
    case ResultPart::TemporalCoherence: return "temporalCoherence";
    case ResultPart::NumInvIfgram: return "numInvIfgram";
  }
  return "?";
}

std::vector<std::pair<ResultPart, std::string>> ResultPaths::files() const {
  std::vector<std::pair<ResultPart, std::string>> f{{ResultPart::X, x}};
  if (mintpy()) {  // MintPy's names, beside the time series
    const auto slash = x.find_last_of('/');
    const std::string dir = slash == std::string::npos ? "" : x.substr(0, slash + 1);
    f.emplace_back(ResultPart::TemporalCoherence, dir + "temporalCoherence.h5");
    f.emplace_back(ResultPart::NumInvIfgram, dir + "numInvIfgram.h5");
  }
  if (!diagnostics.empty()) {
    const std::string ext = data_extension(data_format_of(x) == DataFormat::GeoTiff ? DataFormat::GeoTiff : DataFormat::Npy);
    for (const auto& [part, suffix] : {std::pair{ResultPart::NValid, "_nvalid"}, std::pair{ResultPart::Rank, "_rank"},
                                       std::pair{ResultPart::Rss, "_rss"}, std::pair{ResultPart::Status, "_status"},
                                       std::pair{ResultPart::Cond, "_cond"}})
      f.emplace_back(part, diagnostics + suffix + ext);
    if (std_error) f.emplace_back(ResultPart::StdError, diagnostics + "_stderr" + ext);
    if (covariance) f.emplace_back(ResultPart::Covariance, diagnostics + "_cov" + ext);
    if (temporal_coherence) f.emplace_back(ResultPart::Coherence, diagnostics + "_tcoh" + ext);
    if (robust) {
      f.emplace_back(ResultPart::Iterations, diagnostics + "_iterations" + ext);
      f.emplace_back(ResultPart::Objective, diagnostics + "_objective" + ext);
    }
  }
  if (!model.empty()) f.emplace_back(ResultPart::Model, model);
  if (!residual.empty()) f.emplace_back(ResultPart::Residual, residual);
  return f;
}

void ResultPaths::check(const std::vector<std::string>& inputs) const {
  const auto parts = files();
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const auto& [part, path] = parts[k];
    if (is_mintpy_part(part, *this)) {
      if (!stack)
        throw InputError(path + ": expected a MintPy stack (ifgramStack.h5 with the design sbas) as the cube of an "
                                "output in MintPy's layout (.h5), found another cube");
      phase_unit_scale(*stack, unit, path);  // a unit it can be written in
    } else if (const auto format = data_format_of(path); !format || *format == DataFormat::MintPy) {
      throw InputError(path + ": expected the " + part_name(part) + " output to end in " + data_extensions() + ", found another extension");
    }
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
      throw InputError(path + ": expected a file for the " + part_name(part) + " output, found a folder of that name");
    for (const std::string& in : inputs)
      if (!in.empty() && same_file(path, file_of(in)))
        throw InputError(path + ": expected the " + part_name(part) + " output apart from the inputs, found it is " + in +
                         ", which the run reads");
    for (std::size_t q = 0; q < k; ++q)
      if (same_file(path, parts[q].second))
        throw InputError(path + ": expected the " + part_name(part) + " output in a file of its own, found the " +
                         part_name(parts[q].first) + " output there too");
  }
  if (const std::string side = provenance_file(); !side.empty()) {  // the JSON beside X, as the other outputs
    std::error_code ec;
    if (std::filesystem::is_directory(side, ec))
      throw InputError(side + ": expected a file for how the outputs were made (beside " + x + "), found a folder of that name");
    for (const std::string& in : inputs)
      if (!in.empty() && same_file(side, file_of(in)))
        throw InputError(side + ": expected how the outputs were made (beside " + x + ") apart from the inputs, found it is " + in +
                         ", which the run reads");
  }
}

std::string ResultPaths::provenance_file() const {
  if (provenance.empty() || data_format_of(x) != DataFormat::Npy) return {};
  const std::string side = x.substr(0, x.size() - 4) + ".json";
  return std::filesystem::path(side).filename().string().size() <= 255 ? side : std::string();
}

std::vector<std::pair<std::string, std::string>> run_provenance(const std::string& cube, const DesignSpec& design,
                                                                const std::string& weights, const SolveOptions& o,
                                                                const InputOptions* input, const std::string& unit) {
  auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", v);
    return std::string(text);
  };
  std::vector<std::pair<std::string, std::string>> p{{"software", std::string("CubeSolve ") + version()}, {"cube", cube},
                                                     {"design", design.spec}};
  if (!design.pairs.empty()) p.emplace_back("pairs", design.pairs);
  if (!design.times.empty()) p.emplace_back("times", design.times);
  if (!weights.empty()) p.emplace_back("weights", weights);
  p.emplace_back("rcond", o.rcond < 0 ? "default" : number(o.rcond));
  p.emplace_back("ridge", number(o.ridge));
  p.emplace_back("min_valid", std::to_string(o.min_valid));
  p.emplace_back("method", o.method == Method::Exact ? "exact" : "auto");
  if (o.loss != Loss::L2) {
    p.emplace_back("loss", loss_name(o.loss));
    if (o.loss == Loss::Huber) p.emplace_back("huber_delta", o.huber_delta > 0 ? number(o.huber_delta) : "each pixel's 1.345 x 1.4826 x MAD");
    p.emplace_back("tolerance", number(o.tolerance));
    p.emplace_back("max_iterations", std::to_string(o.max_iterations));
  }
  if (input && input->nodata) p.emplace_back("nodata", number(*input->nodata));
  if (input && is_stack(cube, design.spec)) {
    const StackOptions& s = input->stack;
    p.emplace_back("reference", !s.reference ? "none" : s.ref_y >= 0 ? std::to_string(s.ref_y) + "," + std::to_string(s.ref_x) : "the file's");
    if (s.reference && s.ref_radius > 0) p.emplace_back("reference_radius", std::to_string(s.ref_radius));
    p.emplace_back("zero_is_nodata", s.zero_is_nodata ? "yes" : "no");
    p.emplace_back("weight_func", s.weight);
    if (s.looks > 0) p.emplace_back("looks", number(s.looks));
    if (!s.mask.empty()) p.emplace_back("mask_dataset", s.mask), p.emplace_back("mask_threshold", number(s.mask_threshold));
    p.emplace_back("formulation", input->velocity ? "velocity" : "phase");
    if (!unit.empty()) p.emplace_back("unit", unit);
  }
  return p;
}

namespace {
std::string upper(std::string text) {
  for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return text;
}

/// `text` as a JSON string.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof esc, "\\u%04x", c);
      out += esc;
    } else out += c;
  }
  return out + "\"";
}
}  // namespace

ResultWriter::ResultWriter(const ResultPaths& paths, const Shape& shape, std::size_t M, DType x_type, DType cube_type,
                           const GeoReference& geo)
    : ResultWriter(paths, shape, M, x_type, cube_type, geo, nullptr) {}

ResultWriter::ResultWriter(const ResultPaths& paths, const Shape& shape, std::size_t M, DType x_type, DType cube_type,
                           const GeoReference& geo, const std::vector<std::string>* attach_to) {
  const std::size_t N = shape[0], H = shape[1], W = shape[2];
  paths_ = paths;
  const auto files = paths.files();
  for (std::size_t k = 0; k < files.size(); ++k) {
    const auto& [part, path] = files[k];
    const std::size_t bands = part == ResultPart::X || part == ResultPart::StdError ? M
                              : part == ResultPart::Covariance                   ? M * (M + 1) / 2
                              : is_diagnostic(part)                              ? 1
                                                                                 : N;
    const bool geotiff = data_format_of(path) == DataFormat::GeoTiff;
    if (attach_to && (geotiff || is_mintpy_part(part, paths)))
      throw InputError(path + ": expected an output several processes can write (.npy), found a " + (geotiff ? "GeoTIFF" : "MintPy HDF5 file"));
    const std::string temp = attach_to ? attach_to->at(k) : out_.add_external(path);
    if (is_mintpy_part(part, paths)) {
      const double scale = phase_unit_scale(*paths.stack, paths.unit, path);
      const MintPyPart mp = part == ResultPart::X                   ? MintPyPart::TimeSeries
                            : part == ResultPart::TemporalCoherence ? MintPyPart::TemporalCoherence
                                                                    : MintPyPart::NumInvIfgram;
      StackInfo info = *paths.stack;  // its attributes, and how this file was made (not how its input was)
      auto& attrs = info.attributes;
      attrs.erase(std::remove_if(attrs.begin(), attrs.end(), [](const auto& a) { return a.first.rfind("CUBESOLVE_", 0) == 0; }), attrs.end());
      for (const auto& [key, value] : paths.provenance) info.attributes.emplace_back("CUBESOLVE_" + upper(key), value);
      targets_.push_back({part, mintpy_writer(temp, mp, info, H, W, paths.unit, scale, path, paths.ref_date)});
      continue;
    }
    if (geotiff) {
      std::vector<std::string> names;
      const bool channels = part == ResultPart::X || part == ResultPart::StdError;
      const std::vector<std::string>& named = channels ? paths.x_names : paths.y_names;
      auto channel = [&](std::size_t c) { return paths.x_names.size() == M ? paths.x_names[c] : "x" + std::to_string(c); };
      if (part == ResultPart::Covariance)  // cov(a, b) for the band of unknowns a <= b
        for (std::size_t i = 0; i < M; ++i)
          for (std::size_t j = i; j < M; ++j) names.push_back("cov(" + channel(i) + ", " + channel(j) + ")");
      else
        for (std::size_t b = 0; b < bands; ++b)
          names.push_back(bands == 1 && !channels ? part_name(part)
                          : named.size() == bands             ? named[b]
                                                              : part_name(part) + std::to_string(b));
      GeoReference described = geo;
      for (const auto& [key, value] : paths.provenance) described.metadata.emplace_back("CUBESOLVE_" + upper(key), value);
      targets_.push_back({part, geotiff_writer(temp, {bands, H, W}, described, names, path)});
      continue;
    }
    DType type = part == ResultPart::Residual ? cube_type : x_type;
    if (part == ResultPart::NValid || part == ResultPart::Rank || part == ResultPart::Iterations) type = DType::Int32;
    if (part == ResultPart::Rss || part == ResultPart::Cond || part == ResultPart::Objective) type = DType::Float64;
    if (part == ResultPart::Coherence) type = DType::Float32;
    if (part == ResultPart::Status) type = DType::UInt8;
    targets_.push_back(
        {part, npy_writer(temp, type, {bands, H, W}, is_diagnostic(part) ? Shape{H, W} : Shape{}, path, attach_to != nullptr)});
  }
  for (const auto& [part, path] : files) shared_ = shared_ && data_format_of(path) == DataFormat::Npy && !is_mintpy_part(part, paths);
  // Beside .npy outputs, how they were made.
  if (const std::string side = paths.provenance_file(); !attach_to && !side.empty()) {
    std::ostream& json = out_.add(side);
    json << "{\n";
    for (const auto& [key, value] : paths.provenance) json << "  " << json_string(key) << ": " << json_string(value) << ",\n";
    json << "  \"files\": [";
    for (std::size_t k = 0; k < files.size(); ++k) json << (k ? ", " : "") << json_string(files[k].second);
    json << "]\n}\n";
  }
}

std::unique_ptr<ResultWriter> ResultWriter::attach(const ResultPaths& paths, const std::vector<std::string>& temps,
                                                   const Shape& shape, std::size_t M, DType x_type, DType cube_type) {
  return std::unique_ptr<ResultWriter>(new ResultWriter(paths, shape, M, x_type, cube_type, {}, &temps));
}

std::vector<std::string> ResultWriter::temp_paths() const { return out_.temp_paths(); }

ResultWriter::~ResultWriter() = default;

std::vector<Array> ResultWriter::parts(const ResultPaths& paths, const SolveResult& r, const Design& design,
                                       const Array& block) {
  std::vector<Array> out;
  std::optional<Array> model, residual;
  for (const auto& [part, path] : paths.files()) {
    switch (part) {
      case ResultPart::X: out.push_back(r.x); break;
      case ResultPart::NValid: out.push_back(as_band(r.n_valid)); break;
      case ResultPart::Rank: out.push_back(as_band(r.rank)); break;
      case ResultPart::Rss: out.push_back(as_band(r.rss)); break;
      case ResultPart::Status: out.push_back(as_band(r.status)); break;
      case ResultPart::Cond: out.push_back(as_band(r.cond)); break;
      case ResultPart::Iterations:
      case ResultPart::Objective: {
        const Array& a = part == ResultPart::Iterations ? r.iterations : r.objective;
        if (a.empty()) throw InputError(path + ": expected a result solved with a robust loss, found least squares");
        out.push_back(as_band(a));
        break;
      }
      case ResultPart::StdError:
      case ResultPart::Covariance: {
        const bool se = part == ResultPart::StdError;
        const Array& a = se ? r.std_error : r.covariance;
        if (a.empty()) throw InputError(path + ": expected a result solved with " + (se ? "standard errors" : "covariances") + ", found none");
        out.push_back(a);
        if (paths.mintpy()) {  // in the unit of the time series beside it (squared)
          const double scale = std::abs(phase_unit_scale(*paths.stack, paths.unit, paths.x)), by = se ? scale : scale * scale;
          for (std::size_t i = 0; i < out.back().size(); ++i) out.back().set(i, out.back().value(i) * by);
        }
        break;
      }
      case ResultPart::NumInvIfgram: out.push_back(as_band(r.n_valid)); break;
      case ResultPart::Model:
      case ResultPart::Residual:
      case ResultPart::TemporalCoherence:
      case ResultPart::Coherence:
        if ((part == ResultPart::Coherence || part == ResultPart::TemporalCoherence) && !r.temporal_coherence.empty()) {
          out.push_back(as_band(r.temporal_coherence));
          break;
        }
        if (!model) model = model_cube(design, r.x);
        if (part == ResultPart::Model) {
          out.push_back(*model);
          break;
        }
        if (!residual) residual = residual_cube(block, *model);
        out.push_back(part == ResultPart::Residual ? *residual : as_band(temporal_coherence(*residual)));
    }
  }
  return out;
}

void ResultWriter::write_parts(std::size_t r0, const std::vector<Array>& parts) {
  for (std::size_t k = 0; k < targets_.size(); ++k) targets_[k].writer->rows(r0, parts.at(k));
}

void ResultWriter::write(std::size_t r0, const SolveResult& r, const Design& design, const Array& block) {
  write_parts(r0, parts(paths_, r, design, block));
}

void ResultWriter::finish() {
  for (auto& t : targets_) t.writer->finish();
}

std::vector<std::string> ResultWriter::commit() {
  finish();
  const std::vector<std::string> written = out_.paths();
  out_.commit();
  return written;
}

std::size_t ResultWriter::extra_bytes_per_row(const ResultPaths& paths, const Shape& shape, DType x_type) {
  return paths.model.empty() && paths.residual.empty() && !paths.mintpy() && !paths.temporal_coherence
             ? 0
             : 2 * shape[0] * shape[2] * dtype_size(x_type);
}

std::vector<std::string> write_result(const ResultPaths& paths, const SolveResult& r, const Design& design,
                                      const Array& cube, const GeoReference& geo, const Progress& progress) {
  ResultWriter writer(paths, cube.shape(), design.cols(), r.x.dtype(), cube.dtype(), geo);
  const std::size_t N = cube.dim(0), W = cube.dim(2);
  const std::size_t row_bytes = (design.cols() * dtype_size(r.x.dtype()) + 32 + 3 * N * 8) * W;  // x, diagnostics, the model, residuals and block
  for_row_blocks(cube.dim(1), row_bytes, progress, [&](std::size_t r0, std::size_t r1) {
    SolveResult part;
    part.x = take_rows(r.x, r0, r1);
    part.n_valid = take_rows(r.n_valid, r0, r1);
    part.rank = take_rows(r.rank, r0, r1);
    part.rss = take_rows(r.rss, r0, r1);
    part.status = take_rows(r.status, r0, r1);
    part.cond = take_rows(r.cond, r0, r1);
    if (!r.std_error.empty()) part.std_error = take_rows(r.std_error, r0, r1);
    if (!r.covariance.empty()) part.covariance = take_rows(r.covariance, r0, r1);
    if (!r.temporal_coherence.empty()) part.temporal_coherence = take_rows(r.temporal_coherence, r0, r1);
    if (!r.iterations.empty()) part.iterations = take_rows(r.iterations, r0, r1);
    if (!r.objective.empty()) part.objective = take_rows(r.objective, r0, r1);
    writer.write(r0, part, design, take_rows(cube, r0, r1));
  });
  return writer.commit();
}

}  // namespace cubesolve
