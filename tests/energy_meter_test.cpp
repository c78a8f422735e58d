// Energy around timings (FAIRNESS.md rule 10), on a meter whose counter the test drives: a constant
// power integrated by the clock and published only at each update period, as NVML's and RAPL's
// counters are. What a run makes of a meter (update period, idle power, the window around a
// timing, the figure per evaluation) is tested here; the meters themselves in rapl_energy_test and
// on a GPU in gpu_energy_test.
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/energy_meter.hpp"

namespace nbody {
namespace {

using Clock = std::chrono::steady_clock;

// `watts` on one domain, readable only as of the last update (every `period_s`).
class SteppedMeter final : public EnergyMeter {
 public:
  SteppedMeter(double watts, double period_s) : watts_(watts), period_s_(period_s) {}
  std::string source() const override { return "powercap"; }
  std::vector<std::string> domains() const override { return {"package-0"}; }
  std::vector<double> joules() override {
    if (fail_) throw EnergyReadError("package-0 energy_uj vanished");
    const double t = std::chrono::duration<double>(Clock::now() - start_).count();
    return {watts_ * period_s_ * std::floor(t / period_s_)};
  }
  double unit_j() const override { return 1e-6; }
  void fail() { fail_ = true; }

 private:
  double watts_, period_s_;
  Clock::time_point start_ = Clock::now();
  bool fail_ = false;
};

TEST(EnergyMeter, UpdatePeriodAndIdlePowerAreMeasured) {
  SteppedMeter meter(50, 0.005);
  // A loaded machine may miss an update between polls: within a few periods.
  const double period = measure_update_period(meter, 1.0);
  EXPECT_GE(period, 0.004);
  EXPECT_LE(period, 0.02);
  const EnergyMeterRecord r = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.2);
  ASSERT_TRUE(r.available) << r.unavailable_reason;
  EXPECT_EQ(r.source, "powercap");
  EXPECT_EQ(r.domains, std::vector<std::string>{"package-0"});
  ASSERT_EQ(r.idle_watts.size(), 1u);
  // Both idle reads follow an update: the lag cancels, but for the scheduling of the reads.
  EXPECT_NEAR(r.idle_watts[0], 50, 50 * 0.15);
  EXPECT_GE(r.idle_seconds, 0.2);
  EXPECT_EQ(r.idle_accounting, "included");
}

TEST(EnergyMeter, MissingAndFailingMetersAreRecordedWithTheirReason) {
  const EnergyMeterRecord none =
      describe_energy_meter(nullptr, DeviceKind::cpu, "no /sys/class/powercap", 0.1);
  EXPECT_FALSE(none.available);
  EXPECT_EQ(none.unavailable_reason, "no /sys/class/powercap");
  SteppedMeter broken(10, 0.001);
  broken.fail();
  const EnergyMeterRecord failed = describe_energy_meter(&broken, DeviceKind::gpu, "", 0.1);
  EXPECT_FALSE(failed.available);
  EXPECT_NE(failed.unavailable_reason.find("vanished"), std::string::npos)
      << failed.unavailable_reason;
}

// The window's joules per evaluation: the power times the work's seconds over the evaluations,
// within its interval, resolved once it spans ten updates and not before.
TEST(EnergyMeter, WindowGivesJoulesPerEvaluationWithinItsInterval) {
  SteppedMeter meter(100, 0.005);
  EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.05);
  record.idle_watts = {0};  // the tail after the work is work here, not idle
  EnergyWindow window(meter, record);
  const auto start = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const EnergyStatistics e = window.close(40);
  EXPECT_EQ(e.evaluations, 40);
  EXPECT_NEAR(e.seconds, seconds, 0.01);
  EXPECT_NEAR(e.mean_watts, 100, 100 * 0.2);
  EXPECT_NEAR(e.per_evaluation_j, e.joules / 40, 1e-12);
  EXPECT_LE(e.ci_low_j, e.per_evaluation_j);
  EXPECT_GE(e.ci_high_j, e.per_evaluation_j);
  EXPECT_GE(e.periods_spanned, kMinEnergyPeriods);
  EXPECT_TRUE(e.resolved);

  EnergyWindow short_window(meter, record);
  std::this_thread::sleep_for(std::chrono::milliseconds(10));
  const EnergyStatistics brief = short_window.close(4);
  EXPECT_LT(brief.periods_spanned, kMinEnergyPeriods);
  EXPECT_FALSE(brief.resolved);
}

// The idle tail between the work's end and the counter's next update is idle, taken off at the
// idle power: a meter that only ever reads idle gives no energy to the work.
TEST(EnergyMeter, IdleTailIsTakenOff) {
  SteppedMeter meter(30, 0.02);
  EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::gpu, "", 0.2);
  record.idle_watts = {30};
  EnergyWindow window(meter, record);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const EnergyStatistics e = window.close(1);
  // 30 W over the 50 ms of "work" plus the tail; the tail's share comes off.
  EXPECT_NEAR(e.joules, 30 * e.seconds, 30 * 0.02 + 1e-9);
}

// A run's timing reads its device's meter around itself: every evaluation of the timing counted,
// warm-up and iteration search included.
class SleepRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope) override {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Seconds::kernel_only(2e-3);
  }
  std::vector<Vec3<double>> accelerations() override { return {}; }
};

TEST(EnergyMeter, TimingsCarryTheEnergyOfAllTheirEvaluations) {
  SteppedMeter meter(80, 0.002);
  const EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.05);
  const EnergyObservation energy{.meter = &meter, .record = &record};
  SleepRun run;
  const RepetitionSettings settings{
      .repetitions = 3, .min_time_s = 0.02, .warmup_s = 0.01, .noise_threshold_cv = 0.5};
  const Timings t =
      time_repetitions(run, PreparedRun::Scope::kernel, 100, settings, nullptr, &energy);
  ASSERT_TRUE(t.kernel.energy.has_value());
  const EnergyStatistics& e = *t.kernel.energy;
  EXPECT_GE(e.evaluations, t.kernel.repetitions * t.kernel.iterations_per_repetition);
  EXPECT_GT(e.joules, 0);
  EXPECT_NEAR(e.mean_watts, 80, 80 * 0.2);
  EXPECT_TRUE(t.total.energy.has_value());

  // A counter that fails mid-run leaves the timing without energy, its time kept.
  meter.fail();
  const Timings without =
      time_repetitions(run, PreparedRun::Scope::kernel, 100, settings, nullptr, &energy);
  EXPECT_FALSE(without.kernel.energy.has_value());
  EXPECT_GT(without.kernel.median_s, 0);
}

// Each repetition lasts long enough for the repetitions together to span the energy counter's
// required updates, and --min-time where that is longer.
TEST(EnergyMeter, TimingsOfAMeteredDeviceSpanTheRequiredUpdates) {
  SuiteOptions options;
  options.timing.repetitions = 5;
  options.timing.min_time_s = 0.1;
  EXPECT_DOUBLE_EQ(timing_min_time_s(options, DeviceKind::gpu), 0.1);
  options.energy_span_s[DeviceKind::gpu] = 1.0;
  EXPECT_DOUBLE_EQ(timing_min_time_s(options, DeviceKind::gpu), 0.2);
  EXPECT_DOUBLE_EQ(timing_min_time_s(options, DeviceKind::cpu), 0.1);
  options.timing.min_time_s = 0.5;
  EXPECT_DOUBLE_EQ(timing_min_time_s(options, DeviceKind::gpu), 0.5);
}

}  // namespace
}  // namespace nbody
