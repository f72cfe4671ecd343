// The map's drawn marks beyond the picture: lines (profiles, the reference
// area's outline) and the one being drawn, and the minimap.
#include "imageview.hpp"

#include <vtkCamera.h>
#include <vtkCellArray.h>
#include <vtkCellData.h>
#include <vtkPoints.h>
#include <vtkPolyData.h>
#include <vtkRenderer.h>
#include <vtkActor.h>
#include <vtkUnsignedCharArray.h>

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

void ImageView::setLines(std::vector<Line> lines) {
  lines_ = std::move(lines);
  updateLines();
  update();
}

void ImageView::updateLines() {
  // Each segment a rectangle about it (its ends extended by the half width,
  // which fills the joins), `half` screen pixels each side.
  const double per_pixel = 2.0 * renderer()->GetActiveCamera()->GetParallelScale() / std::max(1, height() - kTitleHeight);
  std::vector<std::pair<std::vector<std::array<double, 2>>, QColor>> all;
  if (height_ > 0) {
    for (const Line& l : lines_) all.emplace_back(l.vertices, l.color);
    auto draft = draft_;
    if (draft_end_) draft.push_back(*draft_end_);
    if (rectangle_ && draft.size() == 2)  // the rectangle with these corners
      draft = {draft[0], {draft[0][0], draft[1][1]}, draft[1], {draft[1][0], draft[0][1]}, draft[0]};
    all.emplace_back(std::move(draft), Qt::white);
  }
  for (const auto& [poly, half] : {std::pair{lines_data_.Get(), 1.5}, std::pair{outline_data_.Get(), 2.75}}) {
    const double w = half * per_pixel;
    vtkNew<vtkPoints> points;
    vtkNew<vtkCellArray> quads;
    vtkNew<vtkUnsignedCharArray> colors;
    colors->SetNumberOfComponents(3);
    for (const auto& [vertices, color] : all)
      for (std::size_t i = 0; i + 1 < vertices.size(); ++i) {
        const double x0 = vertices[i][1], y0 = height_ - 1 - vertices[i][0];  // VTK's rows go up
        const double x1 = vertices[i + 1][1], y1 = height_ - 1 - vertices[i + 1][0];
        const double length = std::hypot(x1 - x0, y1 - y0);
        if (length == 0) continue;
        const double dx = (x1 - x0) / length * w, dy = (y1 - y0) / length * w;
        const vtkIdType ids[4] = {points->InsertNextPoint(x0 - dx + dy, y0 - dy - dx, 0), points->InsertNextPoint(x1 + dx + dy, y1 + dy - dx, 0),
                                  points->InsertNextPoint(x1 + dx - dy, y1 + dy + dx, 0), points->InsertNextPoint(x0 - dx - dy, y0 - dy + dx, 0)};
        quads->InsertNextCell(4, ids);
        const unsigned char rgb[3] = {static_cast<unsigned char>(color.red()), static_cast<unsigned char>(color.green()),
                                      static_cast<unsigned char>(color.blue())};
        colors->InsertNextTypedTuple(rgb);
      }
    poly->SetPoints(points);
    poly->SetPolys(quads);
    poly->GetCellData()->SetScalars(colors);
    poly->Modified();
  }
  const bool any = lines_data_->GetNumberOfCells() > 0;
  lines_actor_->SetVisibility(any);
  outline_actor_->SetVisibility(any);
}

void ImageView::beginLine() {
  drawing_ = true;
  draft_.clear();
  draft_end_.reset();
  setCursor(Qt::CrossCursor);
  setFocus();
}

void ImageView::beginRectangle() {
  beginLine();
  rectangle_ = true;
}

void ImageView::cancelLine() {
  drawing_ = rectangle_ = false;
  draft_.clear();
  draft_end_.reset();
  unsetCursor();
  updateLines();
  update();
}

void ImageView::endLine() {
  const auto vertices = draft_;
  cancelLine();
  if (vertices.size() >= 2) emit lineDrawn(vertices);
}

