// Energy around timings (FAIRNESS.md rule 10), on a meter whose counter the test drives: a constant
// power integrated by the clock and published only at each update period, as NVML's and RAPL's
// counters are. What a run makes of a meter (update period, idle power, the window around a
// timing, the figure per evaluation) is tested here; the meters themselves in rapl_energy_test and
// on a GPU in gpu_energy_test.
#include <chrono>
#include <cmath>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/energy_meter.hpp"
#include "stepped_meter.hpp"

namespace nbody {
namespace {

using Clock = std::chrono::steady_clock;

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

// Two boards' counters, each moving every 20 ms, half a period apart: their sum moves every 10 ms,
// but each counter's period is what a read must wait for.
class OffsetBoardsMeter final : public EnergyMeter {
 public:
  std::string source() const override { return "nvml"; }
  std::vector<std::string> domains() const override { return {"GPU 0 board", "GPU 1 board"}; }
  std::vector<double> joules() override {
    const double t = std::chrono::duration<double>(Clock::now() - start_).count();
    return {std::floor(t / 0.02), std::floor((t + 0.01) / 0.02)};
  }
  double unit_j() const override { return 1e-3; }

 private:
  Clock::time_point start_ = Clock::now();
};

TEST(EnergyMeter, UpdatePeriodIsEachCountersNotTheirSums) {
  OffsetBoardsMeter meter;
  const double period = measure_update_period(meter, 1.0);
  EXPECT_GE(period, 0.018);
  EXPECT_LE(period, 0.04);
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

// Repetitions too short for the counter (later ones repeat the first one's iteration count, so
// they can be) are followed by evaluations that carry the window to its required updates; where
// processes time together, every one runs as many, agreed through max_over_processes.
TEST(EnergyMeter, ATimingTooShortForTheCounterGoesOnUntilItIsResolved) {
  SteppedMeter meter(80, 0.02);
  const EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.05);
  const EnergyObservation energy{.meter = &meter, .record = &record};
  SleepRun run;
  int agreements = 0;
  const RepetitionSettings settings{.repetitions = 2,
                                    .min_time_s = 0.004,
                                    .warmup_s = 0,
                                    .noise_threshold_cv = 0.5,
                                    .max_attempts = 1,
                                    .max_over_processes = [&agreements](double v) {
                                      ++agreements;
                                      return v;
                                    }};
  const Timings t =
      time_repetitions(run, PreparedRun::Scope::kernel, 100, settings, nullptr, &energy);
  ASSERT_TRUE(t.kernel.energy.has_value());
  const EnergyStatistics& e = *t.kernel.energy;
  EXPECT_TRUE(e.resolved) << e.periods_spanned << " periods";
  EXPECT_GE(e.seconds, kMinEnergyPeriods * record.update_period_s);
  EXPECT_GT(e.evaluations, t.kernel.repetitions * t.kernel.iterations_per_repetition);
  EXPECT_NEAR(e.mean_watts, 80, 80 * 0.3);
  EXPECT_GE(agreements, 3);  // the shortfall, the count, the shortfall met; and the disturbance
}

// Evaluations that take 5 ms for the first 40 ms and 50 us after: the timing's mean time an
// evaluation is then a hundred times what the evaluations that fill the energy window take.
class SlowStartRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope) override {
    if (!first_) first_ = Clock::now();
    const bool slow = Clock::now() - *first_ < std::chrono::milliseconds(40);
    const auto pause = slow ? std::chrono::microseconds(5000) : std::chrono::microseconds(50);
    std::this_thread::sleep_for(pause);
    return Seconds::kernel_only(std::chrono::duration<double>(pause).count());
  }
  std::vector<Vec3<double>> accelerations() override { return {}; }

 private:
  std::optional<Clock::time_point> first_;
};

// The window is filled however far the timing's mean time an evaluation is from the evaluations'
// own: a round's count comes from the round before.
TEST(EnergyMeter, AWindowIsResolvedWhenTheTimingsMeanOverstatesAnEvaluation) {
  SteppedMeter meter(80, 0.03);
  const EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.05);
  const EnergyObservation energy{.meter = &meter, .record = &record};
  SlowStartRun run;
  const RepetitionSettings settings{.repetitions = 2,
                                    .min_time_s = 0.004,
                                    .warmup_s = 0,
                                    .noise_threshold_cv = 10,
                                    .max_attempts = 1};
  const Timings t =
      time_repetitions(run, PreparedRun::Scope::kernel, 100, settings, nullptr, &energy);
  ASSERT_TRUE(t.kernel.energy.has_value());
  EXPECT_TRUE(t.kernel.energy->resolved) << t.kernel.energy->periods_spanned << " periods";
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

