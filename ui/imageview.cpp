#include "imageview.hpp"

#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <vtkCamera.h>
#include <vtkFloatArray.h>
#include <vtkImageActor.h>
#include <vtkImageData.h>
#include <vtkImageMapper3D.h>
#include <vtkImageProperty.h>
#include <vtkLookupTable.h>
#include <vtkPointData.h>
#include <vtkRenderer.h>
#include <vtkActor.h>
#include <vtkActor2D.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkPolyDataMapper.h>
#include <vtkProperty.h>
#include <vtkImageMapper.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

namespace {
const QColor kPanel(31, 31, 36), kText(235, 235, 235);

/// Shows `image` (device pixels) through `data` at the lower left of its renderer.
void show_image(const QImage& image, vtkImageData* data) {
  const QImage rgba = image.convertToFormat(QImage::Format_RGBA8888);
  data->SetDimensions(rgba.width(), rgba.height(), 1);
  vtkNew<vtkUnsignedCharArray> pixels;
  pixels->SetNumberOfComponents(4);
  pixels->SetNumberOfTuples(static_cast<vtkIdType>(rgba.width()) * rgba.height());
  auto* out = pixels->GetPointer(0);
  const auto row_bytes = static_cast<std::size_t>(rgba.width()) * 4;
  for (int r = 0; r < rgba.height(); ++r)  // VTK's rows go up
    std::copy_n(rgba.constScanLine(rgba.height() - 1 - r), row_bytes, out + static_cast<std::size_t>(r) * row_bytes);
  data->GetPointData()->SetScalars(pixels);
  data->Modified();
}

/// A picture in device pixels painted in widget units.
QImage canvas(QSize device_size, qreal ratio) {
  QImage img(device_size, QImage::Format_RGB32);
  img.setDevicePixelRatio(ratio);
  img.fill(kPanel);
  return img;
}
/// Every `step`-th row and column of rows [r0, r1) and columns [c0, c1) of
/// a map (height x width) into `image`, placed where those pixels are (VTK's
/// y going up from the last row; each sample drawn over its step x step).
void fill_picture(vtkImageData* image, const std::vector<double>& values, int height, int width, const ImageView::Picture& p) {
  const int rows = (p.r1 - p.r0 + p.step - 1) / p.step, cols = (p.c1 - p.c0 + p.step - 1) / p.step;
  image->SetDimensions(cols, rows, 1);
  image->SetSpacing(p.step, p.step, 1);
  image->SetOrigin(p.c0, height - 1 - p.r0 - (rows - 1) * p.step, 0);
  vtkNew<vtkFloatArray> scalars;  // (what the colours need: half the memory of doubles)
  scalars->SetNumberOfTuples(static_cast<vtkIdType>(rows) * cols);
  for (int k = 0; k < rows; ++k) {
    const double* row = values.data() + static_cast<std::size_t>(p.r0 + k * p.step) * static_cast<std::size_t>(width) + p.c0;
    for (int i = 0; i < cols; ++i)
      scalars->SetValue(static_cast<vtkIdType>(rows - 1 - k) * cols + i, static_cast<float>(row[static_cast<std::size_t>(i) * p.step]));
  }
  image->GetPointData()->SetScalars(scalars);
  image->Modified();
}
}  // namespace

