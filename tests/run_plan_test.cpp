// The plan of a run within its budget, on synthetic probes of three hosts: a 2-core machine
// without a GPU, 16 cores beside one H100, 64 cores beside four GPUs. The rows the run is for (the
// headline, naive against naive, the trees at 1M and around their crossovers) are planned, and
// nothing of them is dropped for something optional.
#include <algorithm>
#include <cmath>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbody/app/run_plan.hpp"
#include "nbody/app/runner.hpp"
#include "stand_in_suite.hpp"

namespace nbody {
namespace {

// A formulation of a synthetic host: its rate at large N (all-pairs: interactions a second; a
// tree: bodies a second), and the fixed seconds of one evaluation (a launch).
struct SyntheticFormulation {
  ImplementationInfo info;
  double rate = 0;
  double fixed_s = 0;
};

ImplementationInfo all_pairs(std::string name, DeviceKind device, Precision precision, Role role,
                             AccuracyClass accuracy = AccuracyClass::full) {
  ImplementationInfo info;
  info.name = std::move(name);
  info.device = device;
  info.precision = precision;
  info.role = role;
  info.accuracy_class = accuracy;
  return info;
}

ImplementationInfo tree(std::string name, DeviceKind device, Precision precision, double theta) {
  ImplementationInfo info = all_pairs(std::move(name), device, precision, Role::optimized);
  info.algorithm = Algorithm::barnes_hut;
  info.theta = theta;
  info.name = name_at_opening_angle(info.name, theta);
  return info;
}

// The formulations of a host whose CPU is `cpu` times the 2-core machine's and whose GPU (if
// `gpu`) is an H100, with rates read off the samples (docs/samples).
std::vector<SyntheticFormulation> host(double speed, bool gpu) {
  constexpr DeviceKind cpu = DeviceKind::cpu;
  using enum Precision;
  std::vector<SyntheticFormulation> f = {
      {all_pairs("cpu.aos", cpu, f32, Role::naive_baseline), 0.17e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.soa", cpu, f32, Role::optimized), 0.15e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.soa.f64", cpu, f64, Role::naive_baseline), 0.12e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.simd", cpu, f32, Role::optimized), 2e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.simd.f64", cpu, f64, Role::optimized), 0.9e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.simd.approx", cpu, f32, Role::optimized, AccuracyClass::approximate),
       3e9 * std::min(speed, 2.0), 0},
      {all_pairs("cpu.tbb", cpu, f32, Role::optimized), 3.5e9 * speed, 20e-6},
      {all_pairs("cpu.tbb.f64", cpu, f64, Role::optimized), 1.6e9 * speed, 20e-6},
      {all_pairs("cpu.tbb.symmetric", cpu, f32, Role::optimized), 5.5e9 * speed, 60e-6},
      {all_pairs("cpu.tbb.symmetric.f64", cpu, f64, Role::optimized), 2.4e9 * speed, 60e-6},
  };
  for (const double theta : {0.3, 0.5, 0.7}) {
    const double bodies = 1.5e6 * speed / (theta == 0.3 ? 3 : theta == 0.5 ? 1.7 : 1);
    f.push_back({tree("cpu.tree", cpu, f32, theta), bodies, 50e-6});
    f.push_back({tree("cpu.tree.f64", cpu, f64, theta), bodies / 2, 50e-6});
  }
  if (!gpu) return f;
  const std::vector<SyntheticFormulation> on_gpu = {
      {all_pairs("gpu.aos", DeviceKind::gpu, f32, Role::naive_baseline), 0.6e12, 8e-6},
      {all_pairs("gpu.aos.f64", DeviceKind::gpu, f64, Role::naive_baseline), 0.3e12, 8e-6},
      {all_pairs("gpu.shared", DeviceKind::gpu, f32, Role::optimized), 1.5e12, 8e-6},
      {all_pairs("gpu.shared.f64", DeviceKind::gpu, f64, Role::optimized), 0.8e12, 8e-6},
      {all_pairs("gpu.atomic", DeviceKind::gpu, f32, Role::optimized), 1.2e12, 8e-6},
      {all_pairs("gpu.shuffle", DeviceKind::gpu, f32, Role::optimized), 1.2e12, 8e-6},
      {all_pairs("gpu.tuned", DeviceKind::gpu, f32, Role::optimized), 2.18e12, 6e-6},
      {all_pairs("gpu.tuned.f64", DeviceKind::gpu, f64, Role::optimized), 0.9e12, 8e-6},
  };
  f.insert(f.end(), on_gpu.begin(), on_gpu.end());
  for (const double theta : {0.3, 0.5, 0.7}) {
    const double bodies = 2.0e8 / (theta == 0.3 ? 3 : theta == 0.5 ? 1.7 : 1);
    f.push_back({tree("gpu.tree", DeviceKind::gpu, f32, theta), bodies, 0.4e-3});
    f.push_back({tree("gpu.tree.f64", DeviceKind::gpu, f64, theta), bodies / 2, 0.4e-3});
  }
  return f;
}

