#include "vtkview.hpp"

#include <QOpenGLContext>
#include <QOpenGLFunctions>

#ifndef GL_DRAW_FRAMEBUFFER
#define GL_DRAW_FRAMEBUFFER 0x8CA9
#endif

#include <QFile>
#include <QImage>
#include <QTemporaryDir>

#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkSVGExporter.h>
#include <vtkUnsignedCharArray.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cubesolve::ui {

VtkView::VtkView(QWidget* parent, int multisamples) : QOpenGLWidget(parent) {
  window_ = vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New();
  window_->SetMultiSamples(multisamples);
  window_->SetReadyForRendering(false);
  window_->SetFrameBlitModeToNoBlit();
  renderer_ = vtkSmartPointer<vtkRenderer>::New();
  renderer_->SetBackground(0.12, 0.12, 0.14);
  window_->AddRenderer(renderer_);
  setMinimumSize(200, 150);
}

VtkView::~VtkView() {
  makeCurrent();
  window_->Finalize();
  doneCurrent();
}

void VtkView::initializeGL() {
  window_->SetOwnContext(false);
  window_->SetIsDirect(true);
  window_->SetSupportsOpenGL(true);
  window_->SetIsCurrent(true);
  window_->SetReadyForRendering(true);
  window_->InitializeFromCurrentContext();
}

void VtkView::paintGL() {
  const qreal ratio = devicePixelRatioF();
  const int w = static_cast<int>(width() * ratio), h = static_cast<int>(height() * ratio);
  window_->SetSize(w, h);
  layoutViewports(w, h);
  window_->GetState()->Reset();
  window_->Render();
  if (settle_) {  // a chart given new data and axes places its plots by the axes of its previous render
    settle_ = false;
    window_->GetState()->Reset();
    window_->Render();
  }
  auto* f = context()->functions();
  f->glBindFramebuffer(GL_DRAW_FRAMEBUFFER, defaultFramebufferObject());
  window_->BlitDisplayFramebuffer(0, 0, 0, w, h, 0, 0, w, h, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  // VTK leaves partial alpha where it drew text; the widget must be opaque.
  f->glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
  f->glClearColor(0, 0, 0, 1);
  f->glClear(GL_COLOR_BUFFER_BIT);
  f->glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  emit rendered();
}

vtkRenderer* VtkView::renderer() const { return renderer_; }

void VtkView::addRenderer(vtkRenderer* r) {
  if (r->GetLayer() >= window_->GetNumberOfLayers()) window_->SetNumberOfLayers(r->GetLayer() + 1);  // (drawn over the layers below)
  window_->AddRenderer(r);
}

QImage VtkView::grab() { return grabFramebuffer(); }

double VtkView::textScale(const QSize& size) const {
  return std::max(1.0, std::min(size.width() / std::max(1.0, double(width())), size.height() / std::max(1.0, double(height()))));
}

namespace {
/// Sets the view to draw a figure at `size`, with text `scale` times its
/// size and the figure's multisampling, for as long as it lives, then back.
struct Resized {
  Resized(VtkView* v, vtkGenericOpenGLRenderWindow* w, const QSize& size, double factor)
      : view(v), window(w), old_size{w->GetSize()[0], w->GetSize()[1]}, old_samples(w->GetMultiSamples()), scale(factor) {
    view->scaleText(scale);
    window->SetSize(size.width(), size.height());
    window->SetMultiSamples(VtkView::kFigureSamples);
  }
  ~Resized() {
    view->scaleText(1 / scale);
    window->SetSize(old_size[0], old_size[1]);
    window->SetMultiSamples(old_samples);
  }
  VtkView* view;
  vtkGenericOpenGLRenderWindow* window;
  int old_size[2];
  int old_samples;
  double scale;
};
}  // namespace

void VtkView::drawAt(const QSize& size, const std::function<void()>& use) {
  makeCurrent();
  {
    const Resized resized(this, window_, size, textScale(size));
    layoutViewports(size.width(), size.height());
    for (int pass = 0; pass < 2; ++pass) {  // the second with the axes of the first in place (as settle())
      window_->GetState()->Reset();
      window_->Render();
    }
    use();
  }
  doneCurrent();
  settle();
  update();
}

QImage VtkView::render(const QSize& size) {
  QImage image(size, QImage::Format_RGBA8888);
  drawAt(size, [&] {
    vtkNew<vtkUnsignedCharArray> pixels;
    window_->GetRGBACharPixelData(0, 0, size.width() - 1, size.height() - 1, 1, pixels);
    if (pixels->GetNumberOfValues() == 4 * static_cast<vtkIdType>(size.width()) * size.height())
      for (int y = 0; y < size.height(); ++y)  // OpenGL's rows go up
        std::memcpy(image.scanLine(size.height() - 1 - y), pixels->GetPointer(4 * static_cast<vtkIdType>(y) * size.width()),
                    4 * static_cast<std::size_t>(size.width()));
    else
      image = QImage();
  });
  return image.isNull() ? image : image.convertToFormat(QImage::Format_RGB32);
}

QByteArray VtkView::svg(const QSize& size) {
  QTemporaryDir dir;
  const QString file = dir.filePath("figure.svg");
  drawAt(size, [&] {
    vtkNew<vtkSVGExporter> svg;
    svg->SetRenderWindow(window_);
    svg->SetFileName(file.toUtf8().constData());
    svg->SetActiveRenderer(renderer_);
    svg->Write();
  });
  QFile written(file);
  return dir.isValid() && written.open(QIODevice::ReadOnly) ? written.readAll() : QByteArray();
}

}  // namespace cubesolve::ui
