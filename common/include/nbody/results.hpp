#pragma once
// The results model: everything a run measured, and how. Measurement fills it, printers
// (reports/) read it, and it is written to results.json (schema: docs/results-schema.md).
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "nbody/accuracy.hpp"
#include "nbody/ceilings.hpp"
#include "nbody/counters.hpp"
#include "nbody/implementation_info.hpp"
#include "nbody/json_optional.hpp"
#include "nbody/properties.hpp"
#include "nbody/tree_costs.hpp"

namespace nbody {

inline constexpr const char* kResultsSchemaName = "nbody-fair/results";
// 2: implementations have a role; enums, counters, ceilings and GPUs are typed (same spellings).
// 3: each timing records its measurement conditions. 4: simulations. 5: runs decomposed over
// ranks (settings.ranks, decomposition, rank_hosts; results' communication; per_step's).
// 6: the GPUs each rank drives (settings.gpu_devices). 7: how GPU formulations' slices travel
// between ranks (settings.gpu_exchange). 8: the run's budget (settings.budget_s). 9: tree
// formulations (implementations' algorithm and theta, settings.thetas, results' tree_work, the
// step's tree_build_s). 10: energy (the run's energy meters; each timing's and simulation's
// energy). 11: each tree result's tree_work.costs (what bounds its walk and its build).
// Older files are still read (docs/results-schema.md says how).
inline constexpr int kResultsSchemaVersion = 11;

// The GPU's state at one instant, as NVML reports it: SM clock, temperature, and the reasons its
// clocks are held below the maximum (names as NVML's clock event reasons, e.g. "sw_power_cap").
struct GpuSample {
  double sm_clock_mhz = 0;
  double max_sm_clock_mhz = 0;
  double temperature_c = 0;
  std::vector<std::string> clock_limits;
};

// The conditions a timing was taken under (FAIRNESS.md rule 5): what other processes and the
// hypervisor took of the machine's CPU time while it ran, and the CPU clock where the machine
// shows it. A timing with disturbances was re-measured (attempts) and is the least disturbed one.
struct MeasurementConditions {
  double wall_seconds = 0;
  int online_cpus = 0;
  double other_processes_cpu_share = 0;  // of every online CPU's time
  double steal_cpu_share = 0;            // of every online CPU's time
  std::optional<double> cpu_clock_mhz_before;
  std::optional<double> cpu_clock_mhz_after;
  int attempts = 1;
  std::vector<std::string> disturbances;  // why the figure may read low; empty when undisturbed
  // GPU timings: the GPU's state before and after, or why it could not be read.
  std::optional<GpuSample> gpu_before;
  std::optional<GpuSample> gpu_after;
  std::string gpu_unavailable_reason;
};

// The energy a timing used, read from its device's counters around the whole of it (version 10):
// its warm-up, its iteration search and its repetitions, every evaluation of the same work, with
// both reads just after a counter update. A repetition alone spans too few of NVML's 100 ms
// updates to be read on its own, so there is one figure per timing, not one per repetition.
struct EnergyStatistics {
  double joules = 0;                  // every domain; the idle tail after the last update taken off
  std::vector<double> domain_joules;  // per domain, in the meter's order
  double seconds = 0;                 // wall seconds from the first evaluation to the last
  std::int64_t evaluations = 0;       // every evaluation in those seconds
  double per_evaluation_j = 0;        // joules / evaluations
  // Its interval: up to one counter update period of energy at the mean power, either way.
  double ci_low_j = 0, ci_high_j = 0;
  double mean_watts = 0;       // joules / seconds
  double periods_spanned = 0;  // seconds over the counter's update period
  bool resolved = false;       // periods_spanned >= kMinEnergyPeriods
};

struct TimingStatistics {
  int repetitions = 0;
  std::int64_t iterations_per_repetition = 0;
  std::vector<double> samples_s;  // one per repetition: mean seconds per evaluation
  double median_s = 0, mean_s = 0, min_s = 0, max_s = 0, stddev_s = 0;
  double ci_low_s = 0, ci_high_s = 0;               // distribution-free CI of the median
  double ci_confidence = 0;                         // its actual coverage (binomial), e.g. 0.94
  double cv = 0;                                    // stddev / mean
  bool noisy = false;                               // cv above the noise threshold
  std::optional<MeasurementConditions> conditions;  // schema version 3
  std::optional<EnergyStatistics> energy;           // version 10: where its device's is read
};

// How one device's energy was read in a run, or why it was not (version 10; FAIRNESS.md rule 10).
struct EnergyMeterRecord {
  DeviceKind device = DeviceKind::cpu;
  bool available = false;
  std::string unavailable_reason;    // one line: what was looked for and not found
  std::string source;                // nvml, powercap, perf_power
  std::vector<std::string> domains;  // what each counter covers
  double unit_j = 0;                 // the counter's smallest step
  double update_period_s = 0;        // measured at the start of the run
  // Idle power per domain, measured once before the first measurement with nothing running.
  std::vector<double> idle_watts;
  double idle_seconds = 0;
  std::optional<double> limit_watts;  // the GPU boards' enforced power limits, summed
  // How idle power is accounted, alike on both sides: "included" (the figures are what the
  // counters read; idle is shown beside) or "subtracted".
  std::string idle_accounting = "included";
  double idle_total_watts() const;
};

struct AccuracyRecord {
  AccuracyMetrics metrics;
  double relative_l2_bound = 0;
  double max_relative_bound = 0;
  bool sampled = false;  // validated on a subset of bodies (metrics.bodies_compared of N)
  bool passed = false;
};

struct RateFigures {
  double interactions_per_second = 0;      // credited N^2 / median time: the primary figure
  double interactions_per_second_min = 0;  // from the slowest repetition
  double interactions_per_second_max = 0;  // from the fastest repetition
  double gflops_at_20 = 0;                 // 20 flops per credited interaction (FAIRNESS rule 4)
};

// What a tree formulation's evaluation really did (version 9): the interactions it evaluated,
// counted (a tree is credited none: its primary figure is its time), and the build of the tree
// within each evaluation that `kernel` timed.
struct TreeWork {
  std::uint64_t body_body = 0;  // per evaluation, every target's
  std::uint64_t body_cell = 0;
  std::optional<TimingStatistics> build;
  // Version 11: what bounds the walk and the build, as the formulation states it; absent from
  // older files and from formulations that state none.
  std::optional<TreeCostModel> costs;
  std::uint64_t interactions() const { return body_body + body_cell; }
};

struct ResultRecord {
  std::string implementation;
  std::string initial_condition;
  std::size_t n = 0;
  Status status = Status::ok;  // failed: accuracy or an error; skipped: see reason
  std::string reason;          // why failed or skipped
  std::string input_hash;
  std::uint64_t pairs_evaluated = 0;  // N^2, or N(N-1)/2 for symmetric kernels; a tree's counted
  // N^2 for every all-pairs formulation (FAIRNESS rule 4); 0 for a tree, which has no rates.
  double interactions_credited = 0;
  int threads = 0;
  std::map<std::string, std::string> details;
  std::optional<AccuracyRecord> accuracy;
  std::optional<TimingStatistics> kernel;
  // GPU: copies included; decomposed over ranks: the all-gather of the slices included.
  std::optional<TimingStatistics> end_to_end;
  // Decomposed over ranks (version 5): the all-gather within each timed evaluation of end_to_end.
  std::optional<TimingStatistics> communication;
  std::optional<RateFigures> kernel_rate;
  std::optional<RateFigures> end_to_end_rate;
  std::optional<CounterReadout> counters;
  std::optional<TreeWork> tree_work;  // tree formulations (version 9)
  // Wall seconds this measurement spent in each phase: probe, reference, validation, timing,
  // counters (where the suite's time goes; older files may also have timing_end_to_end, a separate
  // end-to-end timing).
  std::map<std::string, double> phase_seconds;
};

// An implementation as results.json records it: its description as registered (the tolerance's
// coefficients among it; bytes_per_body and isa_choice are the registry's own, not kept), and what
// this host said of it.
struct ImplementationRecord : ImplementationInfo {
  // A record read from a file without the tolerance's coefficients has none: unit_roundoff 0 says
  // so, and the reports take its precision's.
  ImplementationRecord() { tolerance.unit_roundoff = 0; }
  explicit ImplementationRecord(ImplementationInfo registered, bool is_available = false,
                                std::string reason = {}, int threads_used = 0)
      : ImplementationInfo(std::move(registered)),
        available(is_available),
        unavailable_reason(std::move(reason)),
        threads(threads_used) {}

