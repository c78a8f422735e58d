// The suite driver: its plan under a budget, the conditions recorded with each timing, and how
// kernels are timed inside and apart from the end-to-end timing.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/benchmark_harness.hpp"
#include "nbody/app/runner.hpp"
#include "nbody/app/wiring.hpp"
#include "nbody/cpu/tree/interaction_kernels.hpp"
#include "nbody/machine_info.hpp"
#include "nbody/reference.hpp"
#include "nbody/results.hpp"
#include "stand_in_suite.hpp"

namespace nbody {
namespace {

// What other processes and the hypervisor took between two samples, as shares of every CPU.
TEST(Conditions, SharesOfOtherProcessesAndSteal) {
  const CpuActivity before{.busy_seconds = 100,
                           .steal_seconds = 10,
                           .own_seconds = 5,
                           .wall_seconds = 1000,
                           .online_cpus = 4,
                           .clock_mhz = 2000.0};
  CpuActivity after = before;
  after.wall_seconds += 2;  // 8 CPU-seconds of capacity
  after.busy_seconds += 5;  // 3 of them this process's, 2 others'
  after.own_seconds += 3;
  after.steal_seconds += 0.8;  // 10% steal
  after.clock_mhz = 1800.0;
  const MeasurementConditions c = conditions_between(before, after);
  EXPECT_DOUBLE_EQ(c.wall_seconds, 2);
  EXPECT_DOUBLE_EQ(c.other_processes_cpu_share, 0.25);
  EXPECT_NEAR(c.steal_cpu_share, 0.1, 1e-12);
  EXPECT_EQ(c.cpu_clock_mhz_after, 1800.0);
  const auto sample = sample_cpu_activity();
  ASSERT_TRUE(sample.has_value()) << "/proc/stat unreadable";
  EXPECT_GT(sample->online_cpus, 0);
}

// The GPU side of a timing's conditions: held-down clocks (NVML's reasons) and a low SM clock are
// disturbances; a GPU at its maximum clock with no reason, or only at its power cap, is not.
TEST(Conditions, GpuClockLimitsAndLowClocksAreDisturbances) {
  MeasurementConditions c;
  c.online_cpus = 16;
  c.gpu_after = GpuSample{.sm_clock_mhz = 1980, .max_sm_clock_mhz = 1980, .temperature_c = 50};
  EXPECT_TRUE(disturbances(c).empty());
  c.gpu_after->clock_limits = {"hw_thermal_slowdown"};
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("hw_thermal_slowdown"), std::string::npos);
  // The kernel's own draw at the power limit, clocks at 98% of maximum: steady, not disturbed.
  c.gpu_after->clock_limits = {"sw_power_cap"};
  c.gpu_after->sm_clock_mhz = 1950;
  EXPECT_TRUE(disturbances(c).empty());
  // ... but a power cap that pulls the clock below 90% is.
  c.gpu_after->sm_clock_mhz = 1600;
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("sw_power_cap; 1600 of 1980 MHz"), std::string::npos);
  c.gpu_after->clock_limits.clear();
  c.gpu_after->sm_clock_mhz = 1400;
  ASSERT_EQ(disturbances(c).size(), 1u);
  EXPECT_NE(disturbances(c).front().find("1400 of its 1980 MHz"), std::string::npos);
  c.other_processes_cpu_share = 0.5;
  EXPECT_EQ(disturbances(c).size(), 2u);
}

// A run whose evaluations report fixed seconds: 3 ms end to end, of which the kernel took 1 ms,
// growing by one part in a thousand per evaluation so that the repetitions differ.
class FixedSecondsRun final : public PreparedRun {
 public:
  Seconds evaluate(Scope scope) override {
    const double drift = 1.0 + 1e-3 * static_cast<double>(evaluations_++ % 7);
    return scope == Scope::kernel ? Seconds::kernel_only(1e-3 * drift)
                                  : Seconds{.total = 3e-3 * drift, .kernel = 1e-3 * drift};
  }
  std::vector<Vec3<double>> accelerations() override { return {}; }

 private:
  int evaluations_ = 0;
};

