// cubesolve: the desktop application. Opens the given files (or the last
// session's, or the InSAR demo), solves, and shows the views. With --screenshot FILE it renders the
// window to FILE once the solve is done and exits (for headless machines).
#include "imageview.hpp"
#include "exports.hpp"
#include "mainwindow.hpp"
#include "playback.hpp"
#include "resolvebench.hpp"
#include "resultpage.hpp"

#include "json.hpp"
#include "options.hpp"

#include <cubesolve/engine/device.hpp>
#include <cubesolve/engine/tuning.hpp>
#include <cubesolve/error.hpp>
#include <cubesolve/io/mintpy.hpp>

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QSettings>
#include <QSize>
#include <QSurfaceFormat>
#include <QTemporaryDir>
#include <QTimer>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <vector>

namespace {

/// Ends a scripted run with `code`, once: the first ending stands (a refusal
/// is not overwritten by a screenshot or an export that was already due).
bool g_ended = false;
void endRun(int code) {
  if (g_ended) return;
  g_ended = true;
  QApplication::exit(code);
}

using cubesolve::ui::MainWindow;

struct Options {
  QCommandLineOption demo{"demo", "Open a demo cube: insar (default when no file is given and there is no last session to reopen) or seed.",
                          "name"};
  QCommandLineOption size{"size", "Demo size (pixels per side).", "S", "0"};
  QCommandLineOption screenshot{"screenshot", "Render the window to FILE after solving, then exit.", "FILE"};
  QCommandLineOption view{"view", "View to show: gaps, groups, result or inspector.", "name", "result"};
  QCommandLineOption pixel{"pixel", "Pixel to inspect once solved (default for --screenshot: the centre).", "row,col"};
  QCommandLineOption pin{"pin", "Pixel to pin for comparison once read (repeatable): marked on every map, its series in the inspector.", "Y,X"};
  QCommandLineOption unit{"unit", "A MintPy stack's phase shown as line-of-sight displacement in mm (default), cm or m, or as radian.", "UNIT"};
  QCommandLineOption layer{"layer", "Result layer to show: solution, model, residual-rms, rank, status, velocity, amplitude, peak, stderr, temporal-coherence, objective, iterations or velocity-std.", "NAME"};
  QCommandLineOption colormap{"colormap", "Colour map of the layer shown: viridis, cividis, batlow, grey (sequential), rdbu, vik, roma, broc, "
                              "balance (diverging), twilight, romaO, brocO (cyclic); NAME_r reversed.", "NAME"};
  QCommandLineOption channel{"channel", "Channel of the layer to show: its index, or a date YYYYMMDD of the time series.", "K|YYYYMMDD"};
  QCommandLineOption exports{"export", "After solving, write a layer (solution, model, residual-rms, rank, status, velocity, amplitude, peak) to FILE: "
                                       ".tif or .npy every channel as data in the unit shown, .png the channel shown as a figure "
                                       "(repeatable); then exit, after --screenshot where given.", "LAYER=FILE"};
  QCommandLineOption json{"json", "At the end of a scripted run, print what it cost as one JSON line on stdout: its wall time, "
                                  "peak memory, the engine's time and the largest gap between ticks of a 10 ms timer on the "
                                  "window's thread (how long the window could not answer)."};
  QCommandLineOption bench_step{"bench-step", "Benchmark: after the first solve, step the result's channel (date) K times and print "
                                              "each step's colour mapping and frame as JSON.", "K"};
  QCommandLineOption bench_resolve{"bench-resolve", "Benchmark: after the first solve, change a parameter K times and print where "
                                                   "the time from each change to its picture goes (JSON), then exit.", "K"};
  QCommandLineOption export_ts{"export-ts", "After solving, write the pinned pixels' time series to FILE.csv (date, then Y_X per pin, "
                                            "in the unit shown, referenced as timeseries.h5); then exit.", "FILE.csv"};
  QCommandLineOption export_animation{"export-animation", "After solving, write the solution's channels (a time series' dates) as an "
                                                          "animated GIF or an MP4 video (by its extension) at --rate frames a second, then exit.", "FILE.gif|FILE.mp4"};
  QCommandLineOption rate{"rate", "Frames a second of playback and of --export-animation (default 4).", "FPS", "4"};
  QCommandLineOption profile{"profile", "A profile to draw on the maps once read (repeatable): its vertices as rows and columns; "
                                        "the result view charts the map shown along it.", "Y0,X0:Y1,X1[:...]"};
  QCommandLineOption ref_area{"ref-area", "A reference area once read: the mean of its values (rows Y0..Y1, columns X0..X1) is subtracted "
                                          "from every map and time series of values shown and exported.", "Y0,X0:Y1,X1"};
  QCommandLineOption ref_area_for{"ref-area-for", "The views --ref-area applies to: all (default), maps (with their profiles and exports) "
                                                  "or series (the time series and the pins' CSV).", "all|maps|series", "all"};
  QCommandLineOption profile_width{"profile-width", "How many pixels across a profile its values are averaged over, with ±1 std (odd; default 1).", "N", "1"};
  QCommandLineOption export_profile{"export-profile", "After solving, write the profiles along the map shown to FILE.csv (distance, "
                                                      "row, col, map coordinates, mean, std, count), then exit.", "FILE.csv"};
  QCommandLineOption export_chart{"export-chart", "After solving, draw the inspected pixel's chart (its time series where the design "
                                                  "has dates, else its observations and fit; the histogram with --view groups) to "
                                                  "FILE.png or FILE.svg at --chart-size; then exit.", "FILE"};
  QCommandLineOption ref_date{"ref-date", "The date the time series is shown and exported relative to (0 there), as the CLI's.", "YYYYMMDD"};
  QCommandLineOption pairs{"pairs", "The SBAS design's pairs file (DESIGN sbas), as the CLI's.", "FILE"};
  QCommandLineOption times{"times", "The times of a built design (poly:D, harmonic:K[:P]): a number or YYYYMMDD per line, as the CLI's.", "FILE"};
  QCommandLineOption std_errors{"stderr", "Also each unknown's standard error on the pixel's own valid rows (the layer stderr), as the CLI's."};
  QCommandLineOption chart_size{"chart-size", "Size of --export-chart in pixels (default 1200x800).", "WxH", "1200x800"};
  // The CLI's solve and stack options, by its names and rules.
  std::vector<QCommandLineOption> shared{
      {"rcond", "Singular values <= RCOND x the largest count as zero (default eps x max(rows, M)).", "RCOND"},
      {"ridge", "Tikhonov weight lambda >= 0.", "LAMBDA"},
      {"min-valid", "Pixels with fewer valid observations are flagged, not solved.", "K"},
      {"loss", "l2, l1 or huber[:DELTA]: the loss each pixel is fitted under, as the CLI's.", "LOSS"},
      {"memory", "The memory budget in MB a cube kept on disk (a .npy) is read and solved in, a block of rows at a time "
                 "(16 to 1048576; default 256, as the CLI's).", "MB"},
      {"ref-yx", "MintPy stack: reference the interferograms at this pixel.", "Y,X"},
      {"ref-radius", "MintPy stack: reference the interferograms to the mean of the (2R+1)² pixels about the reference pixel.", "R"},
      {"mask-dataset", "MintPy stack: connectComponent or coherence masks interferograms per pixel.", "NAME"},
      {"mask-threshold", "MintPy stack: coherence below T is masked (with --mask-dataset coherence).", "T"},
      {"weight-func", "MintPy stack: weights from the coherence: var, fim, coh or no.", "NAME"},
      {"looks", "MintPy stack: independent looks of the coherence (default: the file's).", "L"},
      {"formulation", "MintPy stack: phase or velocity (minimum-norm velocity between dates).", "NAME"}};
  std::vector<QCommandLineOption> shared_flags{{"no-ref", "MintPy stack: read the interferograms unreferenced."},
                                               {"keep-zero", "MintPy stack: an exact 0 is a value, not 'not unwrapped'."}};

