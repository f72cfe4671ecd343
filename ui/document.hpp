#pragma once
// The document under the window: the cube and its mask statistics, the
// design, the weights, the last result and the options it was solved with.
// It has no widget. Every file read, demo build, solve and export runs on
// the worker thread; the document changes on the GUI thread when a job is
// done, and says so by signal.

#include "figure.hpp"
#include "worker.hpp"

#include <cubesolve/data/mask.hpp>
#include <cubesolve/engine/engine.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/workflow/inputs.hpp>

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <array>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace cubesolve::ui {

/// A date YYYYMMDD as YYYY-MM-DD.
QString iso_day(const std::string& yyyymmdd);
/// Dates YYYYMMDD as decimal years.
std::vector<double> years_of(const std::vector<std::string>& dates);
/// A profile's vertices (row, col) as --profile and the session write them,
/// Y0,X0:Y1,X1:..., and read back: none for text that is not numbers so.
QString polyline_text(const std::vector<std::array<double, 2>>& vertices);
std::optional<std::vector<std::array<double, 2>>> polyline_of(const QString& text);

class Document : public QObject {
  Q_OBJECT
public:
  explicit Document(QObject* parent = nullptr);

  // What is loaded (null before).
  std::shared_ptr<const Array> cube() const { return cube_; }
  const MaskStats* masks() const { return masks_ ? &*masks_ : nullptr; }
  const GeoReference& geo() const { return geo_; }
  std::shared_ptr<const Design> design() const { return design_; }
  std::shared_ptr<const Array> weights() const { return weights_; }
  std::shared_ptr<const SolveResult> result() const { return result_; }
  /// The options result() was solved with.
  const SolveOptions& resultOptions() const { return result_options_; }
  /// Each observation's pair of dates where the design is an SBAS network
  /// (a MintPy stack, a pairs file, the InSAR demo); empty otherwise.
  const std::vector<DatePair>& pairs() const { return pairs_; }
  /// The acquisition dates of those pairs, sorted: unknown j is dates()[j + 1].
  std::vector<std::string> dates() const;
  /// The cube's bands' own dates (YYYYMMDD: a raster's DATE band items or
  /// band names ending in dates), the times of a design built without a
  /// times file; none where the cube has none.
  const std::vector<std::string>& bandDates() const { return band_dates_; }
  /// dates() where they match the design's unknowns (M + 1 of them), else none.
  std::vector<std::string> unknownDates() const;
  /// What x's channels are: the dates after the first of a time series
  /// (YYYYMMDD), or the design's terms (offset, trend, annual_cos, …, a CSV
  /// header's names); empty where the design says nothing of them.
  std::vector<std::string> xNames() const;
  /// The periodic terms of a built harmonic design (annual, semiannual, …); none for others.
  const std::vector<Harmonic>& harmonics() const { return harmonics_; }
  /// Whether the cube is a MintPy stack (whose reference pixel can be chosen).
  bool isStack() const;
  /// A MintPy stack with no reference of its own, read unreferenced.
  bool unreferenced() const { return unreferenced_; }
  /// A MintPy stack's reference pixel (row, col) as read; (-1, -1) when none.
  std::pair<int, int> reference() const { return reference_; }
  /// Whether its mark (and the reference area's outline) is drawn on the
  /// maps; selectionChanged() follows a change.
  bool referenceShown() const { return reference_shown_; }
  void setReferenceShown(bool shown);
  /// A reference area (rows r0..r1, columns c0..c1, on the cube), besides
  /// any reference pixel: the mean of its values is subtracted from every
  /// map of values (the solution, the model, the velocity) and from every
  /// time series shown; none when not set. unitChanged() follows a change.
  const std::optional<std::array<int, 4>>& referenceArea() const { return reference_area_; }
  /// False, and nothing changed, for an area not on the cube.
  bool setReferenceArea(std::optional<std::array<int, 4>> area);
  /// The views the reference area applies to: every one, the maps (and the
  /// profiles along them and their exports), or the time series (the
  /// inspector's charts and the pins' CSV). unitChanged() follows a change.
  enum class AreaScope { All, Maps, Series };
  AreaScope referenceScope() const { return reference_scope_; }
  void setReferenceScope(AreaScope scope);
  /// Whether the reference area is subtracted from `view` (Maps or Series).
  bool areaReferences(AreaScope view) const {
    return reference_area_ && (reference_scope_ == AreaScope::All || reference_scope_ == view);
  }
  /// Reads the stack again referenced at (row, col); loaded() follows.
  void setReference(int row, int col);
  /// How a MintPy stack is read (MintPy's rules, weights, formulation), as
  /// the CLI's options say it.
  const InputOptions& inputOptions() const { return input_options_; }
  const StackOptions& stackOptions() const { return input_options_.stack; }
  /// Reads the open stack again with `options` (kept for the next stack
  /// otherwise); loaded() follows.
  void setInputOptions(const InputOptions& options);
  /// The unit a stack's phase is shown in: "radian", or the line-of-sight
  /// displacement in "mm", "cm" or "m" (MintPy's sign) where the stack has
  /// its WAVELENGTH; unitChanged() follows a change.
  const QString& unit() const { return unit_; }
  void setUnit(const QString& unit);
  /// The date a time series is shown relative to (0 there; MintPy's
  /// REF_DATE), YYYYMMDD: the one set where the series has it, else its
  /// first date; empty without dates. unitChanged() follows a change.
  QString refDate() const;
  /// Sets it (empty: the first date). A date the open series does not have
  /// fails with the reason; before a series is open it waits for one.
  void setRefDate(const QString& yyyymmdd);
  /// Its index among unknownDates() (0: the first).
  std::size_t refIndex() const;
  /// Pixel p's time series in the unit shown, relative to refDate() (and to
  /// the reference area's mean series, where one is set): a value per
  /// unknownDates() (the first date's is 0 - the reference date's).
  std::vector<double> series(std::size_t p) const;
  /// Whether the open stack can be shown as a displacement (it has WAVELENGTH).
  bool hasWavelength() const;
  /// The factor from the cube's values (and x's) to what is shown (1 where
  /// the cube has no unit of ours).
  double unitScale() const;
  /// The name of what is shown: "mm", "cm", "m", "rad", or "" (the cube's own units).
  QString unitLabel() const;
  /// Solution channel k's unit where the file gives each its own (MintPy
  /// maps: "m/year" for a velocity), else "".
  QString channelUnit(int k) const;
  /// What the open MintPy stack says about itself (null for other cubes).
  std::shared_ptr<const StackInfo> stack() const { return inputs_ ? inputs_->stack : nullptr; }
  /// Whether the cube is kept on disk (a .npy file mapped, or another file
  /// larger than the memory budget copied into the cache folder and mapped;
  /// read as it is shown, solved from its file a block of rows at a time)
  /// rather than read into memory.
  bool cubeOnDisk() const { return cube_stamp_.has_value(); }
  /// Whether the cube's values can be read: false (and failed(), once) for
  /// a cube on disk whose file was cut short or changed since it was opened.
  bool cubeIntact();
  const QString& cubeName() const { return cube_name_; }
  const QString& designName() const { return design_name_; }
  const QString& weightsName() const { return weights_name_; }
  /// The files open: the cube, the design and the weights, each where it is a
  /// file (empty between, none after the last).
  QStringList files() const;

  // The parameters of the next solve. The document is their one owner: the
  // panel shows them and asks here for a change, the settings and the session
  // are written from them; parametersChanged() follows every change. With
  // autoSolve() a change solves again at once (a newer solve replaces a
  // running one); a cancelled solve puts back the parameters of the result
  // shown.
  const SolveOptions& options() const { return options_; }
  void setOptions(const SolveOptions& options);
  bool useWeights() const { return use_weights_; }
  void setUseWeights(bool on);
  bool autoSolve() const { return auto_solve_; }
  void setAutoSolve(bool on);
  /// Why what the panel shows cannot be solved (a field that does not parse),
  /// or empty. While set, solve() solves nothing and says why.
  const QString& parameterError() const { return parameter_error_; }
  void setParameterError(const QString& reason);
  /// Whether result() was solved with other parameters than those shown.
  bool stale() const;

  // The selected pixel (row -1: none) and the pixels pinned for comparison,
  // each shown or hidden (on the maps and charts); selectionChanged() follows
  // a change. A new cube of the same size keeps them (document_marks.cpp).
  std::pair<int, int> selected() const { return selected_; }
  void selectPixel(int row, int col);
  const std::vector<std::pair<int, int>>& pins() const { return pins_; }
  /// Pins the selected pixel.
  void pin();
  void setPins(std::vector<std::pair<int, int>> pins);
  void removePin(std::size_t k);
  /// Pin k's name (its Y_X until renamed).
  QString pinName(std::size_t k) const;
  void setPinName(std::size_t k, const QString& name);
  bool pinShown(std::size_t k) const { return k < pin_shown_.size() && pin_shown_[k]; }
  void setPinShown(std::size_t k, bool shown);

  // Profiles: polylines on the maps (vertices (row, col) on the cube), each
  // named and shown or hidden, along which the result page charts the map
  // shown, its values averaged across `profileBand()` pixels;
  // profilesChanged() follows a change. A new cube of the same size keeps them.
  struct Profile {
    std::vector<std::array<double, 2>> vertices;
    QString name;
    bool shown = true;
  };
  const std::vector<Profile>& profiles() const { return profiles_; }
  /// Adds a profile through `vertices` (named "profile K" when `name` is
  /// empty): false, and nothing added, unless there are two distinct
  /// vertices and all lie on the cube.
  bool addProfile(std::vector<std::array<double, 2>> vertices, const QString& name = {});
  void removeProfile(std::size_t k);
  void setProfileName(std::size_t k, const QString& name);
  void setProfileShown(std::size_t k, bool shown);
  /// How many pixels across a profile its values are averaged over (odd, 1: the line's own).
  int profileBand() const { return profile_band_; }
  void setProfileBand(int pixels);

  // Jobs. Each ends with loaded() (and a solve when a cube and a design of
  // as many rows are there), exported() or failed(); what was there stays
  // when a job fails.
  void openDemo(const QString& name, int size = 0);
  /// A cube (NPY or any raster GDAL reads); a MintPy stack (.h5) brings its
  /// SBAS design.
  void openCube(const QString& path);
  void openDesign(const QString& path);
  /// "sbas" from a pairs file, or "poly:D" / "harmonic:K[:P]" from a times
  /// file (empty: band index).
  void buildDesign(const QString& spec, const QString& pairs, const QString& times);
  void openWeights(const QString& path);
  /// Opens a file as what it looks like: CSV or 2-D = design, 3-D = cube, or
  /// weights when it has the cube's shape and a design is loaded.
  void openAny(const QString& path);
  /// A cube and, where named, its design (a file, or a description as the
  /// CLI's: sbas with `pairs`, poly:D or harmonic:K[:P] at `times`) and
  /// weights, as one job.
  void openFiles(const QString& cube, const QString& design, const QString& weights, const QString& pairs = {},
                 const QString& times = {});

  /// Solves with options() (and the weights when useWeights()).
  void solve();
  void cancel() { worker_->cancel(); }
  /// Cancels the reads and exports under way; the document stays as it was.
  void cancelJobs() { worker_->cancelJobs(); }
  /// True from solve() until its result, cancellation or failure arrives.
  bool solving() const { return pending_ != 0; }

  /// X and its diagnostics (_nvalid, _rank, _rss, _status, _cond) beside it,
  /// with `cubes` also the model A·X (_model) and the residuals Y − A·X
  /// (_residual): .npy, or GeoTIFF (.tif) with the cube's georeference.
  void exportSolution(const QString& path, bool cubes = false);
  /// A map to draw as a figure: the file name (without extension), the values.
  struct Figure {
    QString name;
    std::vector<double> values;
    int height = 0, width = 0;
    MapStyle style;
  };
  /// `figures` into `folder` as NAME.png or NAME.pdf (`format`), all or none,
  /// each value `scale` pixels wide (0: so that the map is about 600 pixels).
  void exportFigures(const QString& folder, std::vector<Figure> figures, const QString& format = "png", int scale = 0);
  /// `figures` as one animated GIF, or an MP4 video, at `path` (by its
  /// extension), `fps` frames a second.
  void exportAnimation(const QString& path, std::vector<Figure> figures, double fps, int scale = 0);

  Worker& worker() { return *worker_; }
  /// The exit code of the last failure (failed() or solveFailed()): as the
  /// CLI's for the same cause (see cubesolve::exit_code).
  int failureCode() const { return failure_code_; }

signals:
  void loaded();
  void parametersChanged();
  void selectionChanged();
  void unitChanged();
  void solveStarted();
  void progress(double fraction);
  void solved();
  void solveCancelled();
  void solveFailed(const QString& message);
  void profilesChanged();
  void exported(const QStringList& paths);
  void failed(const QString& message);
  /// A read or an export was cancelled (Esc): the document is as it was.
  void jobCancelled();

public:
  /// What a job read, applied at once on the GUI thread.
  struct Change {
    std::shared_ptr<const Array> cube;  // a new cube (with masks, geo, name)
    std::optional<MaskStats> masks;     // its masks, or the current cube's with new weights
    GeoReference geo;
    QString cube_name;
    std::shared_ptr<const Design> design;
    std::shared_ptr<const Design> solve_design;  // the design solved, where not `design` (the velocity formulation)
    std::shared_ptr<const Inputs> inputs;        // a MintPy stack as opened
    std::optional<InputOptions> input_options;   // and how
    QString design_name;
    std::vector<DatePair> pairs;  // the design's date pairs, where it has them
    std::vector<std::string> terms;  // the design's terms, where it names them
    std::vector<Harmonic> harmonics;  // a built harmonic design's periodic terms
    bool unreferenced = false;    // a MintPy stack read without a reference (it has none)
    std::pair<int, int> reference{-1, -1};  // the stack's reference pixel, where it has one
    QString ref_date;             // a MintPy time series' REF_DATE, the date it is shown relative to
    std::vector<std::string> band_dates;  // the cube's bands' own dates (a raster's DATE or band names)
    std::vector<QString> channel_units;   // each solution channel's unit, where the file says (maps read as they are)
    std::optional<FileStamp> on_disk;     // a cube kept on disk (mapped), as its file was when opened
    std::shared_ptr<const Array> weights;
    QString weights_name;
    bool drop_weights = false;  // the new cube comes without weights (a demo)
    bool stack_weights = false;  // `weights` are the stack's own (its coherence), which a solve on disk reads from it
  };

private:
  void load(const char* job, std::function<Change(const Progress&)> work);
  void apply(Change change);
  /// Says why something could not be done (failed()); `code` as exit_code
  /// gives it for what was thrown (2: the request or the input itself).
  void fail(const QString& message, int code = 2);
  /// After a change of the parameters: says so, and solves again when asked to.
  void changed();
  bool onCube(int row, int col) const;
  /// The file a cube kept on disk is read from a block of rows at a time
  /// as it is (not a stack, read by its rules); "" for others.
  std::string diskFile() const;

  Worker* worker_ = nullptr;
  std::shared_ptr<const Array> cube_, weights_;
  std::shared_ptr<const Design> design_;
  std::optional<MaskStats> masks_;
  GeoReference geo_;
  std::shared_ptr<const SolveResult> result_;
  SolveOptions options_, result_options_, pending_options_;
  QString cube_name_, design_name_, weights_name_;
  std::vector<DatePair> pairs_;
  std::vector<std::string> band_dates_;
  std::vector<QString> channel_units_;
  std::optional<FileStamp> cube_stamp_;  // the cube is kept on disk (its file, as it was when opened)
  bool weights_from_stack_ = false;       // weights_ are the open stack's own
  bool stale_reported_ = false;
  std::vector<std::string> terms_;
  std::vector<Harmonic> harmonics_;
  InputOptions input_options_;
  std::shared_ptr<const Inputs> inputs_;      // the open MintPy stack, as opened
  std::shared_ptr<const Design> solve_design_;  // design_ but with the velocity formulation
  bool unreferenced_ = false;
  std::pair<int, int> reference_{-1, -1};
  bool reference_shown_ = true;
  std::optional<std::array<int, 4>> reference_area_;
  AreaScope reference_scope_ = AreaScope::All;
  bool use_weights_ = true, result_use_weights_ = true, pending_use_weights_ = true, auto_solve_ = true;
  QString parameter_error_;
  QString unit_ = "mm";
  QString ref_date_;
  QTimer resolve_;
  std::pair<int, int> selected_{-1, -1};
  std::vector<std::pair<int, int>> pins_;
  std::vector<QString> pin_names_;  // as pins_, empty: Y_X
  std::vector<bool> pin_shown_;     // as pins_
  std::vector<Profile> profiles_;
  int profile_band_ = 1;
  int pending_ = 0;  // the solve whose answer is awaited
  int failure_code_ = 0;
};

}  // namespace cubesolve::ui
