#include "vtkview.hpp"

#include <QOpenGLContext>
#include <QOpenGLFunctions>

#ifndef GL_DRAW_FRAMEBUFFER
#define GL_DRAW_FRAMEBUFFER 0x8CA9
#endif

#include <vtkGenericOpenGLRenderWindow.h>
#include <vtkOpenGLState.h>
#include <vtkRenderer.h>

namespace cubesolve::ui {

VtkView::VtkView(QWidget* parent) : QOpenGLWidget(parent) {
  window_ = vtkSmartPointer<vtkGenericOpenGLRenderWindow>::New();
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

void VtkView::addRenderer(vtkRenderer* r) { window_->AddRenderer(r); }

QImage VtkView::grab() { return grabFramebuffer(); }

}  // namespace cubesolve::ui