  void addTo(QCommandLineParser& parser) const {
    parser.setApplicationDescription("Per-pixel minimum-norm least squares on data cubes with gaps.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files", "CUBE [DESIGN [WEIGHTS]] (.npy or a raster; DESIGN .npy, .csv, or built: sbas, poly:D, harmonic:K[:P])",
                                 "[files...]");
    parser.addOptions({demo, size, screenshot, view, pixel, pin, profile, profile_width, export_profile, ref_area, ref_area_for, unit, layer, colormap, channel, exports, export_ts, export_chart, export_animation, rate, chart_size, pairs, times, ref_date, bench_resolve, bench_step, std_errors, json});
    for (const auto& o : shared) parser.addOption(o);
    for (const auto& o : shared_flags) parser.addOption(o);
  }
};

/// The CLI's options as the command line gave them, read by the CLI's rules
/// into the document (InputError with the CLI's message when one is wrong).
void applySharedOptions(const QCommandLineParser& parser, const Options& o, cubesolve::ui::Document& doc) {
  namespace cli = cubesolve::cli;
  std::vector<std::string> argv;
  for (const auto& option : o.shared)
    if (parser.isSet(option)) argv.insert(argv.end(), {"--" + option.names()[0].toStdString(), parser.value(option).toStdString()});
  for (const auto& flag : o.shared_flags)
    if (parser.isSet(flag)) argv.push_back("--" + flag.names()[0].toStdString());
  const cli::Args args("cubesolve", argv, cli::kInputFlags, cli::with_inputs({"rcond", "ridge", "min-valid", "loss", "memory"}, cli::kInputOptions));
  cubesolve::SolveOptions so = doc.options();
  const cubesolve::SolveOptions given = cli::solve_options(args);
  if (args.get("rcond")) so.rcond = given.rcond;
  if (args.get("ridge")) so.ridge = given.ridge;
  if (args.get("min-valid")) so.min_valid = given.min_valid;
  if (args.get("loss")) so.loss = given.loss, so.huber_delta = given.huber_delta;
  if (args.get("memory")) so.memory = given.memory;
  if (parser.isSet(o.std_errors)) so.std_errors = true;
  doc.setOptions(so);
  doc.setInputOptions(cli::input_options(args, true));
  if (parser.isSet(o.unit)) {
    cubesolve::check_phase_unit(parser.value(o.unit).toStdString());  // the CLI's names, and its message for another
    doc.setUnit(parser.value(o.unit));
  }
}

/// --help and --version are answered without a display.
void answerWithoutDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* flag : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
      if (std::strcmp(argv[i], flag) == 0) {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName("cubesolve");
        QCoreApplication::setApplicationVersion(cubesolve::version());
        QCommandLineParser parser;
        Options().addTo(parser);
        parser.process(app);  // prints and exits
      }
}