// On screen, a map is drawn without multisampling: it smooths nothing of the
// map's texture, only the edges of the profiles' strips, and took half of
// each frame where the drawing is done in software. Figures keep it.
ImageView::ImageView(QWidget* parent) : VtkView(parent, 0) {
  setMouseTracking(true);
  setFocusPolicy(Qt::ClickFocus);  // arrow keys then move the selection
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

  // Lines (profiles) over the marks: strips a few screen pixels wide (made
  // again when the zoom changes; OpenGL's core profile draws no wide lines),
  // each in its colour over a wider dark strip, so that they show on any colours.
  for (auto& [poly, actor] : {std::pair{&lines_data_, &lines_actor_}, std::pair{&outline_data_, &outline_actor_}}) {
    *poly = vtkSmartPointer<vtkPolyData>::New();
    *actor = vtkSmartPointer<vtkActor>::New();
    vtkNew<vtkPolyDataMapper> mapper;
    mapper->SetInputData(*poly);
    mapper->SetScalarModeToUseCellData();
    mapper->SetScalarVisibility(actor == &lines_actor_);
    (*actor)->SetMapper(mapper);
    (*actor)->GetProperty()->SetColor(0.08, 0.08, 0.08);
    (*actor)->GetProperty()->LightingOff();
    (*actor)->SetPosition(0, 0, actor == &lines_actor_ ? 0.3 : 0.2);
    (*actor)->VisibilityOff();
    renderer()->AddActor(*actor);
  }

  // The legend and the title have renderers of their own beside and above
  // the map, so that neither covers it; both are pictures painted by the
  // code that paints exported figures.
  legend_ = vtkSmartPointer<vtkRenderer>::New();
  header_ = vtkSmartPointer<vtkRenderer>::New();
  legend_image_ = vtkSmartPointer<vtkImageData>::New();
  header_image_ = vtkSmartPointer<vtkImageData>::New();
  legend_actor_ = vtkSmartPointer<vtkActor2D>::New();
  header_actor_ = vtkSmartPointer<vtkActor2D>::New();
  for (auto [r, image, actor] : {std::tuple{legend_.Get(), legend_image_.Get(), legend_actor_.Get()},
                                 std::tuple{header_.Get(), header_image_.Get(), header_actor_.Get()}}) {
    r->SetBackground(kPanel.redF(), kPanel.greenF(), kPanel.blueF());
    r->InteractiveOff();
    vtkNew<vtkImageMapper> mapper;
    mapper->SetInputData(image);
    mapper->SetColorWindow(255);
    mapper->SetColorLevel(127.5);
    actor->SetMapper(mapper);
    actor->SetPosition(0, 0);
    actor->VisibilityOff();
    r->AddActor2D(actor);
    addRenderer(r);
  }
  // The minimap: the whole map, its lines and marks again, in a corner of
  // the view over it (a renderer of its own in a layer above), with the part
  // in view outlined; shown while the view shows part of the map.
  minimap_ = vtkSmartPointer<vtkRenderer>::New();
  minimap_->SetLayer(1);
  minimap_->SetPreserveColorBuffer(false);
  minimap_->SetBackground(kPanel.redF(), kPanel.greenF(), kPanel.blueF());
  minimap_->InteractiveOff();
  minimap_->GetActiveCamera()->ParallelProjectionOn();
  overview_ = vtkSmartPointer<vtkImageData>::New();
  minimap_picture_ = vtkSmartPointer<vtkImageActor>::New();  // (its own picture: the view's may be part of the map)
  minimap_picture_->GetMapper()->SetInputData(data_);
  minimap_picture_->SetProperty(actor_->GetProperty());
  minimap_->AddActor(minimap_picture_);
  vtkNew<vtkImageActor> marks;
  marks->SetMapper(overlay_->GetMapper());
  marks->SetProperty(overlay_->GetProperty());
  marks->SetPosition(overlay_->GetPosition());
  minimap_->AddActor(marks);
  vtkNew<vtkActor> lines;
  lines->SetMapper(lines_actor_->GetMapper());
  lines->SetProperty(lines_actor_->GetProperty());
  lines->SetPosition(lines_actor_->GetPosition());
  minimap_->AddActor(lines);
  viewed_ = vtkSmartPointer<vtkPolyData>::New();
  vtkNew<vtkPolyDataMapper> viewed_mapper;
  viewed_mapper->SetInputData(viewed_);
  vtkNew<vtkActor> viewed;
  viewed->SetMapper(viewed_mapper);
  viewed_mapper->SetScalarModeToUseCellData();
  viewed->GetProperty()->LightingOff();
  viewed->SetPosition(0, 0, 0.5);
  minimap_->AddActor(viewed);
  minimap_->DrawOff();
  addRenderer(minimap_);
  renderer()->GetActiveCamera()->ParallelProjectionOn();
}

