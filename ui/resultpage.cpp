#include "resultpage.hpp"

#include "document.hpp"
#include "imageview.hpp"
#include "playback.hpp"
#include "profilechart.hpp"
#include "rangehistogram.hpp"
#include "timeline.hpp"

#include <cubesolve/image/image.hpp>
#include <cubesolve/image/profile.hpp>

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QSettings>
#include <QSlider>
#include <QSplitter>
#include <QSpinBox>
#include <QVBoxLayout>

namespace cubesolve::ui {

namespace {

/// What a layer is drawn from.
struct LayerInput {
  const SolveResult& result;
  const Design& design;
  const std::vector<std::string>& dates;  // the unknowns' dates (M + 1), or none
  const std::vector<DatePair>& pairs;     // the observations' pairs, or none
  const std::vector<std::string>& names;  // x's channels' names (dates, terms), or none
  const std::vector<Harmonic>& harmonics;  // a harmonic design's periodic terms, or none
  std::size_t ref;                         // the index of the date the time series is relative to
  QString file;
};

/// A layer's map: its values, style, and what its channel is (a date, a pair).
struct LayerMap {
  std::vector<double> values;
  MapStyle style;
  QString channel;
};

/// One layer: its name, what it explains, whether its values are signed
/// (a diverging scale), which inputs it applies to, its channels and its map.
struct LayerEntry {
  Layer id;
  const char* name;
  const char* tooltip;
  bool is_signed;
  const char* per;  // the values in the cube's unit (per year: "/yr"), or null (counts, categories)
  bool (*applies)(const Document&);
  std::size_t (*channels)(const Document&);
  LayerMap (*draw)(const LayerInput&, std::size_t channel);
};

bool always(const Document&) { return true; }
std::size_t one(const Document&) { return 1; }
bool periodic(const Document& doc) { return !doc.harmonics().empty(); }
bool dated(const Document& doc) { return !doc.unknownDates().empty(); }

/// A map of each pixel's line through its time series (`f`: its slope, or
/// the slope's error), per year of MintPy's time axis.
LayerMap of_line(const LayerInput& in, Array (*f)(const Array&, const std::vector<double>&), const QString& what) {
  LayerMap m{plane(f(in.result.x, mintpy_years(in.dates, "date"))), {}, {}};
  m.style.title = ResultPage::tr("%1 — %2, per year (%3 to %4)").arg(in.file, what).arg(iso_day(in.dates.front()), iso_day(in.dates.back()));
  return m;
}
std::size_t each_harmonic(const Document& doc) { return doc.harmonics().size(); }

const LayerEntry kLayers[] = {
    {Layer::Solution, QT_TRANSLATE_NOOP("ResultPage", "Solution x"), QT_TRANSLATE_NOOP("ResultPage", "The unknowns of each pixel, one channel each"),
     true, "", always, [](const Document& d) { return d.design()->cols(); },
     [](const LayerInput& in, std::size_t ch) {
       LayerMap m{plane(in.result.x, ch), {}, {}};
       if (!in.dates.empty()) {
         if (in.ref > 0)  // the series relative to another date than the first
           for (std::size_t p = 0; p < m.values.size(); ++p) m.values[p] -= in.result.x.value((in.ref - 1) * m.values.size() + p);
         m.channel = iso_day(in.dates[ch + 1]);
         m.style.title = ResultPage::tr("%1 — x[%2]: %3, relative to %4").arg(in.file).arg(ch).arg(m.channel, iso_day(in.dates[in.ref]));
       } else if (ch < in.names.size()) {  // a term of the design
         m.channel = QString::fromStdString(in.names[ch]);
         m.style.title = ResultPage::tr("%1 — x[%2]: %3").arg(in.file).arg(ch).arg(m.channel);
       } else {
         m.style.title = ResultPage::tr("%1 — x[%2] of %3").arg(in.file).arg(ch).arg(in.design.cols());
       }
       return m;
     }},
    {Layer::Model, QT_TRANSLATE_NOOP("ResultPage", "Model A·x (gap-filled)"),
     QT_TRANSLATE_NOOP("ResultPage", "The fitted value of each observation, missing ones included"), true, "", always,
     [](const Document& d) { return d.design()->rows(); },
     [](const LayerInput& in, std::size_t ch) {
       LayerMap m{plane(model_band(in.design, in.result.x, ch)), {}, {}};
       if (ch < in.pairs.size()) m.channel = QString::fromStdString(pair_names({in.pairs[ch]})[0]);
       m.style.title = m.channel.isEmpty() ? ResultPage::tr("%1 — model A·x, observation %2 (gaps filled)").arg(in.file).arg(ch)
                                           : ResultPage::tr("%1 — model A·x, observation %2 (%3, gaps filled)").arg(in.file).arg(ch).arg(m.channel);
       return m;
     }},
    {Layer::ResidualRms, QT_TRANSLATE_NOOP("ResultPage", "Residual RMS"),
     QT_TRANSLATE_NOOP("ResultPage", "The root mean square of each pixel's residuals over its valid observations"), false, "", always, one,
     [](const LayerInput& in, std::size_t) {
       return LayerMap{plane(residual_rms(in.result)), {{}, {}, false, ResultPage::tr("%1 — residual RMS").arg(in.file), {}}, {}};
     }},
    {Layer::Rank, QT_TRANSLATE_NOOP("ResultPage", "Rank"),
     QT_TRANSLATE_NOOP("ResultPage", "The numerical rank of each pixel's design on its valid rows"), false, nullptr, always, one,
     [](const LayerInput& in, std::size_t) {
       return LayerMap{plane(in.result.rank),
                       {{}, {}, true, ResultPage::tr("%1 — numerical rank of A_V (of %2)").arg(in.file).arg(in.design.cols()), {}},
                       {}};
     }},
    {Layer::Status, QT_TRANSLATE_NOOP("ResultPage", "Status"),
     QT_TRANSLATE_NOOP("ResultPage", "Why a pixel was solved as it was, or not at all"), false, nullptr, always, one,
     [](const LayerInput& in, std::size_t) {
       LayerMap m{plane(in.result.status), {}, {}};
       m.style.title = ResultPage::tr("%1 — status of each pixel").arg(in.file);
       for (int k = 0; k < static_cast<int>(kStatusCount); ++k) {  // a stack's reference pixel, a robust loss's stragglers where there are
         const auto status = static_cast<PixelStatus>(k);
         if ((status != PixelStatus::Reference && status != PixelStatus::NotConverged) || in.result.count(status) > 0)
           m.style.categories.emplace_back(k, QString::fromUtf8(status_name(status)));
       }
       return m;
     }},
    {Layer::Velocity, QT_TRANSLATE_NOOP("ResultPage", "Linear velocity (per year)"),
     QT_TRANSLATE_NOOP("ResultPage", "The least-squares slope of each pixel's time series over its valid dates, per year of 365.25 days, as MintPy's timeseries2velocity.py (designs with dates)"), true, "/yr",
     dated, one, [](const LayerInput& in, std::size_t) {
       return of_line(in, linear_rate, ResultPage::tr("linear velocity of the time series"));
     }},
    {Layer::Amplitude, QT_TRANSLATE_NOOP("ResultPage", "Seasonal amplitude"),
     QT_TRANSLATE_NOOP("ResultPage", "The amplitude of each periodic term of a harmonic fit, sqrt(cos² + sin²) (harmonic designs)"), false, "",
     periodic, each_harmonic,
     [](const LayerInput& in, std::size_t ch) {
       const Harmonic& h = in.harmonics[ch];
       LayerMap m{plane(harmonic_amplitude(in.result.x, h)), {}, QString::fromStdString(h.name)};
       m.style.title = ResultPage::tr("%1 — %2 amplitude").arg(in.file, m.channel);
       return m;
     }},
    {Layer::Peak, QT_TRANSLATE_NOOP("ResultPage", "Seasonal peak (phase)"),
     QT_TRANSLATE_NOOP("ResultPage", "When each periodic term of a harmonic fit peaks within its period: days after 1 January for dated "
                                     "times (harmonic designs)"),
     false, nullptr, periodic, each_harmonic,
     [](const LayerInput& in, std::size_t ch) {
       const Harmonic& h = in.harmonics[ch];
       LayerMap m{plane(harmonic_peak(in.result.x, h)), {}, QString::fromStdString(h.name)};
       m.style.unit = h.unit_days > 0 ? ResultPage::tr("day") : ResultPage::tr("time");
       m.style.title = (h.unit_days > 0 ? ResultPage::tr("%1 — %2 peak, days into its %3-day period")
                                        : ResultPage::tr("%1 — %2 peak, time into its period of %3"))
                           .arg(in.file, m.channel)
                           .arg(h.span(), 0, 'g', 5);
       return m;
     }},
    {Layer::StdError, QT_TRANSLATE_NOOP("ResultPage", "Standard error of x"),
     QT_TRANSLATE_NOOP("ResultPage", "Each unknown's standard error on the pixel's own valid rows, sqrt(diag(s²·(A_Vᵀ W A_V)⁺)), "
                                     "s² = rss / (valid rows − rank); empty where no degree of freedom is left (solved with "
                                     "Standard errors ticked)"),
     false, "", [](const Document& d) { return d.result() && !d.result()->std_error.empty(); },
     [](const Document& d) { return d.design()->cols(); },
     [](const LayerInput& in, std::size_t ch) {
       LayerMap m{plane(in.result.std_error, ch), {}, {}};
       if (!in.dates.empty()) {  // the series' own: relative to the first date, whatever the map of x is relative to
         m.channel = iso_day(in.dates[ch + 1]);
         m.style.title = ResultPage::tr("%1 — standard error of x[%2]: %3, relative to %4").arg(in.file).arg(ch).arg(m.channel, iso_day(in.dates[0]));
       } else if (ch < in.names.size()) {
         m.channel = QString::fromStdString(in.names[ch]);
         m.style.title = ResultPage::tr("%1 — standard error of x[%2]: %3").arg(in.file).arg(ch).arg(m.channel);
       } else {
         m.style.title = ResultPage::tr("%1 — standard error of x[%2] of %3").arg(in.file).arg(ch).arg(in.design.cols());
       }
       return m;
     }},
    {Layer::Coherence, QT_TRANSLATE_NOOP("ResultPage", "Temporal coherence"),
     QT_TRANSLATE_NOOP("ResultPage", "MintPy's temporal coherence of each pixel's phase residuals, |Σ exp(i·e)| / n: 1 where the fit "
                                     "explains every interferogram (MintPy stacks)"),
     false, nullptr, [](const Document& d) { return d.result() && !d.result()->temporal_coherence.empty(); }, one,
     [](const LayerInput& in, std::size_t) {
       return LayerMap{plane(in.result.temporal_coherence),
                       {{}, {}, false, ResultPage::tr("%1 — temporal coherence of the phase residuals").arg(in.file), {}},
                       {}};
     }},
    {Layer::Objective, QT_TRANSLATE_NOOP("ResultPage", "Robust objective"),
     QT_TRANSLATE_NOOP("ResultPage", "Each pixel's objective at its robust fit: Σ|f| (L1) or Huber's Σρ(f) over its weighted residuals "
                                     "(robust losses)"),
     false, nullptr, [](const Document& d) { return d.result() && !d.result()->objective.empty(); }, one,
     [](const LayerInput& in, std::size_t) {
       return LayerMap{plane(in.result.objective), {{}, {}, false, ResultPage::tr("%1 — objective of the robust fit").arg(in.file), {}}, {}};
     }},
    {Layer::Iterations, QT_TRANSLATE_NOOP("ResultPage", "Iterations"),
     QT_TRANSLATE_NOOP("ResultPage", "The iterations each pixel's robust fit took (reweightings or ADMM iterations, and simplex steps; robust losses)"), false,
     nullptr, [](const Document& d) { return d.result() && !d.result()->iterations.empty(); }, one,
     [](const LayerInput& in, std::size_t) {
       return LayerMap{plane(in.result.iterations),
                       {{}, {}, true, ResultPage::tr("%1 — iterations of the robust fit").arg(in.file), {}}, {}};
     }},
    {Layer::VelocityStd, QT_TRANSLATE_NOOP("ResultPage", "Velocity standard error"),
     QT_TRANSLATE_NOOP("ResultPage", "The standard error of each pixel's linear velocity from the residuals of its line, per year, as "
                                     "MintPy's velocityStd (designs with dates)"), false, "/yr",
     dated, one, [](const LayerInput& in, std::size_t) {
       return of_line(in, linear_rate_std, ResultPage::tr("standard error of the linear velocity"));
     }},
};

const LayerEntry& entry(Layer layer) { return kLayers[static_cast<std::size_t>(layer)]; }

/// A control's name (for tests and scripts) and what it does.
void explain(QWidget* w, const char* name, const QString& tip) {
  w->setObjectName(name);
  w->setToolTip(tip);
}

}  // namespace

ResultPage::ResultPage(Document* doc, QWidget* parent) : QWidget(parent), doc_(doc) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  layer_ = new QComboBox;
  explain(layer_, "layer", tr("What the map shows"));
  layer_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  channel_label_ = new QLabel(tr("Channel"));
  channel_box_ = new QSpinBox;
  explain(channel_box_, "channel", tr("The channel of the layer shown (an unknown, an observation)"));
  channel_slider_ = new QSlider(Qt::Horizontal);
  explain(channel_slider_, "channel-slider", channel_box_->toolTip());
  channel_slider_->setMinimumWidth(120);
  channel_date_ = new QLabel;
  channel_date_->setObjectName("channel-date");
  playback_ = new Playback(channel_slider_);
  timeline_ = new Timeline(channel_slider_);  // the slider, where the channels are dates
  for (QWidget* w : std::initializer_list<QWidget*>{layer_, channel_label_, channel_box_, channel_date_}) top->addWidget(w);
  top->addWidget(channel_slider_, 1);
  top->addStretch(0);  // (where the timeline has the slider's place)
  top->addWidget(playback_);
  layout->addLayout(top);
  layout->addWidget(timeline_);
  layout->addLayout(buildScaleBar());
  histogram_ = new RangeHistogram;
  layout->addWidget(histogram_);
  view_ = new ImageView;
  profiles_ = new ProfileChart(doc_, this);
  // The profiles' chart under the map, folded away while there is none
  // (folded, not hidden: a GL view first shown into a window on screen may
  // show black until the window is laid out again).
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(view_);
  split->addWidget(profiles_);
  split->setCollapsible(0, false);
  split->setSizes({1, 0});
  const int handle = split->handleWidth();
  split->setHandleWidth(0);  // (no room taken while folded)
  connect(profiles_, &ProfileChart::shownChanged, split, [split, handle](bool shown) {
    const int h = split->height();
    split->setHandleWidth(shown ? handle : 0);
    split->setSizes(shown ? QList<int>{h - h / 3, h / 3} : QList<int>{h, 0});
  });
  layout->addWidget(split, 1);