// Decomposed, a process waits for the others after opening its window: that head is idle, taken
// off like the tail, and the work's seconds start after it.
TEST(EnergyMeter, HeadBeforeTheWorkStartsIsTakenOff) {
  SteppedMeter meter(30, 0.005);
  EnergyMeterRecord record = describe_energy_meter(&meter, DeviceKind::cpu, "", 0.05);
  record.idle_watts = {30};
  EnergyWindow window(meter, record);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  window.work_starts();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const EnergyStatistics e = window.close(1);
  EXPECT_NEAR(e.seconds, 0.04, 0.02);
  EXPECT_NEAR(e.joules, 30 * e.seconds, 30 * 0.005 + 1e-9);
}

EnergyStatistics figure(double joules, double seconds, std::int64_t evaluations, double lag_j,
                        double periods) {
  return {.joules = joules,
          .domain_joules = {joules},
          .seconds = seconds,
          .evaluations = evaluations,
          .per_evaluation_j = joules / static_cast<double>(evaluations),
          .ci_low_j = (joules - lag_j) / static_cast<double>(evaluations),
          .ci_high_j = (joules + lag_j) / static_cast<double>(evaluations),
          .mean_watts = joules / seconds,
          .periods_spanned = periods,
          .resolved = periods >= kMinEnergyPeriods};
}

// The figures of the processes that evaluated together add up: joules and domains, the longest
// seconds, each one's interval; one metered elsewhere (no domains) adds nothing.
TEST(EnergyAcrossProcesses, FiguresAddUpWithTheirIntervals) {
  const std::vector<std::optional<EnergyStatistics>> parts = {figure(100, 1.0, 10, 5, 10),
                                                              EnergyStatistics{.evaluations = 10},
                                                              figure(300, 1.1, 10, 20, 6)};
  const std::optional<EnergyStatistics> sum = sum_energy(parts);
  ASSERT_TRUE(sum.has_value());
  EXPECT_DOUBLE_EQ(sum->joules, 400);
  EXPECT_EQ(sum->domain_joules, (std::vector<double>{100, 300}));
  EXPECT_DOUBLE_EQ(sum->seconds, 1.1);
  EXPECT_EQ(sum->evaluations, 10);
  EXPECT_DOUBLE_EQ(sum->per_evaluation_j, 40);
  EXPECT_DOUBLE_EQ(sum->ci_low_j, (400 - 25) / 10.0);
  EXPECT_DOUBLE_EQ(sum->ci_high_j, (400 + 25) / 10.0);
  EXPECT_NEAR(sum->mean_watts, 400 / 1.1, 1e-9);
  EXPECT_DOUBLE_EQ(sum->periods_spanned, 6);
  EXPECT_TRUE(sum->resolved);

  // One unresolved figure leaves the sum unresolved; one missing (its counter failed) or none
  // metered leaves no sum.
  const std::vector<std::optional<EnergyStatistics>> brief = {figure(100, 1.0, 10, 5, 10),
                                                              figure(3, 0.01, 10, 1, 1)};
  EXPECT_FALSE(sum_energy(brief)->resolved);
  const std::vector<std::optional<EnergyStatistics>> failed = {figure(100, 1.0, 10, 5, 10),
                                                               std::nullopt};
  EXPECT_FALSE(sum_energy(failed).has_value());
  const std::vector<std::optional<EnergyStatistics>> elsewhere = {
      EnergyStatistics{.evaluations = 3}};
  EXPECT_FALSE(sum_energy(elsewhere).has_value());
}

EnergyMeterRecord gpu_record(const std::string& domain, double idle_w, double period_s) {
  return {.device = DeviceKind::gpu,
          .available = true,
          .source = "nvml",
          .domains = {domain},
          .unit_j = 1e-3,
          .update_period_s = period_s,
          .idle_watts = {idle_w},
          .idle_seconds = 1,
          .limit_watts = 700};
}

