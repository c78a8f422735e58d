#include "nbody/reports/comparison.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "median.hpp"
#include "nbody/errors.hpp"
#include "nbody/reports/run_set.hpp"

namespace nbody::reports {
namespace {

// Up to this many samples in all the p-value comes from the exact permutation distribution of the
// rank sum. A suite run has 5 repetitions a side, where the normal approximation is poor (it gives
// p = 0.012 for 5 against 5 completely separated, the exact answer being 2/252 = 0.0079); 50 keeps
// C(50, 25) ≈ 1.3e14 path counts exact in a double (below 2^53) and the table small (~3M steps).
constexpr std::size_t kExactLimit = 50;

// A machine shift is estimated from at least this many measurements of this many formulations on
// its device: with fewer, one formulation's own change would be taken for the machine's.
constexpr std::size_t kShiftMeasurements = 4;
constexpr std::size_t kShiftFormulations = 3;

// Ties get the mean of the ranks they span (midranks). Doubled, every rank is an integer, so the
// rank sums the exact distribution counts over are exact integers.
struct Ranks {
  std::vector<std::size_t> doubled;  // pooled: a's samples first, then b's
  double tie_term = 0;               // sum over tie groups of t^3 - t
};

Ranks doubled_midranks(std::span<const double> a, std::span<const double> b) {
  const std::size_t total = a.size() + b.size();
  std::vector<std::pair<double, std::size_t>> pooled;
  pooled.reserve(total);
  for (std::size_t i = 0; i < a.size(); ++i) pooled.emplace_back(a[i], i);
  for (std::size_t j = 0; j < b.size(); ++j) pooled.emplace_back(b[j], a.size() + j);
  std::sort(pooled.begin(), pooled.end());
  Ranks ranks{std::vector<std::size_t>(total), 0};
  for (std::size_t first = 0; first < total;) {
    std::size_t last = first + 1;  // one past the tie group
    while (last < total && pooled[last].first == pooled[first].first) ++last;
    // Ranks first+1 .. last (1-based); their mean, doubled, is first + 1 + last.
    for (std::size_t k = first; k < last; ++k) ranks.doubled[pooled[k].second] = first + 1 + last;
    const double t = static_cast<double>(last - first);
    ranks.tie_term += t * t * t - t;
    first = last;
  }
  return ranks;
}

// The exact permutation distribution of a's doubled rank sum: every way of choosing which m of the
// pooled samples are a's is equally likely under the null hypothesis. With the midranks of the
// actual ties this is exact with ties too (the conditional test), and without ties it is the
// classical distribution of U. Two-sided p: twice the smaller tail, at most 1, as scipy's exact
// method; with ties the distribution need not be symmetric, and doubling the smaller tail keeps
// the test at its level.
double exact_p_value(const Ranks& ranks, std::size_t m, std::size_t observed_doubled_sum) {
  std::size_t max_sum = 0;
  for (const std::size_t r : ranks.doubled) max_sum += r;
  // ways[k][s]: subsets of size k of the samples seen so far whose doubled rank sum is s.
  std::vector<std::vector<double>> ways(m + 1, std::vector<double>(max_sum + 1, 0.0));
  ways[0][0] = 1;
  std::size_t seen = 0;
  for (const std::size_t r : ranks.doubled) {
    ++seen;
    for (std::size_t k = std::min(seen, m); k >= 1; --k) {
      for (std::size_t s = max_sum; s >= r; --s) ways[k][s] += ways[k - 1][s - r];
    }
  }
  double all = 0, at_most = 0, at_least = 0;
  for (std::size_t s = 0; s <= max_sum; ++s) {
    all += ways[m][s];
    if (s <= observed_doubled_sum) at_most += ways[m][s];
    if (s >= observed_doubled_sum) at_least += ways[m][s];
  }
  return std::min(1.0, 2 * std::min(at_most, at_least) / all);
}

// Above kExactLimit: the normal approximation with the tie correction of the variance and a
// continuity correction (scipy's asymptotic method).
double normal_p_value(double u, double m, double n, double tie_term) {
  const double total = m + n;
  const double variance = m * n / 12 * ((total + 1) - tie_term / (total * (total - 1)));
  if (variance <= 0) return 1;  // every sample tied
  const double z = std::max(0.0, std::abs(u - m * n / 2) - 0.5) / std::sqrt(variance);
  return std::min(1.0, std::erfc(z / std::sqrt(2.0)));
}

std::string describe_gpus(const MachineRecord& machine) {
  std::vector<std::string> names;
  for (const GpuDescription& gpu : machine.gpus) names.push_back(gpu.name);
  return names.empty() ? "no GPU" : fmt::format("{}", fmt::join(names, ", "));
}

// "field: 'before' → 'after'" for each differing field.
void differences(std::vector<std::string>& out, const char* field, const std::string& before,
                 const std::string& after) {
  if (before != after) out.push_back(fmt::format("{} '{}' → '{}'", field, before, after));
}

std::vector<std::string> document_flags(const ResultsDocument& base, const ResultsDocument& now) {
  std::vector<std::string> flags;
  std::vector<std::string> machine;
  differences(machine, "CPU", base.machine.cpu_model, now.machine.cpu_model);
  differences(machine, "GPUs", describe_gpus(base.machine), describe_gpus(now.machine));
  if (!machine.empty()) {
    flags.push_back(fmt::format("Machines differ: {}. Ratios compare machines, not code.",
                                fmt::join(machine, "; ")));
  }
  std::vector<std::string> build;
  const BuildRecord& b = base.build;
  const BuildRecord& n = now.build;
  differences(build, "version", b.tool_version, n.tool_version);
  differences(build, "build type", b.build_type, n.build_type);
  differences(build, "C++ compiler", b.cxx_compiler, n.cxx_compiler);
  differences(build, "C++ flags", b.cxx_flags, n.cxx_flags);
  differences(build, "CUDA compiler", b.cuda_compiler, n.cuda_compiler);
  differences(build, "CUDA flags", b.cuda_flags, n.cuda_flags);
  differences(build, "CUDA architectures", b.cuda_architectures, n.cuda_architectures);
  for (const auto& [library, version] : b.libraries) {
    const auto it = n.libraries.find(library);
    differences(build, library.c_str(), version, it == n.libraries.end() ? "" : it->second);
  }
  if (!build.empty()) flags.push_back(fmt::format("Builds differ: {}.", fmt::join(build, "; ")));
  return flags;
}

std::optional<std::string> disturbances_of(const ResultRecord& r) {
  if (!r.kernel || !r.kernel->conditions || r.kernel->conditions->disturbances.empty()) {
    return std::nullopt;
  }
  return fmt::format("{}", fmt::join(r.kernel->conditions->disturbances, "; "));
}

// What both records say, before any verdict: statuses, accuracy, ratios and the notes on inputs,
// threads, details and disturbances.
ComparedRow describe_pair(const ResultRecord& base, const ResultRecord& now) {
  ComparedRow row{.implementation = base.implementation,
                  .initial_condition = base.initial_condition,
                  .n = base.n,
                  .base_status = base.status,
                  .new_status = now.status};
  if (base.accuracy) {
    row.base_relative_l2 = base.accuracy->metrics.relative_l2;
    row.base_passed = base.accuracy->passed;
  }
  if (now.accuracy) {
    row.new_relative_l2 = now.accuracy->metrics.relative_l2;
    row.new_passed = now.accuracy->passed;
  }
  if (!base.input_hash.empty() && !now.input_hash.empty() && base.input_hash != now.input_hash) {
    row.notes.push_back(fmt::format("inputs differ (hash {} → {}): not the same bodies",
                                    base.input_hash, now.input_hash));
  }
  if (base.threads != now.threads) {
    row.notes.push_back(fmt::format("threads {} → {}", base.threads, now.threads));
  }
  std::vector<std::string> details;
  for (const auto& [key, value] : now.details) {
    const auto it = base.details.find(key);
    differences(details, key.c_str(), it == base.details.end() ? "" : it->second, value);
  }
  for (const auto& [key, value] : base.details) {
    if (!now.details.contains(key)) differences(details, key.c_str(), value, "");
  }
  if (!details.empty()) row.notes.push_back(fmt::format("details: {}", fmt::join(details, "; ")));
  if (const auto why = disturbances_of(base)) row.notes.push_back("BASE disturbed: " + *why);
  if (const auto why = disturbances_of(now)) row.notes.push_back("NEW disturbed: " + *why);
  if (base.status == Status::ok && now.status == Status::ok && base.kernel && now.kernel &&
      base.kernel->median_s > 0) {
    row.base_median_s = base.kernel->median_s;
    row.new_median_s = now.kernel->median_s;
    row.time_ratio = now.kernel->median_s / base.kernel->median_s;
    if (fastest_s(*base.kernel) > 0) {
      row.fastest_ratio = fastest_s(*now.kernel) / fastest_s(*base.kernel);
    }
    if (base.kernel_rate && now.kernel_rate && base.kernel_rate->interactions_per_second > 0) {
      row.rate_ratio =
          now.kernel_rate->interactions_per_second / base.kernel_rate->interactions_per_second;
    }
    if (base.end_to_end && now.end_to_end && base.end_to_end->median_s > 0) {
      row.end_to_end_ratio = now.end_to_end->median_s / base.end_to_end->median_s;
    }
    const std::optional<EnergyStatistics>& base_energy = base.kernel->energy;
    const std::optional<EnergyStatistics>& new_energy = now.kernel->energy;
    if (base_energy && new_energy && base_energy->resolved && new_energy->resolved &&
        base_energy->per_evaluation_j > 0) {
      row.base_joules = base_energy->per_evaluation_j;
      row.new_joules = new_energy->per_evaluation_j;
      row.energy_ratio = *row.new_joules / *row.base_joules;
    }
  }
  return row;
}

// The verdict on one row: its fastest ratio and NEW's samples divided by the machine's shift where
// one was applied, the U test on the samples where `test_gates`, then the threshold, symmetric
// under swapping BASE and NEW.
void judge(ComparedRow& row, const ResultRecord& base, const ResultRecord& now,
           const MachineShift* shift, const ComparisonSettings& settings, bool test_gates) {
  const double machine = shift != nullptr && shift->applied ? shift->time_ratio : 1;
  if (row.energy_ratio) {
    row.energy_changed = std::abs(std::log(*row.energy_ratio)) > std::log1p(settings.threshold);
  }
  if (row.fastest_ratio && shift != nullptr && shift->applied) {
    row.corrected_ratio = *row.fastest_ratio / machine;
  }
  if (row.time_ratio && !base.kernel->samples_s.empty() && !now.kernel->samples_s.empty()) {
    const std::vector<double>& a = base.kernel->samples_s;
    std::vector<double> b = now.kernel->samples_s;
    for (double& sample : b) sample /= machine;
    row.test = mann_whitney_u(a, b);
    row.significant = row.test->p_value < settings.alpha;
    if (test_gates && smallest_p_value(a.size(), b.size()) >= settings.alpha) {
      row.notes.push_back(
          fmt::format("{} against {} repetitions cannot reach p < {}: no change can be significant",
                      a.size(), b.size(), settings.alpha));
    }
  }
  const double ratio = row.corrected_ratio.value_or(row.fastest_ratio.value_or(1));
  const double slower = 1 + settings.threshold, possibly = 1 + settings.threshold / 2;
  if (row.base_passed == true && row.new_passed == false) {
    row.verdict = Verdict::accuracy_regression;
  } else if (base.status == Status::ok && now.status == Status::failed) {
    row.verdict = Verdict::now_failing;
    row.notes.push_back("NEW failed: " + now.reason);
  } else if (!row.time_ratio) {
    row.verdict = Verdict::not_compared;
    if (base.status != Status::ok) {
      row.notes.push_back(fmt::format("BASE {}: {}", to_string(base.status), base.reason));
    }
    if (now.status != Status::ok) {
      row.notes.push_back(fmt::format("NEW {}: {}", to_string(now.status), now.reason));
    }
    if (base.status == Status::ok && now.status == Status::ok) {
      row.notes.push_back("no kernel timing on one side");
    }
  } else if (test_gates && !row.test) {
    row.verdict = Verdict::same;
    row.notes.push_back("no repetition samples: the change is untested");
  } else if (test_gates && !row.significant) {
    row.verdict = Verdict::same;
  } else if (ratio > slower || ratio < 1 / slower) {
    // 1 / (1 + t), not 1 - t: swapping BASE and NEW inverts the ratio and must only swap the
    // verdict (0.951x was "same" where 1.051x was "slower").
    row.verdict = ratio > 1 ? Verdict::slower : Verdict::faster;
    // A timing other processes shared the CPUs with cannot decide a verdict: it is said.
    if (disturbances_of(base) || disturbances_of(now)) {
      row.verdict = ratio > 1 ? Verdict::possibly_slower : Verdict::possibly_faster;
      row.notes.push_back("a disturbed timing decides no verdict");
    }
  } else if (ratio > possibly || ratio < 1 / possibly) {
    row.verdict = ratio > 1 ? Verdict::possibly_slower : Verdict::possibly_faster;
  } else {
    row.verdict = Verdict::same;
    if (test_gates) row.notes.push_back("significant, but within half the threshold");
  }
}

// BASE's float32 all-core FMA ceiling over NEW's on `device`, where both runs measured it (equal
// values are one cached measurement read twice: no control).
std::optional<double> ceiling_ratio(const ResultsDocument& base, const ResultsDocument& now,
                                    DeviceKind device) {
  if (!base.ceilings || !now.ceilings) return std::nullopt;
  const auto fastest = [device](const Ceilings& ceilings) -> const CeilingEntry* {
    const CeilingEntry* best = nullptr;
    for (const CeilingEntry& e : ceilings.entries) {
      const bool all_cores = device != DeviceKind::cpu || e.name.ends_with(".all_cores");
      if (e.device == device && e.quantity == "float32 FMA throughput" && all_cores &&
          (best == nullptr || e.value > best->value)) {
        best = &e;
      }
    }
    return best;
  };
  const CeilingEntry* b = fastest(*base.ceilings);
  if (b == nullptr || !(b->value > 0)) return std::nullopt;
  for (const CeilingEntry& e : now.ceilings->entries) {
    if (e.name == b->name && e.value > 0 && e.value != b->value) return b->value / e.value;
  }
  return std::nullopt;
}

struct TimedPair {
  const ResultRecord* base;
  const ResultRecord* now;
  ComparedRow row;
  DeviceKind device = DeviceKind::cpu;
};

// The drift within which `shift` is the machine's: the settings' bound, or how far either side's
// own runs moved apart where that is further (the machine measured on the day). Beyond it, a shift
// of every measurement is a change of the machine or the build, and is not removed.
void bound_by_drift(MachineShift& shift, const ComparisonSettings& settings, const RunSet& base,
                    const RunSet& now) {
  const bool cpu = shift.device == DeviceKind::cpu;
  const double given = cpu ? settings.cpu_drift : settings.gpu_drift;
  const double measured = cpu ? kCpuDriftBound : kGpuDriftBound;
  shift.drift_bound = 1 + given;
  shift.drift_source =
      given == measured
          ? fmt::format(
                "the most a {} moved between unchanged runs where measured, with a margin; "
                "docs/compare.md",
                cpu ? "CPU" : "GPU")
          : fmt::format("given by --{}-drift", cpu ? "cpu" : "gpu");
  for (const auto& [side, set] : {std::pair{"BASE", &base}, std::pair{"NEW", &now}}) {
    const auto it = set->run_drift.find(shift.device);
    if (it == set->run_drift.end() || it->second <= shift.drift_bound) continue;
    shift.drift_bound = it->second;
    shift.drift_source = fmt::format("how far {}'s own {} runs moved apart", side, set->runs);
  }
  shift.beyond_drift = std::abs(std::log(shift.time_ratio)) > std::log(shift.drift_bound);
}

// The common shift of each device's rows (the median of their log fastest ratios) and their scatter
// around it; applied where enough formulations share it and it is within the machine's drift.
std::vector<MachineShift> machine_shifts(const std::vector<TimedPair>& pairs,
                                         const RunSet& base_set, const RunSet& new_set,
                                         const ComparisonSettings& settings) {
  const ResultsDocument& base = base_set.combined;
  const ResultsDocument& now = new_set.combined;
  std::vector<MachineShift> shifts;
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    std::vector<double> logs;
    std::map<std::string, int> formulations;
    for (const TimedPair& p : pairs) {
      if (p.device != device || !p.row.fastest_ratio) continue;
      logs.push_back(std::log(*p.row.fastest_ratio));
      ++formulations[p.row.implementation];
    }
    if (logs.empty()) continue;
    MachineShift shift{.device = device,
                       .measurements = logs.size(),
                       .formulations = formulations.size(),
                       .ceiling_ratio = ceiling_ratio(base, now, device)};
    const double center = median_of(logs);
    std::vector<double> deviations;
    for (const double x : logs) deviations.push_back(std::abs(x - center));
    shift.time_ratio = std::exp(center);
    shift.spread = 1.4826 * median_of(deviations);
    const bool enough =
        shift.measurements >= kShiftMeasurements && shift.formulations >= kShiftFormulations;
    bound_by_drift(shift, settings, base_set, new_set);
    // Too few measurements are not the whole device: their own verdicts decide (one disturbed
    // timing decides nothing).
    shift.beyond_drift = shift.beyond_drift && enough;
    if (!settings.correct_machine_shift) {
      shift.why_not_applied = "--no-shift-correction";
    } else if (!enough) {
      shift.why_not_applied = fmt::format(
          "{} measurements of {} formulations: too few to tell the machine from one formulation "
          "(at least {} of {} needed)",
          shift.measurements, shift.formulations, kShiftMeasurements, kShiftFormulations);
    } else if (shift.beyond_drift) {
      shift.why_not_applied = fmt::format("beyond the {:.1f}% the machine drifts ({})",
                                          100 * (shift.drift_bound - 1), shift.drift_source);
    } else {
      shift.applied = true;
    }
    shifts.push_back(shift);
  }
  return shifts;
}

// Each formulation's rows together: slower where at least kFormulationAgreement of its timed rows
// are; a row slower alone in its formulation is only possibly slower (and so for faster).
std::vector<FormulationChange> formulation_changes(std::vector<ComparedRow>& rows) {
  std::vector<FormulationChange> changes;
  std::map<std::string, std::vector<ComparedRow*>> by_formulation;
  std::vector<std::string> order;
  for (ComparedRow& row : rows) {
    if (!row.fastest_ratio) continue;
    if (!by_formulation.contains(row.implementation)) order.push_back(row.implementation);
    by_formulation[row.implementation].push_back(&row);
  }
  for (const std::string& name : order) {
    const std::vector<ComparedRow*>& members = by_formulation[name];
    FormulationChange change{.implementation = name, .measurements = members.size()};
    std::vector<double> logs;
    for (const ComparedRow* row : members) {
      change.slower += row->verdict == Verdict::slower;
      change.faster += row->verdict == Verdict::faster;
      logs.push_back(std::log(row->corrected_ratio.value_or(*row->fastest_ratio)));
    }
    change.median_ratio = std::exp(median_of(logs));
    const double needed = kFormulationAgreement * static_cast<double>(change.measurements);
    if (static_cast<double>(change.slower) >= needed) change.verdict = Verdict::slower;
    if (static_cast<double>(change.faster) >= needed) change.verdict = Verdict::faster;
    for (ComparedRow* row : members) {
      const bool lone_slower = row->verdict == Verdict::slower && change.verdict != Verdict::slower;
      const bool lone_faster = row->verdict == Verdict::faster && change.verdict != Verdict::faster;
      if (!lone_slower && !lone_faster) continue;
      row->verdict = lone_slower ? Verdict::possibly_slower : Verdict::possibly_faster;
      row->notes.push_back(fmt::format(
          "{} of {} measurements of {} moved beyond the threshold: one measurement alone is "
          "not a change of the formulation",
          lone_slower ? change.slower : change.faster, change.measurements, name));
    }
    changes.push_back(change);
  }
  return changes;
}

using Key = std::tuple<std::string, std::size_t, std::string>;

Key key_of(const ResultRecord& r) {
  return {r.implementation, r.n, r.initial_condition};
}

UnmatchedRow unmatched(const ResultRecord& r) {
  return {r.implementation, r.initial_condition, r.n, r.status};
}

}  // namespace

MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty()) {
    throw std::invalid_argument("the Mann-Whitney U test needs at least one sample a side");
  }
  const Ranks ranks = doubled_midranks(a, b);
  std::size_t doubled_sum_a = 0;
  for (std::size_t i = 0; i < a.size(); ++i) doubled_sum_a += ranks.doubled[i];
  const double m = static_cast<double>(a.size());
  const double n = static_cast<double>(b.size());
  const double u = static_cast<double>(doubled_sum_a) / 2 - m * (m + 1) / 2;
  if (a.size() + b.size() <= kExactLimit) {
    return {u, exact_p_value(ranks, a.size(), doubled_sum_a), true};
  }
  return {u, normal_p_value(u, m, n, ranks.tie_term), false};
}

double smallest_p_value(std::size_t m, std::size_t n) {
  double arrangements = 1;  // C(m + n, m)
  for (std::size_t k = 1; k <= m; ++k) {
    arrangements = arrangements * static_cast<double>(n + k) / static_cast<double>(k);
  }
  return std::min(1.0, 2 / arrangements);
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::faster:
      return "faster";
    case Verdict::slower:
      return "slower";
    case Verdict::same:
      return "same";
    case Verdict::possibly_slower:
      return "possibly slower";
    case Verdict::possibly_faster:
      return "possibly faster";
    case Verdict::accuracy_regression:
      return "accuracy regression";
    case Verdict::now_failing:
      return "now failing";
    case Verdict::not_compared:
      return "not compared";
  }
  return "?";
}

