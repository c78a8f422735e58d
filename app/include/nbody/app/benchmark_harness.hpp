#pragma once
// The one Google Benchmark harness of the suite: every timing, the runner's measurements and
// `nbody-fair bench`'s alike, registers its evaluations here. Manual time from the run's own clock
// (device events on the GPU, a steady wall clock on the CPU), N^2 interactions per evaluation as
// items (FAIRNESS.md rule 4), and a stop between iterations when an interrupt was requested.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <benchmark/benchmark.h>

#include "nbody/energy_meter.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"

namespace nbody {

struct EvaluationBenchmark {
  std::string name;
  // The run to time, prepared (outside timing) when the benchmark first needs it.
  std::function<PreparedRun&()> run;
  PreparedRun::Scope scope = PreparedRun::Scope::kernel;
  std::size_t n = 0;
  // All-pairs: items are the N^2 credited interactions, with their 20-flop rate. A tree is
  // credited none (FAIRNESS rule 9): its items are bodies, and it has no flop rate.
  Algorithm algorithm = Algorithm::all_pairs;
  // Optional: adds counters or a label once the timed loop is over (the run is prepared then).
  std::function<void(benchmark::State&, PreparedRun&)> annotate;
  // Optional: counts every evaluation run, the warm-up's and the iteration search's included (the
  // energy of a timing is that of all of them).
  std::int64_t* evaluations_run = nullptr;
};

// Registers `evaluation` with Google Benchmark (manual time, seconds) and returns the benchmark
// for its settings (repetitions, minimum time, statistics). A run that cannot be prepared skips
// the benchmark with its error.
benchmark::internal::Benchmark* register_evaluation(EvaluationBenchmark evaluation);

// How a measurement repeats: warm-up discarded, then `repetitions` of at least `min_time_s` each.
struct RepetitionSettings {
  int repetitions = 5;
  double min_time_s = 0.1;
  double warmup_s = 0.05;
  double noise_threshold_cv = 0.05;  // repetitions whose cv exceeds this are flagged noisy
  // A timing disturbed by other processes (more than kMaxOtherCpuShare of the CPUs' time) is
  // taken again, up to this many attempts in all; the least disturbed is kept, flagged if still
  // disturbed.
  int max_attempts = 3;
  // Where the suite runs decomposed over several processes (mpirun), each timing the
  // same evaluations: the largest of a value over all of them, a collective they all reach at the
  // same point, so that decisions taken on what one process measured (re-measuring a disturbed
  // timing, skipping on a predicted time) are taken alike by all. Empty in one process.
  std::function<double(double)> max_over_processes;
  // Decomposed too: from this process's CPU seconds during a timing, those of all the job's
  // processes on its host (a collective like max_over_processes), so that ranks sharing a host
  // are not each other's disturbance. Empty: this process's own.
  std::function<double(double)> job_cpu_seconds_on_host;
};

// The GPU's state at one instant, for GPU timings; empty when it cannot be read.
using GpuStateSampler = std::function<std::optional<GpuSample>()>;

// The GPU's side of a timing: sampled before and after it when `sample_gpu` is given, or the
// reason it is not.
struct GpuObservation {
  GpuStateSampler sample_gpu;
  std::string unavailable_reason;
};

// The energy a timing reads around itself: its device's meter and the meter's record (update
// period, idle power); none where the device's energy is not read.
struct EnergyObservation {
  // Null where `record` is: the device's energy is not read. Decomposed over processes, null also
  // where another process meters this one's device (a GPU two ranks share).
  EnergyMeter* meter = nullptr;
  const EnergyMeterRecord* record = nullptr;  // this process's meter's
  // Decomposed: every process's figure of the same work summed (sum_energy), and a meeting of all
  // once each has opened its window; collectives, every process calling them at the same point.
  // Empty in one process.
  std::function<std::optional<EnergyStatistics>(const std::optional<EnergyStatistics>&)>
      sum_over_processes;
  std::function<void()> all_opened;
};

// The energy of one stretch of work on its device (a timing's evaluations, a simulation's steps):
// a window on this process's meter, opened here; decomposed, the sum over the processes, every one
// constructing and closing at the same point. A counter that fails leaves the work without energy
// (decomposed: on every process).
class EnergyReading {
 public:
  explicit EnergyReading(const EnergyObservation* energy);
  // EnergyWindow::seconds_short; 0 where this process reads no counter.
  double seconds_short() const;
  // Since the work started; 0 where this process reads no counter.
  double seconds_working() const;
  // Call as soon as the work is done: `evaluations` of it ran since construction.
  std::optional<EnergyStatistics> close(std::int64_t evaluations);

 private:
  const EnergyObservation* energy_ = nullptr;  // null: nothing is read
  std::optional<EnergyWindow> window_;
  bool failed_ = false;
};

// A timing's figures: of the whole evaluation on the scope's clock, and of the kernel alone
// within the same evaluations (its own device events; the same figure in kernel scope and on the
// CPU). Both carry the conditions of the one timing.
struct Timings {
  TimingStatistics total;
  TimingStatistics kernel;
  // Runs decomposed over ranks (PreparedRun::Seconds::communication): the all-gather within total.
  std::optional<TimingStatistics> communication;
  // Tree formulations (PreparedRun::Seconds::tree_build): the build within kernel.
  std::optional<TimingStatistics> tree_build;
};

// Times evaluations of `run` (N = n) as the suite measures: the samples of every repetition, their
// median with a distribution-free confidence interval, spread and noise flag, and the conditions
// they were taken under (re-measured while disturbed, up to max_attempts), and the energy of each
// attempt where `energy` has a meter (a counter that fails mid-timing leaves the timing without
// energy). Throws when timing stopped (an interrupt, an error).
Timings time_repetitions(PreparedRun& run, PreparedRun::Scope scope, std::size_t n,
                         const RepetitionSettings& settings, const GpuObservation* gpu = nullptr,
                         const EnergyObservation* energy = nullptr);

// Why a timing's figure may read low, in words: other processes or steal above kMaxOtherCpuShare
// of the CPUs; on the GPU, clocks held down (NVML's reasons) or the SM clock after the timing
// under 90% of its maximum. Empty when nothing disturbed it.
std::vector<std::string> disturbances(const MeasurementConditions& conditions);

// Set from a signal handler: timing stops after the current evaluation. A function-local static,
// since a handler can reach nothing else.
std::atomic<bool>& interrupt_requested();

}  // namespace nbody
