#include "exports.hpp"

#include "chartview.hpp"
#include "document.hpp"
#include "imageview.hpp"
#include "playback.hpp"
#include "profilechart.hpp"
#include "resultpage.hpp"

#include <cubesolve/error.hpp>

#include <cubesolve/io/files.hpp>
#include <cubesolve/io/formats.hpp>
#include <cubesolve/io/raster.hpp>

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>

#include <cmath>

namespace cubesolve::ui {

namespace {
/// The file dialog's list of the formats an array is written in (the core's list).
QString array_filter() {
  QStringList filters;
  for (const auto& f : data_formats()) {
    if (!f.any_array) continue;
    QStringList patterns;
    for (const auto& e : f.extensions) patterns << "*" + QString::fromStdString(e);
    filters << QString("%1 (%2)").arg(QString::fromUtf8(f.name), patterns.join(' '));
  }
  return filters.join(";;");
}

/// Writes `bytes` to `path` whole or not at all.
void write_whole(const QString& path, const QByteArray& bytes) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit())
    throw IoError(path.toStdString() + ": cannot write: " + file.errorString().toStdString());
}
}  // namespace

Exports::Exports(Document* doc, QWidget* window, Sources sources)
    : QObject(window), doc_(doc), window_(window), sources_(std::move(sources)) {}

bool Exports::viewPng(const QString& path, int scale) {
  return written(path, [&] {
    ImageView* map = sources_.map();
    const QImage image =
        sources_.picture(map && map->imageHeight() > 0 && scale <= 0 ? default_figure_scale(map->imageHeight(), map->imageWidth()) : scale);
    if (image.isNull()) throw InputError(path.toStdString() + ": nothing to export: the view is empty");
    const QByteArray png = png_bytes(image);
    if (png.isEmpty()) throw IoError(path.toStdString() + ": cannot encode the PNG image");
    write_whole(path, png);
  });
}

void Exports::channels(const QString& folder, int scale, const QString& format, bool per_channel) {
  if (!sources_.result->applies(Layer::Solution)) return emit failed(tr("Nothing to export: solve first."));
  doc_->exportFigures(folder, channelFigures(per_channel), format, scale);
}

void Exports::animation(const QString& path, double fps, int scale) {
  if (!sources_.result->applies(Layer::Solution)) return emit failed(tr("Nothing to export: solve first."));
  if (!has_extension(path.toStdString(), ".gif") && !has_extension(path.toStdString(), ".mp4"))
    return emit failed(tr("%1: expected an animation ending in .gif or .mp4, found another extension").arg(path));
  try {
    checkApart(path);
  } catch (const std::exception& e) {
    return emit failed(QString::fromUtf8(e.what()));
  }
  doc_->exportAnimation(path, channelFigures(false), fps, scale);
}

std::vector<Document::Figure> Exports::channelFigures(bool per_channel) const {
  const ResultPage& page = *sources_.result;
  // Each channel named and titled by its date where the design has dates,
  // in the unit shown, over one range for all (or each its own).
  const int n = page.channels(Layer::Solution);
  const auto dates = doc_->unknownDates();
  std::vector<Document::Figure> figures;
  std::vector<double> all;
  for (int k = 0; k < n; ++k) {
    ResultPage::Map m = page.map(Layer::Solution, k);
    Document::Figure f{QString("x%1").arg(k, 3, 10, QChar('0')), std::move(m.values), m.height, m.width, m.style};
    if (!dates.empty()) {
      f.name = QString("%1_%2").arg(k + 1, 3, 10, QChar('0')).arg(QString::fromStdString(dates[static_cast<std::size_t>(k) + 1]));  // numbered and dated
      f.style.title = doc_->unitLabel().isEmpty() || doc_->unitLabel() == "rad"
                          ? tr("%1, relative to %2").arg(iso_day(dates[static_cast<std::size_t>(k) + 1]), iso_day(doc_->refDate().toStdString()))
                          : tr("%1: line-of-sight displacement since %2")
                                .arg(iso_day(dates[static_cast<std::size_t>(k) + 1]), iso_day(doc_->refDate().toStdString()));
    } else if (!m.channel.isEmpty()) {  // a term of the design
      f.name = QString("x%1_%2").arg(k, 3, 10, QChar('0')).arg(m.channel).replace('^', "");
      f.style.title = tr("x[%1]: %2").arg(k).arg(m.channel);
    } else {
      f.style.title = tr("x[%1], unknown %2 of %3").arg(k).arg(k + 1).arg(n);
    }
    if (!per_channel) all.insert(all.end(), f.values.begin(), f.values.end());
    figures.push_back(std::move(f));
  }
  if (!per_channel && !figures.empty()) {  // one scale: channels compared by colour
    const ColorScale shared = page.scale(Layer::Solution, all);
    for (auto& f : figures) f.style.scale = shared;
  }
  return figures;
}


