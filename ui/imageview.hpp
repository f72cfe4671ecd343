#pragma once
// A 2-D map drawn by VTK: colour-mapped values with a colour bar, zoom
// (wheel) and pan (drag), hover and click reported as pixel coordinates, and
// an optional highlight overlay.

#include "vtkview.hpp"

#include <cubesolve/image/image.hpp>

#include <QString>

#include <cstdint>
#include <vector>

class vtkImageActor;
class vtkImageData;
class vtkLookupTable;
class vtkScalarBarActor;
class vtkTextActor;

namespace cubesolve::ui {

class ImageView : public VtkView {
  Q_OBJECT
public:
  explicit ImageView(QWidget* parent = nullptr);

  /// Shows `values` (height x width, row-major; NaN drawn grey) mapped
  /// through `map` over [lo, hi].
  void setImage(std::vector<double> values, int height, int width, Colormap map, double lo, double hi,
                const QString& title);
  /// Pixels with a non-zero entry are drawn highlighted; empty removes it.
  void setOverlay(const std::vector<std::uint8_t>& mask);
  /// Marks one pixel (row, col); negative hides the mark.
  void setMarker(int row, int col);
  void resetCamera();

  int imageHeight() const { return height_; }
  int imageWidth() const { return width_; }
  double valueAt(int row, int col) const;
  /// The pixel under a widget position, or false when outside the image.
  bool pixelAt(const QPoint& pos, int& row, int& col) const;

signals:
  void pixelClicked(int row, int col);
  void pixelHovered(int row, int col, double value);

protected:
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;

private:
  void updateOverlay();

  std::vector<double> values_;
  std::vector<std::uint8_t> overlay_mask_;
  int height_ = 0, width_ = 0, marker_row_ = -1, marker_col_ = -1;
  bool camera_set_ = false, dragging_ = false, moved_ = false;
  QPoint last_;
  vtkSmartPointer<vtkImageData> data_, overlay_data_;
  vtkSmartPointer<vtkImageActor> actor_, overlay_;
  vtkSmartPointer<vtkLookupTable> lut_;
  vtkSmartPointer<vtkScalarBarActor> bar_;
  vtkSmartPointer<vtkTextActor> title_;
};

}  // namespace cubesolve::ui
