#pragma once
// The suite driver: for each size and implementation, validate against the float64 reference,
// time through Google Benchmark, read counters, and record everything in a ResultsDocument.
// Generic over the registry: it knows implementations only through registry.hpp.
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "nbody/app/benchmark_harness.hpp"  // interrupt_requested()
#include "nbody/counters.hpp"
#include "nbody/energy_meter.hpp"
#include "nbody/initial_conditions.hpp"
#include "nbody/registry.hpp"
#include "nbody/results.hpp"

namespace nbody {

struct SuiteOptions {
  InitialCondition initial_condition = InitialCondition::uniform_ball;
  std::uint64_t seed = 20261121;
  double softening = 0.01;
  std::vector<std::size_t> sizes;  // empty: chosen from the hardware (default_sizes)
  std::string implementation_pattern = ".";
  // The opening angles each tree formulation runs at (Registry::bind_opening_angles): three
  // accuracies, from about 1e-4 to 1e-3 relative L2 on a Plummer sphere (docs/tolerances.md).
  std::vector<double> thetas = {0.3, 0.5, 0.7};
  RepetitionSettings timing;
  // A GPU kernel whose median inside the end-to-end timing is shorter than this is also timed
  // alone, back to back, and that figure is its kernel time: on the H100 such kernels read up to
  // 14% slower right behind a host-to-device copy than in steady state (docs/perf-notes.md).
  double separate_kernel_timing_below_s = 1e-3;
  double max_eval_seconds = 2.0;          // skip (N, impl) whose one evaluation is predicted longer
  std::size_t validation_bodies = 16384;  // validate all bodies up to this N, a spread sample above
  bool counters = true;
  // Where counters are read (a CUPTI pass replays the kernel ten times or so: at 1M bodies that is
  // most of a run's time, and the figures per interaction hardly change with N). Empty: the
  // largest size up to 64K (the smallest size if all are larger).
  std::vector<std::size_t> counter_sizes;
  bool counters_at_every_size = false;
  bool reference_cache = true;
  // Seconds the measurements may take, planned before the first (nbody/app/run_plan.hpp); 0: no
  // plan. Empty: 150 s where a GPU formulation is selected and usable, 75 s otherwise, for the
  // default sizes; none for sizes given. Runs decomposed over ranks are not planned.
  std::optional<double> budget_s;
  ExecutionOptions execution;
  std::vector<std::string> command_line;
  // Seconds every timing of a device spans at least, so that its energy counter resolves it
  // (energy_span_s); none where the device's energy is not read.
  std::map<DeviceKind, double> energy_span_s;
};

// The seconds each repetition of a timing of `device` lasts at least: --min-time, or more where
// the repetitions together must span the device's energy_span_s.
double timing_min_time_s(const SuiteOptions& options, DeviceKind device);

enum class SuiteMode { validate, run };

// Reports progress on one line (a TTY) or one line per step (a log).
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  virtual void update(std::size_t step, std::size_t total, const std::string& what) = 0;
  virtual void finish() = 0;
};
std::unique_ptr<ProgressSink> make_stderr_progress();
std::unique_ptr<ProgressSink> make_silent_progress();

// Powers of four from 1K: up to 64K on a machine without a usable GPU, up to 1M with one. The
// per-evaluation time budget (max_eval_seconds) then skips what a slow formulation cannot finish.
std::vector<std::size_t> default_sizes(std::span<const Implementation* const> selected,
                                       const ExecutionOptions& execution);

// Some selected GPU formulation can run on this machine.
bool selects_usable_gpu(std::span<const Implementation* const> selected);

// Throws UsageError when N bodies cannot fit in this machine's available memory.
void check_memory(std::span<const Implementation* const> selected, std::size_t n);

// Where the suite runs decomposed over several processes (mpirun), every one of them
// running this same suite in step over a registry whose runs are decomposed
// (nbody/distributed/decomposed.hpp): how, for the settings of the results.
struct ProcessDecomposition {
  int ranks = 1;
  std::string scheme;              // "target_range"
  std::vector<std::string> hosts;  // each rank's, in rank order
  // How GPU formulations' slices travel between the ranks: "nccl" (ExecutionOptions::gpu_group)
  // or "mpi" (through host memory, as CPU formulations' always do).
  std::string gpu_exchange = "mpi";
};

// The run's energy meters, one per device, made before the first measurement (app/wiring.hpp;
// decomposed over ranks, app/rank_energy.hpp).
struct EnergyMeters {
  DeviceEnergy cpu, gpu;  // this process's
  // Decomposed over processes, each metering its own devices (none that another one meters): the
  // run's record of each device, from every process's (combine_energy_records), and the
  // collectives of EnergyObservation.
  struct AcrossProcesses {
    EnergyMeterRecord cpu, gpu;
    std::function<std::optional<EnergyStatistics>(const std::optional<EnergyStatistics>&)> sum;
    std::function<void()> all_opened;
  };
  std::optional<AcrossProcesses> across_processes;

  // How the run reads `device`'s energy: this process's record, or decomposed, every process's.
  const EnergyMeterRecord& run_record(DeviceKind device) const;
  // What a timing of `device` reads around itself (no meter where its energy is not read).
  EnergyObservation observe(DeviceKind device) const;
  // The records results.json keeps: the CPU's, and the GPU's where `with_gpu`.
  std::vector<EnergyMeterRecord> records(bool with_gpu) const;
};

// Seconds a timing of `device` must span for its energy to be resolved (kMinEnergyPeriods of the
// counter's updates); 0 where the device's energy is not read.
double energy_span_s(const EnergyMeters& meters, DeviceKind device);

struct SuiteContext {
  const Registry& registry;
  std::span<const std::unique_ptr<CounterSource>> counter_sources;
  std::optional<Ceilings> ceilings;  // empty: not measured (--no-counters)
  double ceilings_seconds = 0;       // what measuring (or reading) them took
  std::vector<GpuDescription> gpus;  // describe_gpus()
  GpuObservation gpu_observation;    // how GPU timings observe the GPU (observe_gpu)
  ProgressSink& progress;
  // Called after every measurement with the document so far (for incremental, atomic saving).
  std::function<void(const ResultsDocument&)> checkpoint;
  // Empty in one process.
  std::optional<ProcessDecomposition> decomposition = std::nullopt;
  // A line for the user before the measurements (the run's plan); empty: not said.
  std::function<void(const std::string&)> announce = nullptr;
  // Each device's energy meter; null: energy is not read (validate).
  const EnergyMeters* energy = nullptr;
};

// The document's header (machine, build, settings, implementations) without results.
ResultsDocument make_document(const SuiteContext& context, const SuiteOptions& options,
                              SuiteMode mode, std::span<const Implementation* const> selected);

ResultsDocument run_suite(const SuiteContext& context, const SuiteOptions& options, SuiteMode mode);

}  // namespace nbody
