// cubesolve: the desktop application. Opens the given files (or the last
// session's, or the InSAR demo), solves, and shows the views. With --screenshot FILE it renders the
// window to FILE once the solve is done and exits (for headless machines).
#include "imageview.hpp"
#include "mainwindow.hpp"

#include <cubesolve/engine/device.hpp>

#include <QApplication>
#include <QCommandLineParser>
#include <QSurfaceFormat>
#include <QTimer>

#include <cstdio>
#include <cstring>

namespace {

using cubesolve::ui::MainWindow;

struct Options {
  QCommandLineOption demo{"demo", "Open a demo cube: insar (default when no file is given and there is no last session to reopen) or seed.",
                          "name"};
  QCommandLineOption size{"size", "Demo size (pixels per side).", "S", "0"};
  QCommandLineOption screenshot{"screenshot", "Render the window to FILE after solving, then exit.", "FILE"};
  QCommandLineOption view{"view", "View to show: gaps, groups, result or inspector.", "name", "result"};
  QCommandLineOption pixel{"pixel", "Pixel to inspect once solved (default for --screenshot: the centre).", "row,col"};
  QCommandLineOption pin{"pin", "Pixel to pin for comparison once read (repeatable): marked on every map, its series in the inspector.", "Y,X"};

  void addTo(QCommandLineParser& parser) const {
    parser.setApplicationDescription("Per-pixel minimum-norm least squares on data cubes with gaps.");
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addPositionalArgument("files", "CUBE [DESIGN [WEIGHTS]] (.npy; DESIGN may be .csv)", "[files...]");
    parser.addOptions({demo, size, screenshot, view, pixel, pin});
  }
};

/// --help and --version are answered without a display.
void answerWithoutDisplay(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    for (const char* flag : {"-h", "--help", "--help-all", "-?", "-v", "--version"})
      if (std::strcmp(argv[i], flag) == 0) {
        QCoreApplication app(argc, argv);
        QCoreApplication::setApplicationName("cubesolve");
        QCoreApplication::setApplicationVersion(cubesolve::version());
        QCommandLineParser parser;
        Options().addTo(parser);
        parser.process(app);  // prints and exits
      }
}

/// Once the data are read (and solved, where there is a design), renders the
/// window to `path` and exits: 0, or the CLI's code for what went wrong (2
/// bad input, 3 a file that could not be read or the image not written, 4 a
/// numerical or device failure).
void screenshotThenExit(MainWindow& window, const QString& path, const std::function<void()>& select) {
  auto shoot = [&window, path] {
    QTimer::singleShot(300, &window, [&window, path] {
      const bool saved = window.grab().save(path);
      if (!saved) std::fprintf(stderr, "cubesolve: %s: cannot write the screenshot\n", path.toUtf8().constData());
      QApplication::exit(saved ? 0 : 3);
    });
  };
  auto& doc = window.document();
  QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, shoot] {
    if (!window.solving()) shoot();
  });
  QObject::connect(&window, &MainWindow::solveFinished, &window, [select, shoot] {
    select();
    shoot();
  });
  auto quit = [&doc](const QString& message) {
    std::fprintf(stderr, "cubesolve: %s\n", message.toUtf8().constData());
    QApplication::exit(doc.failureCode());
  };
  QObject::connect(&doc, &cubesolve::ui::Document::failed, &window, quit);
  QObject::connect(&doc, &cubesolve::ui::Document::solveFailed, &window, quit);
}

}  // namespace

int main(int argc, char** argv) {
  answerWithoutDisplay(argc, argv);
  // VTK renders with OpenGL 3.2 core; every QOpenGLWidget gets that context.
  QSurfaceFormat format = QSurfaceFormat::defaultFormat();
  format.setRenderableType(QSurfaceFormat::OpenGL);
  format.setVersion(3, 2);
  format.setProfile(QSurfaceFormat::CoreProfile);
  format.setDepthBufferSize(24);
  format.setStencilBufferSize(8);
  QSurfaceFormat::setDefaultFormat(format);

  QApplication app(argc, argv);
  QApplication::setOrganizationName("CubeSolve");
  QApplication::setApplicationName("CubeSolve");
  QApplication::setApplicationVersion(cubesolve::version());
  QCommandLineParser parser;
  const Options o;
  o.addTo(parser);
  parser.process(app);

  MainWindow window;
  const QString v = parser.value(o.view);
  using View = MainWindow::View;
  window.showView(v == "gaps" ? View::Gaps : v == "groups" ? View::Groups : v == "inspector" ? View::Inspector : View::Result);
  window.show();
  const QStringList rc = parser.value(o.pixel).split(',');
  auto select = [&window, rc] {
    if (rc.size() == 2) window.selectPixel(rc[0].toInt(), rc[1].toInt());
    else window.selectPixel(window.resultView()->imageHeight() / 2, window.resultView()->imageWidth() / 2);
  };
  if (parser.isSet(o.pixel)) QObject::connect(&window, &MainWindow::solveFinished, &window, select);
  std::vector<std::pair<int, int>> pins;
  for (const QString& p : parser.values(o.pin)) {
    const QStringList yx = p.split(',');
    bool ok_y = false, ok_x = false;
    if (yx.size() == 2) pins.emplace_back(yx[0].toInt(&ok_y), yx[1].toInt(&ok_x));
    if (!ok_y || !ok_x) {
      std::fprintf(stderr, "cubesolve: --pin: expected Y,X (two whole numbers), found %s\n", p.toUtf8().constData());
      return 2;
    }
  }
  if (!pins.empty()) QObject::connect(&window, &MainWindow::cubeLoaded, &window, [&window, pins] { window.document().setPins(pins); });
  if (parser.isSet(o.screenshot)) screenshotThenExit(window, parser.value(o.screenshot), select);
  const QStringList files = parser.positionalArguments();
  if (!files.isEmpty()) window.document().openFiles(files[0], files.value(1), files.value(2));
  else if (parser.isSet(o.demo) || !window.restoreSession())
    window.openDemo(parser.isSet(o.demo) ? parser.value(o.demo) : "insar", parser.value(o.size).toInt());
  return app.exec();
}
