#pragma once
// The CubeSolve main window: the data and parameters dock, and the gaps,
// groups, result and inspector views over a Document, which does every
// read, solve and export on the worker thread.

#include "chartview.hpp"
#include "document.hpp"

#include <cubesolve/engine/engine.hpp>

#include <QMainWindow>
#include <QTimer>

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

class QCheckBox;
class QComboBox;
class QDockWidget;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QMenu;
class QProgressBar;
class QPushButton;
class QSlider;
class QSpinBox;
class QTabWidget;
class QTextEdit;

namespace cubesolve::ui {

class ImageView;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  enum class View { Gaps, Groups, Result, Inspector };
  enum class Layer { Solution, Model, ResidualRms, Rank, Status, Velocity };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  Document& document() { return *doc_; }

  // Loading, on the worker thread: cubeLoaded() follows (and a solve when a
  // cube and its design are there), or a message (lastError()).
  void openDemo(const QString& name, int size = 0) { doc_->openDemo(name, size); }
  void openCube(const QString& path) { doc_->openCube(path); }
  void openDesign(const QString& path) { doc_->openDesign(path); }
  void openWeights(const QString& path) { doc_->openWeights(path); }
  void buildDesign(const QString& spec, const QString& pairs, const QString& times) {
    doc_->buildDesign(spec, pairs, times);
  }
  void openAny(const QString& path) { doc_->openAny(path); }

  /// Solves with the current parameters on the worker thread.
  void solve();
  void cancelSolve() { doc_->cancel(); }
  /// True from solve() until its result, cancellation or failure has been shown.
  bool solving() const { return doc_->solving(); }

  void showView(View view);
  View currentView() const;
  void showLayer(Layer layer, int channel);
  /// The gaps view: the valid-count map, or (mask) one observation's mask.
  void showGaps(bool mask, int band);
  void selectPixel(int row, int col);
  void selectGroupBin(int bin);
  /// For a MintPy stack: reads it again referenced at (row, col).
  void setReferencePixel(int row, int col) { doc_->setReference(row, col); }
  /// The inspector's time-series chart (shown where the design has dates).
  ChartView* seriesChart() const { return series_; }
  /// Keeps the selected pixel on the inspector's chart (and in the session).
  void pinPixel();
  void clearPins();
  const std::vector<std::pair<int, int>>& pinned() const { return pinned_; }

  /// The current view as a PNG: a map as a figure at data resolution (each
  /// value `scale` pixels wide, 0: about 600 pixels in all) with its title
  /// and legend in the colours on screen; a chart as drawn. False (and a
  /// message) on failure; exported() on success.
  bool exportViewPng(const QString& path, int scale = 0);
  /// On the worker thread; exported() or a message follows.
  void exportSolution(const QString& path, bool cubes = false) { doc_->exportSolution(path, cubes); }
  /// Every channel of x as a figure in the solution layer's colours.
  void exportChannelsPng(const QString& folder, int scale = 0);

  // What the views show, for tests and scripts.
  std::shared_ptr<const SolveResult> result() const { return doc_->result(); }
  const MaskStats* masks() const { return doc_->masks(); }
  const Design* design() const { return doc_->design().get(); }
  ImageView* gapsView() const { return gaps_; }
  ImageView* resultView() const { return result_view_; }
  ChartView* groupsChart() const { return groups_; }
  ChartView* inspectorChart() const { return inspector_; }
  /// What the inspector's text panel says.
  QString inspectorText() const;
  /// The inspector's x for the selected pixel (empty when none).
  const std::vector<double>& inspectedX() const { return inspected_x_; }
  QString lastError() const { return last_error_; }
  /// What keeps the loaded data from being solved (a design of another
  /// number of rows, none), as the data panel shows it; empty when nothing.
  QString notice() const { return notice_; }
  SolveOptions options() const;

