// The solve parameters in the desktop application: the document is their one
// owner, every field takes effect as it is typed, numbers are read as
// scientists write them, a field that does not parse solves nothing and
// says why, a result solved with other parameters is marked stale, and a
// cancel puts back the parameters of the result shown.
#include "cuda/backend.hpp"
#include "gui_fixture.hpp"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QSpinBox>
#include <QTemporaryDir>

namespace {

/// Types `text` over a field's text as a user does, key by key, no Enter.
void type(QWidget* field, const QString& text) {
  auto* edit = qobject_cast<QLineEdit*>(field);
  if (auto* spin = qobject_cast<QAbstractSpinBox*>(field)) edit = spin->findChild<QLineEdit*>();
  edit->setFocus();
  edit->selectAll();
  QTest::keyClicks(edit, text);
  QCOMPARE(edit->text(), text);
}

/// What the panel shows, as options.
struct Shown {
  QString rcond;
  double ridge;
  int min_valid;
  QString device;
};
Shown shown_in(MainWindow& w) {
  return {w.findChild<QLineEdit*>("rcond")->text(), w.findChild<QDoubleSpinBox*>("ridge")->value(),
          w.findChild<QSpinBox*>("min-valid")->value(), w.findChild<QComboBox*>("device")->currentData().toString()};
}

/// The options a result was solved with equal what the panel shows, every field.
bool solvedAsShown(MainWindow& w) {
  const Shown s = shown_in(w);
  const SolveOptions& o = w.document().resultOptions();
  const double rcond = s.rcond.isEmpty() ? -1 : s.rcond.toDouble();
  return o.rcond == rcond && o.ridge == s.ridge && o.min_valid == s.min_valid && QString(device_name(o.device)) == s.device;
}

/// Starts a slow solve (every pixel on the exact path) and cancels it once it
/// has made progress: true once the cancel is shown.
bool solveThenCancel(MainWindow& w) {
  w.setMethod(Method::Exact);
  QSignalSpy progressed(&w.document(), &Document::progress);
  w.solve();
  if (!progressed.wait(30000)) return false;
  QSignalSpy cancelled(&w, &MainWindow::solveCancelled);
  w.cancelSolve();
  return cancelled.wait(30000);
}

}  // namespace

class TestParameters : public QObject, GuiFixture {
  Q_OBJECT

private slots:
  void initTestCase() { QVERIFY(isolate()); }

  void init() { QSettings().clear(); }  // each test starts as on a new machine