void ImageView::layoutViewports(int w, int h) {
  if (QSize(w, h) != laid_out_) {  // the lines' width is in screen pixels; the part in view changes with the shape
    laid_out_ = QSize(w, h);
    updateLines();
    updatePicture();
    updateMinimap();
  }
  const qreal ratio = devicePixelRatioF();
  const int legend_w = static_cast<int>(kLegendWidth * ratio), title_h = static_cast<int>(kTitleHeight * ratio);
  const double lx = w > 0 ? std::max(0.5, 1.0 - static_cast<double>(legend_w) / w) : 0.85;
  const double ty = h > 0 ? std::max(0.5, 1.0 - static_cast<double>(title_h) / h) : 0.95;
  renderer()->SetViewport(0, 0, lx, ty);
  if (const QRect m = minimapRect(); !m.isEmpty() && w > 0 && h > 0)  // (VTK's y goes up)
    minimap_->SetViewport(m.left() * ratio / w, (height() - m.bottom() - 1) * ratio / h, (m.right() + 1) * ratio / w, (height() - m.top()) * ratio / h);
  legend_->SetViewport(lx, 0, 1, ty);
  header_->SetViewport(0, ty, 1, 1);
  const QSize legend(w - static_cast<int>(lx * w), static_cast<int>(ty * h)), header(w, h - static_cast<int>(ty * h));
  legend_actor_->SetVisibility(height_ > 0);
  if (height_ > 0 && legend != legend_size_ && !legend.isEmpty()) {
    QImage img = canvas(legend, ratio);
    QPainter p(&img);
    paint_legend(p, QRect(0, 0, static_cast<int>(legend.width() / ratio), static_cast<int>(legend.height() / ratio)), style_,
                 extent_, kText);
    p.end();
    show_image(img, legend_image_);
    legend_actor_->VisibilityOn();
    legend_size_ = legend;
  }
  if (header != header_size_ && !header.isEmpty()) {
    QImage img = canvas(header, ratio);
    QPainter p(&img);
    QFont font = p.font();
    font.setPixelSize(15);
    p.setFont(font);
    p.setPen(kText);
    const QRect box(8, 0, static_cast<int>(header.width() / ratio) - 16, static_cast<int>(header.height() / ratio));
    p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft, QFontMetrics(font).elidedText(style_.title, Qt::ElideRight, box.width()));
    p.end();
    show_image(img, header_image_);
    header_actor_->VisibilityOn();
    header_size_ = header;
  }
}

void ImageView::setImage(std::vector<double> values, int height, int width, const MapStyle& style) {
  const bool same_shape = height == height_ && width == width_;
  values_ = std::move(values);
  style_ = style;
  height_ = height;
  width_ = width;
  shown_ = {};  // (drawn again below, once the camera is set)
  const bool large = static_cast<std::size_t>(height) * static_cast<std::size_t>(width) > kFullPixels;
  if (large) {  // the minimap's overview: about 512 samples across
    const int step = std::max(1, (std::max(height, width) + 511) / 512);
    fill_picture(overview_, values_, height, width, {0, 0, height, width, step});
  }
  minimap_picture_->GetMapper()->SetInputData(large ? overview_.Get() : data_.Get());
  const std::uint8_t* table = colormap_table(style.scale.map);
  for (int i = 0; i < 256; ++i) {
    const int k = style.scale.reversed ? 255 - i : i;
    lut_->SetTableValue(i, table[3 * k] / 255.0, table[3 * k + 1] / 255.0, table[3 * k + 2] / 255.0);
  }
  const double lo = style.scale.lo, hi = style.scale.hi > lo ? style.scale.hi : lo + 1;
  lut_->SetRange(lo, hi);
  lut_->Build();
  lut_->Modified();
  extent_ = extent_of(values_, style.scale);
  legend_size_ = header_size_ = QSize();  // painted again at the next render
  actor_->VisibilityOn();
  if (!same_shape) {  // (the marks stay where they are on another picture of the same shape)
    overlay_mask_.clear();
    updateOverlay();
    updateLines();
  }
  if (!same_shape || !camera_set_) resetCamera();  // (which draws the picture)
  else updatePicture();
  update();
}

void ImageView::updatePicture() {
  if (height_ == 0 || values_.empty()) return;
  Picture p{0, 0, height_, width_, 1};
  const auto [vr0, vr1, vc0, vc1] = viewedPart();
  const double screen = std::max(1.0, (height() - kTitleHeight) * devicePixelRatioF());
  const int step = std::max(1, static_cast<int>(std::lround((vr1 - vr0) / screen)));  // about a sample per screen pixel
  if (step > 1 || static_cast<std::size_t>(height_) * static_cast<std::size_t>(width_) > kFullPixels) {
    p.step = step;
    const bool covered = shown_.step == p.step && shown_.r0 <= std::max(0.0, vr0) && shown_.c0 <= std::max(0.0, vc0) &&
                         shown_.r1 >= std::min<double>(height_, vr1 + 1) && shown_.c1 >= std::min<double>(width_, vc1 + 1);
    if (covered) return;
    const double mr = 0.5 * (vr1 - vr0), mc = 0.5 * (vc1 - vc0);  // half a view about it: a pan shows no edge at once
    p.r0 = std::clamp(static_cast<int>(std::floor(vr0 - mr)), 0, height_ - 1);
    p.c0 = std::clamp(static_cast<int>(std::floor(vc0 - mc)), 0, width_ - 1);
    p.r0 -= p.r0 % p.step;
    p.c0 -= p.c0 % p.step;
    p.r1 = std::clamp(static_cast<int>(std::ceil(vr1 + mr)) + 1, p.r0 + 1, height_);
    p.c1 = std::clamp(static_cast<int>(std::ceil(vc1 + mc)) + 1, p.c0 + 1, width_);
  } else if (shown_.step == 1) {
    return;  // (a small map is drawn whole)
  }
  fill_picture(data_, values_, height_, width_, p);
  shown_ = p;
}

