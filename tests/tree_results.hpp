#pragma once
// A run of all-pairs and Barnes-Hut tree formulations on a CPU and a GPU at four sizes, whose
// figures are chosen so that every case of FAIRNESS rule 9's analysis occurs: bars met and unmet,
// a crossover found at one bar and not at another, dominated and non-dominated points, and a size
// (65536) that only the trees reached.
//
// Times per evaluation (seconds) and relative L2 errors:
//   N                     1024     4096     16384    65536
//   cpu.aos   (1e-7)      0.0105   0.168    2.68     —        rate 1e8 interactions/s
//   cpu.tbb   (1e-7)      2.6e-5   4.2e-4   6.7e-3   —        rate 4e10
//   cpu.tree θ=0.5 (3e-3) 1e-4     3e-4     1.5e-3   6e-3
//   cpu.tree θ=0.2 (5e-5) 2e-4     8e-4     4e-3     1.6e-2   max error 1e-3: no float32 class
//   gpu.aos   (1e-7)      1.05e-4  1.68e-3  2.68e-2  —        rate 1e10
//   gpu.tuned (1e-7)      5.2e-7   8.4e-6   1.34e-4  —        rate 2e12
//   gpu.tree θ=0.5 (3e-3) 5e-5     6e-5     1e-4     3e-4
#include <string>

#include "nbody/ceilings.hpp"
#include "nbody/results.hpp"