  loadSettings();
  offerLayers();
  showSettings();
  connect(layer_, &QComboBox::currentIndexChanged, this, &ResultPage::showSettings);
  connect(channel_slider_, &QSlider::valueChanged, channel_box_, &QSpinBox::setValue);
  connect(channel_box_, &QSpinBox::valueChanged, channel_slider_, &QSlider::setValue);
  connect(channel_slider_, &QSlider::valueChanged, this, &ResultPage::update);
  connect(colormap_, &QComboBox::currentIndexChanged, this, &ResultPage::settingsChanged);
  connect(reversed_, &QCheckBox::toggled, this, &ResultPage::settingsChanged);
  connect(auto_range_, &QCheckBox::toggled, this, &ResultPage::settingsChanged);
  connect(range_lo_, &QDoubleSpinBox::valueChanged, this, &ResultPage::settingsChanged);
  connect(range_hi_, &QDoubleSpinBox::valueChanged, this, &ResultPage::settingsChanged);
  connect(histogram_, &RangeHistogram::rangeChanged, this, [this](double lo, double hi) {  // a range dragged: fixed from then on
    const QSignalBlocker b1(range_lo_), b2(range_hi_), b3(auto_range_);
    auto_range_->setChecked(false);
    range_lo_->setValue(lo);
    range_hi_->setValue(hi);
    settingsChanged();
  });
  connect(doc_, &Document::loaded, this, [this] {
    offerLayers();
    update();
  });
  connect(doc_, &Document::solved, this, [this] {  // the standard errors come and go with the parameters
    offerLayers();
    update();
  });
  connect(doc_, &Document::unitChanged, this, [this] {  // (the unit, the reference date or area: other values for every channel)
    all_key_ = {};
    update();
  });
}