/// Once the data are read (and solved, where there is a design), renders the
/// window to `path` and exits: 0, or the CLI's code for what went wrong (2
/// bad input, 3 a file that could not be read or the image not written, 4 a
/// numerical or device failure).
void screenshotThenExit(MainWindow& window, const QString& path, const std::function<void()>& select) {
  auto shoot = [&window, path] {
    QTimer::singleShot(300, &window, [&window, path] {
      if (g_ended) return;  // (refused meanwhile: no picture)
      const bool saved = window.grab().save(path);
      if (!saved) std::fprintf(stderr, "cubesolve: %s: cannot write the screenshot\n", path.toUtf8().constData());
      endRun(saved ? 0 : 3);
    });
  };
  QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, shoot] {
    if (!window.solving()) shoot();
  });
  QObject::connect(&window, &MainWindow::solveFinished, &window, [select, shoot] {
    select();
    shoot();
  });
}

/// A scripted run ends at the first failure: one line, the CLI's exit code.
void quitOnFailure(MainWindow& window) {
  auto& doc = window.document();
  auto quit = [&doc](const QString& message) {
    std::fprintf(stderr, "cubesolve: %s\n", message.toUtf8().constData());
    endRun(doc.failureCode());
  };
  QObject::connect(&doc, &cubesolve::ui::Document::failed, &window, quit);
  QObject::connect(&doc, &cubesolve::ui::Document::solveFailed, &window, quit);
}