QRect ImageView::minimapRect() const {
  if (height_ == 0 || !minimap_->GetDraw()) return {};
  const int map_w = width() - kLegendWidth, map_h = height() - kTitleHeight;
  const double aspect = static_cast<double>(width_) / height_;
  int w = std::min(180, map_w / 4), h = static_cast<int>(std::lround(w / aspect));
  if (h > map_h / 3) h = map_h / 3, w = static_cast<int>(std::lround(h * aspect));
  return {8, height() - 8 - h, std::max(w, 8), std::max(h, 8)};
}

std::array<double, 4> ImageView::viewedPart() const {
  const Camera c = camera();
  const double half_h = c.scale, half_w = c.scale * std::max(1, width() - kLegendWidth) / std::max(1, height() - kTitleHeight);
  // Rows count down from the top; VTK's y goes up from the last row.
  return {height_ - 1 - (c.y + half_h), height_ - 1 - (c.y - half_h), c.x - half_w, c.x + half_w};
}

bool ImageView::minimapShown() const { return height_ > 0 && minimap_->GetDraw(); }

void ImageView::updateMinimap() {
  const auto [r0, r1, c0, c1] = viewedPart();
  const bool part = height_ > 0 && (r0 > -0.5 || c0 > -0.5 || r1 < height_ - 0.5 || c1 < width_ - 0.5);
  minimap_->SetDraw(part);
  if (!part) return;
  // The outline, clipped to the map: a white frame over a dark one, a few
  // of the minimap's pixels wide, and a dark frame about the whole map.
  const QRect m = minimapRect();
  const double px = static_cast<double>(height_) / std::max(1, m.height());  // map pixels per minimap pixel
  const double x0 = std::max(c0, -0.5), x1 = std::min(c1, width_ - 0.5);
  const double y0 = height_ - 1 - std::min(r1, height_ - 0.5), y1 = height_ - 1 - std::max(r0, -0.5);
  vtkNew<vtkPoints> points;
  vtkNew<vtkCellArray> quads;
  vtkNew<vtkUnsignedCharArray> colors;
  colors->SetNumberOfComponents(3);
  auto frame = [&](double a0, double b0, double a1, double b1, double t, unsigned char grey, double z) {
    const double sides[4][4] = {{a0 - t, b0 - t, a1 + t, b0 + t}, {a0 - t, b1 - t, a1 + t, b1 + t}, {a0 - t, b0, a0 + t, b1}, {a1 - t, b0, a1 + t, b1}};
    for (const auto& q : sides) {
      const vtkIdType ids[4] = {points->InsertNextPoint(q[0], q[1], z), points->InsertNextPoint(q[2], q[1], z), points->InsertNextPoint(q[2], q[3], z),
                                points->InsertNextPoint(q[0], q[3], z)};
      quads->InsertNextCell(4, ids);
      const unsigned char rgb[3] = {grey, grey, grey};
      colors->InsertNextTypedTuple(rgb);
    }
  };
  frame(-0.5, -0.5, width_ - 0.5, height_ - 0.5, 1.0 * px, 20, 0);
  frame(x0, y0, x1, y1, 2.0 * px, 20, 0);
  frame(x0, y0, x1, y1, 1.0 * px, 255, 0.1);
  viewed_->SetPoints(points);
  viewed_->SetPolys(quads);
  viewed_->GetCellData()->SetScalars(colors);
  viewed_->Modified();
  auto* cam = minimap_->GetActiveCamera();
  const double cx = (width_ - 1) / 2.0, cy = (height_ - 1) / 2.0;
  cam->SetFocalPoint(cx, cy, 0);
  cam->SetPosition(cx, cy, 1000);
  cam->SetViewUp(0, 1, 0);
  cam->SetParallelScale(0.5 * height_);
  minimap_->ResetCameraClippingRange();
}

}  // namespace cubesolve::ui