  /// Saves the files, view, channel, pixel and pins (parameters are saved as
  /// they change); closing the window does it.
  void saveSession() const;
  /// Reopens the last session's files and, once read, its view: false when
  /// there is none (or its cube is gone).
  bool restoreSession();
  void setMethod(Method method) { method_ = method; }

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
  QWidget* buildGapsPage();
  QWidget* buildGroupsPage();
  QWidget* buildResultPage();
  QWidget* buildInspectorPage();
  void buildParametersDock();
  void buildStatusBar();
  void buildFileMenu();
  void buildOtherMenus();
  void connectDocument();
  void restoreSettings();
  void saveParameters();
  /// Shows `o` in the parameter widgets (no solve follows).
  void showParameters(const SolveOptions& o);
  void applySession();

  void fail(const QString& message);
  void onLoaded();
  void onSolved();
  void showSolving(bool on);
  void updateDataPanel();
  void updateGaps();
  void updateGroups();
  void updateResult();
  void updateInspector();
  ChartView::Series pixelSeries(int row, int col) const;
  void addRecent(const QStringList& files);
  void rebuildRecentMenu();
  void parametersChanged();
  void layerSettingsChanged();
  void showLayerSettings();
  void showHover(int row, int col, double value);
  void showPixelMenu(int row, int col, const QPoint& global);
  /// The design's dates where they match its unknowns (M + 1 of them), else none.
  std::vector<std::string> unknownDates() const;
  /// A result layer's colours and range for values `v` (as its settings say).
  ColorScale layerScale(Layer layer, const std::vector<double>& v) const;

  Document* doc_ = nullptr;
  /// A session's view, applied when its files are loaded.
  struct Session {
    bool use_weights = true;
    int view = 0, layer = 0, channel = 0, gaps_mode = 0, band = 0, row = -1, col = -1;
    std::vector<std::pair<int, int>> pinned;
  };
  std::optional<Session> session_;
  std::vector<std::pair<int, int>> pinned_;  // (row, col) compared in the inspector
  std::vector<double> inspected_x_;
  QString last_error_, notice_;
  int selected_row_ = -1, selected_col_ = -1, selected_bin_ = -1;
  Method method_ = Method::Auto;

  QTimer resolve_timer_;
  QTabWidget* tabs_ = nullptr;
  std::map<View, QWidget*> pages_;
  ImageView* gaps_ = nullptr;
  ImageView* result_view_ = nullptr;
  ChartView* groups_ = nullptr;
  ChartView* inspector_ = nullptr;
  ChartView* series_ = nullptr;
  QLabel* channel_date_ = nullptr;
  QLabel* data_label_ = nullptr;
  QLabel* groups_label_ = nullptr;
  QPushButton* clear_highlight_ = nullptr;
  QPushButton* unpin_ = nullptr;
  QTextEdit* inspector_text_ = nullptr;
  QComboBox* gaps_mode_ = nullptr;
  QSlider* band_slider_ = nullptr;
  QComboBox* layer_ = nullptr;
  QSlider* channel_slider_ = nullptr;
  QLabel* channel_label_ = nullptr;
  QComboBox* colormap_ = nullptr;
  QCheckBox* reversed_ = nullptr;
  QSpinBox* channel_box_ = nullptr;
  /// Each result layer's colours and range.
  struct LayerView {
    int colormap = 0;  // 0: automatic (diverging for signed data)
    bool reversed = false, auto_range = true;
    double lo = 0, hi = 1;
  };
  std::array<LayerView, 6> layer_views_{};
  QCheckBox* auto_range_ = nullptr;
  QDoubleSpinBox* range_lo_ = nullptr;
  QDoubleSpinBox* range_hi_ = nullptr;
  QComboBox* device_ = nullptr;
  QComboBox* device_precision_ = nullptr;  // only where a GPU is usable
  QLineEdit* rcond_ = nullptr;
  QSpinBox* min_valid_ = nullptr;
  QDoubleSpinBox* ridge_ = nullptr;
  QCheckBox* use_weights_ = nullptr;
  QCheckBox* auto_solve_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_ = nullptr;
  QLabel* status_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QDockWidget* dock_ = nullptr;
};

}  // namespace cubesolve::ui
