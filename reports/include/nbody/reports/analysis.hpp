#pragma once
// What a run's numbers mean, as typed data: the headline, the optimization ladders, the roofline,
// fractions of peak and of each kernel's own bound, accuracy against speed, end-to-end against
// kernel-only, the skipped measurements and the fairness audit (docs/FAIRNESS.md). Every printer
// (Markdown, HTML, CSV) formats an Analysis; none of them decides anything on its own.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "nbody/properties.hpp"
#include "nbody/reports/scale.hpp"
#include "nbody/results.hpp"

namespace nbody::reports {

// One measurement's energy (FAIRNESS.md rule 10): what its device's counters read around its
// kernel timing (on the GPU, where the kernel was timed within the end-to-end timing, that timing's
// evaluations, copies included). Idle power is included, as the counters read it, and shown beside.
struct EnergyFigure {
  double joules_per_evaluation = 0;
  double low_j = 0, high_j = 0;  // the counter's lag of one update period, either way
  double mean_watts = 0;
  double idle_watts = 0;  // its device's, measured once at the run's start
  // All-pairs: credited interactions per joule; a tree is credited none (rule 9).
  std::optional<double> interactions_per_joule;
  double bodies_per_joule = 0;  // N per joule of one evaluation
  double periods_spanned = 0;   // of the counter's update period
  bool resolved = false;        // spanned kMinEnergyPeriods: its figure is read, not guessed
};

// A measured kernel rate with the interval its median time's confidence interval gives.
struct RateFigure {
  std::string implementation;
  std::size_t n = 0;
  double interactions_per_second = 0;  // credited N^2 over the median time
  double low = 0;                      // from the CI's upper time bound
  double high = 0;                     // from the CI's lower time bound
  double ci_confidence = 0;            // the time CI's coverage
  // Why the figure may read low (its timing's disturbances and attempts); empty when undisturbed.
  std::string disturbance;
  bool disturbed() const { return !disturbance.empty(); }
  // Runs over several devices (ranks, or GPUs driven by one rank): the scale it ran at, and its
  // label naming GPUs, ranks, cores and hosts (FAIRNESS.md rule 8); empty in one process.
  std::optional<RunScale> scale;
  std::string scale_label;
  std::optional<EnergyFigure> energy;  // where its device's energy was read
};

// GPU over CPU. The interval combines the two rates' intervals at their extremes (low: slowest
// GPU over fastest CPU), a conservative interval whose coverage is at least the product of theirs.
struct RateRatio {
  double value = 0;
  double low = 0;
  double high = 0;
};

struct HeadlineRow {
  Precision precision = Precision::f32;
  std::size_t n = 0;
  std::optional<RateFigure> best_cpu, best_gpu;    // fastest full-accuracy result on each side
  std::optional<RateFigure> naive_cpu, naive_gpu;  // each side's naive baseline (by role)
  std::optional<RateRatio> best_ratio, naive_ratio;
  // By energy (rule 10): CPU joules per evaluation over GPU's, where the run's energy compares and
  // both figures are resolved.
  std::optional<RateRatio> best_energy_ratio, naive_energy_ratio;
};

struct Headline {
  std::vector<HeadlineRow> rows;  // by precision (f32 first), then N
  // Disturbed figures the headline uses, each once.
  std::vector<RateFigure> disturbed_figures;
};

// One rung of an optimization ladder at one N.
struct LadderStep {
  std::string implementation;
  std::optional<double> interactions_per_second;  // empty: not measured ok (reason says why)
  std::optional<double> over_previous;            // speedup over the previous measured rung
  std::optional<double> over_naive;               // speedup over the ladder's first rung
  std::string reason;                             // why there is no figure
};

// The formulations of one device and precision, full accuracy, in registration order (naive
// first), as seed 000's tutorial tabulates them.
struct Ladder {
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  std::size_t n = 0;
  std::vector<LadderStep> steps;
  // Its naive rung was measured: the speedups over naive exist.
  bool naive_measured() const {
    return !steps.empty() && steps.front().interactions_per_second.has_value();
  }
};

// A kernel on the roofline: counted FLOP/s against counted flops per byte.
struct RooflinePoint {
  std::string implementation;
  std::size_t n = 0;
  double flops_per_second = 0;                   // counted
  std::optional<double> flops_per_dram_byte;     // arithmetic intensity against DRAM
  std::optional<double> flops_per_l2_byte;       // against L2
  std::optional<double> flops_per_second_at_20;  // the 20-flop convention, for comparison
  // A model where no DRAM counter exists (the CPU): each evaluation reads the input and writes the
  // output once, the least traffic any all-pairs kernel has, so the intensity's upper bound.
  double flops_per_compulsory_byte = 0;
};

struct RooflineCeiling {
  std::string name;      // as the ceilings name it, e.g. "gpu.fp32_fma"
  std::string label;     // for a reader, e.g. "FP32 FMA (measured)"
  double value = 0;      // FLOP/s for compute ceilings, bytes/s for memory ceilings
  bool memory = false;   // a bandwidth: the roof's slope
  bool flagged = false;  // the ceiling's own measurement was flagged (see warnings)
};

struct Roofline {
  DeviceKind device = DeviceKind::cpu;
  std::string device_name;  // CPU model or GPU name
  std::vector<RooflineCeiling> ceilings;
  std::vector<RooflinePoint> points;
};

// Fractions of peak and of a kernel's own bound, where counters were read. A fraction above 1 is
// not a fact: `above_one_explanation` says which ceiling read low and why.
struct PeakFractions {
  std::string implementation;
  DeviceKind device = DeviceKind::cpu;
  std::size_t n = 0;
  std::string counter_source;
  std::optional<double> counted_flops_per_interaction;
  std::optional<double> gflops_counted;
  std::optional<double> of_measured_peak;
  std::optional<double> of_datasheet_peak;
  std::optional<double> instructions_per_interaction;
  std::optional<double> instruction_bound_interactions_per_second;
  std::optional<double> of_own_bound;
  std::optional<double> of_interaction_mix_ceiling;
  std::optional<double> dram_bytes_per_second;
  std::optional<double> flops_per_dram_byte;
  std::optional<double> achieved_occupancy;
  std::string unavailable_reason;  // counters not read: why
  bool above_one() const;
};

struct AccuracyPoint {
  std::string implementation;
  std::size_t n = 0;
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  AccuracyClass accuracy_class = AccuracyClass::full;
  double relative_l2 = 0;
  double max_relative = 0;
  double relative_l2_bound = 0;
  bool passed = false;
  std::optional<double> interactions_per_second;  // where timed
};

// Kernel-only against end-to-end on the GPU (Amdahl): what the copies cost.
struct EndToEndRow {
  std::string implementation;
  std::size_t n = 0;
  double kernel_s = 0;
  double end_to_end_s = 0;
  // Never below 0: at large N the two clocks differ by less than their noise.
  double copy_share() const { return end_to_end_s > kernel_s ? 1.0 - kernel_s / end_to_end_s : 0; }
};

// The repetitions of each measurement at the largest N of each implementation (strip plot).
struct RepetitionSamples {
  std::string implementation;
  std::size_t n = 0;
  std::vector<double> interactions_per_second;  // one per repetition
  double median = 0;
  bool noisy = false;
};

struct SkippedGroup {
  std::string implementation;
  std::string reason;
  std::vector<std::size_t> sizes;
};

// ---- Across algorithms (FAIRNESS rule 9): trees beside all-pairs, at equal measured accuracy ----

// A formulation that approximates the forces with a tree: compared by time at equal measured
// accuracy, never by interactions (it is credited none).
bool is_tree(const ImplementationRecord& implementation);

// One tree measurement. Its primary figure is its time per evaluation (and bodies per second); the
// build of the tree within it is shown apart, and the interactions it evaluated are secondary.
struct TreeRow {
  std::string implementation;
  std::optional<double> theta;
  std::size_t n = 0;
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  Status status = Status::ok;
  std::string reason;              // why failed
  std::optional<double> median_s;  // kernel time per evaluation; empty where not timed
  double ci_low_s = 0, ci_high_s = 0, ci_confidence = 0;
  std::optional<double> bodies_per_second;  // N over the median
  std::optional<double> build_s;            // the tree's build within each evaluation (median)
  std::optional<double> build_share;        // of the median evaluation
  std::optional<double> body_body_per_body, body_cell_per_body;  // interactions evaluated
  std::optional<double> relative_l2, max_relative;
  double relative_l2_bound = 0;
  bool passed = false;
  std::string disturbance;             // why its timing may read slow; empty when undisturbed
  std::optional<EnergyFigure> energy;  // timed ok with its device's energy read
  // Its own bounds (FAIRNESS rules 3 and 6), where its formulation stated them and the run
  // measured their ceilings: the walk's (its counted terms at their costs over the ceiling's rate)
  // and the build's (its modelled bytes over the memory bandwidth), and each as a fraction of the
  // time it took: bound over measured, 1 at the bound. The walk's time is the median less the
  // build's median.
  std::optional<double> walk_s;
  std::optional<double> walk_bound_s, build_bound_s;
  std::optional<double> walk_fraction_of_bound, build_fraction_of_bound;
  std::optional<double> fraction_of_bound;  // both bounds over the median: the whole evaluation
  // Why a fraction is missing (no cost model in older results, a ceiling not measured, ...);
  // empty where it is given.
  std::string walk_bound_missing, build_bound_missing;
  std::size_t result = 0;  // its entry in the document's results
};

// A bar of accuracy at which formulations of every algorithm meet: a relative L2 error of at most
// `relative_l2`, or (float32_all_pairs) the accuracy of the float32 all-pairs kernels at N:
// relative L2 and max error no larger than the least accurate full-accuracy float32 all-pairs
// result this run measured at N (on either device), both; at an N where none was measured, nothing
// meets it.
struct AccuracyBar {
  std::string label;
  double relative_l2 = 0;
  bool float32_all_pairs = false;
  // float32_all_pairs: per N, the largest relative L2 and max error measured there.
  std::map<std::size_t, std::pair<double, double>> float32_all_pairs_errors;
  double relative_l2_bound(std::size_t n) const;
  std::optional<double> max_relative_bound(std::size_t n) const;
  bool met_by(double relative_l2, double max_relative, std::size_t n) const;
};

// The bars of rule 9's headline: relative L2 <= 1e-2, 1e-3, 1e-4, and the float32 all-pairs class
// as `doc` measured it.
std::vector<AccuracyBar> accuracy_bars(const ResultsDocument& doc);

// One formulation's time per evaluation at one N, with the accuracy it measured there.
struct TimeFigure {
  std::string implementation;
  Algorithm algorithm = Algorithm::all_pairs;
  std::optional<double> theta;
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  std::size_t n = 0;
  double seconds = 0;            // kernel median
  double low_s = 0, high_s = 0;  // the median's confidence interval
  double relative_l2 = 0, max_relative = 0;
  std::string disturbance;
  std::optional<EnergyFigure> energy;
  // A tree's walk and build against their own bounds (its TreeRow's), where given.
  std::optional<double> walk_fraction_of_bound, build_fraction_of_bound;
  double bodies_per_second() const { return seconds > 0 ? static_cast<double>(n) / seconds : 0; }
};

// At one bar and N: the fastest formulation of each device whose measured accuracy meets the bar,
// whatever its algorithm or accuracy class, and GPU speed over CPU speed (CPU time over GPU time;
// the interval from the two medians' intervals at their extremes, as RateRatio's).
struct BarHeadlineRow {
  std::size_t bar = 0;  // into AlgorithmComparison::bars
  std::size_t n = 0;
  bool cpu_measured = false, gpu_measured = false;  // the device timed anything with accuracy here
  std::optional<TimeFigure> cpu, gpu;               // empty: nothing of that device meets the bar
  std::optional<RateRatio> gpu_over_cpu;
  std::optional<RateRatio> energy_ratio;  // CPU joules over GPU joules, as HeadlineRow's
};

struct ParetoPoint {
  TimeFigure figure;
  bool on_front = false;  // no formulation of its device at this N is as accurate and faster
};

// Every ok formulation of one device at one N as (measured relative L2, time per evaluation), by
// error, the non-dominated ones marked.
struct ParetoFront {
  DeviceKind device = DeviceKind::cpu;
  std::size_t n = 0;
  std::vector<ParetoPoint> points;
};

// Where a device's fastest formulation meeting a bar turns into a tree for good: the smallest N of
// `compared_sizes` from which it is a tree there and at every larger one of them.
struct Crossover {
  DeviceKind device = DeviceKind::cpu;
  std::size_t bar = 0;
  std::vector<std::size_t> compared_sizes;  // ascending: both algorithms measured ok on the device
  std::optional<std::size_t> tree_from;     // empty: not within the compared sizes
};

struct AlgorithmComparison {
  std::vector<TreeRow> trees;         // every tree measurement that ran, in the results' order
  std::vector<AccuracyBar> bars;      // empty where no tree ran: one algorithm, nothing to compare
  std::vector<BarHeadlineRow> rows;   // by bar, then N ascending
  std::vector<ParetoFront> fronts;    // by N, then device
  std::vector<Crossover> crossovers;  // by device, then bar
  bool any_tree() const { return !trees.empty(); }
};

// ---- Energy (FAIRNESS rule 10): joules per evaluation on both sides, under one accounting ----

// How one device's energy was read in the run, or why it was not.
struct EnergyDevice {
  DeviceKind device = DeviceKind::cpu;
  bool measured = false;
  std::string source;  // nvml, powercap, perf_power
  std::vector<std::string> domains;
  double idle_watts = 0;
  double update_period_s = 0;
  std::optional<double> limit_watts;
  std::string unavailable_reason;
};

// A measurement's time and energy per evaluation, for the energy-against-time chart.
struct EnergyPoint {
  std::string implementation;
  DeviceKind device = DeviceKind::cpu;
  std::size_t n = 0;
  double seconds = 0;  // kernel median per evaluation
  EnergyFigure energy;
};

struct EnergyAnalysis {
  std::vector<EnergyDevice> devices;  // as the run read them; empty: a file older than version 10
  std::vector<EnergyPoint> points;    // every timed measurement with energy, in the results' order
  // Each result's figure where its energy was read, one per doc.results entry, in its order.
  std::vector<std::optional<EnergyFigure>> of_results;
  std::string idle_accounting = "included";
  // Why no GPU/CPU energy ratio is formed ("the CPU's energy is not read: no powercap, …"); empty
  // where the two sides' energy compares (both read, under one accounting, in one run).
  std::string no_ratio_reason;
  bool compares() const { return no_ratio_reason.empty(); }
  bool any_read() const { return !points.empty(); }
};

// The run's energy: each device's meter, the measurements' figures, and whether ratios may be
// formed.
EnergyAnalysis analyze_energy(const ResultsDocument& doc);

// The energy figure of one result's kernel timing, or none where its device's was not read.
std::optional<EnergyFigure> energy_figure(const ResultsDocument& doc, const ResultRecord& r);

// CPU joules per evaluation over GPU's (how many times less the GPU uses per evaluation), the
// interval at the extremes of the two; empty where either is unresolved.
std::optional<RateRatio> energy_ratio(const EnergyFigure& gpu, const EnergyFigure& cpu);

enum class RuleVerdict { kept, not_kept, cannot_tell, not_applicable };
std::string_view to_string(RuleVerdict verdict);

// One of FAIRNESS.md's rules, checked from the run's own data.
struct AuditRule {
  int number = 0;
  std::string title;  // "Same problem", ...
  RuleVerdict verdict = RuleVerdict::cannot_tell;
  std::string evidence;  // one line
};

struct FairnessAudit {
  std::vector<AuditRule> rules;  // FAIRNESS.md's ten, in order
  std::string verdict;           // one line: "all 7 applicable rules kept", or which are not
  // Measurements taken while the CPU was contended or the GPU's clock was held down, named.
  std::vector<RateFigure> disturbed_measurements;
};

struct RunSummary {
  std::size_t measurements = 0, ok = 0, failed = 0, skipped = 0;
  bool complete = true;
  bool interrupted = false;
  // A run planned within a budget (run --budget): the budget, the plan's estimate, what the
  // measurements took, and how many the plan (or the run falling behind it) left out.
  double budget_s = 0, planned_s = 0, measured_s = 0;
  // The document holds a plan's estimate (a report combined from two runs holds none).
  bool has_plan = false;
  // The plan's estimate of the measurements that ran (phase_seconds "planned_ran"), where given;
  // then measured_s is what they took, the probes (planning_s) apart.
  std::optional<double> planned_ran_s;
  double planning_s = 0, ceilings_s = 0;
  std::size_t left_out_by_plan = 0;
  std::size_t timed_again = 0;  // timings taken more than once (disturbed), which cost more
};

// The relative energy error of one conservation sample, for the error-against-time chart.
struct EnergyErrorPoint {
  std::int64_t step = 0;
  double time = 0;
  double relative_energy_error = 0;  // |E - E0| / |E0|; 0 at step 0 by definition
};

// A step's parts as shares of their sum, for the stacked-bar split: each part below a picosecond
// (other, and on the GPU integration, are differences of two clocks and read slightly negative, or
// at rounding level on the host, where they are noise) counts as zero, so the shares are each in
// [0, 1] and add to 1.
struct StepShares {
  double force = 0;       // the force evaluation less its tree's build
  double tree_build = 0;  // tree formulations: the tree's build, within the force evaluation
  double integration = 0;
  double other = 0;
  double diagnostics = 0;
  double snapshots = 0;
  double total_s = 0;  // the sum the shares are of: seconds per application step
};

// Whether a simulation kept energy and momentum within the bounds a trustworthy run keeps
// (docs/tolerances.md, "Time integration"), and where not, the likely cause.
struct ConservationCheck {
  double energy_error = 0;  // the largest |E - E0| / |E0| of the samples
  double energy_bound = 0;  // a trustworthy integration's
  // Where the float64 leapfrog of the same steps was followed and the formulation is of full
  // accuracy: |ΔE/E| at its last step, against 2 x the float64 leapfrog's + 4u there (what the
  // precision may add).
  std::optional<double> end_energy_error;
  double end_energy_bound = 0;
  // The largest |P - P0| over the momentum scale sqrt(M |W0|), and its bound u sqrt(steps);
  // empty where no scale exists (N = 1).
  std::optional<double> momentum_drift;
  double momentum_bound = 0;
  std::string likely_cause;  // where a bound is exceeded: what most likely went wrong
  bool energy_within() const {
    return energy_error <= energy_bound &&
           (!end_energy_error || *end_energy_error <= end_energy_bound);
  }
  bool momentum_within() const { return !momentum_drift || *momentum_drift <= momentum_bound; }
  bool within() const { return energy_within() && momentum_within(); }
};

// One simulation (simulate), as the reports show it: time per step by phase and what the steps
// kept of energy and the float64 trajectory.
struct IntegrationRow {
  std::string implementation;
  std::size_t n = 0;
  DeviceKind device = DeviceKind::cpu;
  Precision precision = Precision::f32;
  AccuracyClass accuracy_class = AccuracyClass::full;
  Status status = Status::ok;
  std::string reason;
  std::int64_t steps = 0;
  StepSplit per_step;
  double application_step_s = 0;  // 1 / steps per second: a step with its share of diagnostics
  double force_share = 0;         // force over the application step
  double steps_per_second = 0;
  double max_relative_energy_error = 0;
  std::optional<TrajectoryDivergence> divergence;
  std::vector<EnergyErrorPoint> energy_errors;    // the conservation samples, in step order
  std::optional<StepShares> shares;               // empty where no step was timed
  std::optional<ConservationCheck> conservation;  // empty where no step was done
  // Joules per step and mean watts over the whole simulation, where its device's energy was read.
  std::optional<double> joules_per_step, mean_watts;
};

// Best full-accuracy GPU against best full-accuracy CPU of one precision at one N, by whole
// application step: what the force kernel's speedup becomes once a step includes integration,
// diagnostics, launches and copies.
struct ApplicationSpeedup {
  Precision precision = Precision::f32;
  std::size_t n = 0;
  std::string cpu, gpu;            // the fastest by application step
  double kernel_speedup = 0;       // CPU force seconds per step over GPU's
  double application_speedup = 0;  // CPU application step over GPU's
};

// Which devices the run measured: a GPU/CPU ratio needs both. A run that cannot answer the
// suite's question says so first, with why (of this build and machine) and what would give the
// ratio.
struct MeasuredSides {
  bool cpu = false;  // a CPU formulation measured ok
  bool gpu = false;
  std::string missing_side;  // "no GPU measured"; empty with both
  std::string missing;       // the same with why: "no GPU measured: no NVIDIA GPU or driver …"
  std::string remedy;        // what to do for the ratio; empty with both
  bool compares() const { return cpu && gpu; }
};

// The sides of a run or simulation (validated-only measurements count as measured).
MeasuredSides measured_sides(const ResultsDocument& document);

// ---- The answer first: the suite's question in one paragraph, from the figures above ----

// A GPU/CPU ratio and the N it holds at.
struct RatioAt {
  std::size_t n = 0;
  RateRatio ratio;
};

// One pairing's GPU/CPU ratio (best against best, or naive against naive) of one precision over
// every N where both sides have a figure: its lowest and its highest, each with its N (the same
// where one N has both), or why there is none.
struct RatioRange {
  Precision precision = Precision::f32;
  std::optional<RatioAt> lowest, highest;  // both or neither
  std::string missing;                     // why there is no ratio; empty where there is one
};

// GPU over CPU at relative L2 <= 1e-3 with the fastest formulation of each device whatever its
// algorithm (rule 9), at N = 1M; where 1M has no such pair, at the largest N that has one.
struct EqualAccuracyAnswer {
  static constexpr std::size_t kWantedN = std::size_t{1} << 20;
  static constexpr double kRelativeL2 = 1e-3;
  std::optional<BarHeadlineRow> row;  // both devices' figures and their ratio; empty: no N has one
  std::string bar_label;              // "relative L2 ≤ 1e-3"
  std::string not_at_wanted;          // why not at 1M (or at all); empty where row is at 1M
};

// What a run that measured one side has instead of a ratio: that side's fastest full-accuracy
// rate per precision (at the N where it is highest) and, where trees ran, where its tree
// overtakes all-pairs at relative L2 <= 1e-3.
struct OneSideAnswer {
  struct Best {
    Precision precision = Precision::f32;
    RateFigure figure;
  };
  DeviceKind device = DeviceKind::cpu;
  std::vector<Best> best;  // f32 first
  std::optional<Crossover> crossover;
  std::string crossover_bar_label;
};

// The answer's line on energy (rule 10): best against best, per precision the CPU/GPU joules
// ratio at the largest N whose headline row has one, or why there is none.
struct EnergyAnswer {
  struct Quoted {
    Precision precision = Precision::f32;
    std::size_t n = 0;
    RateRatio ratio;  // HeadlineRow::best_energy_ratio
  };
  std::vector<Quoted> best;     // f32 first; empty: `missing` says why
  std::string missing;          // why no ratio; empty where `best` has one
  std::string idle_accounting;  // "included" or "subtracted", on both sides
};

struct Answer {
  // Where both sides were measured: per precision of the run (f32 first).
  std::vector<RatioRange> best, naive;
  EqualAccuracyAnswer equal_accuracy;
  // Where the run cannot compare (MeasuredSides::compares() false) and measured one side.
  std::optional<OneSideAnswer> one_side;
  bool two_machines = false;  // the sides come from two runs (report --cpu-from --gpu-from)
  // Closes the paragraph where it has figures (one side's, or ratios); empty where it has none.
  std::optional<EnergyAnswer> energy;
};

struct Analysis {
  RunSummary summary;
  MeasuredSides sides;
  Answer answer;  // the paragraph every report opens with
  FairnessAudit audit;
  Headline headline;
  std::vector<Ladder> ladders;  // by device, precision, N
  std::vector<Roofline> rooflines;
  std::vector<PeakFractions> peak_fractions;
  std::vector<AccuracyPoint> accuracy;
  std::vector<EndToEndRow> end_to_end;
  std::vector<RepetitionSamples> repetitions;
  std::vector<SkippedGroup> skipped;
  // Trees and all-pairs at equal accuracy (rule 9); every analysis above is of all-pairs only.
  AlgorithmComparison algorithms;
  EnergyAnalysis energy;                                 // rule 10
  std::vector<IntegrationRow> integration;               // simulate: one per simulation
  std::vector<ApplicationSpeedup> application_speedups;  // simulate: per precision and N
};

Analysis analyze(const ResultsDocument& document);

// Why a measurement's kernel timing may read low (its conditions' disturbances and attempts), or
// empty when nothing disturbed it.
std::string describe_disturbance(const ResultRecord& record);

// The implementation record of `name` in `document`, or null.
const ImplementationRecord* find_implementation(const ResultsDocument& document,
                                                const std::string& name);

}  // namespace nbody::reports
