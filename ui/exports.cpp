#include "exports.hpp"

#include "document.hpp"
#include "imageview.hpp"

#include <cubesolve/io/files.hpp>
#include <cubesolve/io/raster.hpp>

#include <QFileDialog>
#include <QFileInfo>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>

namespace cubesolve::ui {

Exports::Exports(Document* doc, QWidget* window, Sources sources)
    : QObject(window), doc_(doc), window_(window), sources_(std::move(sources)) {}

bool Exports::viewPng(const QString& path, int scale) {
  for (const QString& input : {doc_->cubeName(), doc_->designName(), doc_->weightsName()})
    if (!input.isEmpty() && same_file(path.toStdString(), file_of(input.toStdString()))) {
      emit failed(tr("%1: expected the image apart from the inputs, found it is %2, which is open").arg(path, input));
      return false;
    }
  ImageView* map = sources_.map();
  const QImage image =
      sources_.picture(map && map->imageHeight() > 0 && scale <= 0 ? default_figure_scale(map->imageHeight(), map->imageWidth()) : scale);
  if (image.isNull()) {
    emit failed(tr("%1: nothing to export: the view is empty").arg(path));
    return false;
  }
  QSaveFile file(path);  // the whole image or none
  const QByteArray png = png_bytes(image);
  if (png.isEmpty() || !file.open(QIODevice::WriteOnly) || file.write(png) != png.size() || !file.commit()) {
    emit failed(tr("%1: cannot write the PNG image: %2").arg(path, file.errorString()));
    return false;
  }
  emit message(tr("Wrote %1 (%2 × %3 pixels)").arg(path).arg(image.width()).arg(image.height()), 10000);
  emit exported({path});
  return true;
}

void Exports::channelsPng(const QString& folder, int scale) {
  const auto design = doc_->design();
  if (!design || !doc_->result()) return emit failed(tr("Nothing to export: solve first."));
  auto [style, auto_range] = sources_.channel_style();
  doc_->exportChannels(folder, style, auto_range, scale);
}

int Exports::askScale(int height, int width, bool& ok) {
  // Maps are exported at data resolution: each value a block of pixels.
  return QInputDialog::getInt(window_, tr("Export scale"), tr("Pixels per data value (the map is %1 × %2 values)").arg(width).arg(height),
                              default_figure_scale(height, width), 1, 32, 1, &ok);
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
    const QString p = QFileDialog::getSaveFileName(window_, tr("Export solution"), "x.npy",
                                                   raster_support() ? tr("NumPy arrays (*.npy);;GeoTIFF (*.tif)") : tr("NumPy arrays (*.npy)"));
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
  file->addAction(tr("Export all channels as PNG into a &folder…"), this, [this] {
    if (!doc_->result()) return emit failed(tr("Nothing to export: solve first."));
    bool ok = true;
    const int scale = askScale(static_cast<int>(doc_->result()->x.dim(1)), static_cast<int>(doc_->result()->x.dim(2)), ok);
    if (!ok) return;
    const QString d = QFileDialog::getExistingDirectory(window_, tr("Folder for channel images"));
    if (!d.isEmpty()) channelsPng(d, scale);
  });
}

}  // namespace cubesolve::ui
