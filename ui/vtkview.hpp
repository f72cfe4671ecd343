#pragma once
// A QOpenGLWidget that VTK draws into (Debian's VTK has no Qt 6 widget):
// a vtkGenericOpenGLRenderWindow living on the widget's OpenGL context. Only
// the GUI thread touches it.

#include <QOpenGLWidget>

#include <vtkNew.h>
#include <vtkSmartPointer.h>

#include <functional>

class vtkGenericOpenGLRenderWindow;
class vtkRenderer;

namespace cubesolve::ui {

class VtkView : public QOpenGLWidget {
  Q_OBJECT
public:
  /// `multisamples`: samples a pixel on screen (smooth lines), 0 for none;
  /// figures (render, svg) take kFigureSamples whatever it is.
  explicit VtkView(QWidget* parent = nullptr, int multisamples = kFigureSamples);
  static constexpr int kFigureSamples = 8;
  ~VtkView() override;

  vtkRenderer* renderer() const;
  /// Another renderer in the same window (a legend, a title), on top.
  void addRenderer(vtkRenderer* r);
  /// Renders now and returns the picture (the widget's size).
  QImage grab();
  /// The scene drawn at `size` pixels for a figure (the widget is left as it
  /// was): text grows with the figure beyond the widget's size, as `textScale`.
  QImage render(const QSize& size);
  /// The same as SVG (vector lines and text: the 2D chart scene); empty
  /// when it could not be drawn.
  QByteArray svg(const QSize& size);
  /// How much text grows in a figure of `size` against the widget.
  double textScale(const QSize& size) const;
  /// Makes the scene's text `factor` times its present size (a figure's text).
  virtual void scaleText(double /*factor*/) {}

signals:
  /// A frame was drawn.
  void rendered();

protected:
  void initializeGL() override;
  void paintGL() override;
  /// Places the renderers in a w x h window (pixels) before each render.
  virtual void layoutViewports(int /*w*/, int /*h*/) {}
  /// The next frame is rendered twice (after new data, so that what depends
  /// on the previous render is up to date when it shows).
  void settle() { settle_ = true; }

private:
  /// Draws the scene at `size` (text grown as textScale()), calls `use` while
  /// it is drawn there, then puts the widget back as it was.
  void drawAt(const QSize& size, const std::function<void()>& use);

  vtkSmartPointer<vtkGenericOpenGLRenderWindow> window_;
  vtkSmartPointer<vtkRenderer> renderer_;
  bool settle_ = true;
};

}  // namespace cubesolve::ui