void Exports::checkApart(const QString& path) const {
  for (const QString& input : {doc_->cubeName(), doc_->designName(), doc_->weightsName()})
    if (!input.isEmpty() && same_file(path.toStdString(), file_of(input.toStdString())))
      throw InputError(path.toStdString() + ": expected the export apart from the inputs, found it is " + input.toStdString() +
                       ", which is open");
}

bool Exports::written(const QString& path, const std::function<void()>& write) {
  try {
    checkApart(path);
    write();
  } catch (const std::exception& e) {
    emit failed(QString::fromUtf8(e.what()));
    return false;
  }
  emit message(tr("Wrote %1").arg(path), 10000);
  emit exported({path});
  return true;
}

bool Exports::layerFile(Layer layer, const QString& path, int channel) {
  const ResultPage& page = *sources_.result;
  return written(path, [&] {
    if (!page.applies(layer))
      throw InputError(path.toStdString() + ": expected a layer the solve has, found " + ResultPage::layerName(layer).toStdString() +
                       (doc_->result() ? " does not apply to this design" : " before any solve"));
    const std::string p = path.toStdString();
    if (has_extension(p, ".png")) {
      const ResultPage::Map m = page.map(layer, channel);
      const QByteArray png = png_bytes(render_figure(m.values, m.height, m.width, m.style, default_figure_scale(m.height, m.width)));
      if (png.isEmpty()) throw IoError(p + ": cannot encode the PNG image");
      write_whole(path, png);
    } else if (const auto format = data_format_of(p); format && *format != DataFormat::MintPy) {
      const int n = page.channels(layer);
      ResultPage::Map first = page.map(layer, 0);
      const std::size_t P = first.values.size();
      Array bands(DType::Float32, {static_cast<std::size_t>(n), static_cast<std::size_t>(first.height), static_cast<std::size_t>(first.width)});
      std::vector<std::string> names;
      for (int k = 0; k < n; ++k) {
        const ResultPage::Map m = k == 0 ? std::move(first) : page.map(layer, k);
        for (std::size_t q = 0; q < P; ++q) bands.set(static_cast<std::size_t>(k) * P + q, m.values[q]);
        QString name = m.channel.isEmpty() ? ResultPage::layerName(layer) + (n > 1 ? QString::number(k) : QString()) : m.channel;
        names.push_back(name.remove('-').toStdString());  // dates as YYYYMMDD
      }
      OutputSet out;
      write_array(out, p, bands, doc_->geo(), names);
      out.commit();
    } else {
      throw InputError(p + ": expected a layer export ending in .png, " + data_extensions() + ", found another extension");
    }
  });
}