QHBoxLayout* ResultPage::buildScaleBar() {
  auto* scale = new QHBoxLayout;
  colormap_ = new QComboBox;
  explain(colormap_, "colormap", tr("The colour map of this layer: sequential, diverging (symmetric about 0 with Auto range) "
                                    "or cyclic; Auto: diverging for signed values. Sources: resources/colormaps"));
  colormap_->addItem(tr("Auto colours"), -1);  // sequential, diverging for signed values, cyclic for phase
  for (const auto kind : {ColormapKind::Sequential, ColormapKind::Diverging, ColormapKind::Cyclic}) {
    colormap_->insertSeparator(colormap_->count());
    for (int k = 0; k < kColormapCount; ++k)
      if (colormap_kind(static_cast<Colormap>(k)) == kind) colormap_->addItem(colormap_name(static_cast<Colormap>(k)), k);
  }
  reversed_ = new QCheckBox(tr("Reversed"));
  explain(reversed_, "reversed", tr("The colour map from its other end"));
  auto_range_ = new QCheckBox(tr("Auto (2–98 %)"));
  explain(auto_range_, "auto-range", tr("The range from the 2nd to the 98th percentile of the values shown; the colour bar marks clipped ends"));
  auto_range_->setChecked(true);
  range_lo_ = new QDoubleSpinBox;
  range_hi_ = new QDoubleSpinBox;
  range_lo_->setObjectName("range-lo");
  range_hi_->setObjectName("range-hi");
  for (auto* s : {range_lo_, range_hi_}) {
    s->setRange(-1e12, 1e12);
    s->setDecimals(4);
    s->setEnabled(false);
    s->setToolTip(tr("The ends of the colour scale (with Auto off)"));
    s->setMinimumWidth(90);  // below its size hint for ±1e12: the window fits small screens
  }
  colormap_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  colormap_->setMinimumContentsLength(8);
  ref_date_label_ = new QLabel(tr("relative to"));
  ref_date_ = new QComboBox;
  ref_date_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  explain(ref_date_, "ref-date", tr("The date the time series is shown relative to (0 there), as MintPy's reference date (--ref-date)"));
  connect(ref_date_, &QComboBox::currentIndexChanged, this, [this] { doc_->setRefDate(ref_date_->currentData().toString()); });
  for (QWidget* w : std::initializer_list<QWidget*>{colormap_, reversed_, auto_range_, new QLabel(tr("from")), range_lo_,
                                                     new QLabel(tr("to")), range_hi_})
    scale->addWidget(w);
  scale->addStretch(1);
  scale->addWidget(ref_date_label_);
  scale->addWidget(ref_date_);
  return scale;
}

