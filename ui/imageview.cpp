#include "imageview.hpp"

#include <QMouseEvent>
#include <QWheelEvent>

#include <vtkCamera.h>
#include <vtkDoubleArray.h>
#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkImageMapper3D.h>
#include <vtkImageProperty.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkRenderer.h>
#include <vtkScalarBarActor.h>
#include <vtkTextActor.h>
#include <vtkTextProperty.h>
#include <vtkUnsignedCharArray.h>

#include <cmath>

namespace cubesolve::ui {

ImageView::ImageView(QWidget* parent) : VtkView(parent) {
  setMouseTracking(true);
  data_ = vtkSmartPointer<vtkImageData>::New();
  lut_ = vtkSmartPointer<vtkLookupTable>::New();
  lut_->SetNumberOfTableValues(256);
  lut_->SetNanColor(0.5, 0.5, 0.5, 1.0);
  actor_ = vtkSmartPointer<vtkImageActor>::New();
  actor_->GetMapper()->SetInputData(data_);
  actor_->GetProperty()->SetLookupTable(lut_);
  actor_->GetProperty()->UseLookupTableScalarRangeOn();
  actor_->GetProperty()->SetInterpolationTypeToNearest();
  actor_->VisibilityOff();
  renderer()->AddActor(actor_);

  overlay_data_ = vtkSmartPointer<vtkImageData>::New();
  overlay_ = vtkSmartPointer<vtkImageActor>::New();
  overlay_->GetMapper()->SetInputData(overlay_data_);
  overlay_->GetProperty()->SetInterpolationTypeToNearest();
  overlay_->SetPosition(0, 0, 0.1);
  overlay_->VisibilityOff();
  renderer()->AddActor(overlay_);

  bar_ = vtkSmartPointer<vtkScalarBarActor>::New();
  bar_->SetLookupTable(lut_);
  bar_->SetNumberOfLabels(5);
  bar_->SetWidth(0.08);
  bar_->SetHeight(0.8);
  bar_->SetPosition(0.9, 0.1);
  bar_->GetLabelTextProperty()->SetFontSize(12);
  bar_->VisibilityOff();
  renderer()->AddActor2D(bar_);

  title_ = vtkSmartPointer<vtkTextActor>::New();
  title_->GetTextProperty()->SetFontSize(14);
  title_->SetPosition(8, 8);
  renderer()->AddActor2D(title_);
  renderer()->GetActiveCamera()->ParallelProjectionOn();
}

void ImageView::setImage(std::vector<double> values, int height, int width, Colormap map, double lo, double hi,
                         const QString& title) {
  const bool same_shape = height == height_ && width == width_;
  values_ = std::move(values);
  height_ = height;
  width_ = width;
  data_->SetDimensions(width, height, 1);
  vtkNew<vtkDoubleArray> scalars;
  scalars->SetNumberOfTuples(static_cast<vtkIdType>(values_.size()));
  // VTK's rows go up; the map's first row is drawn at the top.
  for (int r = 0; r < height; ++r)
    for (int c = 0; c < width; ++c)
      scalars->SetValue(static_cast<vtkIdType>((height - 1 - r) * width + c), values_[static_cast<std::size_t>(r * width + c)]);
  data_->GetPointData()->SetScalars(scalars);
  data_->Modified();
  const std::uint8_t* table = colormap_table(map);
  for (int i = 0; i < 256; ++i) lut_->SetTableValue(i, table[3 * i] / 255.0, table[3 * i + 1] / 255.0, table[3 * i + 2] / 255.0);
  lut_->SetRange(lo, hi > lo ? hi : lo + 1);
  lut_->Build();
  lut_->Modified();
  title_->SetInput(title.toUtf8().constData());
  actor_->VisibilityOn();
  bar_->VisibilityOn();
  if (!same_shape) overlay_mask_.clear();
  updateOverlay();
  if (!same_shape || !camera_set_) resetCamera();
  update();
}

void ImageView::resetCamera() {
  if (height_ == 0) return;
  auto* cam = renderer()->GetActiveCamera();
  const double cx = (width_ - 1) / 2.0, cy = (height_ - 1) / 2.0;
  cam->SetFocalPoint(cx, cy, 0);
  cam->SetPosition(cx, cy, 1000);
  cam->SetViewUp(0, 1, 0);
  const double aspect = height() > 0 ? static_cast<double>(width()) * 0.85 / height() : 1.0;
  cam->SetParallelScale(0.52 * std::max<double>(height_, width_ / std::max(aspect, 0.1)));
  renderer()->ResetCameraClippingRange();
  camera_set_ = true;
  update();
}

void ImageView::setOverlay(const std::vector<std::uint8_t>& mask) {
  overlay_mask_ = mask;
  updateOverlay();
  update();
}

void ImageView::setMarker(int row, int col) {
  marker_row_ = row;
  marker_col_ = col;
  updateOverlay();
  update();
}

void ImageView::updateOverlay() {
  const bool has_mask = overlay_mask_.size() == static_cast<std::size_t>(height_ * width_) && height_ > 0;
  const bool has_marker = marker_row_ >= 0 && marker_row_ < height_ && marker_col_ >= 0 && marker_col_ < width_;
  if (!has_mask && !has_marker) {
    overlay_->VisibilityOff();
    return;
  }
  overlay_data_->SetDimensions(width_, height_, 1);
  vtkNew<vtkUnsignedCharArray> rgba;
  rgba->SetNumberOfComponents(4);
  rgba->SetNumberOfTuples(static_cast<vtkIdType>(height_) * width_);
  for (int r = 0; r < height_; ++r)
    for (int c = 0; c < width_; ++c) {
      const vtkIdType id = static_cast<vtkIdType>((height_ - 1 - r) * width_ + c);
      const bool hi = has_mask && overlay_mask_[static_cast<std::size_t>(r * width_ + c)];
      const bool mark = has_marker && ((r == marker_row_ && std::abs(c - marker_col_) <= 2) ||
                                       (c == marker_col_ && std::abs(r - marker_row_) <= 2));
      static const unsigned char marker[4] = {255, 255, 255, 255}, highlight[4] = {255, 0, 255, 170}, none[4] = {0, 0, 0, 0};
      const unsigned char* px = mark ? marker : hi ? highlight : none;
      rgba->SetTypedTuple(id, px);
    }
  overlay_data_->GetPointData()->SetScalars(rgba);
  overlay_data_->Modified();
  overlay_->VisibilityOn();
}

double ImageView::valueAt(int row, int col) const {
  if (row < 0 || col < 0 || row >= height_ || col >= width_) return std::nan("");
  return values_[static_cast<std::size_t>(row * width_ + col)];
}

bool ImageView::pixelAt(const QPoint& pos, int& row, int& col) const {
  if (height_ == 0) return false;
  const qreal ratio = devicePixelRatioF();
  const double dx = pos.x() * ratio, dy = (height() - pos.y()) * ratio;
  renderer()->SetDisplayPoint(dx, dy, 0);
  renderer()->DisplayToWorld();
  double world[4];
  renderer()->GetWorldPoint(world);
  if (world[3] != 0) {
    world[0] /= world[3];
    world[1] /= world[3];
  }
  col = static_cast<int>(std::lround(world[0]));
  row = height_ - 1 - static_cast<int>(std::lround(world[1]));
  return row >= 0 && col >= 0 && row < height_ && col < width_;
}

void ImageView::mousePressEvent(QMouseEvent* e) {
  dragging_ = true;
  moved_ = false;
  last_ = e->pos();
}

void ImageView::mouseMoveEvent(QMouseEvent* e) {
  int row, col;
  if (pixelAt(e->pos(), row, col)) emit pixelHovered(row, col, valueAt(row, col));
  if (!dragging_) return;
  const QPoint d = e->pos() - last_;
  if (d.manhattanLength() > 2) moved_ = true;
  if (!moved_) return;
  auto* cam = renderer()->GetActiveCamera();
  const double scale = 2.0 * cam->GetParallelScale() / std::max(1, height());
  double f[3], p[3];
  cam->GetFocalPoint(f);
  cam->GetPosition(p);
  f[0] -= d.x() * scale;
  p[0] -= d.x() * scale;
  f[1] += d.y() * scale;
  p[1] += d.y() * scale;
  cam->SetFocalPoint(f);
  cam->SetPosition(p);
  last_ = e->pos();
  update();
}

void ImageView::mouseReleaseEvent(QMouseEvent* e) {
  dragging_ = false;
  int row, col;
  if (!moved_ && pixelAt(e->pos(), row, col)) emit pixelClicked(row, col);
}

void ImageView::wheelEvent(QWheelEvent* e) {
  auto* cam = renderer()->GetActiveCamera();
  cam->SetParallelScale(cam->GetParallelScale() * (e->angleDelta().y() > 0 ? 0.8 : 1.25));
  update();
}

}  // namespace cubesolve::ui