bool Exports::timeSeriesCsv(const QString& path) {
  return written(path, [&] {
    const auto dates = doc_->unknownDates();
    const auto result = doc_->result();
    if (!result || dates.empty())
      throw InputError(path.toStdString() + ": expected a solved time series (a design with dates) for the pins' series, found " +
                       (result ? "a design without dates" : "no solve"));
    if (doc_->pins().empty()) throw InputError(path.toStdString() + ": expected pinned pixels (--pin Y,X), found none");
    const std::size_t W = result->x.dim(2);
    const auto [ref_row, ref_col] = doc_->reference();
    QString text = tr("# CubeSolve time series of the pinned pixels, in %1; referenced to %2 and to the date %3 (0 there)\n")
                       .arg(doc_->unitLabel().isEmpty() ? tr("the cube's units") : doc_->unitLabel() == "rad" ? tr("rad (phase)")
                                                                                 : doc_->unitLabel() + tr(" (line-of-sight displacement)"))
                       .arg(ref_row >= 0 ? tr("the reference pixel %1_%2").arg(ref_row).arg(ref_col) : tr("no reference pixel"))
                       .arg(iso_day(doc_->refDate().toStdString()));
    if (const auto& area = doc_->referenceArea(); doc_->areaReferences(Document::AreaScope::Series))
      text += tr("# less the mean of the reference area, rows %1 to %2, columns %3 to %4, on each date\n").arg((*area)[0]).arg((*area)[2]).arg((*area)[1]).arg((*area)[3]);
    for (std::size_t q = 0; q < doc_->pins().size(); ++q)  // where each pin is, for a georeferenced cube
      if (const QString at = mapCoordinates(doc_->geo(), doc_->pins()[q].first, doc_->pins()[q].second); !at.isEmpty())
        text += QString("# %1_%2 at%3\n").arg(doc_->pins()[q].first).arg(doc_->pins()[q].second).arg(at);
    text += "date";
    for (const auto& [r, c] : doc_->pins()) text += QString(",%1_%2").arg(r).arg(c);
    text += "\n";
    std::vector<std::vector<double>> series;
    for (const auto& [r, c] : doc_->pins()) series.push_back(doc_->series(static_cast<std::size_t>(r) * W + static_cast<std::size_t>(c)));
    for (std::size_t i = 0; i < dates.size(); ++i) {
      text += iso_day(dates[i]);
      for (const auto& s : series) text += "," + (std::isfinite(s[i]) ? QString::number(s[i], 'g', 17) : QString());
      text += "\n";
    }
    write_whole(path, text.toUtf8());
  });
}

bool Exports::profileCsv(const QString& path) {
  return written(path, [&] {
    const ProfileChart* chart = sources_.result->profileChart();
    if (chart->lines().empty())
      throw InputError(path.toStdString() + ": expected a profile shown on a solved map (--profile Y0,X0:Y1,X1), found " +
                       (doc_->result() ? "none shown" : "no solve"));
    write_whole(path, chart->csv().toUtf8());
  });
}

bool Exports::chartFile(const QString& path, const QSize& size, int index) {
  return written(path, [&] {
    const auto charts = sources_.charts();
    const std::string p = path.toStdString();
    if (index < 0 || index >= static_cast<int>(charts.size())) throw InputError(p + ": expected a chart to export, found none shown");
    if (size.width() < 16 || size.height() < 16 || size.width() > 16384 || size.height() > 16384)
      throw InputError(p + ": expected a chart size from 16 × 16 to 16384 × 16384 pixels, found " + std::to_string(size.width()) +
                       " × " + std::to_string(size.height()));
    ChartView* chart = charts[static_cast<std::size_t>(index)].second;
    QByteArray bytes;
    if (has_extension(p, ".svg")) bytes = chart->svg(size);
    else if (has_extension(p, ".png")) bytes = png_bytes(chart->render(size));
    else throw InputError(p + ": expected a chart export ending in .png or .svg, found another extension");
    if (bytes.isEmpty()) throw IoError(p + ": cannot draw the chart (is its view shown?)");
    write_whole(path, bytes);
  });
}

int Exports::askScale(int height, int width, bool& ok) {
  // Maps are exported at data resolution: each value a block of pixels.
  return QInputDialog::getInt(window_, tr("Export scale"), tr("Pixels per data value (the map is %1 × %2 values)").arg(width).arg(height),
                              default_figure_scale(height, width), 1, 32, 1, &ok);
}

void Exports::askChart() {
  const auto charts = sources_.charts();
  if (charts.empty()) return emit failed(tr("Nothing to export: no chart is shown."));
  QStringList names;
  for (const auto& c : charts) names << c.first;
  bool ok = true;
  const QString name = names.size() == 1 ? names[0] : QInputDialog::getItem(window_, tr("Export chart"), tr("Chart"), names, 0, false, &ok);
  if (!ok) return;
  const int width = QInputDialog::getInt(window_, tr("Chart size"), tr("Width (pixels)"), 1200, 16, 16384, 100, &ok);
  if (!ok) return;
  const int height = QInputDialog::getInt(window_, tr("Chart size"), tr("Height (pixels)"), 800, 16, 16384, 100, &ok);
  if (!ok) return;
  const QString p = QFileDialog::getSaveFileName(window_, tr("Export chart"), "chart.png", tr("PNG images (*.png);;SVG drawings (*.svg)"));
  if (!p.isEmpty()) chartFile(p, QSize(width, height), static_cast<int>(names.indexOf(name)));
}