void ImageView::clear(const QString& message) {
  values_.clear();
  height_ = width_ = 0;
  style_ = MapStyle{};
  style_.title = message;
  overlay_mask_.clear();
  shown_ = {};
  actor_->VisibilityOff();
  overlay_->VisibilityOff();
  updateLines();
  minimap_->DrawOff();
  legend_size_ = header_size_ = QSize();
  update();
}

void ImageView::resetCamera() {
  if (height_ == 0) return;
  auto* cam = renderer()->GetActiveCamera();
  const double cx = (width_ - 1) / 2.0, cy = (height_ - 1) / 2.0;
  cam->SetFocalPoint(cx, cy, 0);
  cam->SetPosition(cx, cy, 1000);
  cam->SetViewUp(0, 1, 0);
  const double vw = std::max(1, width() - kLegendWidth), vh = std::max(1, height() - kTitleHeight);
  const double aspect = vw / vh;
  cam->SetParallelScale(0.52 * std::max<double>(height_, width_ / std::max(aspect, 0.1)));
  renderer()->ResetCameraClippingRange();
  camera_set_ = true;
  updateLines();
  updatePicture();
  updateMinimap();
  update();
}

void ImageView::setOverlay(const std::vector<std::uint8_t>& mask) {
  overlay_mask_ = mask;
  updateOverlay();
  update();
}

void ImageView::setMarker(int row, int col) {
  setMarks(Mark::Selection, row >= 0 && col >= 0 ? std::vector<Marker>{{row, col, Qt::white}} : std::vector<Marker>{});
}

void ImageView::setMarks(Mark kind, std::vector<Marker> marks) {
  auto& now = marks_[static_cast<std::size_t>(kind)];
  if (std::equal(now.begin(), now.end(), marks.begin(), marks.end(), [](const Marker& a, const Marker& b) {
        return a.row == b.row && a.col == b.col && a.color == b.color;
      }))
    return;  // (the overlay is a picture as large as the map: made again only for a change)
  now = std::move(marks);
  updateOverlay();
  update();
}

namespace {
/// Each kind of mark's shape: the cells of a plus of `arm` cells each way,
/// or of a square ring of that radius.
struct MarkShape {
  int arm;
  bool ring;
};
constexpr MarkShape kMarkShapes[] = {{2, true}, {2, false}, {3, false}};  // reference, pin, selection

bool on_shape(const MarkShape& s, int dr, int dc) {
  if (s.ring) return std::max(std::abs(dr), std::abs(dc)) == s.arm;
  return (dr == 0 && std::abs(dc) <= s.arm) || (dc == 0 && std::abs(dr) <= s.arm);
}
}  // namespace

