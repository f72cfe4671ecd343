#pragma once
// A 2-D map drawn by VTK: colour-mapped values, a legend beside them (a
// colour bar with round ticks and marks where values go beyond its range,
// or a swatch per category), a title above, zoom (wheel) and pan (drag),
// hover and click reported as pixel coordinates, and an optional highlight
// overlay.

#include "vtkview.hpp"

#include "figure.hpp"

#include <QColor>
#include <QString>

#include <array>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

class vtkActor;
class vtkActor2D;
class vtkPolyData;
class vtkImageActor;
class vtkImageData;
class vtkLookupTable;

namespace cubesolve::ui {

class ImageView : public VtkView {
  Q_OBJECT
public:
  explicit ImageView(QWidget* parent = nullptr);

  /// Shows `values` (height x width, row-major; NaN drawn grey) as `style` says.
  void setImage(std::vector<double> values, int height, int width, const MapStyle& style);
  /// Shows no map, only `message` where the title goes.
  void clear(const QString& message);
  /// Pixels with a non-zero entry are drawn highlighted; empty removes it.
  void setOverlay(const std::vector<std::uint8_t>& mask);
  bool hasOverlay() const { return !overlay_mask_.empty(); }
  /// Marks one pixel (row, col) as the selection; negative hides the mark.
  void setMarker(int row, int col);
  /// The kinds of marks drawn over the map, each one entry of a table (its
  /// shape); later kinds are drawn over earlier ones, each with a dark
  /// outline so that it shows on light and dark colours alike.
  enum class Mark { Reference, Pin, Selection };
  struct Marker {
    int row = -1, col = -1;
    QColor color;
  };
  /// The marks of one kind (none: empty).
  void setMarks(Mark kind, std::vector<Marker> marks);
  const std::vector<Marker>& marks(Mark kind) const { return marks_[static_cast<std::size_t>(kind)]; }
  /// Polylines over the map (vertices (row, col)), each in its colour over a
  /// dark outline, above the marks' picture.
  struct Line {
    std::vector<std::array<double, 2>> vertices;
    QColor color;
  };
  void setLines(std::vector<Line> lines);
  const std::vector<Line>& lines() const { return lines_; }
  /// Draws a line with the mouse: each click adds a vertex (at the pixel's
  /// centre), a double click or Enter ends it (lineDrawn(), with two vertices
  /// or more), Esc cancels it.
  void beginLine();
  /// Draws a rectangle with the mouse: press at one corner, release at the
  /// other (rectangleDrawn()); Esc cancels it.
  void beginRectangle();
  void cancelLine();
  bool drawingLine() const { return drawing_; }
  void resetCamera();
  /// What the view shows: the data point at its centre and the half height
  /// in data rows (the zoom). setCamera() moves there without cameraChanged().
  struct Camera {
    double x = 0, y = 0, scale = 1;
  };
  Camera camera() const;
  void setCamera(const Camera& camera);
  /// Whether the overview of the whole map (the minimap, lower left, the
  /// part in view outlined) is shown: while the view shows part of the map.
  bool minimapShown() const;
  /// The part in view as the minimap outlines it: the first and last row
  /// and column (fractional, may lie beyond the map).
  std::array<double, 4> viewedPart() const;
  /// Where the minimap lies on the widget (logical pixels); empty when hidden.
  QRect minimapRect() const;
  /// What VTK draws of the map: every `step`-th row and column of rows
  /// [r0, r1) and columns [c0, c1), a sample for about each screen pixel.
  /// The whole map where it has at most kFullPixels and no more rows in
  /// view than about 1.5 the screen's; else an overview of the part in view
  /// (and half a view about it), full resolution once zoomed in that far,
  /// as a GIS viewer's pyramids: a map of any size costs the picture's
  /// memory and colour mapping of about the screen's.
  struct Picture {
    int r0 = 0, c0 = 0, r1 = 0, c1 = 0, step = 0;
  };
  const Picture& picture() const { return shown_; }
  static constexpr std::size_t kFullPixels = std::size_t{1} << 22;
  int imageHeight() const { return height_; }
  int imageWidth() const { return width_; }
  double valueAt(int row, int col) const;
  const std::vector<double>& values() const { return values_; }
  const MapStyle& style() const { return style_; }
  /// Whether some values lie below / above the scale's range (clipped to its ends).
  bool clippedBelow() const { return extent_.below; }
  bool clippedAbove() const { return extent_.above; }
  /// The map as a figure at data resolution (render_figure).
  QImage figure(int scale) const { return render_figure(values_, height_, width_, style_, scale); }
  /// The pixel under a widget position, or false when outside the image.
  bool pixelAt(const QPoint& pos, int& row, int& col) const;

signals:
  void pixelClicked(int row, int col);
  void pixelHovered(int row, int col, double value);
  /// A right click on a pixel, at `global` screen coordinates.
  void pixelMenuRequested(int row, int col, const QPoint& global);
  /// An arrow key asked to move the selection by (rows, columns).
  void stepRequested(int rows, int cols);
  /// The user panned or zoomed.
  void cameraChanged();
  /// A line drawn after beginLine() was ended; `vertices` (row, col).
  void lineDrawn(const std::vector<std::array<double, 2>>& vertices);
  /// A rectangle drawn after beginRectangle(): its corners' rows and columns.
  void rectangleDrawn(int r0, int c0, int r1, int c1);

protected:
  void mousePressEvent(QMouseEvent* e) override;
  void mouseMoveEvent(QMouseEvent* e) override;
  void mouseReleaseEvent(QMouseEvent* e) override;
  void mouseDoubleClickEvent(QMouseEvent* e) override;
  bool event(QEvent* e) override;
  void wheelEvent(QWheelEvent* e) override;
  void keyPressEvent(QKeyEvent* e) override;
  void contextMenuEvent(QContextMenuEvent* e) override;
  void layoutViewports(int w, int h) override;

private:
  static constexpr int kTitleHeight = 30;  // pixels above the map
  void updateOverlay();
  /// The picture for the part in view (picture()), made again only where
  /// that part or its resolution is no longer the one drawn.
  void updatePicture();
  /// The lines' geometry, the one being drawn (to `draft_end_`) included.
  void updateLines();
  /// The minimap's outline of the part in view, and whether it shows.
  void updateMinimap();

