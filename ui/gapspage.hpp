#pragma once
// The gaps page: the valid-count map of the cube, or one observation's mask,
// with the selected pixel and the highlight the groups page asks for.

#include <QWidget>

class QComboBox;
class QSlider;

namespace cubesolve::ui {

class Document;
class ImageView;

class GapsPage : public QWidget {
  Q_OBJECT
public:
  explicit GapsPage(Document* doc, QWidget* parent = nullptr);

  ImageView* view() const { return view_; }
  /// The valid-count map, or (mask) observation `band`'s mask.
  void show(bool mask, int band);
  bool showsMask() const;
  int band() const;

private:
  void update();

  Document* doc_;
  ImageView* view_ = nullptr;
  QComboBox* mode_ = nullptr;
  QSlider* band_ = nullptr;
};

}  // namespace cubesolve::ui
