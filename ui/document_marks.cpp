// The document's marks: the selected pixel, the pins, the reference's mark and the profiles.
#include "document.hpp"

#include <algorithm>
#include <cmath>

namespace cubesolve::ui {

QString polyline_text(const std::vector<std::array<double, 2>>& vertices) {
  QStringList text;
  for (const auto& v : vertices) text << QString("%1,%2").arg(v[0], 0, 'g', 17).arg(v[1], 0, 'g', 17);
  return text.join(':');
}

std::optional<std::vector<std::array<double, 2>>> polyline_of(const QString& text) {
  std::vector<std::array<double, 2>> vertices;
  for (const QString& v : text.split(':')) {
    const QStringList yx = v.split(',');
    bool ok_y = false, ok_x = false;
    if (yx.size() == 2) vertices.push_back({yx[0].toDouble(&ok_y), yx[1].toDouble(&ok_x)});
    if (!ok_y || !ok_x) return std::nullopt;
  }
  return vertices;
}

void Document::selectPixel(int row, int col) {
  if (!onCube(row, col)) row = col = -1;
  if (std::pair{row, col} == selected_) return;
  selected_ = {row, col};
  emit selectionChanged();
}

void Document::pin() {
  if (selected_.first < 0 || std::find(pins_.begin(), pins_.end(), selected_) != pins_.end()) return;
  pins_.push_back(selected_);
  pin_names_.emplace_back();
  pin_shown_.push_back(true);
  emit selectionChanged();
}

void Document::removePin(std::size_t k) {
  if (k >= pins_.size()) return;
  const auto at = static_cast<std::ptrdiff_t>(k);
  pins_.erase(pins_.begin() + at);
  pin_names_.erase(pin_names_.begin() + at);
  pin_shown_.erase(pin_shown_.begin() + at);
  emit selectionChanged();
}

QString Document::pinName(std::size_t k) const {
  if (k >= pins_.size()) return {};
  return pin_names_[k].isEmpty() ? QString("%1_%2").arg(pins_[k].first).arg(pins_[k].second) : pin_names_[k];
}

void Document::setPinName(std::size_t k, const QString& name) {
  if (k >= pins_.size() || pinName(k) == name.trimmed()) return;
  pin_names_[k] = name.trimmed();
  emit selectionChanged();
}

void Document::setPinShown(std::size_t k, bool shown) {
  if (k >= pins_.size() || pin_shown_[k] == shown) return;
  pin_shown_[k] = shown;
  emit selectionChanged();
}

void Document::setPins(std::vector<std::pair<int, int>> pins) {
  pins.erase(std::remove_if(pins.begin(), pins.end(), [this](const auto& p) { return !onCube(p.first, p.second); }), pins.end());
  pins_ = std::move(pins);
  pin_names_.assign(pins_.size(), QString());
  pin_shown_.assign(pins_.size(), true);
  emit selectionChanged();
}

void Document::setReferenceShown(bool shown) {
  if (shown == reference_shown_) return;
  reference_shown_ = shown;
  emit selectionChanged();
}

bool Document::setReferenceArea(std::optional<std::array<int, 4>> area) {
  if (area) {
    auto& [r0, c0, r1, c1] = *area;
    if (r0 > r1) std::swap(r0, r1);
    if (c0 > c1) std::swap(c0, c1);
    if (!onCube(r0, c0) || !onCube(r1, c1)) return false;
  }
  if (area == reference_area_) return true;
  reference_area_ = area;
  emit unitChanged();
  emit selectionChanged();  // (its outline)
  return true;
}

void Document::setReferenceScope(AreaScope scope) {
  if (scope == reference_scope_) return;
  reference_scope_ = scope;
  emit unitChanged();
}

bool Document::addProfile(std::vector<std::array<double, 2>> vertices, const QString& name) {
  bool distinct = false;
  for (const auto& v : vertices) {
    if (!(std::isfinite(v[0]) && std::isfinite(v[1])) || !onCube(static_cast<int>(std::lround(v[0])), static_cast<int>(std::lround(v[1]))))
      return false;
    distinct = distinct || v != vertices.front();
  }
  if (!distinct) return false;
  int next = 1;  // the first "profile K" not taken
  while (std::any_of(profiles_.begin(), profiles_.end(), [&](const Profile& p) { return p.name == tr("profile %1").arg(next); })) ++next;
  profiles_.push_back({std::move(vertices), name.trimmed().isEmpty() ? tr("profile %1").arg(next) : name.trimmed(), true});
  emit profilesChanged();
  return true;
}

void Document::removeProfile(std::size_t k) {
  if (k >= profiles_.size()) return;
  profiles_.erase(profiles_.begin() + static_cast<std::ptrdiff_t>(k));
  emit profilesChanged();
}

void Document::setProfileName(std::size_t k, const QString& name) {
  if (k >= profiles_.size() || name.trimmed().isEmpty() || profiles_[k].name == name.trimmed()) return;
  profiles_[k].name = name.trimmed();
  emit profilesChanged();
}

void Document::setProfileShown(std::size_t k, bool shown) {
  if (k >= profiles_.size() || profiles_[k].shown == shown) return;
  profiles_[k].shown = shown;
  emit profilesChanged();
}

void Document::setProfileBand(int pixels) {
  pixels = std::clamp(pixels | 1, 1, 101);
  if (pixels == profile_band_) return;
  profile_band_ = pixels;
  emit profilesChanged();
}

}  // namespace cubesolve::ui