double evaluation_seconds(const SyntheticFormulation& f, std::size_t n) {
  const double count = static_cast<double>(n);
  const double work = f.info.algorithm == Algorithm::all_pairs ? count * count : count;
  return f.fixed_s + work / f.rate;
}

// A host's plan at the default sizes and budget, its probes climbing as the runner's do.
struct SyntheticHost {
  std::deque<Implementation> implementations;
  std::vector<const Implementation*> selected;
  std::map<std::string, SyntheticFormulation> formulations;
  SuiteOptions options;
  std::vector<std::size_t> sizes;
  RunPlan plan;

  SyntheticHost(double cpu, bool gpu) {
    for (const SyntheticFormulation& f : host(cpu, gpu)) {
      formulations[f.info.name] = f;
      implementations.push_back(stand_in_implementation(
          f.info,
          [](std::span<const Body<double>>, double) { return std::unique_ptr<PreparedRun>(); }));
      selected.push_back(&implementations.back());
    }
    for (std::size_t n = 1024; n <= (gpu ? (1u << 20) : (1u << 16)); n *= 4) sizes.push_back(n);
    PlanInputs inputs{.probes = {},
                      .size_costs = {.input_seconds_per_body = 1e-7,
                                     .reference_seconds_per_interaction = 1e-9 / cpu},
                      .expected_attempts = 1,
                      .spent_s = 10};
    for (const auto& [name, f] : formulations) {
      ProbeCurve& curve = inputs.probes[name];
      for (std::size_t n = 1024; n < sizes.back(); n *= 4) {
        if (!curve.empty() && curve.back().kernel_s * 16 > options.max_eval_seconds / 4) break;
        const double s = evaluation_seconds(f, n);
        const bool on_gpu = f.info.device == DeviceKind::gpu;
        curve.push_back({.n = n,
                         .kernel_s = s,
                         .kernel_wall_s = s + (on_gpu ? 10e-6 : 1e-6),
                         .end_to_end_s = on_gpu ? s + 20e-6 : 0,
                         .end_to_end_wall_s = on_gpu ? s + 35e-6 : 0,
                         .prepare_s = 1e-8 * static_cast<double>(n)});
      }
    }
    plan = plan_run(selected, options, sizes, {65536}, gpu ? 150 : 75, inputs);
  }

  bool included(const std::string& name, std::size_t n) const {
    const PlannedMeasurement* m = plan.find(name, n);
    return m && m->included;
  }
  // The fastest full-accuracy optimized all-pairs formulation of a device and precision at N
  // that fits --max-eval-seconds, by its true rate.
  std::optional<std::string> best(DeviceKind device, Precision precision, std::size_t n) const {
    std::optional<std::string> found;
    double fastest = 0;
    for (const auto& [name, f] : formulations) {
      const ImplementationInfo& info = f.info;
      if (info.device != device || info.precision != precision ||
          info.algorithm != Algorithm::all_pairs || info.role != Role::optimized ||
          info.accuracy_class != AccuracyClass::full)
        continue;
      const double s = evaluation_seconds(f, n);
      if (s > options.max_eval_seconds) continue;
      if (!found || s < fastest) {
        found = name;
        fastest = s;
      }
    }
    return found;
  }
};