void ResultPage::showRefDates() {
  const auto dates = doc_->unknownDates();
  const QSignalBlocker block(ref_date_);
  if (ref_date_->count() != static_cast<int>(dates.size()) || (!dates.empty() && ref_date_->itemData(0).toString().toStdString() != dates[0])) {
    ref_date_->clear();
    for (const auto& d : dates) ref_date_->addItem(iso_day(d), QString::fromStdString(d));
  }
  ref_date_->setCurrentIndex(static_cast<int>(doc_->refIndex()));
  for (QWidget* w : std::initializer_list<QWidget*>{ref_date_, ref_date_label_}) w->setVisible(!dates.empty());
}

void ResultPage::loadSettings() {
  QSettings settings;
  for (std::size_t k = 0; k < views_.size(); ++k) {
    const QString key = QString("view/layer%1/").arg(k);
    LayerView& v = views_[k];
    const auto map = colormap_by_name(settings.value(key + "colormap").toString().toStdString());
    v.colormap = map ? static_cast<int>(*map) : -1;
    v.reversed = settings.value(key + "reversed", false).toBool();
    v.auto_range = settings.value(key + "auto_range", true).toBool();
    v.lo = settings.value(key + "lo", 0.0).toDouble();
    v.hi = settings.value(key + "hi", 1.0).toDouble();
  }
}

