#include "session.hpp"

#include "document.hpp"

#include <cubesolve/engine/device.hpp>

#include <QFileInfo>
#include <QLocale>
#include <QPoint>
#include <QSettings>

#include <algorithm>

namespace cubesolve::ui {


Session::Session(Document* doc, QObject* parent) : QObject(parent), doc_(doc) {
  QSettings settings;
  SolveOptions o = doc_->options();
  o.min_valid = std::max(1, settings.value("params/min_valid", 1).toInt());
  o.ridge = std::max(0.0, settings.value("params/ridge", 0.0).toDouble());
  o.memory = static_cast<std::size_t>(std::clamp(settings.value("params/memory_mb", 256).toInt(), 16, 1 << 20)) << 20;
  bool ok = false;
  const double rcond = QLocale::c().toDouble(settings.value("params/rcond", "").toString(), &ok);
  o.rcond = ok && rcond >= 0 && rcond < 1 ? rcond : -1;
  try {
    o.device = parse_device(settings.value("params/device", "auto").toString().toStdString());
  } catch (const std::exception&) {
    o.device = Device::Auto;
  }
  o.device_float64 = settings.value("params/device_float64", false).toBool();
  o.std_errors = settings.value("params/std_errors", false).toBool();
  try {
    o.loss = parse_loss(settings.value("params/loss", "l2").toString().toStdString(), o.huber_delta);
  } catch (const std::exception&) {
    o.loss = Loss::L2;
  }
  if (o.loss != Loss::L2) o.std_errors = false, o.ridge = 0;
  doc_->setAutoSolve(settings.value("params/auto", true).toBool());
  doc_->setOptions(o);
  const QString unit = settings.value("view/unit", "mm").toString();
  if (QStringList{"mm", "cm", "m", "radian"}.contains(unit)) doc_->setUnit(unit);
  connect(doc_, &Document::unitChanged, this, [this] { QSettings().setValue("view/unit", doc_->unit()); });
  connect(doc_, &Document::parametersChanged, this, &Session::saveParameters);
  connect(doc_, &Document::loaded, this, &Session::apply);
  connect(doc_, &Document::failed, this, [this] { pending_.reset(); });  // a session whose files could not be read is not applied to the next ones
}

void Session::saveParameters() const {
  QSettings settings;
  const SolveOptions& o = doc_->options();
  settings.setValue("params/min_valid", o.min_valid);
  settings.setValue("params/ridge", o.ridge);
  settings.setValue("params/memory_mb", static_cast<int>(o.memory >> 20));
  settings.setValue("params/rcond", o.rcond >= 0 ? QString::number(o.rcond, 'g', QLocale::FloatingPointShortest) : QString());
  settings.setValue("params/auto", doc_->autoSolve());
  settings.setValue("params/device", QString::fromUtf8(device_name(o.device)));
  settings.setValue("params/device_float64", o.device_float64);
  settings.setValue("params/std_errors", o.std_errors);
  settings.setValue("params/loss", o.loss == Loss::Huber && o.huber_delta > 0 ? QString("huber:%1").arg(o.huber_delta, 0, 'g', 17)
                                                                               : QString::fromUtf8(loss_name(o.loss)));
}

void Session::save(const View& view) const {
  QSettings settings;
  settings.beginGroup("session");
  settings.remove("");
  const auto cube = doc_->cube();
  if (cube && QFileInfo(doc_->cubeName()).isFile()) {
    settings.setValue("files", doc_->files());
  } else if (cube && doc_->cubeName().startsWith("demo: ")) {
    settings.setValue("demo", doc_->cubeName().mid(6));
    settings.setValue("demo_size", static_cast<int>(cube->dim(1)));
  }
  settings.setValue("use_weights", doc_->useWeights());
  const StackOptions& stack = doc_->stackOptions();
  if (doc_->isStack() && stack.ref_y >= 0) settings.setValue("reference", QPoint(static_cast<int>(stack.ref_x), static_cast<int>(stack.ref_y)));
  if (doc_->isStack() && stack.ref_radius > 0) settings.setValue("reference_radius", static_cast<int>(stack.ref_radius));
  if (doc_->refIndex() > 0) settings.setValue("ref_date", doc_->refDate());
  settings.setValue("view", view.view);
  settings.setValue("layer", view.layer);
  settings.setValue("channel", view.channel);
  settings.setValue("gaps_mode", view.gaps_mode);
  settings.setValue("band", view.band);
  settings.setValue("pixel", QPoint(doc_->selected().second, doc_->selected().first));
  QVariantList pins;
  for (const auto& [r, c] : doc_->pins()) pins << QPoint(c, r);
  settings.setValue("pinned", pins);
  QStringList names;
  for (std::size_t k = 0; k < doc_->pins().size(); ++k) names << doc_->pinName(k);
  settings.setValue("pin_names", names);
  QVariantList hidden;  // the indices of those hidden
  for (std::size_t k = 0; k < doc_->pins().size(); ++k)
    if (!doc_->pinShown(k)) hidden << static_cast<int>(k);
  settings.setValue("pins_hidden", hidden);
  QStringList profiles, profile_names;  // each as Y0,X0:Y1,X1:... (--profile)
  hidden.clear();
  for (std::size_t k = 0; k < doc_->profiles().size(); ++k) {
    const Document::Profile& p = doc_->profiles()[k];
    profiles << polyline_text(p.vertices);
    profile_names << p.name;
    if (!p.shown) hidden << static_cast<int>(k);
  }
  settings.setValue("profiles", profiles);
  settings.setValue("profile_names", profile_names);
  settings.setValue("profiles_hidden", hidden);
  settings.setValue("profile_band", doc_->profileBand());
  if (const auto& area = doc_->referenceArea()) settings.setValue("reference_area", QList<QVariant>{(*area)[0], (*area)[1], (*area)[2], (*area)[3]});
  settings.setValue("reference_shown", doc_->referenceShown());
  settings.setValue("reference_scope", static_cast<int>(doc_->referenceScope()));
}

bool Session::restore() {
  QSettings settings;
  settings.beginGroup("session");
  const QStringList files = settings.value("files").toStringList();
  const QString demo = settings.value("demo").toString();
  if (files.isEmpty() && demo.isEmpty()) return false;
  if (!files.isEmpty() && !QFileInfo(files[0]).isFile()) return false;
  Pending p;
  p.use_weights = settings.value("use_weights", true).toBool();
  p.view.view = settings.value("view", 0).toInt();
  p.view.layer = settings.value("layer", 0).toInt();
  p.view.channel = settings.value("channel", 0).toInt();
  p.view.gaps_mode = settings.value("gaps_mode", 0).toInt();
  p.view.band = settings.value("band", 0).toInt();
  const QPoint pixel = settings.value("pixel", QPoint(-1, -1)).toPoint();
  p.row = pixel.y();
  p.col = pixel.x();
  for (const QVariant& v : settings.value("pinned").toList()) p.pins.emplace_back(v.toPoint().y(), v.toPoint().x());
  p.pin_names = settings.value("pin_names").toStringList();
  p.pins_hidden = settings.value("pins_hidden").toList();
  for (const QString& line : settings.value("profiles").toStringList())  // (one that does not read is dropped when applied)
    p.profiles.push_back(polyline_of(line).value_or(std::vector<std::array<double, 2>>{}));
  p.profile_names = settings.value("profile_names").toStringList();
  p.profiles_hidden = settings.value("profiles_hidden").toList();
  if (const QVariantList area = settings.value("reference_area").toList(); area.size() == 4)
    p.reference_area = std::array{area[0].toInt(), area[1].toInt(), area[2].toInt(), area[3].toInt()};
  p.reference_shown = settings.value("reference_shown", true).toBool();
  p.reference_scope = static_cast<Document::AreaScope>(std::clamp(settings.value("reference_scope", 0).toInt(), 0, 2));
  doc_->setProfileBand(settings.value("profile_band", 1).toInt());
  doc_->setRefDate(settings.value("ref_date").toString());  // checked against the dates once they are read
  pending_ = p;
  if (settings.contains("reference") || settings.contains("reference_radius")) {  // the reference picked for the stack
    InputOptions o = doc_->inputOptions();
    if (settings.contains("reference")) {
      const QPoint ref = settings.value("reference").toPoint();
      o.stack.ref_y = ref.y();
      o.stack.ref_x = ref.x();
    }
    o.stack.ref_radius = settings.value("reference_radius", 0).toInt();
    doc_->setInputOptions(o);
  }
  if (!files.isEmpty()) doc_->openFiles(files[0], files.value(1), files.value(2));
  else doc_->openDemo(demo, settings.value("demo_size", 0).toInt());
  return true;
}

void Session::apply() {
  if (!pending_ || !doc_->cube()) return;
  const Pending p = *pending_;
  pending_.reset();
  doc_->setUseWeights(p.use_weights);
  doc_->setPins(p.pins);
  for (int k = 0; k < p.pin_names.size(); ++k) doc_->setPinName(static_cast<std::size_t>(k), p.pin_names[k]);
  for (const QVariant& k : p.pins_hidden) doc_->setPinShown(k.toUInt(), false);
  for (std::size_t k = 0; k < p.profiles.size(); ++k) doc_->addProfile(p.profiles[k], p.profile_names.value(static_cast<int>(k)));
  for (const QVariant& k : p.profiles_hidden) doc_->setProfileShown(k.toUInt(), false);
  doc_->setReferenceArea(p.reference_area);
  doc_->setReferenceScope(p.reference_scope);
  doc_->setReferenceShown(p.reference_shown);
  doc_->selectPixel(p.row, p.col);
  emit restored(p.view);
}

}  // namespace cubesolve::ui
