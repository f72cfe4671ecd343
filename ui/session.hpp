#pragma once
// What outlives the window, written from the document: the solve parameters
// (in the settings, as they change) and the session (the files, the pixel,
// the pins, the profiles and what the window showed), reopened on the next start.

#include "document.hpp"

#include <QObject>
#include <QStringList>
#include <QVariantList>

#include <array>
#include <vector>

#include <optional>

namespace cubesolve::ui {

class Session : public QObject {
  Q_OBJECT
public:
  /// What the window shows, beyond the document.
  struct View {
    int view = 0, layer = 0, channel = 0, gaps_mode = 0, band = 0;
  };

  /// Gives `doc` the saved parameters, and saves them as they change from then on.
  explicit Session(Document* doc, QObject* parent = nullptr);

  /// Saves the document's files, pixel and pins with `view`.
  void save(const View& view) const;
  /// Reopens the last session's files; once read, the pixel and pins are set
  /// and restored() says what the window showed. False when there is none
  /// (or its cube is gone).
  bool restore();

signals:
  void restored(const Session::View& view);

private:
  void saveParameters() const;
  void apply();

  Document* doc_;
  struct Pending {
    View view;
    bool use_weights = true;
    int row = -1, col = -1;
    std::vector<std::pair<int, int>> pins;
    QStringList pin_names;
    QVariantList pins_hidden;
    std::vector<std::vector<std::array<double, 2>>> profiles;
    QStringList profile_names;
    QVariantList profiles_hidden;
    std::optional<std::array<int, 4>> reference_area;
    Document::AreaScope reference_scope = Document::AreaScope::All;
    bool reference_shown = true;
  };
  std::optional<Pending> pending_;
};

}  // namespace cubesolve::ui
