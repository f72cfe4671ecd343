#pragma once
// What the desktop tests share: waiting for the worker thread's jobs.
#include "mainwindow.hpp"

#include <QElapsedTimer>
#include <QSettings>
#include <QSignalSpy>
#include <QtTest>

#include <functional>

using cubesolve::ui::MainWindow;

inline bool waitSolved(MainWindow& w, int ms = 60000) {
  if (!w.solving()) return true;
  QSignalSpy done(&w, &MainWindow::solveFinished);
  return done.wait(ms);
}

/// Runs a load (on the worker thread) and waits for it: true once the data
/// are loaded, false when an error was shown instead.
inline bool loads(MainWindow& w, const std::function<void()>& op, int ms = 60000) {
  QSignalSpy loaded(&w, &MainWindow::cubeLoaded), failed(&w, &MainWindow::errorShown);
  op();
  QElapsedTimer t;
  t.start();
  while (loaded.isEmpty() && failed.isEmpty() && t.elapsed() < ms) QTest::qWait(10);
  return !loaded.isEmpty();
}

/// Opens a demo cube and waits for it to load and for its first solve.
inline bool demoSolved(MainWindow& w, const char* demo, int size) {
  return loads(w, [&] { w.openDemo(demo, size); }) && waitSolved(w);
}

/// Shows the window at the given size and waits until it is on screen.
inline bool shown(MainWindow& w, int width, int height) {
  w.resize(width, height);
  w.show();
  return QTest::qWaitForWindowExposed(&w);
}

/// Runs a job expected to fail and returns the message shown (empty when none came).
inline QString failure(MainWindow& w, const std::function<void()>& op, int ms = 60000) {
  QSignalSpy failed(&w, &MainWindow::errorShown);
  op();
  if (failed.isEmpty() && !failed.wait(ms)) return {};
  return failed.first().first().toString();
}

/// Runs an export on the worker thread and waits for the files.
inline QStringList exports(MainWindow& w, const std::function<void()>& op, int ms = 60000) {
  QSignalSpy done(&w, &MainWindow::exported);
  op();
  if (done.isEmpty() && !done.wait(ms)) return {};
  return done.first().first().toStringList();
}

/// Settings of the tests' own, in `folder`, empty.
inline void isolateSettings(const QString& folder) {
  QCoreApplication::setOrganizationName("CubeSolveTest");
  QSettings::setPath(QSettings::NativeFormat, QSettings::UserScope, folder);
  QSettings().clear();
}