void ResultPage::offerLayers() {
  // The layers that apply to what is loaded; the one shown stays where it applies.
  const Layer shown = layer_->count() ? layer() : Layer::Solution;
  const QSignalBlocker block(layer_);
  layer_->clear();
  for (const LayerEntry& e : kLayers)
    if (e.applies(*doc_)) {
      layer_->addItem(tr(e.name), static_cast<int>(e.id));
      layer_->setItemData(layer_->count() - 1, tr(e.tooltip), Qt::ToolTipRole);
    }
  layer_->setCurrentIndex(std::max(0, layer_->findData(static_cast<int>(shown))));
}

Layer ResultPage::layer() const { return static_cast<Layer>(layer_->currentData().toInt()); }
int ResultPage::channel() const { return channel_slider_->value(); }

void ResultPage::show(Layer layer, int channel) {
  if (const int index = layer_->findData(static_cast<int>(layer)); index >= 0) layer_->setCurrentIndex(index);
  update();  // (the channels' range for the layer)
  channel_slider_->setValue(channel);
  update();
}

void ResultPage::setColours(Layer layer, Colormap map, bool reversed) {
  LayerView& v = views_[static_cast<std::size_t>(layer)];
  v.colormap = static_cast<int>(map);
  v.reversed = reversed;
  saveSettings();
  if (layer == this->layer()) showSettings();
}

