#include "document.hpp"

#include "figure.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/image/profile.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/mintpy.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/workflow/inputs.hpp>
#include <cubesolve/workflow/results.hpp>
#include <cubesolve/workflow/streamed.hpp>

#include <QDir>
#include <QFileInfo>

#include <algorithm>

namespace cubesolve::ui {

namespace {

using Change = Document::Change;

/// A cube read and analysed (with its bands' own dates, where it has them), as a change.
Change cube_change(Array cube, const std::string& path, GeoReference geo, std::vector<std::string> dates = {}) {
  check_cube(cube, path);
  Change c;
  c.band_dates = std::move(dates);
  c.masks = analyze_masks(cube);
  c.cube = std::make_shared<const Array>(std::move(cube));
  c.geo = std::move(geo);
  c.cube_name = QString::fromStdString(path);
  return c;
}

/// A file of MintPy maps (velocity.h5, temporalCoherence.h5) shown as they
/// are: its maps are the channels of a solve by the identity design, each
/// in its dataset's unit.
Change maps_change(const std::string& path) {
  std::vector<std::string> names, units;
  StackInfo info;
  Array maps = read_mintpy_maps(path, &names, &units, &info);
  Change c = cube_change(std::move(maps), path, stack_geo(info));
  auto in = std::make_shared<Inputs>(maps_inputs(names));
  c.design = std::make_shared<const Design>(in->design);
  c.terms = names;
  c.design_name = QObject::tr("the maps of %1 (read as they are)").arg(QFileInfo(QString::fromStdString(path)).fileName());
  if (info.ref_y >= 0) c.reference = {static_cast<int>(info.ref_y), static_cast<int>(info.ref_x)};
  for (const auto& u : units) c.channel_units.push_back(u == "1" ? QString() : QString::fromStdString(u));  // MintPy's "1": no unit
  c.inputs = std::move(in);
  c.drop_weights = true;
  return c;
}

/// Weights read with a cube, whose masks they change: the cube's pass
/// over a file on disk counts them in.
struct Weights {
  std::shared_ptr<const Array> values;
  std::string path;
};

/// A cube kept on disk: a .npy file `mapped` for the views, which read what
/// they show as they show it (another file, not mapped as it is, copied so
/// into the cache folder: copy_to_scratch); its masks from one pass a block
/// of rows at a time, and solved the same way (Document::solve), so that it
/// is never in memory as a whole, and a cube larger than memory opens.
Change disk_change(CubeReader& reader, const std::string& path, std::size_t memory, const Progress& progress, const Weights& weights,
                   Array mapped = {}) {
  Change c;
  c.on_disk = stamp_of(path);
  if (weights.values) {  // the masks under them, in the same pass
    check_like_cube(weights.values->shape(), reader.shape(), weights.path);
    c.weights = weights.values;
    c.weights_name = QString::fromStdString(weights.path);
  }
  const auto w = weights.values ? array_reader(weights.values) : nullptr;
  if (mapped.empty()) {
    ScratchCopy copy = copy_to_scratch(reader, w.get(), memory, cache_folder(), progress);
    mapped = std::move(copy.cube);
    c.masks = std::move(copy.masks);
  } else {
    c.masks = stream_masks(reader, w.get(), memory, progress);
  }
  c.cube = std::make_shared<const Array>(std::move(mapped));
  c.cube_name = QString::fromStdString(path);
  c.geo = reader.geo();
  c.band_dates = reader.band_dates();
  return c;
}

/// A stack's interferograms (and their weights) as `in` reads them: in
/// memory, or, larger than the memory budget, kept on disk (copied for the
/// views, solved from the file: disk_change), its file then as `stamp` says.
Change stack_cube_change(const Inputs& in, const std::string& path, std::size_t memory, const Progress& progress, const FileStamp& stamp) {
  const Shape& shape = in.cube->shape();
  const std::size_t bytes = shape_size(shape) * (dtype_size(in.cube->dtype()) + (in.weights ? dtype_size(in.weights->dtype()) : 0));
  if (bytes > memory) {
    ScratchCopy copy = copy_to_scratch(in, memory, cache_folder(), progress);
    Change c;
    c.on_disk = stamp;
    c.masks = std::move(copy.masks);
    c.cube = std::make_shared<const Array>(std::move(copy.cube));
    c.cube_name = QString::fromStdString(path);
    c.geo = in.cube->geo();
    if (in.weights) c.weights = std::make_shared<const Array>(std::move(copy.weights));
    c.stack_weights = in.weights != nullptr;
    return c;
  }
  Array cube(in.cube->dtype(), shape), weights = in.weights ? Array(in.weights->dtype(), shape) : Array();
  for_row_blocks(shape[1], shape[0] * shape[2] * dtype_size(cube.dtype()) * (in.weights ? 2 : 1), progress,
                 [&](std::size_t r0, std::size_t r1) {
                   Array w;
                   put_rows(cube, r0, in.rows(r0, r1, in.weights ? &w : nullptr));
                   if (in.weights) put_rows(weights, r0, w);
                 });
  Change c = cube_change(std::move(cube), path, in.cube->geo());
  if (in.weights) {
    c.weights = std::make_shared<const Array>(std::move(weights));
    c.masks = analyze_masks(*c.cube, c.weights.get());
    c.stack_weights = true;
  }
  return c;
}

/// A cube file, or a MintPy stack's kept interferograms with their design,
/// opened as the CLI opens them (open_inputs: MintPy's rules as `options`
/// say, the coherence weights, the velocity formulation).
Change read_cube_file(const std::string& path, InputOptions options, std::size_t memory, const Progress& progress,
                      const Weights& given = {}) {
  if (is_mintpy_maps(path)) return maps_change(path);
  if (is_stack(path, "sbas")) {
    options.stack.unreferenced_if_none = true;  // the window says so and offers to pick the reference
    const FileStamp stamp = stamp_of(path);
    auto in = std::make_shared<Inputs>(open_inputs(path, DesignSpec{"sbas", "", ""}, "", options));
    Change c = stack_cube_change(*in, path, memory, progress, stamp);
    if (in->weights) c.weights_name = QObject::tr("coherence (%1 weights)").arg(QString::fromStdString(options.stack.weight));
    c.drop_weights = !in->weights;
    c.unreferenced = !in->stack->referenced && options.stack.reference;
    if (in->stack->referenced && in->stack->ref_y >= 0) c.reference = {static_cast<int>(in->stack->ref_y), static_cast<int>(in->stack->ref_x)};
    if (in->stack->attribute("FILE_TYPE") == "timeseries") c.ref_date = QString::fromStdString(in->stack->attribute("REF_DATE"));
    c.design = std::make_shared<const Design>(in->x_design());
    c.solve_design = std::make_shared<const Design>(in->design);
    c.design_name = (c.ref_date.isEmpty() ? QObject::tr("sbas from %1") : QObject::tr("the dates of the time series %1 (read as is)"))
                        .arg(QFileInfo(QString::fromStdString(path)).fileName());
    c.pairs = in->pairs;
    c.inputs = std::move(in);
    c.input_options = options;
    return c;
  }
  auto reader = open_cube(path);
  if (has_extension(path, ".npy"))
    if (Array mapped = map_npy(path); !mapped.empty()) return disk_change(*reader, path, memory, progress, given, std::move(mapped));
  if (shape_size(reader->shape()) * dtype_size(reader->dtype()) > memory) return disk_change(*reader, path, memory, progress, given);
  Array cube = read_all(*reader, progress);
  return cube_change(std::move(cube), path, reader->geo(), reader->band_dates());
}

/// A built design's times: a times file, else the cube's bands' dates.
DesignSpec dated(DesignSpec d, const std::vector<std::string>& band_dates) {
  if (d.times.empty()) d.dates = band_dates;
  return d;
}

/// A design for a cube of n rows (0: no cube yet).
Change design_change(Array a, const std::string& name, std::size_t n) {
  auto d = std::make_shared<const Design>(a, name);
  if (n && d->rows() != n)
    throw InputError(name + ": expected " + std::to_string(n) + " rows (one per observation of the cube), found " +
                     std::to_string(d->rows()));
  Change c;
  c.design = std::move(d);
  c.design_name = QString::fromStdString(name);
  c.terms = design_terms({name, "", ""});
  return c;
}

/// A design read from a file, or built from its description (sbas, poly:D,
/// harmonic:K[:P]), for a cube of n rows.
Change design_of(const DesignSpec& d, std::size_t n) {
  if (!is_design_spec(d.spec)) return design_change(read_array(d.spec), d.spec, n);
  Change c = design_change(make_design(d, n), d.spec, n);
  c.terms = design_terms(d);
  c.harmonics = design_harmonics(d, n);
  if (d.spec == "sbas") c.pairs = read_pairs(d.pairs);
  return c;
}

/// Weights of the cube's shape, with the cube's masks redone under them
/// (read again a block of rows at a time, within `memory` bytes, from
/// `disk`, a cube kept on disk).
Change weights_change(std::shared_ptr<const Array> w, const std::string& path, const std::shared_ptr<const Array>& cube,
                      const std::string& disk = "", std::size_t memory = 0) {
  if (!cube) throw InputError("open a cube before its weights");
  check_like_cube(w->shape(), cube->shape(), path);
  Change c;
  c.weights = std::move(w);
  c.weights_name = QString::fromStdString(path);
  if (disk.empty()) {
    c.masks = analyze_masks(*cube, c.weights.get());
  } else {
    const auto weights = array_reader(c.weights);
    c.masks = stream_masks(*open_cube(disk), weights.get(), memory);
  }
  return c;
}

}  // namespace

namespace {
bool same_parameters(const SolveOptions& a, const SolveOptions& b) {
  return a.method == b.method && a.rcond == b.rcond && a.min_valid == b.min_valid && a.ridge == b.ridge && a.device == b.device &&
         a.device_float64 == b.device_float64 && a.std_errors == b.std_errors && a.loss == b.loss &&
         a.huber_delta == b.huber_delta;
}
}  // namespace

Document::Document(QObject* parent) : QObject(parent), worker_(new Worker(this)) {
  // Changes made in one turn of the event loop (a panel that sets two
  // fields) solve once.
  resolve_.setSingleShot(true);
  resolve_.setInterval(0);
  connect(&resolve_, &QTimer::timeout, this, [this] {
    if (cube_ && design_ && design_->rows() == cube_->dim(0) && parameter_error_.isEmpty()) solve();
  });
  connect(worker_, &Worker::progress, this, [this](int id, double f) {
    if (id == pending_) emit progress(f);
  });
  connect(worker_, &Worker::finished, this, [this](int id, std::shared_ptr<const SolveResult> r) {
    if (id != pending_) return;
    pending_ = 0;
    result_ = std::move(r);
    result_options_ = pending_options_;
    result_use_weights_ = pending_use_weights_;
    emit solved();
  });
  connect(worker_, &Worker::cancelled, this, [this](int id) {
    if (id != pending_) return;
    pending_ = 0;
    resolve_.stop();
    if (result_ && (!same_parameters(options_, result_options_) || use_weights_ != result_use_weights_ ||
                    !parameter_error_.isEmpty())) {
      // The parameters are those of the result shown again.
      options_ = result_options_;
      use_weights_ = result_use_weights_;
      parameter_error_.clear();
      emit parametersChanged();
    }
    emit solveCancelled();
  });
  connect(worker_, &Worker::failed, this, [this](int id, const QString& message, int code) {
    if (id != pending_) return;
    pending_ = 0;
    failure_code_ = code;
    emit solveFailed(message);
  });
}

void Document::load(const char* job, std::function<Change(const Progress&)> work) {
  worker_->run<Change>(job, std::move(work), [this](Change c) { apply(std::move(c)); },
                       [this](const QString& message, int code) { fail(message, code); });
}

void Document::fail(const QString& message, int code) {
  if (code == exit_code(Cancelled())) return emit jobCancelled();  // what was there stays
  failure_code_ = code;
  emit failed(message);
}

void Document::setOptions(const SolveOptions& options) {
  if (same_parameters(options, options_) && parameter_error_.isEmpty()) {
    if (options.memory == options_.memory) return;
    options_.memory = options.memory;  // (how, not what: the answers stay as they are)
    return emit parametersChanged();
  }
  options_ = options;
  parameter_error_.clear();
  changed();
}

void Document::setUseWeights(bool on) {
  if (on == use_weights_) return;
  use_weights_ = on;
  changed();
}

void Document::setAutoSolve(bool on) {
  if (on == auto_solve_) return;
  auto_solve_ = on;
  changed();
}

void Document::setParameterError(const QString& reason) {
  if (reason == parameter_error_) return;
  parameter_error_ = reason;
  if (!reason.isEmpty()) resolve_.stop();
  emit parametersChanged();
}

void Document::changed() {
  emit parametersChanged();
  if (auto_solve_ && (!result_ || stale() || solving())) resolve_.start();
}

bool Document::stale() const {
  return result_ && (!same_parameters(options_, result_options_) || (weights_ && use_weights_ != result_use_weights_) ||
                     !parameter_error_.isEmpty());
}

void Document::setUnit(const QString& unit) {
  if (unit == unit_) return;
  try {
    check_phase_unit(unit.toStdString());
  } catch (const std::exception& e) {
    return fail(QString::fromUtf8(e.what()));
  }
  unit_ = unit;
  emit unitChanged();
}

bool Document::hasWavelength() const {
  if (!stack()) return false;
  try {
    phase_unit_scale(*stack(), "m", "");
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

double Document::unitScale() const { return stack() && hasWavelength() ? phase_unit_scale(*stack(), unit_.toStdString(), "") : 1.0; }

QString Document::channelUnit(int k) const {
  return k >= 0 && static_cast<std::size_t>(k) < channel_units_.size() ? channel_units_[static_cast<std::size_t>(k)] : QString();
}

QString Document::unitLabel() const {
  if (!stack()) return {};
  if (unit_ == "radian" || !hasWavelength()) return "rad";
  return unit_;
}

bool Document::onCube(int row, int col) const {
  return cube_ && row >= 0 && col >= 0 && static_cast<std::size_t>(row) < cube_->dim(1) && static_cast<std::size_t>(col) < cube_->dim(2);
}

void Document::apply(Change c) {
  const bool new_cube = c.cube != nullptr;
  if (c.cube) {
    const bool same_size = cube_ && cube_->dim(1) == c.cube->dim(1) && cube_->dim(2) == c.cube->dim(2);
    if (!same_size) {
      selected_ = {-1, -1};
      pins_.clear();
      pin_names_.clear();
      pin_shown_.clear();
      profiles_.clear();
      reference_area_.reset();
    }
    cube_ = std::move(c.cube);
    cube_name_ = c.cube_name;
    geo_ = std::move(c.geo);
    unreferenced_ = c.unreferenced;
    reference_ = c.reference;
    if (!c.ref_date.isEmpty()) ref_date_ = c.ref_date;
    inputs_ = std::move(c.inputs);
    band_dates_ = std::move(c.band_dates);
    cube_stamp_ = c.on_disk;
    stale_reported_ = false;
    channel_units_ = std::move(c.channel_units);
    result_.reset();
    if (c.drop_weights || (weights_ && weights_->shape() != cube_->shape())) weights_.reset();
  }
  if (c.masks) masks_ = std::move(c.masks);
  if (c.input_options) {
    input_options_ = *c.input_options;
    input_options_.stack.unreferenced_if_none = false;
  }
  if (c.design) {
    if (!new_cube && inputs_ && inputs_->maps) {  // another design over maps: a plain cube now
      inputs_.reset();
      channel_units_.clear();
    }
    solve_design_ = c.solve_design ? std::move(c.solve_design) : c.design;
    design_ = std::move(c.design);
    design_name_ = c.design_name;
    pairs_ = std::move(c.pairs);
    terms_ = std::move(c.terms);
    harmonics_ = std::move(c.harmonics);
  }
  if (c.weights) {
    weights_ = std::move(c.weights);
    weights_name_ = c.weights_name;
    weights_from_stack_ = c.stack_weights;
    use_weights_ = true;
  }
  if (cube_ && design_ && design_->rows() == cube_->dim(0)) solve();  // before loaded(): solving() tells
  emit loaded();
}

void Document::openDemo(const QString& name, int size) {
  const std::string n = name.toStdString();
  load("demo", [n, size, name](const Progress&) {
    DemoCube d = make_demo(n, static_cast<std::size_t>(size));
    Change c = cube_change(std::move(d.cube), n, {});
    c.cube_name = tr("demo: %1").arg(name);
    c.design = std::make_shared<const Design>(d.design, n);
    c.design_name = c.cube_name;
    c.drop_weights = true;
    c.pairs = d.pairs;
    return c;
  });
}

void Document::openCube(const QString& path) {
  cancel();
  const std::string p = path.toStdString();
  input_options_.stack.ref_y = input_options_.stack.ref_x = -1;  // another stack's pixel means nothing here
  const InputOptions options = input_options_;
  const std::size_t memory = options_.memory;
  load("read cube", [p, options, memory](const Progress& progress) { return read_cube_file(p, options, memory, progress); });
}

void Document::setInputOptions(const InputOptions& options) {
  if (!isStack()) {
    input_options_ = options;  // for the next stack
    return;
  }
  cancel();
  const std::string p = cube_name_.toStdString();
  const std::size_t memory = options_.memory;
  load("read cube", [p, options, memory](const Progress& progress) { return read_cube_file(p, options, memory, progress); });  // the options hold once it is read
}

bool Document::cubeIntact() {
  if (!cube_stamp_) return true;
  try {
    check_unchanged(cube_name_.toStdString(), *cube_stamp_);
    return true;
  } catch (const std::exception& e) {
    if (!stale_reported_) fail(QString::fromUtf8(e.what()), exit_code(e));
    stale_reported_ = true;
    return false;
  }
}

std::string Document::diskFile() const {
  return cube_stamp_ && !(inputs_ && inputs_->stack) ? cube_name_.toStdString() : std::string();
}

bool Document::isStack() const {
  return stack_support() && is_stack_path(cube_name_.toStdString()) && QFileInfo(cube_name_).isFile() && !(inputs_ && inputs_->maps);
}

void Document::setReference(int row, int col) {
  if (!isStack()) return fail(tr("Only a MintPy stack's interferograms are referenced to a pixel."));
  InputOptions options = input_options_;
  options.stack.reference = true;
  options.stack.ref_y = row;
  options.stack.ref_x = col;
  setInputOptions(options);  // a failed read leaves the data and says why; the next read tries it again
}

std::vector<std::string> Document::dates() const { return pair_dates(pairs_); }

QString Document::refDate() const {
  const auto d = unknownDates();
  return d.empty() ? QString() : QString::fromStdString(d[refIndex()]);
}

std::size_t Document::refIndex() const {
  const auto d = unknownDates();
  const auto at = std::find(d.begin(), d.end(), ref_date_.toStdString());
  return at == d.end() ? 0 : static_cast<std::size_t>(at - d.begin());
}

void Document::setRefDate(const QString& yyyymmdd) {
  const auto d = unknownDates();
  if (!yyyymmdd.isEmpty() && !d.empty() && std::find(d.begin(), d.end(), yyyymmdd.toStdString()) == d.end())
    return fail(tr("--ref-date: expected a date of the time series (%1 to %2), found %3").arg(iso_day(d.front()), iso_day(d.back()), yyyymmdd));
  if (yyyymmdd == ref_date_) return;
  ref_date_ = yyyymmdd;
  emit unitChanged();
}

std::vector<double> Document::series(std::size_t p) const {
  const std::size_t D = unknownDates().size(), ref = refIndex(), P = result_ ? result_->x.dim(1) * result_->x.dim(2) : 0;
  std::vector<double> s(D, 0.0);
  if (!result_ || D == 0 || result_->x.dim(0) + 1 != D) return {};
  for (std::size_t d = 1; d < D; ++d) s[d] = result_->x.value((d - 1) * P + p);
  if (areaReferences(AreaScope::Series)) {  // less the area's mean on each date
    const auto& [r0, c0, r1, c1] = *reference_area_;
    const Array rows = take_rows(result_->x, static_cast<std::size_t>(r0), static_cast<std::size_t>(r1) + 1);
    for (std::size_t d = 1; d < D; ++d) {
      const std::vector<double> v = plane(rows, d - 1);
      s[d] -= area_mean(v.data(), rows.dim(1), rows.dim(2), 0, c0, r1 - r0, c1);
    }
  }
  const double at_ref = s[ref], k = unitScale();
  for (double& v : s) v = (v - at_ref) * k;
  return s;
}

QStringList Document::files() const {
  QStringList set{cube_name_};
  for (const QString& f : {design_name_, weights_name_}) set << (QFileInfo(f).isFile() ? f : QString());
  while (set.size() > 1 && set.last().isEmpty()) set.removeLast();
  return set;
}

std::vector<std::string> Document::unknownDates() const {
  std::vector<std::string> d = dates();
  if (!design_ || d.size() != design_->cols() + 1) d.clear();
  return d;
}

std::vector<std::string> Document::xNames() const { return design_ ? unknown_names(pairs_, terms_, design_->cols()) : std::vector<std::string>{}; }

QString iso_day(const std::string& d) { return QString::fromStdString(d.substr(0, 4) + "-" + d.substr(4, 2) + "-" + d.substr(6, 2)); }

std::vector<double> years_of(const std::vector<std::string>& dates) {
  std::vector<double> t;
  for (const auto& d : dates) t.push_back(decimal_year(d, "date"));
  return t;
}

void Document::openDesign(const QString& path) {
  const std::string p = path.toStdString();
  const std::size_t n = cube_ ? cube_->dim(0) : 0;
  load("read design", [p, n](const Progress&) { return design_change(read_array(p), p, n); });
}

void Document::buildDesign(const QString& spec, const QString& pairs, const QString& times) {
  if (!cube_) return fail(tr("Open a cube before building its design matrix."));
  const DesignSpec d = dated({spec.toStdString(), pairs.toStdString(), times.toStdString()}, band_dates_);
  const std::size_t n = cube_->dim(0);
  load("build design", [d, n](const Progress&) { return design_of(d, n); });
}

void Document::openWeights(const QString& path) {
  const std::string p = path.toStdString();
  const auto cube = cube_;
  const std::string disk = diskFile();
  const std::size_t memory = options_.memory;
  load("read weights", [p, cube, disk, memory](const Progress&) { return weights_change(std::make_shared<const Array>(read_npy(p)), p, cube, disk, memory); });
}

void Document::openAny(const QString& path) {
  const std::string p = path.toStdString();
  if (has_extension(p, ".csv") || has_extension(p, ".txt")) return openDesign(path);
  if (!cube_ || !has_extension(p, ".npy")) return openCube(path);  // rasters and stacks are cubes
  // After a cube: a 3-D array of its shape is weights (once a design is
  // there), another 3-D array a new cube, a 2-D one a design matrix.
  const auto cube = cube_;
  const bool has_design = design_ != nullptr;
  const std::string disk = diskFile();
  const InputOptions options = input_options_;
  const std::size_t memory = options_.memory;
  load("read file", [p, cube, has_design, disk, options, memory](const Progress& progress) {
    const Shape shape = open_npy_cube(p)->shape();  // (its header: a new cube is not read whole to tell)
    if (shape.size() == 3 && shape == cube->shape() && has_design) return weights_change(std::make_shared<const Array>(read_npy(p)), p, cube, disk, memory);
    if (shape.size() == 3) return read_cube_file(p, options, memory, progress);  // (kept on disk as a cube opened)
    return design_change(read_npy(p), p, cube->dim(0));
  });
}

void Document::openFiles(const QString& cube, const QString& design, const QString& weights, const QString& pairs,
                         const QString& times) {
  const std::string c = cube.toStdString(), w = weights.toStdString();
  const DesignSpec d{design.toStdString(), pairs.toStdString(), times.toStdString()};
  const InputOptions options = input_options_;
  const std::size_t memory = options_.memory;
  load("read files", [c, d, w, options, memory](const Progress& progress) {
    const Weights given{w.empty() ? nullptr : std::make_shared<const Array>(read_npy(w)), w};
    Change ch = read_cube_file(c, options, memory, progress, given);
    if (!d.spec.empty()) {
      Change dc = design_of(dated(d, ch.band_dates), ch.cube->dim(0));
      ch.design = std::move(dc.design);
      ch.terms = std::move(dc.terms);
      ch.harmonics = std::move(dc.harmonics);
      ch.solve_design.reset();
      ch.design_name = dc.design_name;
      ch.pairs = std::move(dc.pairs);  // a stack's pairs are not this design's
      if (ch.inputs && ch.inputs->maps) {  // maps solved by another design: a plain cube
        ch.inputs.reset();
        ch.channel_units.clear();
      }
    }
    if (!w.empty() && ch.weights != given.values) {  // (a cube on disk took them in its pass; a stack did not)
      Change wc = weights_change(given.values, w, ch.cube, "", memory);
      ch.weights = std::move(wc.weights);
      ch.weights_name = wc.weights_name;
      ch.masks = std::move(wc.masks);
    }
    return ch;
  });
}

void Document::solve() {
  if (!cube_ || !design_) return fail(tr("Open a cube and a design matrix first."));
  if (!parameter_error_.isEmpty()) return fail(tr("Not solved: %1").arg(parameter_error_));
  resolve_.stop();
  pending_options_ = options_;
  pending_use_weights_ = use_weights_;
  // A stack's solve as the CLI's: from velocities to the time series, and
  // the reference pixel what it is by definition.
  const auto in = inputs_;
  const auto cube = cube_, weights = use_weights_ ? weights_ : nullptr;
  const auto design = solve_design_;
  const SolveOptions options = options_;
  if (cube_stamp_) {  // a cube on disk: read a block of rows at a time, as the CLI's solve (and to the bit its answers)
    const std::string path = cube_name_.toStdString();
    const FileStamp stamp = *cube_stamp_;
    // A stack read again by its rules, as it was opened; its own weights from it.
    std::optional<InputOptions> stack;
    if (in && in->stack) {
      stack = input_options_;
      stack->stack.unreferenced_if_none = true;
    }
    const bool own_weights = stack && weights && weights_from_stack_;
    pending_ = worker_->solve([path, stamp, design, weights, options, stack, own_weights](const Progress& progress) {
      check_unchanged(path, stamp);
      Inputs disk = stack ? open_inputs(path, DesignSpec{"sbas", "", ""}, "", *stack) : open_inputs(path, *design);
      if (stack) disk.design = *design;  // (another design than the stack's own: solved as the stack in memory is)
      if (!own_weights) disk.weights = weights ? array_reader(weights) : nullptr;
      SolveResult r = solve_in_blocks(disk, options, progress);
      check_unchanged(path, stamp);  // (a file changed meanwhile gave no answer of its own)
      return r;
    });
  } else {
    pending_ = worker_->solve([in, cube, design, weights, options](const Progress& progress) {
      SolveResult r = cubesolve::solve(*cube, *design, weights.get(), in ? in->engine_options(options) : options, progress);
      if (in) in->finish(r, *cube, weights.get(), options, 0);
      return r;
    });
  }
  emit solveStarted();
}

}  // namespace cubesolve::ui
