#pragma once
// The CubeSolve main window: data panel, parameters, the gaps / groups /
// result / inspector views, solving on a worker thread, export.

#include <cubesolve/engine/engine.hpp>
#include <cubesolve/image/image.hpp>
#include <cubesolve/data/mask.hpp>
#include <cubesolve/io/raster.hpp>

#include <QMainWindow>
#include <QTimer>

#include <functional>
#include <memory>
#include <optional>

class QCheckBox;
class QComboBox;
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

class ChartView;
class ImageView;
class SolveController;

class MainWindow : public QMainWindow {
  Q_OBJECT
public:
  enum class View { Gaps, Groups, Result, Inspector };
  enum class Layer { Solution, Model, ResidualRms, Rank, Status };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Loading. Errors are shown in a dialog and returned as false (the
  /// message in lastError()); the previous data stays.
  bool openDemo(const QString& name, int size = 0);
  bool openCube(const QString& path);
  /// Reads the cube and analyses its masks on the worker thread (the window
  /// stays responsive with large files); cubeLoaded() or a message follows.
  /// What the File menu, drag and drop and recent files use.
  void openCubeInBackground(const QString& path);
  bool openDesign(const QString& path);
  bool openWeights(const QString& path);
  /// Builds the design: "sbas" from a pairs file, or "poly:D" /
  /// "harmonic:K[:P]" from a times file (empty: band index).
  bool buildDesign(const QString& spec, const QString& pairs, const QString& times);
  /// Opens a MintPy ifgramStack.h5: its kept interferograms and their SBAS design.
  bool openStack(const QString& path);
  /// Opens a file as what it looks like: CSV or 2-D = design, 3-D = cube, or
  /// weights when it has the cube's shape and a design is loaded.
  bool openAny(const QString& path);

  /// Solves with the current parameters on the worker thread.
  void solve();
  void cancelSolve();
  /// True from solve() until its result, cancellation or failure has been shown.
  bool solving() const;

  void showView(View view);
  void showLayer(Layer layer, int channel);
  void selectPixel(int row, int col);
  void selectGroupBin(int bin);

  bool exportViewPng(const QString& path);
  /// X and its diagnostics beside it (_nvalid, _rank, _rss, _status): .npy,
  /// or GeoTIFF (.tif) with the cube's georeference.
  bool exportSolution(const QString& path);
  bool exportChannelsPng(const QString& folder);

  // What the views show, for tests and scripts.
  std::shared_ptr<const SolveResult> result() const { return result_; }
  const MaskStats* masks() const { return masks_ ? &*masks_ : nullptr; }
  const Design* design() const { return design_.get(); }
  ImageView* gapsView() const { return gaps_; }
  ImageView* resultView() const { return result_view_; }
  ChartView* groupsChart() const { return groups_; }
  ChartView* inspectorChart() const { return inspector_; }
  /// The inspector's x for the selected pixel (empty when none).
  const std::vector<double>& inspectedX() const { return inspected_x_; }
  QString lastError() const { return last_error_; }
  SolveOptions options() const;
  void setMethod(Method method) { method_ = method; }

signals:
  void cubeLoaded();
  void solveFinished();
  void solveCancelled();
  void solveFailed(const QString& message);

protected:
  void closeEvent(QCloseEvent* e) override;
  void dragEnterEvent(QDragEnterEvent* e) override;
  void dropEvent(QDropEvent* e) override;

private:
  /// A cube read and analysed (possibly on the worker thread), then shown.
  struct LoadedCube {
    std::shared_ptr<const Array> cube;
    MaskStats masks;
    GeoReference geo;
  };
  static LoadedCube loadCube(const std::string& path);
  void showCube(LoadedCube loaded, const QString& path);
  void buildUi();
  void buildMenus();
  void setCube(std::shared_ptr<const Array> cube, const QString& name, std::optional<MaskStats> masks = {});
  void setDesign(std::shared_ptr<const Design> design, const QString& name);
  void fail(const QString& message);
  /// Runs `action`; an exception becomes a message (fail) and false.
  bool attempt(const std::function<void()>& action);
  void updateDataPanel();
  void updateGaps();
  void updateGroups();
  void updateResult();
  void updateInspector();
  void addRecent(const QString& path);
  void rebuildRecentMenu();
  void parametersChanged();
  void onFinished(int id, std::shared_ptr<const SolveResult> result);

  std::shared_ptr<const Array> cube_, weights_;
  std::shared_ptr<const Design> design_;
  std::optional<MaskStats> masks_;
  GeoReference geo_;
  std::shared_ptr<const SolveResult> result_;
  std::vector<double> inspected_x_;
  QString cube_name_, design_name_, weights_name_, last_error_;
  int selected_row_ = -1, selected_col_ = -1, pending_id_ = 0, selected_bin_ = -1;
  Method method_ = Method::Auto;
  bool awaiting_ = false;

  SolveController* controller_ = nullptr;
  QTimer resolve_timer_;
  QTabWidget* tabs_ = nullptr;
  ImageView* gaps_ = nullptr;
  ImageView* result_view_ = nullptr;
  ChartView* groups_ = nullptr;
  ChartView* inspector_ = nullptr;
  QLabel* data_label_ = nullptr;
  QLabel* groups_label_ = nullptr;
  QTextEdit* inspector_text_ = nullptr;
  QComboBox* gaps_mode_ = nullptr;
  QSlider* band_slider_ = nullptr;
  QComboBox* layer_ = nullptr;
  QSlider* channel_slider_ = nullptr;
  QLabel* channel_label_ = nullptr;
  QComboBox* colormap_ = nullptr;
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
};

}  // namespace cubesolve::ui