void ImageView::updateOverlay() {
  const bool has_mask = overlay_mask_.size() == static_cast<std::size_t>(height_ * width_) && height_ > 0;
  bool has_marks = false;
  for (const auto& m : marks_) has_marks = has_marks || !m.empty();
  if ((!has_mask && !has_marks) || height_ == 0) {
    overlay_->VisibilityOff();
    return;
  }
  // RGBA at data resolution, row 0 at the top: the highlight, then each
  // kind of mark over it (a dark outline first, then the shape).
  std::vector<unsigned char> px(static_cast<std::size_t>(height_) * width_ * 4, 0);
  auto put = [&](int r, int c, QColor color, int alpha) {
    if (r < 0 || c < 0 || r >= height_ || c >= width_) return;
    unsigned char* p = &px[(static_cast<std::size_t>(r) * width_ + c) * 4];
    p[0] = static_cast<unsigned char>(color.red());
    p[1] = static_cast<unsigned char>(color.green());
    p[2] = static_cast<unsigned char>(color.blue());
    p[3] = static_cast<unsigned char>(alpha);
  };
  if (has_mask)
    for (int r = 0; r < height_; ++r)
      for (int c = 0; c < width_; ++c)
        if (overlay_mask_[static_cast<std::size_t>(r * width_ + c)]) put(r, c, QColor(255, 0, 255), 170);
  for (std::size_t kind = 0; kind < marks_.size(); ++kind) {
    const MarkShape& shape = kMarkShapes[kind];
    for (const bool outline : {true, false})
      for (const Marker& m : marks_[kind])
        for (int dr = -shape.arm - 1; dr <= shape.arm + 1; ++dr)
          for (int dc = -shape.arm - 1; dc <= shape.arm + 1; ++dc) {
            bool near = false;  // a neighbour of the shape (the outline)
            for (int a = -1; a <= 1 && !near; ++a)
              for (int b = -1; b <= 1 && !near; ++b) near = on_shape(shape, dr + a, dc + b);
            if (outline && near) put(m.row + dr, m.col + dc, QColor(20, 20, 20), 255);
            if (!outline && on_shape(shape, dr, dc)) put(m.row + dr, m.col + dc, m.color, 255);
          }
  }
  overlay_data_->SetDimensions(width_, height_, 1);
  vtkNew<vtkUnsignedCharArray> rgba;
  rgba->SetNumberOfComponents(4);
  rgba->SetNumberOfTuples(static_cast<vtkIdType>(height_) * width_);
  for (int r = 0; r < height_; ++r)
    for (int c = 0; c < width_; ++c)
      rgba->SetTypedTuple(static_cast<vtkIdType>((height_ - 1 - r) * width_ + c), &px[(static_cast<std::size_t>(r) * width_ + c) * 4]);
  overlay_data_->GetPointData()->SetScalars(rgba);
  overlay_data_->Modified();
  overlay_->VisibilityOn();
}

double ImageView::valueAt(int row, int col) const {
  if (row < 0 || col < 0 || row >= height_ || col >= width_) return std::nan("");
  return values_[static_cast<std::size_t>(row * width_ + col)];
}

bool ImageView::pixelAt(const QPoint& pos, int& row, int& col) const {
  if (height_ == 0 || pos.x() >= width() - kLegendWidth || pos.y() < kTitleHeight) return false;  // the legend, the title
  const auto [x, y] = worldAt(pos);
  col = static_cast<int>(std::lround(x));
  row = height_ - 1 - static_cast<int>(std::lround(y));
  return row >= 0 && col >= 0 && row < height_ && col < width_;
}

void ImageView::mousePressEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;  // the right button opens the pixel's menu
  if (const QRect m = minimapRect(); m.contains(e->pos())) {  // a click on the minimap: the view goes there
    Camera c = camera();
    c.x = (e->position().x() - m.left()) / m.width() * width_ - 0.5;
    c.y = (m.bottom() + 1 - e->position().y()) / m.height() * height_ - 0.5;
    setCamera(c);
    emit cameraChanged();
    swallow_release_ = true;  // (not a click on the map under it)
    return;
  }
  dragging_ = true;
  moved_ = false;
  last_ = e->pos();
  if (int row, col; rectangle_ && pixelAt(e->pos(), row, col)) {  // a rectangle's first corner
    draft_ = {{double(row), double(col)}};
    draft_end_ = draft_[0];
  }
}

void ImageView::mouseMoveEvent(QMouseEvent* e) {
  int row, col;
  if (pixelAt(e->pos(), row, col)) {
    emit pixelHovered(row, col, valueAt(row, col));
    if (drawing_ && !draft_.empty()) {  // the segment to the pointer
      draft_end_ = std::array<double, 2>{double(row), double(col)};
      updateLines();
      update();
    }
  }
  if (!dragging_ || rectangle_) return;  // (a rectangle is drawn, not the view moved)
  const QPoint d = e->pos() - last_;
  if (d.manhattanLength() > 2) moved_ = true;
  if (!moved_) return;
  auto* cam = renderer()->GetActiveCamera();
  const double scale = 2.0 * cam->GetParallelScale() / std::max(1, height() - kTitleHeight);
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
  updatePicture();
  updateMinimap();
  update();
  emit cameraChanged();
}