/// What a command line asks to be shown and written once solved.
struct Script {
  std::optional<MainWindow::Layer> layer;
  std::optional<cubesolve::Colormap> colormap;  // --colormap
  bool reversed = false;
  QString channel;
  std::vector<std::pair<int, int>> pins;
  std::vector<std::vector<std::array<double, 2>>> profiles;  // --profile
  std::optional<std::array<int, 4>> ref_area;                 // --ref-area
  cubesolve::ui::Document::AreaScope ref_scope{};               // --ref-area-for
  int profile_width = 1;
  std::vector<std::pair<MainWindow::Layer, QString>> layer_files;  // --export LAYER=FILE
  QString ts_file;                                                 // --export-ts
  QString profile_file;                                            // --export-profile
  QString chart_file;                                              // --export-chart
  QString animation_file;                                          // --export-animation
  double rate = 4;
  QSize chart_size;
  bool exporting() const {
    return !layer_files.empty() || !ts_file.isEmpty() || !profile_file.isEmpty() || !chart_file.isEmpty() || !animation_file.isEmpty();
  }
};

/// The script's options read, or a message (exit 2) for one that is wrong.
std::optional<Script> readScript(const QCommandLineParser& parser, const Options& o) {
  Script s;
  auto refuse = [](const char* what, const QString& found) {
    std::fprintf(stderr, "cubesolve: %s, found '%s'\n", what, found.toUtf8().constData());
    return std::nullopt;
  };
  QStringList names;
  for (std::size_t k = 0; k < cubesolve::ui::kLayerCount; ++k) names << cubesolve::ui::ResultPage::layerName(static_cast<cubesolve::ui::Layer>(k));
  const QString list = names.mid(0, names.size() - 1).join(", ") + " or " + names.back();
  const QByteArray layers = ("--layer: expected " + list).toUtf8(), layer_files = ("--export: expected LAYER=FILE with LAYER " + list).toUtf8();
  if (parser.isSet(o.layer) && !(s.layer = cubesolve::ui::ResultPage::layerNamed(parser.value(o.layer))))
    return refuse(layers.constData(), parser.value(o.layer));
  if (parser.isSet(o.colormap)) {
    QString name = parser.value(o.colormap);
    s.reversed = name.endsWith("_r");
    if (s.reversed) name.chop(2);
    if (!(s.colormap = cubesolve::colormap_by_name(name.toStdString()))) {
      QStringList maps;
      for (int k = 0; k < cubesolve::kColormapCount; ++k) maps << cubesolve::colormap_name(static_cast<cubesolve::Colormap>(k));
      const QByteArray expected = ("--colormap: expected " + maps.mid(0, maps.size() - 1).join(", ") + " or " + maps.back() + " (_r reversed)").toUtf8();
      return refuse(expected.constData(), parser.value(o.colormap));
    }
  }
  s.channel = parser.value(o.channel);
  for (const QString& p : parser.values(o.pin)) {
    const QStringList yx = p.split(',');
    bool ok_y = false, ok_x = false;
    if (yx.size() == 2) s.pins.emplace_back(yx[0].toInt(&ok_y), yx[1].toInt(&ok_x));
    if (!ok_y || !ok_x) return refuse("--pin: expected Y,X (two whole numbers)", p);
  }
  for (const QString& line : parser.values(o.profile)) {
    auto vertices = cubesolve::ui::polyline_of(line);
    if (!vertices) return refuse("--profile: expected vertices Y,X (rows and columns) joined by ':'", line);
    if (vertices->size() < 2) return refuse("--profile: expected two vertices or more, Y0,X0:Y1,X1", line);
    s.profiles.push_back(std::move(*vertices));
  }
  if (parser.isSet(o.ref_area)) {
    const QStringList corners = parser.value(o.ref_area).split(QRegularExpression("[,:]"));
    std::array<int, 4> area{};
    bool ok = corners.size() == 4;
    for (int k = 0; ok && k < 4; ++k) area[static_cast<std::size_t>(k)] = corners[k].toInt(&ok);
    if (!ok) return refuse("--ref-area: expected Y0,X0:Y1,X1 (whole rows and columns)", parser.value(o.ref_area));
    s.ref_area = area;
  }
  static const std::map<QString, cubesolve::ui::Document::AreaScope> kScopes{
      {"all", cubesolve::ui::Document::AreaScope::All}, {"maps", cubesolve::ui::Document::AreaScope::Maps}, {"series", cubesolve::ui::Document::AreaScope::Series}};
  if (!kScopes.count(parser.value(o.ref_area_for))) return refuse("--ref-area-for: expected all, maps or series", parser.value(o.ref_area_for));
  s.ref_scope = kScopes.at(parser.value(o.ref_area_for));
  bool ok_width = false;
  s.profile_width = parser.value(o.profile_width).toInt(&ok_width);
  if (!ok_width || s.profile_width < 1 || s.profile_width > 101 || s.profile_width % 2 == 0)
    return refuse("--profile-width: expected an odd number of pixels from 1 to 101", parser.value(o.profile_width));
  for (const QString& e : parser.values(o.exports)) {
    const auto eq = e.indexOf('=');
    const auto l = eq > 0 ? cubesolve::ui::ResultPage::layerNamed(e.left(eq)) : std::nullopt;
    if (!l || eq + 1 >= e.size())
      return refuse(layer_files.constData(), e);
    s.layer_files.emplace_back(*l, e.mid(eq + 1));
  }
  s.ts_file = parser.value(o.export_ts);
  s.profile_file = parser.value(o.export_profile);
  s.chart_file = parser.value(o.export_chart);
  s.animation_file = parser.value(o.export_animation);
  bool ok_rate = false;
  s.rate = parser.value(o.rate).toDouble(&ok_rate);
  using cubesolve::ui::Playback;
  if (!ok_rate || !(s.rate >= Playback::kMinRate && s.rate <= Playback::kMaxRate)) {
    const QByteArray expected = QString("--rate: expected frames a second from %1 to %2").arg(Playback::kMinRate).arg(Playback::kMaxRate).toUtf8();
    return refuse(expected.constData(), parser.value(o.rate));
  }
  if (!s.animation_file.isEmpty() && !s.animation_file.endsWith(".gif", Qt::CaseInsensitive) && !s.animation_file.endsWith(".mp4", Qt::CaseInsensitive))
    return refuse("--export-animation: expected a file ending in .gif or .mp4", s.animation_file);
  if (!s.animation_file.isEmpty() && parser.isSet(o.screenshot))
    return refuse("--export-animation: expected it without --screenshot (one of them per run)", parser.value(o.screenshot));
  const QStringList wh = parser.value(o.chart_size).split('x');
  bool ok_w = false, ok_h = false;
  if (wh.size() == 2) s.chart_size = QSize(wh[0].toInt(&ok_w), wh[1].toInt(&ok_h));
  if (!ok_w || !ok_h) return refuse("--chart-size: expected WxH in pixels (e.g. 1200x800)", parser.value(o.chart_size));
  return s;
}