void ResultPage::settingsChanged() {
  LayerView& v = views_[static_cast<std::size_t>(layer())];
  v.colormap = colormap_->currentData().toInt();
  v.reversed = reversed_->isChecked();
  v.auto_range = auto_range_->isChecked();
  range_lo_->setEnabled(!v.auto_range);
  range_hi_->setEnabled(!v.auto_range);
  if (!v.auto_range) {
    v.lo = range_lo_->value();
    v.hi = range_hi_->value();
  }
  saveSettings();
  update();
}

void ResultPage::saveSettings() const {
  QSettings settings;
  for (std::size_t k = 0; k < views_.size(); ++k) {
    const QString key = QString("view/layer%1/").arg(k);
    const LayerView& v = views_[k];
    settings.setValue(key + "colormap", v.colormap < 0 ? QString() : QString(colormap_name(static_cast<Colormap>(v.colormap))));
    settings.setValue(key + "reversed", v.reversed);
    settings.setValue(key + "auto_range", v.auto_range);
    settings.setValue(key + "lo", v.lo);
    settings.setValue(key + "hi", v.hi);
  }
}

void ResultPage::showSettings() {
  const LayerView& v = views_[static_cast<std::size_t>(layer())];
  const QSignalBlocker b1(colormap_), b2(reversed_), b3(auto_range_), b4(range_lo_), b5(range_hi_);
  colormap_->setCurrentIndex(std::max(0, colormap_->findData(v.colormap)));
  reversed_->setChecked(v.reversed);
  auto_range_->setChecked(v.auto_range);
  range_lo_->setEnabled(!v.auto_range);
  range_hi_->setEnabled(!v.auto_range);
  range_lo_->setValue(v.lo);
  range_hi_->setValue(v.hi);
  update();
}