// One end-to-end timing yields the end-to-end and the kernel statistics, each from its own clock
// and with the same conditions; in kernel scope the two are the same figure.
TEST(Timing, EndToEndTimingCarriesTheKernelsOwnFigure) {
  FixedSecondsRun run;
  const RepetitionSettings settings{
      .repetitions = 5, .min_time_s = 0.01, .warmup_s = 0, .noise_threshold_cv = 0.05};
  const Timings both = time_repetitions(run, PreparedRun::Scope::end_to_end, 1000, settings);
  ASSERT_EQ(both.total.repetitions, 5);
  ASSERT_EQ(both.kernel.repetitions, 5);
  EXPECT_EQ(both.kernel.iterations_per_repetition, both.total.iterations_per_repetition);
  for (std::size_t i = 0; i < both.total.samples_s.size(); ++i) {
    EXPECT_NEAR(both.total.samples_s[i], 3 * both.kernel.samples_s[i], 1e-12);
  }
  EXPECT_NEAR(both.total.median_s, 3.0e-3, 1e-5);
  EXPECT_NEAR(both.kernel.median_s, 1.0e-3, 1e-5);
  EXPECT_NEAR(both.kernel.min_s,
              *std::min_element(both.kernel.samples_s.begin(), both.kernel.samples_s.end()), 1e-15);
  EXPECT_LE(both.kernel.ci_low_s, both.kernel.median_s);
  EXPECT_GE(both.kernel.ci_high_s, both.kernel.median_s);
  EXPECT_NEAR(both.kernel.cv, both.total.cv, 1e-9);
  EXPECT_GT(both.kernel.ci_confidence, 0.9);
  ASSERT_TRUE(both.kernel.conditions.has_value());
  EXPECT_EQ(both.kernel.conditions->attempts, both.total.conditions->attempts);

  const Timings kernel = time_repetitions(run, PreparedRun::Scope::kernel, 1000, settings);
  EXPECT_EQ(kernel.kernel.samples_s, kernel.total.samples_s);
  EXPECT_NEAR(kernel.kernel.median_s, 1.0e-3, 1e-5);
}

// A float64 "GPU" formulation whose kernel reads 0.6 ms inside its end-to-end evaluation and 0.5 ms
// alone, as a short kernel does right behind a host-to-device copy; its accelerations are the
// reference's own.
class ShortKernelRun final : public PreparedRun {
 public:
  ShortKernelRun(std::span<const Body<double>> bodies, double softening) {
    std::vector<std::uint32_t> all(bodies.size());
    for (std::uint32_t i = 0; i < all.size(); ++i) all[i] = i;
    accelerations_ = reference_accelerations(bodies, softening, all);
  }
  Seconds evaluate(Scope scope) override {
    const double drift = 1.0 + 1e-3 * static_cast<double>(evaluations_++ % 7);
    return scope == Scope::kernel ? Seconds::kernel_only(0.5e-3 * drift)
                                  : Seconds{.total = 2e-3 * drift, .kernel = 0.6e-3 * drift};
  }
  std::vector<Vec3<double>> accelerations() override { return accelerations_; }

 private:
  std::vector<Vec3<double>> accelerations_;
  int evaluations_ = 0;
};

ResultRecord run_short_kernel_suite(double separate_kernel_timing_below_s) {
  Registry registry;
  registry.add(stand_in_implementation(
      {.name = "gpu.short",
       .description = "a fixed-seconds stand-in",
       .device = DeviceKind::gpu,
       .precision = Precision::f64,
       .tolerance = {.unit_roundoff = kFloat64UnitRoundoff,
                     .relative_l2_coefficient = 1,
                     .max_relative_coefficient = 1}},
      [](std::span<const Body<double>> bodies, double softening) -> std::unique_ptr<PreparedRun> {
        return std::make_unique<ShortKernelRun>(bodies, softening);
      }));
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SuiteOptions options;
  options.sizes = {64};
  options.counters = false;
  options.reference_cache = false;
  options.timing.min_time_s = 0.01;
  options.separate_kernel_timing_below_s = separate_kernel_timing_below_s;
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  EXPECT_EQ(doc.settings.separate_kernel_timing_below_s, separate_kernel_timing_below_s);
  EXPECT_EQ(doc.results.size(), 1u);
  return doc.results.at(0);
}

// A GPU kernel shorter than settings.separate_kernel_timing_below_s inside its end-to-end timing
// is also timed alone, and its kernel figure is that steady-state timing; a longer one keeps the
// figure its end-to-end timing gave.
TEST(Runner, ShortGpuKernelsAreAlsoTimedAlone) {
  const ResultRecord separate = run_short_kernel_suite(1e-3);
  ASSERT_EQ(separate.status, Status::ok) << separate.reason;
  ASSERT_TRUE(separate.kernel && separate.end_to_end);
  EXPECT_NEAR(separate.kernel->median_s, 0.5e-3, 1e-5);
  EXPECT_NEAR(separate.end_to_end->median_s, 2e-3, 1e-5);

  const ResultRecord embedded = run_short_kernel_suite(0.4e-3);
  ASSERT_EQ(embedded.status, Status::ok) << embedded.reason;
  ASSERT_TRUE(embedded.kernel && embedded.end_to_end);
  EXPECT_NEAR(embedded.kernel->median_s, 0.6e-3, 1e-5);
  EXPECT_NEAR(embedded.end_to_end->median_s, 2e-3, 1e-5);
}