/// The layer and channel shown once solved (a channel may be a date of the time series).
void showAsAsked(MainWindow& window, const Script& s) {
  QObject::connect(&window, &MainWindow::solveFinished, &window, [&window, layer = s.layer, channel = s.channel] {
    const MainWindow::Layer l = layer.value_or(MainWindow::Layer::Solution);
    int k = channel.toInt();
    if (channel.size() == 8 && l == MainWindow::Layer::Solution) {  // x[k] is dates[k + 1]
      const auto dates = window.document().unknownDates();
      const auto at = std::find(dates.begin(), dates.end(), channel.toStdString());
      if (at == dates.begin() || at == dates.end()) {
        std::fprintf(stderr, "cubesolve: --channel: expected a date of the time series after its first, found %s\n", channel.toUtf8().constData());
        endRun(2);
        return;
      }
      k = static_cast<int>(at - dates.begin()) - 1;
    }
    window.showLayer(l, k);
  });
}

/// --export and --export-ts once solved (and shown as asked); then exit,
/// unless a screenshot follows.
void exportThenExit(MainWindow& window, const Script& s, bool screenshot, const std::function<void()>& select) {
  QObject::connect(&window, &MainWindow::solveFinished, &window, [&window, s, screenshot, select] {
    if (g_ended) return;  // (refused: nothing written)
    bool ok = true;
    for (const auto& [l, file] : s.layer_files)
      ok = ok && window.exports().layerFile(l, file, l == window.resultLayer() ? window.resultChannel() : 0);
    if (ok && !s.ts_file.isEmpty()) ok = window.exports().timeSeriesCsv(s.ts_file);
    if (ok && !s.profile_file.isEmpty()) ok = window.exports().profileCsv(s.profile_file);
    if (ok && !s.chart_file.isEmpty()) {
      if (window.document().selected().first < 0) select();
      ok = window.exports().chartFile(s.chart_file, s.chart_size);
    }
    if (ok && !s.animation_file.isEmpty()) {  // on the worker thread: the run ends when it is written (or fails)
      QObject::connect(&window, &MainWindow::exported, &window, [] { endRun(0); });
      QObject::connect(&window, &MainWindow::errorShown, &window, [&window](const QString& message) {  // refused before it starts
        std::fprintf(stderr, "cubesolve: %s\n", message.toUtf8().constData());
        endRun(window.document().failureCode() ? window.document().failureCode() : 2);
      });
      window.exports().animation(s.animation_file, s.rate);
      return;
    }
    if (!ok) {
      std::fprintf(stderr, "cubesolve: %s\n", window.lastError().toUtf8().constData());
      endRun(window.document().failureCode() ? window.document().failureCode() : 2);
    } else if (!screenshot) {
      endRun(0);
    }
  });
}

