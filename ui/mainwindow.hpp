#pragma once
// The CubeSolve main window. It only composes: the document (which owns the
// data, the parameters, the selection and every job on the worker thread),
// the data and parameters panel in a dock, the gaps, groups, result and
// inspector pages, the exports and the session, each a class of its own
// observing the document; the menus and the status bar.

#include "chartview.hpp"
#include "document.hpp"
#include "resultpage.hpp"

#include <cubesolve/engine/engine.hpp>

#include <QMainWindow>

#include <map>
#include <memory>
#include <utility>
#include <vector>

class QAction;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;

namespace cubesolve::ui {

class Exports;
class GapsPage;
class GroupsPage;
class ImageView;
class InspectorPage;
class MarksPanel;
class ParametersPanel;
class Session;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  enum class View { Gaps, Groups, Result, Inspector };
  using Layer = ui::Layer;

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  Document& document() { return *doc_; }

  // Loading, on the worker thread: cubeLoaded() follows (and a solve when a
  // cube and its design are there), or a message (lastError()).
  void openDemo(const QString& name, int size = 0) { doc_->openDemo(name, size); }
  void openCube(const QString& path) { doc_->openCube(path); }
  void openDesign(const QString& path) { doc_->openDesign(path); }
  void openWeights(const QString& path) { doc_->openWeights(path); }
  void buildDesign(const QString& spec, const QString& pairs, const QString& times) { doc_->buildDesign(spec, pairs, times); }
  void openAny(const QString& path) { doc_->openAny(path); }

  /// Solves with the document's parameters (those shown) on the worker thread.
  void solve() { doc_->solve(); }
  /// Esc: cancels the solve, and the reads and exports under way.
  void cancelSolve() {
    doc_->cancel();
    doc_->cancelJobs();
  }
  /// True from solve() until its result, cancellation or failure has been shown.
  bool solving() const { return doc_->solving(); }
  SolveOptions options() const { return doc_->options(); }
  void setMethod(Method method);

  void showView(View view);
  View currentView() const;
  void showLayer(Layer layer, int channel);
  /// The colour map `layer` is drawn in (from its other end when `reversed`).
  void setColours(Layer layer, Colormap map, bool reversed);
  Layer resultLayer() const { return result_->layer(); }
  int resultChannel() const { return result_->channel(); }
  /// The gaps view: the valid-count map, or (mask) one observation's mask.
  void showGaps(bool mask, int band);
  void selectPixel(int row, int col) { doc_->selectPixel(row, col); }
  void selectGroupBin(int bin);
  /// For a MintPy stack: reads it again referenced at (row, col).
  void setReferencePixel(int row, int col) { doc_->setReference(row, col); }
  /// Highlights on the gaps map the pixels a stack's reference may be (valid
  /// in every interferogram).
  void showReferenceCandidates();
  /// Keeps the selected pixel on the inspector's chart (and in the session).
  void pinPixel() { doc_->pin(); }
  void clearPins() { doc_->setPins({}); }
  /// Starts drawing a profile on the result map (the points panel lists it).
  void drawProfile();
  /// Starts drawing a reference area (a rectangle whose mean is subtracted)
  /// on the result map.
  void drawReferenceArea();
  const std::vector<std::pair<int, int>>& pinned() const { return doc_->pins(); }

  /// The current view as a PNG: a map as a figure at data resolution (each
  /// value `scale` pixels wide, 0: about 600 pixels in all) with its title
  /// and legend in the colours on screen; a chart as drawn. False (and a
  /// message) on failure; exported() on success.
  bool exportViewPng(const QString& path, int scale = 0);
  /// On the worker thread; exported() or a message follows.
  void exportSolution(const QString& path, bool cubes = false) { doc_->exportSolution(path, cubes); }
  /// Every channel of x as a figure (Exports::channels).
  void exportChannels(const QString& folder, int scale = 0, const QString& format = "png", bool per_channel = false);
  Exports& exports() { return *exports_; }

  // What the views show, for tests and scripts.
  std::shared_ptr<const SolveResult> result() const { return doc_->result(); }
  const MaskStats* masks() const { return doc_->masks(); }
  const Design* design() const { return doc_->design().get(); }
  ImageView* gapsView() const;
  ImageView* resultView() const;
  ResultPage* resultPage() const { return result_; }
  ChartView* groupsChart() const;
  ChartView* inspectorChart() const;
  /// The inspector's time-series chart (shown where the design has dates).
  ChartView* seriesChart() const;
  /// What the inspector's text panel says.
  QString inspectorText() const;
  /// The inspector's x for the selected pixel (empty when none).
  const std::vector<double>& inspectedX() const;
  QString lastError() const { return last_error_; }
  /// What keeps the loaded data from being solved (a design of another
  /// number of rows, none), as the data panel shows it; empty when nothing.
  QString notice() const;

  /// Saves the files, view, channel, pixel and pins (parameters are saved as
  /// they change); closing the window does it.
  void saveSession() const;
  /// Reopens the last session's files and, once read, its view: false when
  /// there is none (or its cube is gone).
  bool restoreSession();
  /// Help > User guide: the guide kept with the sources, in a window of its own.
  void showGuide();

signals:
  void cubeLoaded();
  void solveFinished();
  void solveCancelled();
  void solveFailed(const QString& message);
  void exported(const QStringList& paths);
  void errorShown(const QString& message);

protected:
  bool eventFilter(QObject* watched, QEvent* event) override;
  void closeEvent(QCloseEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

private:
  /// Starts drawing on the result map: a reference area or a profile.
  void beginDrawing(bool area);
  void buildStatusBar();
  void buildFileMenu();
  void buildOtherMenus();
  void connectDocument();
  void connectMaps();
  void fail(const QString& message);
  void onLoaded();
  void onSolved();
  void showSolving(bool on);
  void showHover(int row, int col, double value, const QString& unit);
  void showPixelMenu(int row, int col, const QPoint& global);
  void addRecent(const QStringList& files);
  void rebuildRecentMenu();
  /// The current view's picture: a map at `scale`, or a chart as drawn.
  QImage picture(int scale) const;
  /// The charts an export can draw (Exports::Sources::charts), their view shown.
  std::vector<std::pair<QString, ChartView*>> exportableCharts();

  Document* doc_ = nullptr;
  Session* session_ = nullptr;
  Exports* exports_ = nullptr;
  ParametersPanel* panel_ = nullptr;
  GapsPage* gaps_ = nullptr;
  GroupsPage* groups_ = nullptr;
  ResultPage* result_ = nullptr;
  InspectorPage* inspector_ = nullptr;
  QString last_error_;
  QTabWidget* tabs_ = nullptr;
  std::map<View, QWidget*> pages_;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QLabel* status_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QDockWidget* dock_ = nullptr;
  QDockWidget* marks_dock_ = nullptr;
  MarksPanel* marks_ = nullptr;
  QAction* link_maps_ = nullptr;
};

}  // namespace cubesolve::ui