ColorScale ResultPage::scale(Layer L, const std::vector<double>& v) const {
  const LayerView& lv = views_[static_cast<std::size_t>(L)];
  ColorScale scale;
  scale.map = lv.colormap >= 0 ? static_cast<Colormap>(lv.colormap)
              : L == Layer::Peak ? Colormap::Twilight
              : entry(L).is_signed ? Colormap::RdBu
                                   : Colormap::Viridis;
  scale.reversed = lv.reversed;
  const auto design = doc_->design();
  if (L == Layer::Status) {
    scale.lo = 0;
    scale.hi = 4;
  } else if (L == Layer::Rank && lv.auto_range) {
    scale.lo = 0;
    scale.hi = design ? static_cast<double>(design->cols()) : 1;
  } else if (lv.auto_range) {
    std::tie(scale.lo, scale.hi) = robust_range(v.data(), v.size(), colormap_kind(scale.map) == ColormapKind::Diverging);
  } else {
    scale.lo = lv.lo;
    scale.hi = lv.hi;
  }
  return scale;
}

int ResultPage::channels(Layer layer) const {
  const auto design = doc_->design();
  return design ? static_cast<int>(entry(layer).channels(*doc_)) : 0;
}

bool ResultPage::applies(Layer layer) const {
  const auto result = doc_->result();
  const auto design = doc_->design();
  return result && design && result->x.dim(0) == design->cols() && entry(layer).applies(*doc_);
}

ResultPage::Map ResultPage::map(Layer L, int channel) const {
  Map m = unscaled(L, channel);
  m.style.scale = scale(L, m.values);
  if (L == Layer::Peak && views_[static_cast<std::size_t>(L)].auto_range) {  // the whole cycle: the colours wrap as the days do
    m.style.scale.lo = 0;
    m.style.scale.hi = doc_->harmonics()[static_cast<std::size_t>(std::clamp(channel, 0, channels(L) - 1))].span();
  }
  return m;
}

ResultPage::Map ResultPage::unscaled(Layer L, int channel) const {
  // The layer's entry draws it; values in the cube's unit are shown in the
  // document's (a stack's phase as displacement).
  const LayerEntry& e = entry(L);
  const std::vector<std::string> dates = doc_->unknownDates();
  const std::vector<std::string> names = doc_->xNames();
  LayerMap m = e.draw({*doc_->result(), *doc_->design(), dates, doc_->pairs(), names, doc_->harmonics(), doc_->refIndex(), QFileInfo(doc_->cubeName()).fileName()},
                      static_cast<std::size_t>(std::clamp(channel, 0, channels(L) - 1)));
  if (e.per) {  // (a size, as an RMS or an error, stays positive where the unit's sign flips)
    const double k = e.is_signed ? doc_->unitScale() : std::abs(doc_->unitScale());
    if (k != 1.0)
      for (double& v : m.values) v *= k;
    if (!doc_->unitLabel().isEmpty()) m.style.unit = doc_->unitLabel() + e.per;
  }
  if (L == Layer::Solution && doc_->unitLabel().isEmpty() && !doc_->channelUnit(channel).isEmpty()) m.style.unit = doc_->channelUnit(channel);
  if (const auto& area = doc_->referenceArea(); doc_->areaReferences(Document::AreaScope::Maps) && e.is_signed && e.per) {  // values less the reference area's mean
    const auto [r0, c0, r1, c1] = *area;
    const double mean = area_mean(m.values.data(), doc_->result()->x.dim(1), doc_->result()->x.dim(2), r0, c0, r1, c1);
    for (double& v : m.values) v -= mean;
    m.style.title += tr(", less the mean of rows %1–%2, columns %3–%4").arg(r0).arg(r1).arg(c0).arg(c1);
  }
  return {std::move(m.values), std::move(m.style), m.channel, static_cast<int>(doc_->result()->x.dim(1)),
          static_cast<int>(doc_->result()->x.dim(2))};
}

QString ResultPage::layerName(Layer layer) {
  static const char* kNames[] = {"solution", "model", "residual-rms", "rank", "status", "velocity", "amplitude", "peak", "stderr", "temporal-coherence", "objective", "iterations", "velocity-std"};
  return kNames[static_cast<std::size_t>(layer)];
}

std::optional<Layer> ResultPage::layerNamed(const QString& name) {
  for (std::size_t k = 0; k < kLayerCount; ++k)
    if (layerName(static_cast<Layer>(k)) == name) return static_cast<Layer>(k);
  return std::nullopt;
}