// A tree reads no counters (they are per credited interaction, and it is credited none); its
// results say so where an all-pairs result would have read them, and carry no readout elsewhere,
// as an all-pairs result between the counter sizes carries none.
TEST(Runner, TreesSayWhyTheyReadNoCountersAtTheCounterSizesAlone) {
  const Registry registry = make_default_registry();
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SuiteOptions options;
  options.sizes = {64, 128};
  options.counter_sizes = {128};
  options.implementation_pattern = "^cpu\\.tree$";
  options.reference_cache = false;
  options.timing.min_time_s = 0.01;
  options.budget_s = 0;
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  ASSERT_EQ(doc.results.size(), 2u);
  for (const ResultRecord& result : doc.results) {
    ASSERT_EQ(result.status, Status::ok) << result.reason;
    if (result.n == 128) {
      ASSERT_TRUE(result.counters);
      EXPECT_FALSE(result.counters->available());
      EXPECT_NE(result.counters->unavailable_reason.find("all-pairs kernels only"),
                std::string::npos);
    } else {
      EXPECT_FALSE(result.counters) << result.counters->unavailable_reason;
    }
  }
}

// A tree records what bounds its walk and build with the interactions it counted: its terms at
// the instructions its ISA's group kernel compiles them to, over that ISA's issue rate on the
// threads it used, and its build's bytes over the memory bandwidth.
TEST(Runner, TreesRecordWhatBoundsTheirWalkAndBuild) {
  const Registry registry = make_default_registry();
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SuiteOptions options;
  options.sizes = {64, 4096};
  options.implementation_pattern = "^cpu\\.tree(\\.f64)?$";
  options.reference_cache = false;
  options.counters = false;
  options.timing.min_time_s = 0.01;
  options.budget_s = 0;
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  ASSERT_EQ(doc.results.size(), 4u);
  for (const ResultRecord& r : doc.results) {
    SCOPED_TRACE(r.implementation + " at " + std::to_string(r.n));
    ASSERT_EQ(r.status, Status::ok) << r.reason;
    ASSERT_TRUE(r.tree_work && r.tree_work->costs);
    const TreeCostModel& costs = *r.tree_work->costs;
    const bool f64 = r.implementation.starts_with("cpu.tree.f64");
    const std::string& isa = r.details.at("isa");
    EXPECT_EQ(costs.walk_ceiling,
              cpu_flops_ceiling(f64 ? Precision::f64 : Precision::f32, isa, r.threads > 1));
    EXPECT_EQ(costs.walk_figure, CeilingFigure::fp_instructions_per_second);
    const cpu::tree::TermInstructions terms = cpu::tree::term_instructions(isa, f64);
    EXPECT_DOUBLE_EQ(costs.body_body_cost, static_cast<double>(terms.body_body) / terms.lanes);
    EXPECT_DOUBLE_EQ(costs.body_cell_cost, static_cast<double>(terms.body_cell) / terms.lanes);
    EXPECT_EQ(costs.build_ceiling, kCpuMemoryBandwidthCeiling);
    // Hundreds of bytes a body: the bodies are read five times, and the key sort moves 64.
    EXPECT_GT(costs.build_bytes, 150.0 * static_cast<double>(r.n));
    EXPECT_LT(costs.build_bytes, 1000.0 * static_cast<double>(r.n));
  }
}

// --budget 0 at the default sizes plans nothing and leaves nothing out: every measurement is
// taken, or skipped only for its own reasons (here one evaluation over --max-eval-seconds).
TEST(Runner, ABudgetOfZeroLeavesNothingOut) {
  const Registry registry = make_default_registry();
  const std::unique_ptr<ProgressSink> progress = make_silent_progress();
  const SuiteContext context = quiet_context(registry, *progress);
  SuiteOptions options;  // the default sizes
  options.implementation_pattern = "^cpu\\.tbb$";
  options.reference_cache = false;
  options.counters = false;
  options.timing.min_time_s = 0.01;
  options.timing.repetitions = 2;
  options.max_eval_seconds = 0.2;
  options.budget_s = 0;
  const ResultsDocument doc = run_suite(context, options, SuiteMode::run);
  EXPECT_EQ(doc.settings.budget_s, 0);
  EXPECT_FALSE(doc.phase_seconds.contains("planned"));
  ASSERT_GE(doc.results.size(), 4u);
  EXPECT_EQ(doc.results.front().status, Status::ok);
  for (const ResultRecord& result : doc.results) {
    EXPECT_FALSE(result.reason.starts_with("left out")) << result.n << ": " << result.reason;
  }
}

}  // namespace
}  // namespace nbody