// The run's record lists every process's domains, labelled, and says why where any process cannot
// read its share.
TEST(EnergyAcrossProcesses, RecordsCombineLabelledOrSayWhichProcessCannotRead) {
  const std::vector<std::string> labels = {"rank 0", "rank 1", "rank 2"};
  const std::vector<EnergyMeterRecord> parts = {gpu_record("GPU 0 board", 70, 0.1),
                                                gpu_record("GPU 1 board", 72, 0.102),
                                                metered_by_another_process(DeviceKind::gpu).record};
  const EnergyMeterRecord combined = combine_energy_records(parts, labels);
  ASSERT_TRUE(combined.available) << combined.unavailable_reason;
  EXPECT_EQ(combined.source, "nvml");
  EXPECT_EQ(combined.domains,
            (std::vector<std::string>{"rank 0: GPU 0 board", "rank 1: GPU 1 board"}));
  EXPECT_EQ(combined.idle_watts, (std::vector<double>{70, 72}));
  EXPECT_DOUBLE_EQ(combined.update_period_s, 0.102);
  EXPECT_EQ(combined.limit_watts, std::optional<double>(1400));

  std::vector<EnergyMeterRecord> one_missing = parts;
  one_missing[1] = {.device = DeviceKind::gpu, .unavailable_reason = "NVML is not installed"};
  const EnergyMeterRecord missing = combine_energy_records(one_missing, labels);
  EXPECT_FALSE(missing.available);
  EXPECT_EQ(missing.unavailable_reason, "rank 1: NVML is not installed");

  std::vector<EnergyMeterRecord> mixed = {gpu_record("package-0", 20, 0.001),
                                          gpu_record("package-0", 20, 0.001)};
  mixed[1].source = "perf_power";
  EXPECT_EQ(combine_energy_records(mixed, labels).unavailable_reason,
            "the processes read different counters (nvml, and perf_power on rank 1): not added");
}

// Each package of a host is metered by the lowest process there that may run on it.
TEST(EnergyAcrossProcesses, EachPackageOfAHostIsMeteredOnce) {
  const std::vector<std::string> hosts = {"a", "a", "b", "a"};
  const std::vector<std::set<int>> packages = {{0}, {0, 1}, {0}, {1}};
  EXPECT_EQ(packages_first_used(0, hosts, packages), (std::set<int>{0}));
  EXPECT_EQ(packages_first_used(1, hosts, packages), (std::set<int>{1}));
  EXPECT_EQ(packages_first_used(2, hosts, packages), (std::set<int>{0}));
  EXPECT_EQ(packages_first_used(3, hosts, packages), (std::set<int>{}));
}

// A timing where another process meters the device: this one brings a figure without domains,
// and the sum over the processes is the timing's energy.
TEST(EnergyAcrossProcesses, ATimingReadsTheSumOverTheProcesses) {
  const DeviceEnergy elsewhere = metered_by_another_process(DeviceKind::gpu);
  std::vector<std::optional<EnergyStatistics>> seen;
  int meetings = 0;
  const EnergyObservation energy{.meter = nullptr,
                                 .record = &elsewhere.record,
                                 .sum_over_processes =
                                     [&seen](const std::optional<EnergyStatistics>& own) {
                                       seen.push_back(own);
                                       const std::vector<std::optional<EnergyStatistics>> parts = {
                                           figure(50, 1.0, own ? own->evaluations : 0, 1, 10), own};
                                       return sum_energy(parts);
                                     },
                                 .all_opened = [&meetings] { ++meetings; }};
  SleepRun run;
  const RepetitionSettings settings{
      .repetitions = 2, .min_time_s = 0.01, .warmup_s = 0, .noise_threshold_cv = 0.5};
  const Timings t =
      time_repetitions(run, PreparedRun::Scope::kernel, 100, settings, nullptr, &energy);
  // Once per attempt (a disturbed timing is taken again).
  EXPECT_GE(meetings, 1);
  ASSERT_EQ(seen.size(), static_cast<std::size_t>(meetings));
  ASSERT_TRUE(seen.back().has_value());
  EXPECT_TRUE(seen.back()->domain_joules.empty());
  EXPECT_GT(seen.back()->evaluations, 0);
  ASSERT_TRUE(t.kernel.energy.has_value());
  EXPECT_DOUBLE_EQ(t.kernel.energy->joules, 50);
}

}  // namespace
}  // namespace nbody
