#pragma once
// The chart of the profiles along the map the result page shows: each shown
// profile's values, averaged across the document's band with ±1 std about
// them, in the profile's colour; on a model layer also the observed values
// of that observation. Folded away (shownChanged()) while no profile is shown.

#include "chartview.hpp"

#include <cubesolve/image/profile.hpp>

#include <QString>

#include <vector>

namespace cubesolve::ui {

class Document;
class ResultPage;

class ProfileChart : public ChartView {
  Q_OBJECT
public:
  ProfileChart(Document* doc, const ResultPage* page, QWidget* parent = nullptr);

  /// Each shown profile along the map shown: its name, its points (values
  /// in the unit shown), and the observed values along it (model layer), or none.
  struct Line {
    QString name;
    std::vector<ProfilePoint> points;
    std::vector<ProfilePoint> observed;
  };
  const std::vector<Line>& lines() const { return lines_; }
  /// The lines as CSV: a row per point of each profile (profile, distance
  /// and where it lies in pixels and, for a georeferenced cube, in map
  /// coordinates; the mean, std and count across the line; observed), under
  /// comment lines naming the map, its unit and the band.
  QString csv() const;
  void refresh();
  /// Whether it charts a profile (it is folded away otherwise).
  bool shown() const { return shown_; }

signals:
  void shownChanged(bool shown);

private:
  Document* doc_;
  const ResultPage* page_;
  std::vector<Line> lines_;
  bool shown_ = false;
};

}  // namespace cubesolve::ui