void ImageView::mouseReleaseEvent(QMouseEvent* e) {
  if (e->button() != Qt::LeftButton) return;
  dragging_ = false;
  if (swallow_release_) {  // the end of a double click that ended a line, or of a click on the minimap
    swallow_release_ = false;
    return;
  }
  if (int r, c; rectangle_ && !draft_.empty() && pixelAt(e->pos(), r, c)) draft_end_ = std::array<double, 2>{double(r), double(c)};
  if (rectangle_ && !draft_.empty() && draft_end_) {  // its second corner
    const auto a = draft_[0], b = *draft_end_;
    cancelLine();
    return emit rectangleDrawn(static_cast<int>(a[0]), static_cast<int>(a[1]), static_cast<int>(b[0]), static_cast<int>(b[1]));
  }
  int row, col;
  if (moved_ || !pixelAt(e->pos(), row, col)) return;
  if (!drawing_) return emit pixelClicked(row, col);
  if (rectangle_) return;
  const std::array<double, 2> v{double(row), double(col)};
  if (draft_.empty() || draft_.back() != v) draft_.push_back(v);
  updateLines();
  update();
}

bool ImageView::event(QEvent* e) {
  if (drawing_ && e->type() == QEvent::ShortcutOverride) {  // Esc ends the line being drawn, not the solve
    const int key = static_cast<QKeyEvent*>(e)->key();
    if (key == Qt::Key_Escape || key == Qt::Key_Return || key == Qt::Key_Enter) {
      e->accept();
      return true;
    }
  }
  return VtkView::event(e);
}

void ImageView::mouseDoubleClickEvent(QMouseEvent* e) {
  if (!drawing_ || rectangle_ || e->button() != Qt::LeftButton) return VtkView::mouseDoubleClickEvent(e);
  swallow_release_ = true;
  endLine();
}

void ImageView::contextMenuEvent(QContextMenuEvent* e) {
  int row, col;
  if (pixelAt(e->pos(), row, col)) emit pixelMenuRequested(row, col, e->globalPos());
}

std::pair<double, double> ImageView::worldAt(const QPointF& pos) const {
  const qreal ratio = devicePixelRatioF();
  renderer()->SetDisplayPoint(pos.x() * ratio, (height() - pos.y()) * ratio, 0);
  renderer()->DisplayToWorld();
  double world[4];
  renderer()->GetWorldPoint(world);
  if (world[3] != 0) {
    world[0] /= world[3];
    world[1] /= world[3];
  }
  return {world[0], world[1]};
}

ImageView::Camera ImageView::camera() const {
  auto* cam = renderer()->GetActiveCamera();
  double f[3];
  cam->GetFocalPoint(f);
  return {f[0], f[1], cam->GetParallelScale()};
}

void ImageView::setCamera(const Camera& c) {
  auto* cam = renderer()->GetActiveCamera();
  cam->SetFocalPoint(c.x, c.y, 0);
  cam->SetPosition(c.x, c.y, 1000);
  cam->SetParallelScale(c.scale);
  renderer()->ResetCameraClippingRange();
  camera_set_ = true;
  updateLines();
  updatePicture();
  updateMinimap();
  update();
}

void ImageView::wheelEvent(QWheelEvent* e) {
  // Zoom about the point under the cursor: it stays where it is.
  const auto before = worldAt(e->position());
  auto* cam = renderer()->GetActiveCamera();
  cam->SetParallelScale(cam->GetParallelScale() * (e->angleDelta().y() > 0 ? 0.8 : 1.25));
  const auto after = worldAt(e->position());
  Camera c = camera();
  c.x += before.first - after.first;
  c.y += before.second - after.second;
  setCamera(c);
  emit cameraChanged();
}

void ImageView::keyPressEvent(QKeyEvent* e) {
  switch (e->key()) {
    case Qt::Key_Left: return emit stepRequested(0, -1);
    case Qt::Key_Right: return emit stepRequested(0, 1);
    case Qt::Key_Up: return emit stepRequested(-1, 0);
    case Qt::Key_Down: return emit stepRequested(1, 0);
    case Qt::Key_Return:
    case Qt::Key_Enter:
      if (drawing_ && !rectangle_) return endLine();
      break;
    case Qt::Key_Escape:
      if (drawing_) return cancelLine();
      break;
    default: break;
  }
  VtkView::keyPressEvent(e);
}

}  // namespace cubesolve::ui