void Exports::addActions(QMenu* file) {
  file->addAction(tr("Export view as &PNG…"), QKeySequence(tr("Ctrl+E")), this, [this] {
    ImageView* map = sources_.map();
    bool ok = true;
    const int scale = map && map->imageHeight() > 0 ? askScale(map->imageHeight(), map->imageWidth(), ok) : 0;
    if (!ok) return;
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export view"), "view.png", tr("PNG images (*.png)"));
    if (!p.isEmpty()) viewPng(p, scale);
  });
  file->addAction(tr("Export solution and diagnostics (NPY or GeoTIFF)…"), QKeySequence(tr("Ctrl+S")), this, [this] {
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export solution"), "x.npy", array_filter());
    if (p.isEmpty()) return;
    const auto cube = doc_->cube();
    const double gib = cube ? 2.0 * static_cast<double>(cube->size()) * dtype_size(cube->dtype()) / (1 << 30) : 0;
    const auto answer = QMessageBox::question(
        window_, tr("Export solution"),
        tr("Besides x and its diagnostics (_nvalid, _rank, _rss, _status, _cond), write the model A·x (_model, gaps "
           "filled) and the residuals y − A·x (_residual)? Together they take %1 GiB.")
            .arg(gib, 0, 'f', 2),
        QMessageBox::Yes | QMessageBox::No | QMessageBox::Cancel, QMessageBox::No);
    if (answer != QMessageBox::Cancel) doc_->exportSolution(p, answer == QMessageBox::Yes);
  });
  file->addAction(tr("Export &chart (PNG or SVG)…"), this, [this] { askChart(); });
  file->addAction(tr("Export pinned pixels' &time series (CSV)…"), this, [this] {
    if (doc_->pins().empty() || doc_->unknownDates().empty())
      return emit failed(tr("Nothing to export: pin pixels of a solved time series first (right-click a map)."));
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export time series"), "timeseries.csv", tr("CSV files (*.csv)"));
    if (!p.isEmpty()) timeSeriesCsv(p);
  });
  file->addAction(tr("Export p&rofiles (CSV)…"), this, [this] {
    if (sources_.result->profileChart()->lines().empty())
      return emit failed(tr("Nothing to export: draw a profile on a solved map first (View > Draw a profile)."));
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export profiles"), "profiles.csv", tr("CSV files (*.csv)"));
    if (!p.isEmpty()) profileCsv(p);
  });
  file->addAction(tr("Export all channels as figures into a &folder…"), this, [this] {
    if (!doc_->result()) return emit failed(tr("Nothing to export: solve first."));
    bool ok = true;
    const int scale = askScale(static_cast<int>(doc_->result()->x.dim(1)), static_cast<int>(doc_->result()->x.dim(2)), ok);
    if (!ok) return;
    const QStringList formats{tr("PNG images"), tr("PDF pages (vector text)")}, ranges{tr("One colour range for all channels"),
                                                                                    tr("Each channel its own range")};
    const QString format = QInputDialog::getItem(window_, tr("Figure format"), tr("Format"), formats, 0, false, &ok);
    if (!ok) return;
    const QString range = QInputDialog::getItem(window_, tr("Colour range"), tr("Range"), ranges, 0, false, &ok);
    if (!ok) return;
    const QString d = QFileDialog::getExistingDirectory(window_, tr("Folder for channel figures"));
    if (!d.isEmpty()) channels(d, scale, format == formats[1] ? "pdf" : "png", range == ranges[1]);
  });
  file->addAction(tr("Export channels as an &animation (GIF or MP4)…"), this, [this] {
    if (!doc_->result()) return emit failed(tr("Nothing to export: solve first."));
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export animation"), "timeseries.gif",
                                                   tr("GIF animations (*.gif);;MP4 videos (*.mp4)"));
    if (!p.isEmpty()) animation(p, sources_.result->playback()->rate());
  });
}

}  // namespace cubesolve::ui
