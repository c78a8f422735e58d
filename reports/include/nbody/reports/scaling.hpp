#pragma once
// A scaling study: several results documents, each one configuration (a rank count, a set of
// GPUs), set side by side. Strong scaling holds N fixed and adds devices; weak scaling holds N per
// device fixed (N_k = k N_1). Every speedup and efficiency is against the same implementation on
// one device (FAIRNESS.md rule 8), never against another. Typed data; scaling_report.hpp formats
// it.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "nbody/properties.hpp"
#include "nbody/reports/analysis.hpp"
#include "nbody/reports/scale.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// One document of the study and how the reports name it (its path).
struct ScalingInput {
  std::string source;
  ResultsDocument document;
};

// What was timed: run's force evaluations, or simulate's whole steps.
enum class ScalingWork { evaluation, simulation };
std::string_view to_string(ScalingWork work);

// Against the same implementation at the same N on one device: speedup T1 / Tk and parallel
// efficiency T1 / (k Tk), on the compute time and on the whole time.
struct StrongScaling {
  std::string baseline_source;
  std::string baseline_implementation;  // always the point's own (the audit checks it)
  RunScale baseline_scale;              // one device (the audit checks it)
  std::optional<double> compute_speedup, compute_efficiency;
  std::optional<double> total_speedup, total_efficiency;
  // The point's or the baseline's disturbance: the figures may be off.
  std::string disturbance;
};

// Against the same implementation on one device at N / k: all-pairs work grows as N², so the
// figure is the per-device interaction rate, rate = N² / time, efficiency rate_k / (k rate_1).
struct WeakScaling {
  std::string baseline_source;
  std::string baseline_implementation;
  RunScale baseline_scale;
  std::size_t baseline_n = 0;  // N / k
  std::optional<double> compute_rate_per_device, compute_efficiency;
  std::optional<double> total_rate_per_device, total_efficiency;
  std::optional<double> baseline_compute_rate, baseline_total_rate;
  std::string disturbance;
  std::string baseline_disturbance;  // the baseline's own
};

// One measurement at one scale. Evaluations: compute = the kernel median (decomposed, the slowest
// rank's computation), total = the end-to-end median where recorded (decomposed: with the
// all-gather; GPU: with the copies), else the kernel's (one process on the CPU waits for nothing
// else). Simulations: compute = force and integration per step, total = a whole step.
struct ScalingPoint {
  ScalingWork work = ScalingWork::evaluation;
  std::string implementation;
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  std::string initial_condition;
  std::size_t n = 0;
  RunScale scale;
  std::string scale_label;  // describe(scale): names GPUs, ranks, cores and hosts
  std::string source;
  Status status = Status::ok;
  std::string reason;  // why not ok
  std::optional<double> compute_s, total_s;
  bool total_recorded = false;            // total_s is a recorded end-to-end or step time
  std::optional<double> communication_s;  // where recorded: the all-gathers (and agreements)
  // What the scaling model predicts for the exchange, alpha + (k - 1) ceil(N / k) b / beta, with
  // alpha and beta the all-gather's latency and bus bandwidth the document measured between its
  // GPUs (gpu.all_gather.*) and b the bytes a body sends (an evaluation: its acceleration; a
  // step: its position and mass); none without that measurement.
  std::optional<double> modeled_communication_s;
  // total − compute − communication, never below 0: the GPU's copies, a step's other time.
  std::optional<double> other_s;
  std::string disturbance;  // this measurement's own (describe_disturbance)
  std::optional<StrongScaling> strong;
  std::string strong_missing;       // why there is no strong-scaling figure
  std::optional<WeakScaling> weak;  // more than one device and a one-device point at N / k

  bool timed() const { return status == Status::ok && compute_s && total_s; }
};

// One document as the study's sources table shows it.
struct ScalingSource {
  std::string source;
  std::string command;
  std::string generated_at;
  int ranks = 1;
  int hosts = 1;
  std::vector<std::string> host_names;
  std::vector<int> gpu_devices;
  std::string cpu_model;
  std::string gpu_names;  // "" when the machine has none
  std::size_t records = 0;
  bool complete = true;
  bool interrupted = false;
};

struct ScalingStudy {
  std::vector<ScalingSource> sources;
  // The one problem every document holds.
  std::string initial_condition;
  std::uint64_t seed = 0;
  double softening = 0;
  double dt = 0;                     // simulations
  std::vector<ScalingPoint> points;  // by work, device, implementation, N, threads, devices
  // Series (implementation, N, threads per rank) with several devices but no one-device point.
  std::vector<std::string> missing_baselines;
  // Differences between the documents that bear on the figures: machines, builds, repeated scales.
  std::vector<std::string> flags;
  std::vector<AuditRule> audit;  // FAIRNESS.md rules 1, 5 and 8, checked across the documents
  std::string verdict;
};

// Throws UsageError for fewer than two documents, or documents of different problems (initial
// condition, seed, softening, simulations' step, inputs of one N that differ).
ScalingStudy analyze_scaling(const std::vector<ScalingInput>& inputs);

}  // namespace nbody::reports