// The checks every host's plan passes.
void expect_answers_the_question(const SyntheticHost& h, bool gpu) {
  SCOPED_TRACE(h.plan.describe());
  EXPECT_LE(h.plan.spent_before_s + h.plan.planned_s, h.plan.budget_s);
  // The headline: the best of each device and precision at every size it fits.
  std::size_t f32_rows = 0, f64_rows = 0;
  for (const std::size_t n : h.sizes) {
    for (const Precision precision : {Precision::f32, Precision::f64}) {
      const auto cpu = h.best(DeviceKind::cpu, precision, n);
      if (cpu) {
        EXPECT_TRUE(h.included(*cpu, n)) << *cpu << " at " << n;
      }
      if (!gpu) continue;
      const auto on_gpu = h.best(DeviceKind::gpu, precision, n);
      ASSERT_TRUE(on_gpu);
      EXPECT_TRUE(h.included(*on_gpu, n)) << *on_gpu << " at " << n;
      if (cpu) ++(precision == Precision::f32 ? f32_rows : f64_rows);
    }
  }
  if (gpu) {
    EXPECT_GE(f32_rows, 5u);
    EXPECT_GE(f64_rows, 4u);
  }
  // Naive against naive at two sizes or more, in both precisions.
  for (const auto& [cpu_naive, gpu_naive] :
       {std::pair{"cpu.aos", "gpu.aos"}, std::pair{"cpu.soa.f64", "gpu.aos.f64"}}) {
    std::size_t sizes = 0;
    for (const std::size_t n : h.sizes) {
      if (h.included(cpu_naive, n) && (!gpu || h.included(gpu_naive, n))) ++sizes;
    }
    EXPECT_GE(sizes, 2u) << cpu_naive;
  }
  // The trees at the largest size, at the angle that meets L2 <= 1e-3 (0.5 by the survey), and
  // on both sides of the CPU's crossover with all-pairs.
  const std::size_t largest = h.sizes.back();
  EXPECT_TRUE(h.included("cpu.tree[theta=0.5]", largest));
  if (gpu) {
    EXPECT_TRUE(h.included("gpu.tree[theta=0.5]", largest));
  }
  std::size_t tree_sizes = 0;
  for (const std::size_t n : h.sizes) tree_sizes += h.included("cpu.tree[theta=0.5]", n) ? 1 : 0;
  EXPECT_GE(tree_sizes, 3u);
  // Nothing guaranteed is dropped for something optional.
  bool guaranteed_left_out = false, optional_kept = false;
  for (const PlannedMeasurement& m : h.plan.measurements) {
    if (m.step <= PlanStep::trees && !m.included) guaranteed_left_out = true;
    if (m.step > PlanStep::trees && m.included) optional_kept = true;
  }
  EXPECT_FALSE(guaranteed_left_out && optional_kept);
  EXPECT_FALSE(guaranteed_left_out);
}

TEST(RunPlan, TwoCoresWithoutAGpu) {
  const SyntheticHost h(1, false);
  expect_answers_the_question(h, false);
}

TEST(RunPlan, SixteenCoresAndOneH100) {
  const SyntheticHost h(8, true);
  expect_answers_the_question(h, true);
  // A runner-up within 25% of the likely best is part of the headline only where it is cheap: at
  // 1M gpu.shared.f64 would cost about 10 s beside gpu.tuned.f64.
  const PlannedMeasurement* runner_up = h.plan.find("gpu.shared.f64", 1u << 20);
  ASSERT_TRUE(runner_up);
  EXPECT_NE(runner_up->step, PlanStep::headline);
}

TEST(RunPlan, SixtyFourCoresAndFourGpus) {
  const SyntheticHost h(32, true);
  expect_answers_the_question(h, true);
}

// Each step is kept before the next: with a budget too small for everything, the likely best come
// first, then the naive baselines, and what does not fit is left out with why.
TEST(RunPlan, KeepsEachStepBeforeTheNext) {
  SyntheticHost h(8, true);
  double headline = 0;
  for (const PlannedMeasurement& m : h.plan.measurements) {
    if (m.step == PlanStep::headline) headline += m.estimated_s;
  }
  PlanInputs inputs;
  for (const auto& [name, f] : h.formulations) {
    const double s = evaluation_seconds(f, 4096);
    inputs.probes[name] = {{.n = 4096, .kernel_s = s, .kernel_wall_s = s}};
  }
  const RunPlan small = plan_run(h.selected, h.options, h.sizes, {}, headline / 2, inputs);
  bool later_kept_before_earlier = false;
  for (const PlannedMeasurement& m : small.measurements) {
    if (!m.included) {
      EXPECT_NE(m.left_out_because.find("left out by the plan"), std::string::npos);
      for (const PlannedMeasurement& other : small.measurements) {
        if (other.included && other.step > m.step && other.estimated_s >= m.estimated_s)
          later_kept_before_earlier = true;
      }
    }
  }
  EXPECT_FALSE(later_kept_before_earlier) << small.describe();
  EXPECT_NE(small.describe().find("left out: "), std::string::npos);
}

