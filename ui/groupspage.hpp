#pragma once
// The groups page: the histogram of mask-group sizes (how many pixels share
// one mask); a bar clicked highlights its pixels on the gaps map.

#include <QWidget>

#include <cstdint>
#include <vector>

class QLabel;
class QPushButton;

namespace cubesolve::ui {

class ChartView;
class Document;

class GroupsPage : public QWidget {
  Q_OBJECT
public:
  explicit GroupsPage(Document* doc, QWidget* parent = nullptr);

  ChartView* chart() const { return chart_; }
  /// Selects bar `bin` (-1: none).
  void selectBin(int bin);

signals:
  /// The pixels of the selected bar (empty: none).
  void highlighted(const std::vector<std::uint8_t>& pixels);
  void message(const QString& text, int timeout_ms);

private:
  void update();

  Document* doc_;
  ChartView* chart_ = nullptr;
  QLabel* label_ = nullptr;
  QPushButton* clear_ = nullptr;
  int selected_ = -1;
};

}  // namespace cubesolve::ui
