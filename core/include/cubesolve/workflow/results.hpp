#pragma once
// A result as files: X and, on request, the diagnostics, the model cube A·X
// and the residuals Y − A·X, as .npy or GeoTIFF. Written whole (the GUI's
// export) or a block of rows at a time (the streamed solve); the files
// appear together when all are complete, or not at all.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/formats.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cubesolve {

/// The parts of a result (TemporalCoherence and NumInvIfgram in MintPy's layout).
/// Coherence: the temporal coherence among the diagnostics (PREFIX_tcoh).
/// Iterations and Objective: a robust loss's (PREFIX_iterations, _objective).
enum class ResultPart {
  X, NValid, Rank, Rss, Status, Cond, StdError, Covariance, Coherence, Iterations, Objective, Model, Residual, TemporalCoherence, NumInvIfgram
};

/// Where the parts go: X always; with a prefix, the diagnostics as
/// PREFIX_nvalid, _rank, _rss, _status and _cond in X's format (.npy or
/// .tif; .npy beside MintPy's layout), and with `std_error` PREFIX_stderr
/// (M, H, W; in the time series' unit beside MintPy's layout), with
/// `covariance` PREFIX_cov (M(M+1)/2, H, W: each pixel's covariance, its upper
/// triangle row by row; in that unit squared); the model and
/// residual cubes where named. With `temporal_coherence` (a phase stack's),
/// PREFIX_tcoh: MintPy's temporal coherence of the fit's residuals.
struct ResultPaths {
  std::string x, diagnostics, model, residual;
  bool std_error = false, covariance = false, temporal_coherence = false;
  /// A robust loss's diagnostics: PREFIX_iterations and PREFIX_objective.
  bool robust = false;
  /// With x ending in .h5, MintPy's layout: x is timeseries.h5 (the
  /// stack's dates, the first zero, in `unit`: "m" or "radian"), and
  /// temporalCoherence.h5 and numInvIfgram.h5 go beside it. Needs the
  /// stack the cube came from.
  std::shared_ptr<const StackInfo> stack;
  std::string unit = "m";
  /// MintPy's layout: the date the time series is relative to (0 there, its
  /// REF_DATE); empty: the first. InputError for a date the series lacks.
  std::string ref_date;
  /// The names of x's channels (dates, terms): its GeoTIFF bands' descriptions
  /// where there is one per channel (x0, x1, … otherwise).
  std::vector<std::string> x_names;
  /// The names of the cube's observations (an SBAS design's pairs): the
  /// model's and the residuals' band descriptions where there is one per
  /// observation (model0, residual0, … otherwise).
  std::vector<std::string> y_names;
  /// How the result was made (the software, the inputs, the parameters), as
  /// run_provenance gives it: a JSON file beside the .npy outputs (X's name
  /// with .json, part of the set; none where that name would be too long),
  /// metadata items of GeoTIFFs, CUBESOLVE_ attributes of MintPy's files.
  /// Nothing is written where it is empty.
  std::vector<std::pair<std::string, std::string>> provenance;
  /// The JSON file beside the .npy outputs (empty where none is written).
  std::string provenance_file() const;
  bool mintpy() const { return data_format_of(x) == DataFormat::MintPy; }

  /// Every part named and its path, X first.
  std::vector<std::pair<ResultPart, std::string>> files() const;
  /// Throws InputError for a path whose extension names no format this
  /// build writes (.npy; .tif and .tiff with GDAL), or one that is the same
  /// file as one of `inputs` (the run's input files) or as another output.
  void check(const std::vector<std::string>& inputs = {}) const;
};

/// How a result was made, as key and text: the software, the input files
/// (cube, design, weights), the solve's parameters and, with a stack, how it
/// was read (`input`, null for other cubes) and the unit of its time series.
std::vector<std::pair<std::string, std::string>> run_provenance(const std::string& cube, const DesignSpec& design,
                                                                const std::string& weights, const SolveOptions& options,
                                                                const InputOptions* input, const std::string& unit = "");

/// The band name of a part (GeoTIFF band descriptions).
const char* part_name(ResultPart part);

/// Writes a result's parts a block of rows at a time into temporary files,
/// renamed onto their paths by commit().
class ResultWriter {
public:
  /// For a cube of `shape` (N, H, W) and `cube_type`, a design of M unknowns,
  /// X in `x_type`; GeoTIFFs get `geo`. Throws IoError, InputError.
  ResultWriter(const ResultPaths& paths, const Shape& shape, std::size_t M, DType x_type, DType cube_type,
               const GeoReference& geo);
  /// A writer into the temporary files `temps` (temp_paths() of a writer in
  /// another process) that writes its rows at their place and never renames
  /// or removes them: several processes fill one result so. NPY outputs only
  /// (InputError for a GeoTIFF). Throws IoError.
  static std::unique_ptr<ResultWriter> attach(const ResultPaths& paths, const std::vector<std::string>& temps,
                                              const Shape& shape, std::size_t M, DType x_type, DType cube_type);
  ~ResultWriter();
  /// The parts of a solved block of rows starting at r0 (`block` is the
  /// cube's rows, for the residuals). Throws IoError.
  void write(std::size_t r0, const SolveResult& r, const Design& design, const Array& block);
  /// The same in two steps: the block's parts of `paths` as arrays, in the
  /// order of ResultPaths::files() (parts() throws InputError for a result
  /// of another shape than the block), then written (possibly by another
  /// process: write_parts() throws IoError).
  static std::vector<Array> parts(const ResultPaths& paths, const SolveResult& r, const Design& design,
                                  const Array& block);
  void write_parts(std::size_t r0, const std::vector<Array>& parts);
  /// Completes every file (no renaming). Throws IoError.
  void finish();
  /// Completes and renames every file; returns their paths. Throws IoError.
  std::vector<std::string> commit();
  /// The temporary files, in the order of ResultPaths::files().
  std::vector<std::string> temp_paths() const;
  /// Dead processes' temporary files of these outputs that were removed, one line each.
  const std::vector<std::string>& notices() const { return out_.notices(); }
  /// Whether every output can be written by several processes at once (NPY).
  bool shared() const { return shared_; }
  /// Bytes per row of the cube the model and residual parts hold in memory.
  static std::size_t extra_bytes_per_row(const ResultPaths& paths, const Shape& shape, DType x_type);

private:
  struct Target {
    ResultPart part;
    std::unique_ptr<CubeWriter> writer;
  };
  ResultWriter(const ResultPaths& paths, const Shape& shape, std::size_t M, DType x_type, DType cube_type,
               const GeoReference& geo, const std::vector<std::string>* attach_to);
  ResultPaths paths_;
  OutputSet out_;
  std::vector<Target> targets_;
  bool shared_ = true;
};

/// Writes a whole result (rows 0..H of `cube`), a block of rows at a time
/// with `progress` after each. Returns the paths. Throws IoError,
/// InputError, and Cancelled (nothing written) when progress returns false.
std::vector<std::string> write_result(const ResultPaths& paths, const SolveResult& r, const Design& design,
                                      const Array& cube, const GeoReference& geo, const Progress& progress = {});

}  // namespace cubesolve