  bool available = false;
  std::string unavailable_reason;
  int threads = 0;
};

struct GpuDescription {
  int ordinal = 0;
  std::string name;
  std::string compute_capability;  // "9.0"
  int sm_count = 0;
  int sm_clock_khz = 0;  // maximum
  int memory_clock_khz = 0;
  int memory_bus_width_bits = 0;
  std::uint64_t memory_bytes = 0;
  std::uint64_t l2_cache_bytes = 0;
  int driver_version = 0;  // CUDA's encoding: 13000 for 13.0
  int runtime_version = 0;
};

struct MachineRecord {
  std::string hostname, os, cpu_model;
  int logical_cpus = 0, physical_cores = 0;
  std::vector<std::string> isa_features;
  std::uint64_t memory_bytes = 0;
  std::vector<GpuDescription> gpus;
};

struct BuildRecord {
  std::string tool_version, build_type, cxx_compiler, cxx_flags, cuda_compiler, cuda_flags,
      cuda_architectures;
  std::map<std::string, std::string> libraries;
};

struct RunSettings {
  std::string command;  // run, validate, simulate (kind_of() reads it)
  std::string initial_condition;
  std::uint64_t seed = 0;
  double softening = 0;
  std::vector<std::size_t> sizes;
  std::string implementation_pattern;
  int repetitions = 0;
  double min_time_s = 0;
  // Warm-up before each timing, discarded; the validation evaluation just before it counts
  // towards it (version 3; 0 in older files).
  double warmup_s = 0;
  // GPU kernels shorter than this inside the end-to-end timing were also timed alone, and that is
  // their `kernel` figure (0: files where every GPU kernel figure came from its end-to-end timing).
  double separate_kernel_timing_below_s = 0;
  double max_eval_seconds = 0;
  std::size_t validation_bodies = 0;
  bool counters = true;
  std::vector<std::size_t> counter_sizes;  // where counters were read (version 3)
  int threads = 0;
  std::string isa;
  int gpu_device = 0;
  // simulate (version 4; 0 elsewhere): the step, the steps, how often conservation is checked,
  // how many steps are timed phase by phase, and up to which N the float64 trajectory is followed.
  double dt = 0;
  std::int64_t steps = 0;
  std::int64_t diag_every = 0;
  std::int64_t snapshot_every = 0;
  std::int64_t phase_steps = 0;
  std::size_t divergence_up_to = 0;
  std::string ic_file;
  // Version 5: the processes the run was decomposed over (mpirun -np K; 1 in one process), how
  // ("target_range": each rank computes a contiguous slice of the bodies from all N, and the
  // slices are all-gathered; "none" in one process, empty in older files), and each rank's host.
  int ranks = 1;
  std::string decomposition;
  std::vector<std::string> rank_hosts;
  // Version 6: the CUDA device ordinals each rank drives (--gpus); empty: the one device of
  // gpu_device, as in every older file.
  std::vector<int> gpu_devices;
  // Version 7, decomposed over ranks: how GPU formulations' slices travel between them: "nccl"
  // (ncclAllGather on device buffers, one GPU per rank), "mpi" (MPI_Allgatherv through host
  // memory, as CPU formulations' always do). Empty in one process and in older files.
  std::string gpu_exchange;
  // Version 8: the seconds `run` planned its measurements within (--budget); 0: none (and in
  // older files). The plan's estimate is phase_seconds["planned"].
  double budget_s = 0;
  // Version 9: the opening angles tree formulations were run at (--theta); empty where none ran.
  std::vector<double> thetas;
};

// Which command wrote a document, typed: readers branch on this, never on the string, which
// results.json keeps as it is (settings.command). `other`: a command no document is written by,
// or none (a document built by hand).
enum class DocumentKind { run, validate, simulate, other };

inline DocumentKind kind_of(const RunSettings& settings) {
  if (settings.command == "run") return DocumentKind::run;
  if (settings.command == "validate") return DocumentKind::validate;
  if (settings.command == "simulate") return DocumentKind::simulate;
  return DocumentKind::other;
}

// Conserved quantities of a simulation at one step, in float64 (nbody/diagnostics.hpp).
struct ConservationSample {
  std::int64_t step = 0;
  double time = 0;
  double kinetic_energy = 0;
  double potential_energy = 0;
  double relative_energy_error = 0;  // |E - E0| / |E0|
  std::array<double, 3> momentum{};
  std::array<double, 3> angular_momentum{};
  double virial_ratio = 0;
};

// How far the formulation's trajectory drifted from the float64 leapfrog's of the same initial
// condition and steps: RMS over bodies of |x - x64|, over the RMS of |x64| (and so for v).
struct TrajectoryDivergence {
  std::int64_t steps = 0;
  double position = 0;
  double velocity = 0;
  // |E - E0| / |E0| of the float64 leapfrog at the same step: the integrator's own error, which
  // the formulation's energy error is judged against.
  double reference_energy_error = 0;
};

// Seconds per step, by phase (an Amdahl split): force and integration from steps timed
// phase by phase on the simulation's own clock; diagnostics (the device-to-host copy and the
// float64 sums) and snapshots on the wall clock; other = a whole step less force and integration
// (launches and gaps; a whole GPU step is one CUDA graph).
struct StepSplit {
  double step_s = 0;  // a whole step, from steps timed as a whole
  double force_s = 0;
  double integration_s = 0;
  // Version 5, decomposed over ranks: the agreements and all-gathers, which other_s holds.
  double communication_s = 0;
  // Version 9, tree formulations: the tree's build, within force_s (rebuilt every step).
  double tree_build_s = 0;
  double other_s = 0;
  double diagnostics_s = 0;
  double snapshots_s = 0;
};

struct SimulationRecord {
  std::string implementation;
  std::string initial_condition;
  std::size_t n = 0;
  Status status = Status::ok;
  std::string reason;
  std::string input_hash;  // of the float64 initial bodies
  int threads = 0;
  std::int64_t steps = 0;  // steps done (fewer than asked when stopped)
  double dt = 0;
  double wall_seconds = 0;      // the whole simulation, diagnostics and snapshots included
  double steps_per_second = 0;  // 1 / step_s
  StepSplit per_step;
  double max_relative_energy_error = 0;
  std::vector<ConservationSample> conservation;
  std::optional<TrajectoryDivergence> divergence;
  std::map<std::string, std::string> details;
  // Version 10: the energy of the whole simulation on its device (evaluations: steps), where read.
  std::optional<EnergyStatistics> energy;
};

struct InputRecord {
  std::string initial_condition;
  std::size_t n = 0;
  std::uint64_t seed = 0;
  std::string hash_f64;  // of the generated float64 bodies
  std::string hash_f32;  // of the same bodies rounded to float32
};

// One side of a report combined from two runs (`nbody-fair report --cpu-from A --gpu-from B`):
// which device's figures came from which file, and that run's machine and command.
struct SideSource {
  DeviceKind device = DeviceKind::cpu;
  std::string file;
  std::string generated_at;
  std::vector<std::string> command_line;
  MachineRecord machine;
};

struct ResultsDocument {
  std::string schema = kResultsSchemaName;
  int schema_version = kResultsSchemaVersion;
  std::string generated_at;  // UTC, ISO 8601
  std::vector<std::string> command_line;
  bool complete = false;     // every planned measurement ran
  bool interrupted = false;  // stopped by a signal; what is here was measured
  MachineRecord machine;
  BuildRecord build;
  RunSettings settings;
  std::optional<Ceilings> ceilings;  // empty when not measured
  std::vector<ImplementationRecord> implementations;
  std::vector<InputRecord> inputs;
  std::vector<ResultRecord> results;
  std::vector<SimulationRecord> simulations;  // simulate (version 4)
  // Version 10: how each device's energy was read (or why not), one record per device the run
  // could measure on: the CPU always, the GPU where a GPU formulation was selected.
  std::vector<EnergyMeterRecord> energy;
  // Wall seconds of the whole run and of its parts outside the measurements: ceilings, total.
  std::map<std::string, double> phase_seconds;
  // A report combined from two runs: where each side was measured. Empty for one run; made by
  // `report --cpu-from --gpu-from` for its reports and never written to results.json.
  std::vector<SideSource> sides_from;
};

void to_json(nlohmann::json& j, const AccuracyMetrics& v);
void from_json(const nlohmann::json& j, AccuracyMetrics& v);
void to_json(nlohmann::json& j, const GpuSample& v);
void from_json(const nlohmann::json& j, GpuSample& v);
void to_json(nlohmann::json& j, const MeasurementConditions& v);
void from_json(const nlohmann::json& j, MeasurementConditions& v);
void to_json(nlohmann::json& j, const EnergyStatistics& v);
void from_json(const nlohmann::json& j, EnergyStatistics& v);
void to_json(nlohmann::json& j, const EnergyMeterRecord& v);
void from_json(const nlohmann::json& j, EnergyMeterRecord& v);
void to_json(nlohmann::json& j, const TimingStatistics& v);
void from_json(const nlohmann::json& j, TimingStatistics& v);
void to_json(nlohmann::json& j, const AccuracyRecord& v);
void from_json(const nlohmann::json& j, AccuracyRecord& v);
void to_json(nlohmann::json& j, const RateFigures& v);
void from_json(const nlohmann::json& j, RateFigures& v);
void to_json(nlohmann::json& j, const TreeCostModel& v);
void from_json(const nlohmann::json& j, TreeCostModel& v);
void to_json(nlohmann::json& j, const TreeWork& v);
void from_json(const nlohmann::json& j, TreeWork& v);
void to_json(nlohmann::json& j, const ResultRecord& v);
void from_json(const nlohmann::json& j, ResultRecord& v);
void to_json(nlohmann::json& j, const ImplementationRecord& v);
void from_json(const nlohmann::json& j, ImplementationRecord& v);
void to_json(nlohmann::json& j, const GpuDescription& v);
void from_json(const nlohmann::json& j, GpuDescription& v);
void to_json(nlohmann::json& j, const MachineRecord& v);
void from_json(const nlohmann::json& j, MachineRecord& v);
void to_json(nlohmann::json& j, const BuildRecord& v);
void from_json(const nlohmann::json& j, BuildRecord& v);
void to_json(nlohmann::json& j, const RunSettings& v);
void from_json(const nlohmann::json& j, RunSettings& v);
void to_json(nlohmann::json& j, const InputRecord& v);
void from_json(const nlohmann::json& j, InputRecord& v);
void to_json(nlohmann::json& j, const ResultsDocument& v);
void from_json(const nlohmann::json& j, ResultsDocument& v);

void save_results(const ResultsDocument& document, const std::filesystem::path& path);
// Reads files of every version up to this one's. Throws UsageError for a missing file, invalid
// JSON, another schema or a newer version.
ResultsDocument load_results(const std::filesystem::path& path);

}  // namespace nbody