  // Each field solves again as it is typed (no Enter, no leaving the field),
  // and the result is solved with what the panel shows.
  void everyFieldTakesEffectAsTyped_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("typed");
    QTest::newRow("rcond") << "rcond" << "1e-10";
    QTest::newRow("ridge") << "ridge" << "0.5";
    QTest::newRow("ridge, scientific") << "ridge" << "2.5E-3";
    QTest::newRow("minimum valid rows") << "min-valid" << "30";
  }
  void everyFieldTakesEffectAsTyped() {
    QFETCH(QString, field);
    QFETCH(QString, typed);
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(demoSolved(w, "seed", 24));
    QSignalSpy started(&w.document(), &Document::solveStarted);
    type(w.findChild<QWidget*>(field), typed);
    QTRY_VERIFY(!started.isEmpty());
    QVERIFY(waitSolved(w));
    QTRY_VERIFY(!w.solving());
    QVERIFY(solvedAsShown(w));
    QVERIFY(!w.document().stale());
    QVERIFY(!w.findChild<QLabel*>("stale")->isVisible());
  }

  // Numbers as scientists write them, shown in their shortest exact form; a
  // value that does not parse is marked at its field with the reason and
  // solves nothing until it is corrected.
  void numbersAsTyped() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(demoSolved(w, "seed", 16));
    w.findChild<QCheckBox*>("auto-solve")->setChecked(false);
    auto* ridge = w.findChild<QDoubleSpinBox*>("ridge");
    type(ridge, "1e-8");
    QCOMPARE(ridge->value(), 1e-8);
    QCOMPARE(w.options().ridge, 1e-8);
    QCOMPARE(ridge->textFromValue(ridge->value()), QString("1e-08"));  // shown so once the field is left
    type(ridge, "2.5E-3");
    QCOMPARE(w.options().ridge, 0.0025);
    auto* rcond = w.findChild<QLineEdit*>("rcond");
    type(rcond, "1e-x");
    QVERIFY(!w.document().parameterError().isEmpty());
    QVERIFY2(rcond->toolTip().contains("rcond: expected a number"), qPrintable(rcond->toolTip()));
    QVERIFY(w.findChild<QLabel*>("stale")->isVisible());
    QVERIFY(w.findChild<QLabel*>("stale")->text().startsWith("Not solved"));
    QSignalSpy started(&w.document(), &Document::solveStarted);
    const QString message = failure(w, [&] { w.solve(); });
    QVERIFY2(message.contains("rcond") && message.contains("1e-x"), qPrintable(message));
    QVERIFY(started.isEmpty());
    type(rcond, "1e-9");
    QVERIFY(w.document().parameterError().isEmpty());
    QCOMPARE(w.options().rcond, 1e-9);
    QCOMPARE(rcond->text(), QString("1e-9"));  // what was typed stays
    w.solve();
    QVERIFY(waitSolved(w));
    QVERIFY(solvedAsShown(w));
  }

  // A result solved with other parameters than those shown is marked stale
  // until it is solved again.
  void staleUntilSolved() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(demoSolved(w, "seed", 16));
    auto* stale = w.findChild<QLabel*>("stale");
    QVERIFY(!stale->isVisible());
    w.findChild<QCheckBox*>("auto-solve")->setChecked(false);
    type(w.findChild<QSpinBox*>("min-valid"), "40");
    QVERIFY(w.document().stale());
    QVERIFY(stale->isVisible());
    QVERIFY2(stale->text().contains("other parameters"), qPrintable(stale->text()));
    type(w.findChild<QSpinBox*>("min-valid"), "1");  // back to what the result was solved with
    QVERIFY(!w.document().stale());
    QVERIFY(!stale->isVisible());
    type(w.findChild<QSpinBox*>("min-valid"), "40");
    w.solve();
    QVERIFY(waitSolved(w));
    QVERIFY(!stale->isVisible());
    QCOMPARE(w.document().resultOptions().min_valid, 40);
  }

  // Change, cancel, change again: the solve uses exactly what is shown, in
  // every field, and the settings hold it too.
  void cancelThenChange() {
    MainWindow w;
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QVERIFY(demoSolved(w, "seed", 200));
    w.findChild<QCheckBox*>("auto-solve")->setChecked(false);
    type(w.findChild<QLineEdit*>("rcond"), "1e-12");
    type(w.findChild<QDoubleSpinBox*>("ridge"), "0.5");
    type(w.findChild<QSpinBox*>("min-valid"), "7");
    QVERIFY(solveThenCancel(w));
    const Shown back = shown_in(w);  // the first result's
    QCOMPARE(back.rcond, QString());
    QCOMPARE(back.ridge, 0.0);
    QCOMPARE(back.min_valid, 1);
    QCOMPARE(w.options().method, Method::Auto);
    QVERIFY(!w.document().stale());
    type(w.findChild<QSpinBox*>("min-valid"), "3");
    w.solve();
    QVERIFY(waitSolved(w));
    QVERIFY(solvedAsShown(w));
    QCOMPARE(w.document().resultOptions().min_valid, 3);
    QCOMPARE(w.document().resultOptions().ridge, 0.0);
    QCOMPARE(QSettings().value("params/min_valid").toInt(), 3);
    QCOMPARE(QSettings().value("params/ridge").toDouble(), 0.0);
    QCOMPARE(QSettings().value("params/rcond").toString(), QString());
  }

  void minimumValidRowsAtMostN() {
    MainWindow w;
    QVERIFY(demoSolved(w, "insar", 24));
    auto* min_valid = w.findChild<QSpinBox*>("min-valid");
    QCOMPARE(min_valid->maximum(), 110);
    min_valid->setValue(500);
    QCOMPARE(min_valid->value(), 110);
  }

  // After a cancel the parameters shown are those of the result shown.
  void cancelRestoresTheParameters() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "seed", 200));
    w.findChild<QCheckBox*>("auto-solve")->setChecked(false);
    auto* ridge = w.findChild<QDoubleSpinBox*>("ridge");
    QCOMPARE(ridge->value(), 0.0);
    ridge->setValue(0.5);
    QVERIFY(solveThenCancel(w));
    QCOMPARE(ridge->value(), 0.0);
    QCOMPARE(w.options().ridge, 0.0);
    QCOMPARE(QSettings().value("params/ridge").toDouble(), 0.0);
  }

  // The loss re-solves as the other parameters do: the engine's robust fit,
  // its objective and iterations as layers; standard errors (least
  // squares') are unavailable meanwhile; the choice is kept for next time.
  void lossChosen() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "insar", 32));
    auto* loss = w.findChild<QComboBox*>("loss");
    QSignalSpy solved(&w, &MainWindow::solveFinished);
    loss->setCurrentIndex(loss->findData(int(Loss::L1)));
    QVERIFY(solved.wait(60000));
    QCOMPARE(w.document().options().loss, Loss::L1);
    QVERIFY(!w.findChild<QCheckBox*>("std-errors")->isEnabled());
    SolveOptions o;
    o.loss = Loss::L1;
    const SolveResult ref = solve(*w.document().cube(), *w.design(), nullptr, o);
    QCOMPARE(w.result()->x.size(), ref.x.size());
    for (std::size_t i = 0; i < ref.x.size(); ++i)
      QVERIFY(w.result()->x.value(i) == ref.x.value(i) || (std::isnan(ref.x.value(i)) && std::isnan(w.result()->x.value(i))));
    auto* layers = w.findChild<QComboBox*>("layer");
    QVERIFY(layers->findData(int(MainWindow::Layer::Objective)) >= 0 && layers->findData(int(MainWindow::Layer::Iterations)) >= 0);
    QCOMPARE(QSettings().value("params/loss").toString(), QString("l1"));
    loss->setCurrentIndex(loss->findData(int(Loss::L2)));
    QVERIFY(solved.wait(60000));
    QVERIFY(w.result()->objective.empty() && w.findChild<QCheckBox*>("std-errors")->isEnabled());
    QCOMPARE(layers->findData(int(MainWindow::Layer::Objective)), -1);
  }

  void ridgeStepsByDecades() {
    MainWindow w;
    auto* ridge = w.findChild<QDoubleSpinBox*>("ridge");
    ridge->setValue(0);
    ridge->stepBy(1);
    QCOMPARE(ridge->value(), 1e-6);
    ridge->stepBy(3);
    QCOMPARE(ridge->value(), 1e-3);
    ridge->stepBy(-1);
    QCOMPARE(ridge->value(), 1e-4);
    ridge->stepBy(-5);
    QCOMPARE(ridge->value(), 0.0);
  }

  // With a device (the reference backend standing in for a GPU): the GPU
  // choice solves on it, and changing its precision re-solves there.
  void gpuChoiceAndPrecision() {
    namespace gpu = cubesolve::detail::gpu;
    gpu::set_backend_factory([] { return gpu::make_host_backend(std::size_t{256} << 20, std::size_t{256} << 20); });
    struct Reset {
      ~Reset() { gpu::set_backend_factory(nullptr); }
    } reset;
    MainWindow w;
    w.show();
    auto* device = w.findChild<QComboBox*>("device");
    auto* precision = w.findChild<QComboBox*>("device-precision");
    QVERIFY(device && precision);
    QCOMPARE(device->findData("cuda") >= 0, true);
    device->setCurrentIndex(device->findData("cuda"));
    QVERIFY(demoSolved(w, "seed", 40));
    const DemoCube d = make_demo("seed", 40);
    SolveOptions cpu;
    cpu.output = DType::Float64;
    const SolveResult ref = solve(d.cube, Design(d.design), nullptr, cpu);
    for (const char* mode : {"mixed", "float64"}) {
      if (std::string(mode) == "float64") {
        QSignalSpy done(&w, &MainWindow::solveFinished);
        precision->setCurrentIndex(precision->findData(true));  // re-solves at once
        QVERIFY(done.wait(60000));
      }
      const auto r = w.result();
      QCOMPARE(r->device, Device::Cuda);
      QCOMPARE(r->device_pixels, std::size_t{1600});
      for (std::size_t i = 0; i < r->x.size(); ++i)  // X in the cube's float32
        QVERIFY(std::fabs(r->x.value(i) - ref.x.value(i)) <= 1e-5 * std::max(1.0, std::fabs(ref.x.value(i))));
    }
  }

  void cancelKeepsThePreviousResult() {
    MainWindow w;
    w.show();
    QVERIFY(demoSolved(w, "seed", 200));
    const auto previous = w.result();
    QVERIFY(previous);
    // The exact path on 40,000 underdetermined pixels takes seconds: cancel
    // it once it has made progress.
    w.setMethod(Method::Exact);
    QSignalSpy progressed(&w.document(), &Document::progress);
    w.solve();
    QVERIFY(w.solving());
    QVERIFY(progressed.wait(30000));
    QSignalSpy cancelled(&w, &MainWindow::solveCancelled);
    QElapsedTimer stop;
    stop.start();
    w.cancelSolve();
    QVERIFY(cancelled.wait(30000));
    qInfo("the worker stopped %lld ms after the cancel", static_cast<long long>(stop.elapsed()));
    QVERIFY(!w.solving());
    QCOMPARE(w.result(), previous);
  }
};

QTEST_MAIN(TestParameters)
#include "tst_parameters.moc"