  void endLine();
  /// The data coordinates (column, row from the bottom) under a widget position.
  std::pair<double, double> worldAt(const QPointF& pos) const;

  std::vector<double> values_;
  MapStyle style_;
  std::vector<std::uint8_t> overlay_mask_;
  std::array<std::vector<Marker>, 3> marks_;
  std::vector<Line> lines_;
  std::vector<std::array<double, 2>> draft_;  // the line being drawn
  std::optional<std::array<double, 2>> draft_end_;  // where the pointer is while drawing
  bool drawing_ = false, rectangle_ = false, swallow_release_ = false;
  int height_ = 0, width_ = 0;
  bool camera_set_ = false, dragging_ = false, moved_ = false;
  Extent extent_;
  QSize legend_size_, header_size_;
  QSize laid_out_;  // the size the viewports were last laid out for  // of the pictures shown (device pixels); empty: to paint
  QPoint last_;
  vtkSmartPointer<vtkRenderer> legend_, header_, minimap_;
  vtkSmartPointer<vtkPolyData> viewed_;  // the outline of the part in view, on the minimap
  vtkSmartPointer<vtkImageData> data_, overlay_data_;
  vtkSmartPointer<vtkImageData> overview_;  // the minimap's picture of a large map: all of it, decimated
  vtkSmartPointer<vtkImageActor> minimap_picture_;
  Picture shown_;
  vtkSmartPointer<vtkImageActor> actor_, overlay_;
  vtkSmartPointer<vtkPolyData> lines_data_, outline_data_;
  vtkSmartPointer<vtkActor> lines_actor_, outline_actor_;
  vtkSmartPointer<vtkLookupTable> lut_;
  vtkSmartPointer<vtkImageData> legend_image_, header_image_;
  vtkSmartPointer<vtkActor2D> legend_actor_, header_actor_;
};

}  // namespace cubesolve::ui