// A run behind its plan drops the measurements of later steps first: one of the rest no longer
// fits where it would leave no room for a headline one still to come, and that one still runs;
// where the measurements so far took longer than estimated, what is left is costed at that pace.
TEST(RunPlan, ARunBehindItsPlanDropsLaterStepsFirst) {
  RunPlan plan{.budget_s = 12};
  plan.measurements = {
      {.implementation = "rest", .n = 1024, .step = PlanStep::rest, .estimated_s = 5},
      {.implementation = "best", .n = 4096, .step = PlanStep::headline, .estimated_s = 5}};
  EXPECT_FALSE(plan.no_longer_fits("rest", 1024, 1));  // 1 + 5 + 5 fit 12
  const auto dropped = plan.no_longer_fits("rest", 1024, 3);
  ASSERT_TRUE(dropped);
  EXPECT_NE(dropped->find("fell behind"), std::string::npos);
  EXPECT_FALSE(plan.no_longer_fits("best", 4096, 6));
  EXPECT_TRUE(plan.no_longer_fits("best", 4096, 8));
  // Measurements that took 1.5 times their estimates so far: the rest's no longer fits at 1 s.
  const auto slower = plan.no_longer_fits("rest", 1024, 1, 1.5);
  ASSERT_TRUE(slower);
  EXPECT_NE(slower->find("1.5 times their estimates"), std::string::npos) << *slower;
  EXPECT_FALSE(plan.no_longer_fits("rest", 1024, 1, 0.5));  // never planned below its estimate
  // The inputs and references of the sizes still to come, and the measurement's own reference
  // where it is still to be computed, are part of what must fit.
  plan.size_costs_s = {{1024, 0.5}, {4096, 1.5}};
  plan.size_costs.reference_seconds_per_interaction = 1e-7;  // 1.7 s at 4K
  EXPECT_TRUE(plan.no_longer_fits("rest", 1024, 1));         // 1 + 5 + 5 + 1.5
  EXPECT_FALSE(plan.no_longer_fits("best", 4096, 6));
  EXPECT_TRUE(plan.no_longer_fits("best", 4096, 6, 1, true));  // 6 + 5 + 1.7
}

// The estimate of a timing follows Google Benchmark's loop: a 2 ms evaluation with a 0.1 s minimum
// runs 1 iteration, 10, then 70 a repetition; one of 83 ms runs 1, then 2 a repetition; a kernel
// whose launch costs twice its own time costs three times its clock's seconds.
TEST(RunPlan, TimingSecondsFollowGoogleBenchmarksLoop) {
  RepetitionSettings timing;  // 5 repetitions of at least 0.1 s
  EXPECT_NEAR(timing_seconds(2e-3, 2e-3, timing, 0), 2e-3 + 10 * 2e-3 + 5 * 70 * 2e-3, 1e-9);
  EXPECT_NEAR(timing_seconds(0.083, 0.083, timing, 0), 0.083 + 5 * 2 * 0.083, 1e-9);
  EXPECT_NEAR(timing_seconds(0.5, 0.5, timing, 0), 5 * 0.5, 1e-9);
  const double short_kernel = timing_seconds(10e-6, 30e-6, timing, 0);
  EXPECT_NEAR(short_kernel, 3 * timing_seconds(10e-6, 10e-6, timing, 0), 1e-9);
  EXPECT_GT(timing_seconds(10e-6, 10e-6, timing, 0.05), timing_seconds(10e-6, 10e-6, timing, 0));
}

// Estimates at sizes between probes scale the evaluation, not the launch.
TEST(RunPlan, ProbeFiguresScaleTheEvaluationNotTheLaunch) {
  const ProbeCurve curve = {{.n = 1024, .kernel_s = 1e-5, .kernel_wall_s = 2e-5},
                            {.n = 4096, .kernel_s = 1e-4, .kernel_wall_s = 1.1e-4}};
  const ProbeFigures at = probe_figures_at(curve, Algorithm::all_pairs, 16384);
  EXPECT_NEAR(at.kernel_s, 1.6e-3, 1e-12);
  EXPECT_NEAR(at.kernel_wall_s, 1.61e-3, 1e-12);
  EXPECT_NEAR(probe_figures_at(curve, Algorithm::all_pairs, 1024).kernel_s, 1e-5, 1e-15);
  EXPECT_NEAR(probe_figures_at(curve, Algorithm::all_pairs, 512).kernel_s, 2.5e-6, 1e-15);
}

}  // namespace
}  // namespace nbody