/// --json: how long the window's thread went without answering, measured
/// by a 10 ms timer's ticks (a figure, not a limit): the largest gap, and
/// when each gap over 100 ms ended, printed with the run's wall time, peak
/// memory and engine time once it ends.
class RunReport : public QObject {
public:
  explicit RunReport(QObject* parent) : QObject(parent) {
    wall_.start();
    since_.start();
    tick_.setInterval(10);
    connect(&tick_, &QTimer::timeout, this, [this] {
      const qint64 gap = since_.restart();
      if (gap > 100 && gaps_.size() < 64) gaps_.emplace_back(static_cast<double>(wall_.elapsed()) / 1000.0, gap);
      largest_ms_ = std::max(largest_ms_, gap);
      ++ticks_;
    });
    tick_.start();
  }
  void print(MainWindow& window, int code) const {
    const auto result = window.document().result();
    const cubesolve::TuningState tuned = cubesolve::tuning_state();
    cubesolve::cli::Json j;
    j.begin_object()
        .field("command", "cubesolve")
        .field("exit", static_cast<long>(code))
        .field("wall_seconds", static_cast<double>(wall_.elapsed()) / 1000.0)
        .field("peak_memory_mb", cubesolve::cli::peak_memory_mb())
        .field("engine_seconds", result ? result->engine_seconds : 0.0)
        .field("cube_on_disk", window.document().cubeOnDisk())
        .field("engine_parameters", tuned.tuning.describe())
        .field("engine_parameters_origin", tuned.origin())
        .field("largest_tick_gap_ms", static_cast<double>(largest_ms_))
        .field("ticks", static_cast<long>(ticks_))
        .key("tick_gaps_over_100ms")
        .begin_array();
    for (const auto& [at, ms] : gaps_) j.begin_array().value(at).value(static_cast<double>(ms)).end_array();
    j.end_array().key("warnings").begin_array();
    for (const auto& w : tuned.warnings) j.value(w);
    j.end_array().end_object();
    std::printf("%s\n", j.str().c_str());
    std::fflush(stdout);
  }

private:
  QElapsedTimer wall_, since_;
  QTimer tick_;
  qint64 largest_ms_ = 0;
  long ticks_ = 0;
  std::vector<std::pair<double, qint64>> gaps_;  // (seconds since the start, ms) of the first 64 over 100 ms
};

/// VTK renders with OpenGL 3.2 core; every QOpenGLWidget gets that context.
void useVtkSurfaceFormat() {
  QSurfaceFormat format = QSurfaceFormat::defaultFormat();
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(8);
  QSurfaceFormat::setDefaultFormat(format);
}

}  // namespace

