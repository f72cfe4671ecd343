#pragma once
// What the desktop test programs share: a temporary folder with settings of
// their own, a demo's files, a small MintPy stack, a channel of x.
#include "chartview.hpp"
#include "document.hpp"
#include "gui_test.hpp"
#include "imageview.hpp"
#include "mainwindow.hpp"
#include "stack.hpp"

#include <cubesolve/data/demo.hpp>
#include <cubesolve/data/designs.hpp>
#include <cubesolve/engine/device.hpp>
#include <cubesolve/io/files.hpp>
#include <cubesolve/io/npy.hpp>
#include <cubesolve/io/raster.hpp>
#include <cubesolve/io/stream.hpp>

#include <QAbstractButton>
#include <QAction>
#include <QCheckBox>
#include <QComboBox>
#include <QDockWidget>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QProcess>
#include <QProgressBar>
#include <QSignalSpy>
#include <QSlider>
#include <QSpinBox>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTextBrowser>
#include <QtTest>

#include <unistd.h>

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace cubesolve;
using cubesolve::ui::Document;
using cubesolve::ui::ImageView;
using cubesolve::ui::MainWindow;

/// Channel j of x (M, H, W) as a plane.
inline std::vector<double> channel(const Array& x, std::size_t j) {
  const std::size_t P = x.dim(1) * x.dim(2);
  std::vector<double> v(P);
  for (std::size_t p = 0; p < P; ++p) v[p] = x.value(j * P + p);
  return v;
}

class GuiFixture {
protected:
  QTemporaryDir dir_;

  /// The folder and settings of the program's own (each test then clears them).
  bool isolate() {
    if (!dir_.isValid()) return false;
    isolateSettings(dir_.filePath("settings"));
    return true;
  }

  /// A demo's cube and design as .npy files NAME_cube.npy and NAME_A.npy.
  std::pair<std::string, std::string> demoFiles(const char* demo, std::size_t size, const QString& name) {
    const DemoCube d = make_demo(demo, size);
    const std::string cube = dir_.filePath(name + "_cube.npy").toStdString(), design = dir_.filePath(name + "_A.npy").toStdString();
    OutputSet in;
    in.add_npy(cube, d.cube);
    in.add_npy(design, d.design);
    in.commit();
    return {cube, design};
  }

#ifdef CUBESOLVE_TEST_HDF5
  /// A stack of 6 interferograms over 5 dates, H x W pixels (5 x 7), with
  /// coherence, referenced at (1, 2), with WAVELENGTH; one value not unwrapped.
  std::string smallStack(const QString& name, const std::vector<std::pair<std::string, std::string>>& more = {}, hsize_t H = 5,
                         hsize_t W = 7) {
    const hsize_t N = 6, P = H * W;
    const char* pairs[6][2] = {{"20200101", "20200113"}, {"20200101", "20200125"}, {"20200113", "20200125"},
                               {"20200113", "20200206"}, {"20200125", "20200206"}, {"20200125", "20200218"}};
    std::string dates;
    for (auto& p : pairs) dates += std::string(p[0]) + p[1];
    std::vector<float> phase(N * P), coherence(N * P);
    for (std::size_t i = 0; i < phase.size(); ++i) {
      phase[i] = 1.0f + static_cast<float>((i * 7) % 13) * 0.25f;
      coherence[i] = 0.3f + static_cast<float>((i * 5) % 11) * 0.06f;
    }
    phase[3 * P + 12] = 0.0f;  // not unwrapped there
    const std::vector<unsigned char> keep(N, 1);
    testing::StackExtras extras;
    extras.coherence = coherence.data();
    extras.attributes = {{"REF_Y", "1"}, {"REF_X", "2"}, {"WAVELENGTH", "0.05546576"}};
    extras.attributes.insert(extras.attributes.end(), more.begin(), more.end());
    const std::string path = dir_.filePath(name).toStdString();
    testing::write_stack(path, N, H, W, phase.data(), &dates, keep.data(), extras);
    return path;
  }
#endif
};