bool Comparison::repetitions_gate() const {
  return base_runs == 1 || new_runs == 1;
}

bool Comparison::regressed() const {
  const bool device_slower = std::any_of(shifts.begin(), shifts.end(), [](const MachineShift& s) {
    return s.beyond_drift && s.time_ratio > 1;
  });
  return device_slower || std::any_of(rows.begin(), rows.end(), [](const ComparedRow& row) {
           return row.verdict == Verdict::slower || row.verdict == Verdict::accuracy_regression ||
                  row.verdict == Verdict::now_failing;
         });
}

Comparison compare_results(const ResultsDocument& base, const ResultsDocument& now,
                           ComparisonSettings settings) {
  return compare_results(std::span(&base, 1), std::span(&now, 1), settings);
}

namespace {

// Throws UsageError for settings out of range and for sides that cannot be compared: a
// simulation, or runs of different problems.
void check_comparable(std::span<const ResultsDocument> base_runs,
                      std::span<const ResultsDocument> new_runs,
                      const ComparisonSettings& settings) {
  if (!(settings.threshold > 0) || !std::isfinite(settings.threshold)) {
    throw UsageError(
        fmt::format("threshold {} must be a finite positive number", settings.threshold));
  }
  if (!(settings.alpha > 0 && settings.alpha < 1)) {
    throw UsageError(fmt::format("alpha {} must be between 0 and 1", settings.alpha));
  }
  for (const auto& [name, drift] :
       {std::pair{"cpu", settings.cpu_drift}, std::pair{"gpu", settings.gpu_drift}}) {
    if (!(drift >= 0) || !std::isfinite(drift)) {
      throw UsageError(fmt::format("{} drift {} must be a finite number, at least 0", name, drift));
    }
  }
  if (base_runs.empty() || new_runs.empty()) {
    throw UsageError("a side of the comparison has no run");
  }
  // A simulation's records are steps, not evaluations: there is nothing for a run to be set
  // against (and compare reads only runs' results).
  const ResultsDocument& base = base_runs.front();
  const ResultsDocument& now = new_runs.front();
  for (const auto& [side, doc] : {std::pair{"BASE", &base}, std::pair{"NEW", &now}}) {
    if (kind_of(doc->settings) == DocumentKind::simulate) {
      throw UsageError(fmt::format(
          "{} is a simulation (nbody-fair simulate): compare sets runs against each other", side));
    }
  }
  // Different bodies make every ratio a comparison of problems, not of code; each side's runs
  // must be of BASE's command and problem too.
  const auto problem = [](const RunSettings& s) {
    return fmt::format("{}, seed {}, softening {}", s.initial_condition, s.seed, s.softening);
  };
  for (const auto& [side, runs] : {std::pair{"BASE", base_runs}, std::pair{"NEW", new_runs}}) {
    for (const ResultsDocument& run : runs) {
      if (kind_of(run.settings) != kind_of(base.settings)) {
        throw UsageError(fmt::format(
            "BASE is a document of nbody-fair {} and {} has one of nbody-fair {}: compare sets "
            "documents of one command against each other",
            base.settings.command, side, run.settings.command));
      }
      if (problem(run.settings) != problem(base.settings)) {
        throw UsageError(
            fmt::format("BASE ({}) and a run of {} ({}) are runs of different problems",
                        problem(base.settings), side, problem(run.settings)));
      }
    }
  }
}

// Only the rows of implementations the settings' pattern finds stay; UsageError for a pattern that
// is not a regular expression, or one that finds none. The machine's shifts were measured on every
// row first: a slowdown of a whole device fails wherever the pattern looks.
void keep_selected_rows(Comparison& comparison, const ComparisonSettings& settings) {
  if (settings.implementation_pattern.empty()) return;
  std::regex pattern;
  try {
    pattern = std::regex(settings.implementation_pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw UsageError(fmt::format("--impl '{}' is not a regular expression: {}",
                                 settings.implementation_pattern, e.what()));
  }
  const auto unselected = [&](const auto& row) {
    return !std::regex_search(row.implementation, pattern);
  };
  std::erase_if(comparison.rows, unselected);
  std::erase_if(comparison.only_in_base, unselected);
  std::erase_if(comparison.only_in_new, unselected);
  if (comparison.rows.empty()) {
    throw UsageError(fmt::format("--impl '{}' finds no measurement BASE and NEW have in common",
                                 settings.implementation_pattern));
  }
}

}  // namespace

Comparison compare_results(std::span<const ResultsDocument> base_runs,
                           std::span<const ResultsDocument> new_runs, ComparisonSettings settings) {
  check_comparable(base_runs, new_runs, settings);
  const RunSet base_set = combine_runs(base_runs);
  const RunSet new_set = combine_runs(new_runs);
  const ResultsDocument& base = base_set.combined;
  const ResultsDocument& now = new_set.combined;
  Comparison comparison{.settings = settings,
                        .base_runs = base_set.runs,
                        .new_runs = new_set.runs,
                        .base_scatter = base_set.scatter,
                        .new_scatter = new_set.scatter,
                        .flags = document_flags(base, now)};
  std::map<Key, const ResultRecord*> new_by_key;
  for (const ResultRecord& r : now.results) new_by_key.emplace(key_of(r), &r);
  std::map<Key, bool> in_base;
  std::vector<TimedPair> pairs;
  for (const ResultRecord& r : base.results) {
    if (!in_base.emplace(key_of(r), true).second) continue;  // a repeated key: the first counts
    const auto it = new_by_key.find(key_of(r));
    if (it == new_by_key.end()) {
      comparison.only_in_base.push_back(unmatched(r));
    } else {
      pairs.push_back(
          {&r, it->second, describe_pair(r, *it->second), device_of(base, r.implementation)});
    }
  }
  comparison.shifts = machine_shifts(pairs, base_set, new_set, settings);
  for (TimedPair& p : pairs) {
    const auto shift = std::find_if(comparison.shifts.begin(), comparison.shifts.end(),
                                    [&](const MachineShift& s) { return s.device == p.device; });
    judge(p.row, *p.base, *p.now, shift == comparison.shifts.end() ? nullptr : &*shift, settings,
          comparison.repetitions_gate());
    comparison.rows.push_back(std::move(p.row));
  }
  for (const ResultRecord& r : now.results) {
    if (!in_base.contains(key_of(r))) comparison.only_in_new.push_back(unmatched(r));
  }
  keep_selected_rows(comparison, settings);
  comparison.formulations = formulation_changes(comparison.rows);
  if (comparison.rows.empty()) {
    throw UsageError(
        "BASE and NEW have no measurement in common (the same implementation, N and initial "
        "condition): there is nothing to compare");
  }
  return comparison;
}

}  // namespace nbody::reports