int main(int argc, char** argv) {
  answerWithoutDisplay(argc, argv);
  useVtkSurfaceFormat();
  QApplication app(argc, argv);
  QApplication::setOrganizationName("CubeSolve");
  QApplication::setApplicationName("CubeSolve");
  QApplication::setApplicationVersion(cubesolve::version());
  QCommandLineParser parser;
  const Options o;
  o.addTo(parser);
  parser.process(app);
  const std::optional<Script> script = readScript(parser, o);
  if (!script) return 2;
  // A scripted run starts from the defaults and what its options say:
  // nothing is read from, or written to, the saved settings.
  const bool scripted = parser.isSet(o.screenshot) || script->exporting() || parser.isSet(o.bench_resolve) || parser.isSet(o.bench_step);
  QTemporaryDir scripted_settings;
  if (scripted) QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, scripted_settings.path());
  MainWindow window;
  try {
    applySharedOptions(parser, o, window.document());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cubesolve: %s\n", e.what());
    return cubesolve::exit_code(e);
  }
  const QString v = parser.value(o.view);
  using View = MainWindow::View;
  window.showView(v == "gaps" ? View::Gaps : v == "groups" ? View::Groups : v == "inspector" ? View::Inspector : View::Result);
  window.show();
  if (parser.isSet(o.view))  // over what a restored session showed
    QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, view = window.currentView()] { window.showView(view); });
  const QStringList rc = parser.value(o.pixel).split(',');
  auto select = [&window, rc] {
    if (rc.size() == 2) window.selectPixel(rc[0].toInt(), rc[1].toInt());
    else window.selectPixel(window.resultView()->imageHeight() / 2, window.resultView()->imageWidth() / 2);
  };
  if (parser.isSet(o.pixel)) QObject::connect(&window, &MainWindow::solveFinished, &window, select);
  window.resultPage()->playback()->setRate(script->rate);
  if (script->colormap) window.setColours(script->layer.value_or(MainWindow::Layer::Solution), *script->colormap, script->reversed);
  if (script->layer || !script->channel.isEmpty()) showAsAsked(window, *script);
  if (!script->pins.empty())
    QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, pins = script->pins] { window.document().setPins(pins); });
  window.document().setProfileBand(script->profile_width);
  if (!script->profiles.empty())
    QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, profiles = script->profiles] {
      for (const auto& p : profiles)
        if (!window.document().addProfile(p)) {
          const auto cube = window.document().cube();
          std::fprintf(stderr, "cubesolve: --profile: expected two distinct vertices or more within the cube's %zu rows and %zu columns, found one off it or all at one point\n",
                       cube->dim(1), cube->dim(2));
          endRun(2);
        }
    });
  window.document().setReferenceScope(script->ref_scope);
  if (script->ref_area)
    QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, area = *script->ref_area] {
      if (!window.document().setReferenceArea(area)) {
        const auto cube = window.document().cube();
        std::fprintf(stderr, "cubesolve: --ref-area: expected corners within the cube's %zu rows and %zu columns, found %d,%d:%d,%d\n", cube->dim(1),
                     cube->dim(2), area[0], area[1], area[2], area[3]);
        endRun(2);
      }
    });
  if (parser.isSet(o.ref_date))  // checked against the series' dates once they are read
    QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, d = parser.value(o.ref_date)] { window.document().setRefDate(d); });
  if (script->exporting()) exportThenExit(window, *script, parser.isSet(o.screenshot), select);
  if (parser.isSet(o.bench_resolve) || parser.isSet(o.bench_step)) {
    const bool steps = parser.isSet(o.bench_step);
    const int count = std::max(1, parser.value(steps ? o.bench_step : o.bench_resolve).toInt());
    auto* bench = new cubesolve::ui::ResolveBench(&window.document(), window.resultPage(), count, steps, &window);
    QObject::connect(bench, &cubesolve::ui::ResolveBench::done, &app, [] { endRun(0); });
  }
  if (parser.isSet(o.screenshot)) screenshotThenExit(window, parser.value(o.screenshot), select);
  if (scripted) {
    quitOnFailure(window);
    // As the CLI: a stored engine parameters' line passed over (the window's status bar says it too).
    for (const auto& w : cubesolve::tuning_state().warnings) std::fprintf(stderr, "cubesolve: warning: %s\n", w.c_str());
  }
  const QStringList files = parser.positionalArguments();
  if (!files.isEmpty()) window.document().openFiles(files[0], files.value(1), files.value(2), parser.value(o.pairs), parser.value(o.times));
  else if (parser.isSet(o.demo) || scripted || !window.restoreSession())
    window.openDemo(parser.isSet(o.demo) ? parser.value(o.demo) : "insar", parser.value(o.size).toInt());
  const RunReport* report = parser.isSet(o.json) ? new RunReport(&window) : nullptr;
  const int code = app.exec();
  if (report) report->print(window, code);
  return code;
}