void ResultPage::showHistogram(Layer L, const Map& m) {
  if (!m.style.categories.empty()) return histogram_->setCounts({}, {}, 0, 1);  // (categories have no range)
  // All channels' values: a sample of at most 64 channels (fewer of a large
  // map) of 65536 values each, its axis (all but the outermost 0.1 %) and its counts, kept until
  // the result, the layer or what is shown changes: a step through the
  // channels counts only the channel shown.
  constexpr int kBins = 80;
  const auto key = std::make_pair(static_cast<int>(L), static_cast<const void*>(doc_->result().get()));
  if (key != all_key_) {
    all_key_ = key;
    std::vector<double> sample;
    const int n = channels(L);  // (a layer is drawn whole: the channels sampled hold 8 million values or fewer, 4 at least)
    const int most = static_cast<int>(std::clamp<std::size_t>(8'000'000 / std::max<std::size_t>(m.values.size(), 1), 4, 64));
    const int every = (n + most - 1) / most;
    for (int ch = 0; ch < n; ch += every) {
      std::vector<double> other;  // (their colour ranges are not needed; the channel shown is not copied)
      if (ch != channel()) other = unscaled(L, ch).values;
      const std::vector<double>& v = ch == channel() ? m.values : other;
      const std::size_t stride = std::max<std::size_t>(1, v.size() / 65536);
      for (std::size_t p = 0; p < v.size(); p += stride) sample.push_back(v[p]);
    }
    all_sample_ = std::move(sample);
    all_axis_ = robust_range(all_sample_.data(), all_sample_.size(), false, 0.001);
    all_counts_.clear();
  }
  // The axis, widened to the range shown where that goes beyond it.
  const double lo = std::min(all_axis_.first, m.style.scale.lo), hi = std::max(all_axis_.second, m.style.scale.hi);
  if (all_counts_.empty() || std::pair{lo, hi} != counted_axis_) {
    all_counts_ = histogram(all_sample_.data(), all_sample_.size(), lo, hi, kBins);
    counted_axis_ = {lo, hi};
  }
  histogram_->setCounts(histogram(m.values.data(), m.values.size(), lo, hi, kBins), all_counts_, lo, hi);
  histogram_->setRange(m.style.scale.lo, m.style.scale.hi);
}

void ResultPage::update() {
  const auto result = doc_->result();
  const auto design = doc_->design();
  if (!result || !design || result->x.dim(0) != design->cols()) {  // a new design's result is on its way
    if (!result && doc_->cube()) view_->clear(doc_->design() && doc_->design()->rows() == doc_->cube()->dim(0)
                                                  ? tr("Solving…")
                                                  : tr("Open or build a design matrix of %1 rows to solve.").arg(doc_->cube()->dim(0)));
    return;
  }
  showRefDates();
  const Layer L = layer();
  const int n = channels(L);
  for (QWidget* w : std::initializer_list<QWidget*>{channel_slider_, channel_box_, channel_label_}) w->setEnabled(n > 1);
  if (channel_slider_->maximum() != n - 1) {
    channel_slider_->setRange(0, n - 1);
    channel_box_->setRange(0, n - 1);
  }
  Map m = map(L, channel_slider_->value());
  channel_date_->setText(m.channel);
  const auto dates = doc_->unknownDates();
  timeline_->setDates(L == Layer::Solution && dates.size() == static_cast<std::size_t>(n) + 1 ? std::vector(dates.begin() + 1, dates.end())
                                                                                              : std::vector<std::string>{});
  channel_slider_->setVisible(!timeline_->isVisibleTo(this));
  if (views_[static_cast<std::size_t>(L)].auto_range) {  // the range in use, shown (and the start of a fixed one)
    const QSignalBlocker b1(range_lo_), b2(range_hi_);
    range_lo_->setValue(m.style.scale.lo);
    range_hi_->setValue(m.style.scale.hi);
  }
  showHistogram(L, m);
  view_->setImage(std::move(m.values), m.height, m.width, m.style);
  const auto [row, col] = doc_->selected();
  view_->setMarker(row, col);
  emit drawn();
}

}  // namespace cubesolve::ui
