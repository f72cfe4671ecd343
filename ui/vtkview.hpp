#pragma once
// A QOpenGLWidget that VTK draws into (Debian's VTK has no Qt 6 widget):
// a vtkGenericOpenGLRenderWindow living on the widget's OpenGL context. Only
// the GUI thread touches it.

#include <QOpenGLWidget>

#include <vtkNew.h>
#include <vtkSmartPointer.h>

class vtkGenericOpenGLRenderWindow;
class vtkRenderer;

namespace cubesolve::ui {

class VtkView : public QOpenGLWidget {
  Q_OBJECT
public:
  explicit VtkView(QWidget* parent = nullptr);
  ~VtkView() override;

  vtkRenderer* renderer() const;
  /// Renders now and returns the picture (the widget's size).
  QImage grab();

protected:
  void initializeGL() override;
  void paintGL() override;

private:
  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkRenderer> renderer_;
};

}  // namespace cubesolve::ui