namespace nbody::testing {

inline TimingStatistics tree_test_timing(double median) {
  TimingStatistics t;
  t.repetitions = 5;
  t.samples_s = {median * 0.95, median, median, median * 1.05, median * 1.1};
  t.median_s = median;
  t.min_s = median * 0.95;
  t.max_s = median * 1.1;
  t.ci_low_s = median * 0.9;
  t.ci_high_s = median * 1.1;
  t.ci_confidence = 0.9375;
  t.conditions = MeasurementConditions{.wall_seconds = 1, .online_cpus = 16};
  return t;
}

inline ImplementationRecord tree_test_implementation(std::string name, DeviceKind device, Role role,
                                                     std::optional<double> theta = {}) {
  ImplementationRecord i;
  i.name = std::move(name);
  i.device = device;
  i.role = role;
  i.available = true;
  if (theta) {
    i.algorithm = Algorithm::barnes_hut;
    i.theta = theta;
  }
  return i;
}

inline AccuracyRecord tree_test_accuracy(double relative_l2, double max_relative, double bound) {
  AccuracyRecord a;
  a.metrics.relative_l2 = relative_l2;
  a.metrics.max_relative = max_relative;
  a.relative_l2_bound = bound;
  a.passed = true;
  return a;
}

// An all-pairs measurement at `rate` interactions per second.
inline ResultRecord all_pairs_measured(std::string name, std::size_t n, double rate,
                                       int threads = 1) {
  ResultRecord r;
  r.implementation = std::move(name);
  r.initial_condition = "uniform";
  r.n = n;
  r.input_hash = "f32hash";
  r.interactions_credited = static_cast<double>(n) * static_cast<double>(n);
  r.pairs_evaluated = n * n;
  r.threads = threads;
  if (threads > 1) r.details["isa"] = "avx512f";
  r.kernel = tree_test_timing(r.interactions_credited / rate);
  r.kernel_rate = RateFigures{.interactions_per_second = rate};
  r.accuracy = tree_test_accuracy(1e-7, 1e-6, 1e-6);
  return r;
}

// A tree measurement: no credited interactions and no rate; 100 body-body and 50 body-cell
// interactions per body, its build a fifth of its time.
inline ResultRecord tree_measured(std::string name, std::size_t n, double seconds,
                                  double relative_l2, double max_relative) {
  ResultRecord r;
  r.implementation = std::move(name);
  r.initial_condition = "uniform";
  r.n = n;
  r.input_hash = "f32hash";
  r.threads = 16;
  r.kernel = tree_test_timing(seconds);
  r.accuracy = tree_test_accuracy(relative_l2, max_relative, 1e-2);
  r.tree_work =
      TreeWork{.body_body = 100 * n, .body_cell = 50 * n, .build = tree_test_timing(seconds / 5)};
  r.pairs_evaluated = r.tree_work->interactions();
  return r;
}

inline ResultsDocument all_pairs_and_trees() {
  ResultsDocument doc;
  doc.settings.command = "run";
  doc.settings.seed = 1;
  doc.settings.softening = 0.01;
  doc.settings.thetas = {0.2, 0.5};
  doc.command_line = {"nbody-fair", "run", "--theta", "0.2,0.5"};
  doc.complete = true;
  doc.machine.hostname = "host";
  doc.machine.cpu_model = "Test CPU";
  doc.machine.logical_cpus = 16;
  doc.machine.isa_features = {"sse4.2", "avx2", "avx512f"};
  doc.machine.gpus = {GpuDescription{.name = "Test GPU"}};
  doc.build.cxx_compiler = "GNU 12";
  Ceilings ceilings;
  ceilings.machine.hostname = "host";
  ceilings.machine.cpu_model = "Test CPU";
  ceilings.entries = {CeilingEntry{
      .name = kGpuFp32FlopsCeiling, .device = DeviceKind::gpu, .value = 6e13, .unit = "FLOP/s"}};
  doc.ceilings = ceilings;
  doc.implementations = {
      tree_test_implementation("cpu.aos", DeviceKind::cpu, Role::naive_baseline),
      tree_test_implementation("cpu.tbb", DeviceKind::cpu, Role::optimized),
      tree_test_implementation("cpu.tree[theta=0.5]", DeviceKind::cpu, Role::optimized, 0.5),
      tree_test_implementation("cpu.tree[theta=0.2]", DeviceKind::cpu, Role::optimized, 0.2),
      tree_test_implementation("gpu.aos", DeviceKind::gpu, Role::naive_baseline),
      tree_test_implementation("gpu.tuned", DeviceKind::gpu, Role::optimized),
      tree_test_implementation("gpu.tree[theta=0.5]", DeviceKind::gpu, Role::optimized, 0.5)};
  const std::size_t sizes[] = {1024, 4096, 16384, 65536};
  const double cpu_wide[] = {1e-4, 3e-4, 1.5e-3, 6e-3};
  const double cpu_narrow[] = {2e-4, 8e-4, 4e-3, 1.6e-2};
  const double gpu_wide[] = {5e-5, 6e-5, 1e-4, 3e-4};
  for (std::size_t i = 0; i < 4; ++i) {
    const std::size_t n = sizes[i];
    doc.inputs.push_back({"uniform", n, 1, "f64hash", "f32hash"});
    if (n < 65536) {
      doc.results.push_back(all_pairs_measured("cpu.aos", n, 1e8));
      doc.results.push_back(all_pairs_measured("cpu.tbb", n, 4e10, 16));
    }
    doc.results.push_back(tree_measured("cpu.tree[theta=0.5]", n, cpu_wide[i], 3e-3, 5e-2));
    doc.results.push_back(tree_measured("cpu.tree[theta=0.2]", n, cpu_narrow[i], 5e-5, 1e-3));
    if (n < 65536) {
      for (const auto& [name, rate] : {std::pair{"gpu.aos", 1e10}, std::pair{"gpu.tuned", 2e12}}) {
        ResultRecord r = all_pairs_measured(name, n, rate);
        r.end_to_end = r.kernel;
        r.end_to_end->median_s *= 2;
        doc.results.push_back(r);
      }
    }
    doc.results.push_back(tree_measured("gpu.tree[theta=0.5]", n, gpu_wide[i], 3e-3, 5e-2));
  }
  return doc;
}

// What bounds the trees of all_pairs_and_trees() (version 11): every tree states a body-body term
// at 1 unit of its walk's rate and a body-cell term at 2, so its 100 and 50 interactions a body
// are 200 units a body, and a build of 100 bytes a body; each device's ceilings rate them. A tree
// of N bodies taking `seconds` (a fifth of it the build) is then at 250 N / (walk rate × seconds)
// of its walk's bound and 500 N / (bandwidth × seconds) of its build's.
struct TreeRates {
  double cpu_walk = 2e9;        // units a second: AVX-512F's issue rate on all 16 threads
  double gpu_walk = 2e11;       // units a second: the interaction mix
  double cpu_bandwidth = 1e10;  // bytes a second
  double gpu_bandwidth = 1e12;
};

inline TreeCostModel tree_test_costs(DeviceKind device) {
  const bool gpu = device == DeviceKind::gpu;
  return {.walk_ceiling = gpu ? std::string(kGpuInteractionMixCeiling)
                              : cpu_flops_ceiling(Precision::f32, "avx512f", true),
          .walk_figure = gpu ? CeilingFigure::value : CeilingFigure::fp_instructions_per_second,
          .walk_scale = 1,
          .body_body_cost = 1,
          .body_cell_cost = 2,
          .cost_unit = gpu ? "float32 interactions of the mix" : "FP vector instructions",
          .cost_basis = "made up for the tests",
          .build_ceiling = gpu ? kGpuMemoryBandwidthCeiling : kCpuMemoryBandwidthCeiling,
          .build_bytes = 0,
          .build_basis = "100 B a body"};
}

// Gives every tree of `doc` its cost model (build_bytes 100 a body) and adds the ceilings that
// rate them at `rates`.
inline void add_tree_bounds(ResultsDocument& doc, const TreeRates& rates = {}) {
  Ceilings& c = *doc.ceilings;
  c.entries.push_back({.name = cpu_flops_ceiling(Precision::f32, "avx512f", true),
                       .device = DeviceKind::cpu,
                       .value = 32 * rates.cpu_walk,
                       .unit = "FLOP/s",
                       .threads = 16,
                       .isa = "avx512f",
                       .lanes = 16,
                       .fp_instructions_per_second = rates.cpu_walk});
  c.entries.push_back({.name = kCpuMemoryBandwidthCeiling,
                       .device = DeviceKind::cpu,
                       .value = rates.cpu_bandwidth,
                       .unit = "B/s",
                       .threads = 16});
  c.entries.push_back({.name = kGpuInteractionMixCeiling,
                       .device = DeviceKind::gpu,
                       .value = rates.gpu_walk,
                       .unit = "int/s"});
  c.entries.push_back({.name = kGpuMemoryBandwidthCeiling,
                       .device = DeviceKind::gpu,
                       .value = rates.gpu_bandwidth,
                       .unit = "B/s"});
  for (ResultRecord& r : doc.results) {
    if (!r.tree_work) continue;
    const DeviceKind device =
        r.implementation.starts_with("gpu") ? DeviceKind::gpu : DeviceKind::cpu;
    r.tree_work->costs = tree_test_costs(device);
    r.tree_work->costs->build_bytes = 100.0 * static_cast<double>(r.n);
  }
}

}  // namespace nbody::testing
