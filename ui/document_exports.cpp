// The document's exports that run on the worker thread: the solution and
// its diagnostics as data, figures of maps.
#include "document.hpp"

#include "animation.hpp"
#include "figure.hpp"

#include <cubesolve/error.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/workflow/results.hpp>

#include <QDir>
#include <QFileInfo>

namespace cubesolve::ui {

void Document::exportSolution(const QString& path, bool cubes) {
  if (!result_) return fail(tr("Nothing to export: solve first."));
  QString base = path;
  const QString ext = QFileInfo(path).suffix();
  base.chop(static_cast<int>(ext.size()) + 1);
  ResultPaths paths;
  paths.x = path.toStdString();
  paths.diagnostics = base.toStdString();
  paths.x_names = xNames();  // GeoTIFF bands named by date or term, and by pair
  paths.y_names = pair_names(pairs_);
  paths.std_error = !result_->std_error.empty();
  paths.covariance = !result_->covariance.empty();  // the diagnostics the result holds, as the CLI writes them
  paths.temporal_coherence = !result_->temporal_coherence.empty();
  // How it was made, in the CLI's words (a stack's design is its own "sbas").
  paths.provenance = run_provenance(cube_name_.toStdString(), {isStack() ? "sbas" : design_name_.toStdString(), "", ""},
                                    use_weights_ && weights_ && !isStack() ? weights_name_.toStdString() : "", result_options_,
                                    &input_options_, "");
  if (cubes) {
    paths.model = (base + "_model." + ext).toStdString();
    paths.residual = (base + "_residual." + ext).toStdString();
  }
  const std::vector<std::string> inputs{cube_name_.toStdString(), design_name_.toStdString(), weights_name_.toStdString()};
  const auto result = result_;
  const auto design = design_;
  const auto cube = cube_;
  const GeoReference geo = geo_;
  const auto stamp = cube_stamp_;
  worker_->run<QStringList>(
      "export solution",
      [paths, inputs, result, design, cube, geo, stamp](const Progress& progress) {
        paths.check(inputs);
        if (stamp) check_unchanged(inputs[0], *stamp);  // a cube on disk is read for the model and residuals
        QStringList written;
        for (const auto& p : write_result(paths, *result, *design, *cube, geo, progress)) written << QString::fromStdString(p);
        return written;
      },
      [this](QStringList written) { emit exported(written); }, [this](const QString& m, int code) { fail(m, code); });
}

void Document::exportFigures(const QString& folder, std::vector<Figure> figures, const QString& format, int scale) {
  const QDir dir(folder);
  auto shared = std::make_shared<std::vector<Figure>>(std::move(figures));
  worker_->run<QStringList>(
      "export channels",
      [shared, dir, format, scale](const Progress& progress) {
        OutputSet out;
        for (const Figure& f : *shared) {
          if (!progress(static_cast<double>(&f - shared->data()) / static_cast<double>(shared->size()))) throw Cancelled();
          const QString path = dir.filePath(f.name + "." + format);
          const QByteArray bytes =
              figure_bytes(f.values, f.height, f.width, f.style, scale > 0 ? scale : default_figure_scale(f.height, f.width), format);
          if (bytes.isEmpty()) throw IoError(path.toStdString() + ": cannot encode the " + format.toUpper().toStdString() + " figure");
          out.add(path.toStdString()).write(bytes.constData(), bytes.size());
        }
        QStringList written;
        for (const auto& p : out.paths()) written << QString::fromStdString(p);
        out.commit();
        return written;
      },
      [this](QStringList written) { emit exported(written); }, [this](const QString& m, int code) { fail(m, code); });
}

void Document::exportAnimation(const QString& path, std::vector<Figure> figures, double fps, int scale) {
  auto shared = std::make_shared<std::vector<Figure>>(std::move(figures));
  worker_->run<QStringList>(
      "export animation",
      [shared, path, fps, scale](const Progress& progress) {
        std::vector<QImage> frames;
        for (const Figure& f : *shared) {
          if (!progress(0.9 * static_cast<double>(frames.size()) / static_cast<double>(shared->size()))) throw Cancelled();
          frames.push_back(render_figure(f.values, f.height, f.width, f.style, scale > 0 ? scale : default_figure_scale(f.height, f.width)));
        }
        OutputSet out;
        const std::string p = path.toStdString();
        if (has_extension(p, ".mp4")) write_mp4(out.add_external(p), frames, fps, p);
        else write_gif(out.add(p), frames, fps, p);
        out.commit();
        return QStringList{path};
      },
      [this](QStringList written) { emit exported(written); }, [this](const QString& m, int code) { fail(m, code); });
}

}  // namespace cubesolve::ui
