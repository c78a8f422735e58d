#include "nbody/reports/scaling.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

#include <fmt/format.h>

#include "nbody/ceilings.hpp"
#include "nbody/errors.hpp"

namespace nbody::reports {
namespace {

// ---- refusing documents of different problems ----

void require_same(const ScalingInput& first, const ScalingInput& other, const char* what,
                  const std::string& a, const std::string& b) {
  if (a == b) return;
  throw UsageError(fmt::format(
      "{} and {} hold different problems ({} {} against {}): their times cannot be compared",
      first.source, other.source, what, a, b));
}

bool is_simulation(const ResultsDocument& doc) {
  return kind_of(doc.settings) == DocumentKind::simulate;
}

void check_one_problem(const std::vector<ScalingInput>& inputs) {
  const ScalingInput& first = inputs.front();
  const RunSettings& s = first.document.settings;
  const ScalingInput* first_simulation = nullptr;
  for (const ScalingInput& in : inputs) {
    const RunSettings& o = in.document.settings;
    require_same(first, in, "initial condition", s.initial_condition, o.initial_condition);
    require_same(first, in, "seed", std::to_string(s.seed), std::to_string(o.seed));
    require_same(first, in, "softening", fmt::format("{}", s.softening),
                 fmt::format("{}", o.softening));
    if (!is_simulation(in.document)) continue;
    if (!first_simulation) {
      first_simulation = &in;
      continue;
    }
    const RunSettings& f = first_simulation->document.settings;
    require_same(*first_simulation, in, "step dt", fmt::format("{}", f.dt),
                 fmt::format("{}", o.dt));
    require_same(*first_simulation, in, "initial-condition file", f.ic_file, o.ic_file);
  }
  // The inputs themselves: one (initial condition, N) must hash alike in every document.
  std::map<std::tuple<bool, std::string, std::size_t>, std::pair<std::string, const ScalingInput*>>
      hashes;
  const auto same_input = [&hashes](const ScalingInput& in, bool simulation, const std::string& ic,
                                    std::size_t n, const std::string& hash) {
    if (hash.empty()) return;
    const auto [it, inserted] = hashes.try_emplace({simulation, ic, n}, hash, &in);
    if (inserted || it->second.first == hash) return;
    throw UsageError(fmt::format(
        "{} and {} hold different problems (the {} input of N = {} hashes {} against {}): their "
        "times cannot be compared",
        it->second.second->source, in.source, ic, n, it->second.first, hash));
  };
  for (const ScalingInput& in : inputs) {
    for (const InputRecord& input : in.document.inputs) {
      same_input(in, false, input.initial_condition, input.n, input.hash_f64);
    }
    for (const SimulationRecord& r : in.document.simulations) {
      same_input(in, true, r.initial_condition, r.n, r.input_hash);
    }
  }
}

// Two documents that measured one implementation at one N at one scale are a repetition, not a
// study: one's figure would stand as the other's one-device baseline (two runs at one GPU read
// 104% efficient). Scales alike: the same command, ranks, hosts, GPUs per rank, exchange and
// threads.
void check_distinct_scales(const std::vector<ScalingInput>& inputs) {
  const auto scale_key = [](const ResultsDocument& doc) {
    const RunSettings& s = doc.settings;
    return fmt::format("{} {} {} {} {} {}", s.command, std::max(1, s.ranks),
                       std::set<std::string>(s.rank_hosts.begin(), s.rank_hosts.end()).size(),
                       std::max<std::size_t>(1, s.gpu_devices.size()), s.gpu_exchange, s.threads);
  };
  const auto measured = [](const ResultsDocument& doc) {
    std::set<std::pair<std::string, std::size_t>> pairs;
    for (const ResultRecord& r : doc.results) pairs.emplace(r.implementation, r.n);
    for (const SimulationRecord& r : doc.simulations) pairs.emplace(r.implementation, r.n);
    return pairs;
  };
  for (std::size_t a = 0; a < inputs.size(); ++a) {
    for (std::size_t b = a + 1; b < inputs.size(); ++b) {
      const ResultsDocument &first = inputs[a].document, &second = inputs[b].document;
      if (scale_key(first) != scale_key(second)) continue;
      const auto ours = measured(first), theirs = measured(second);
      const auto shared =
          std::find_if(ours.begin(), ours.end(), [&](const auto& p) { return theirs.contains(p); });
      if (shared == ours.end()) continue;
      throw UsageError(fmt::format(
          "{} and {} measured {} at N = {} at one scale: a scaling study sets different scales "
          "side by side (nbody-fair compare sets two runs of one scale against each other)",
          inputs[a].source, inputs[b].source, shared->first, shared->second));
    }
  }
}

// ---- the points ----

std::string gpu_names(const MachineRecord& machine) {
  std::vector<std::string> names;
  for (const GpuDescription& g : machine.gpus) names.push_back(g.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

ScalingSource source_of(const ScalingInput& in) {
  const ResultsDocument& doc = in.document;
  std::vector<std::string> hosts = doc.settings.rank_hosts;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  if (hosts.empty() && !doc.machine.hostname.empty()) hosts.push_back(doc.machine.hostname);
  return {.source = in.source,
          .command = doc.settings.command,
          .generated_at = doc.generated_at,
          .ranks = std::max(1, doc.settings.ranks),
          .hosts = std::max(1, static_cast<int>(hosts.size())),
          .host_names = hosts,
          .gpu_devices = doc.settings.gpu_devices,
          .cpu_model = doc.machine.cpu_model,
          .gpu_names = gpu_names(doc.machine),
          .records = is_simulation(doc) ? doc.simulations.size() : doc.results.size(),
          .complete = doc.complete,
          .interrupted = doc.interrupted};
}

// The total less its parts; zero where that is below the rounding of the subtraction (a
// nanosecond in a second), which would otherwise print as a time of 1e-13 µs.
std::optional<double> non_negative_rest(const std::optional<double>& total,
                                        const std::optional<double>& compute,
                                        const std::optional<double>& communication) {
  if (!total || !compute) return std::nullopt;
  const double rest = *total - *compute - communication.value_or(0.0);
  return rest > 1e-9 * *total ? rest : 0.0;
}

// The scaling model's exchange for `p` (docs/perf-notes.md, "The exchange's α and β"): where the
// document measured the all-gather between the GPUs it ran on.
std::optional<double> modeled_exchange(const ResultsDocument& doc, const ScalingPoint& p) {
  const int k = p.scale.devices();
  if (p.device != DeviceKind::gpu || k < 2 || !doc.ceilings ||
      doc.settings.gpu_devices.size() != static_cast<std::size_t>(k)) {
    return std::nullopt;
  }
  // A run's all-gather follows a long kernel: its latency then, where measured, is what it pays.
  std::optional<double> alpha = doc.ceilings->value(kGpuAllGatherLatencyAfterKernelCeiling);
  if (!alpha) alpha = doc.ceilings->value(kGpuAllGatherLatencyCeiling);
  const std::optional<double> beta = doc.ceilings->value(kGpuAllGatherBandwidthCeiling);
  if (!alpha || !beta || !(*beta > 0)) return std::nullopt;
  const double word = p.precision == Precision::f64 ? 8 : 4;
  const double bytes_per_body = (p.work == ScalingWork::evaluation ? 3 : 4) * word;
  const std::size_t devices = static_cast<std::size_t>(k);
  const double bodies_per_gpu = static_cast<double>((p.n + devices - 1) / devices);
  return *alpha + static_cast<double>(k - 1) * bodies_per_gpu * bytes_per_body / *beta;
}

ScalingPoint evaluation_point(const ScalingInput& in, const ResultRecord& r,
                              const ImplementationRecord& impl) {
  ScalingPoint p{.work = ScalingWork::evaluation,
                 .implementation = r.implementation,
                 .device = impl.device,
                 .precision = impl.precision,
                 .initial_condition = r.initial_condition,
                 .n = r.n,
                 .scale = scale_of(in.document.settings, impl.device, r.threads),
                 .source = in.source,
                 .status = r.status,
                 .reason = r.reason};
  p.scale_label = describe(p.scale);
  if (r.status == Status::ok && r.kernel) {
    p.compute_s = r.kernel->median_s;
    p.total_recorded = r.end_to_end.has_value();
    p.total_s = r.end_to_end ? r.end_to_end->median_s : r.kernel->median_s;
    if (r.communication) p.communication_s = r.communication->median_s;
    if (p.total_recorded) p.other_s = non_negative_rest(p.total_s, p.compute_s, p.communication_s);
    p.modeled_communication_s = modeled_exchange(in.document, p);
    p.disturbance = describe_disturbance(r);
  } else if (r.status == Status::ok) {
    p.reason = "not timed (validate)";
  }
  return p;
}

ScalingPoint simulation_point(const ScalingInput& in, const SimulationRecord& r,
                              const ImplementationRecord* impl) {
  const DeviceKind device = impl ? impl->device : DeviceKind::cpu;
  ScalingPoint p{.work = ScalingWork::simulation,
                 .implementation = r.implementation,
                 .device = device,
                 .precision = impl ? impl->precision : Precision::f32,
                 .initial_condition = r.initial_condition,
                 .n = r.n,
                 .scale = scale_of(in.document.settings, device, r.threads),
                 .source = in.source,
                 .status = r.status,
                 .reason = r.reason};
  p.scale_label = describe(p.scale);
  if (r.status == Status::ok && r.per_step.step_s > 0) {
    const StepSplit& s = r.per_step;
    p.compute_s = std::max(0.0, s.force_s) + std::max(0.0, s.integration_s);
    p.total_s = s.step_s;
    p.total_recorded = true;
    // The all-gathers of ranks, or of the GPUs one process drives (each step's, timed alone).
    if (in.document.settings.ranks > 1 ||
        (device == DeviceKind::gpu && in.document.settings.gpu_devices.size() > 1)) {
      p.communication_s = s.communication_s;
    }
    p.other_s = non_negative_rest(p.total_s, p.compute_s, p.communication_s);
    p.modeled_communication_s = modeled_exchange(in.document, p);
  } else if (r.status == Status::ok) {
    p.reason = "no step was timed";
  }
  return p;
}

// The series a strong-scaling figure stays within: one implementation at one N, with as many
// threads per rank (CPU); only the devices change.
using SeriesKey =
    std::tuple<ScalingWork, DeviceKind, std::string, Precision, std::string, std::size_t, int>;
SeriesKey series_of(const ScalingPoint& p, std::size_t n) {
  return {p.work,
          p.device,
          p.implementation,
          p.precision,
          p.initial_condition,
          n,
          p.device == DeviceKind::cpu ? p.scale.threads_per_rank : 1};
}

std::string joined_disturbance(const ScalingPoint& point, const ScalingPoint& baseline) {
  std::vector<std::string> parts;
  if (!point.disturbance.empty()) parts.push_back(point.disturbance);
  if (&point != &baseline && !baseline.disturbance.empty()) {
    parts.push_back(fmt::format("its one-device baseline: {}", baseline.disturbance));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::optional<double> ratio(const std::optional<double>& numerator,
                            const std::optional<double>& denominator) {
  if (!numerator || !denominator || !(*denominator > 0)) return std::nullopt;
  return *numerator / *denominator;
}

std::optional<double> per(const std::optional<double>& value, int devices) {
  if (!value) return std::nullopt;
  return *value / devices;
}

StrongScaling strong_figures(const ScalingPoint& p, const ScalingPoint& base) {
  const int k = p.scale.devices();
  StrongScaling s{.baseline_source = base.source,
                  .baseline_implementation = base.implementation,
                  .baseline_scale = base.scale,
                  .compute_speedup = ratio(base.compute_s, p.compute_s),
                  .total_speedup = ratio(base.total_s, p.total_s),
                  .disturbance = joined_disturbance(p, base)};
  s.compute_efficiency = per(s.compute_speedup, k);
  s.total_efficiency = per(s.total_speedup, k);
  return s;
}

std::optional<double> rate(std::size_t n, const std::optional<double>& seconds) {
  const double nn = static_cast<double>(n);
  return ratio(std::optional<double>(nn * nn), seconds);
}

WeakScaling weak_figures(const ScalingPoint& p, const ScalingPoint& base) {
  const int k = p.scale.devices();
  WeakScaling w{.baseline_source = base.source,
                .baseline_implementation = base.implementation,
                .baseline_scale = base.scale,
                .baseline_n = base.n,
                .compute_rate_per_device = per(rate(p.n, p.compute_s), k),
                .total_rate_per_device = per(rate(p.n, p.total_s), k),
                .baseline_compute_rate = rate(base.n, base.compute_s),
                .baseline_total_rate = rate(base.n, base.total_s),
                .disturbance = joined_disturbance(p, base),
                .baseline_disturbance = base.disturbance};
  w.compute_efficiency = ratio(w.compute_rate_per_device, w.baseline_compute_rate);
  w.total_efficiency = ratio(w.total_rate_per_device, w.baseline_total_rate);
  return w;
}

std::string series_name(const ScalingPoint& p, std::size_t n) {
  std::string name = fmt::format("{} at N = {}", p.implementation, n);
  if (p.work == ScalingWork::simulation) name += " (simulate)";
  if (p.device == DeviceKind::cpu) {
    name += fmt::format(" with {} thread{} per rank", p.scale.threads_per_rank,
                        p.scale.threads_per_rank == 1 ? "" : "s");
  }
  return name;
}

// Strong figures against the first given one-device point of each series; weak ones against the
// one-device point at N / k.
void pair_with_baselines(ScalingStudy& study) {
  std::map<SeriesKey, const ScalingPoint*> baselines;
  std::map<SeriesKey, int> one_device_points;
  for (const ScalingPoint& p : study.points) {
    if (!p.timed() || p.scale.devices() != 1) continue;
    const SeriesKey key = series_of(p, p.n);
    baselines.try_emplace(key, &p);
    ++one_device_points[key];
  }
  for (const auto& [key, count] : one_device_points) {
    if (count < 2) continue;
    const ScalingPoint& base = *baselines.at(key);
    study.flags.push_back(
        fmt::format("{} was measured on one device {} times: the first given ({}) is the baseline",
                    series_name(base, base.n), count, base.source));
  }
  std::set<SeriesKey> missing;
  for (ScalingPoint& p : study.points) {
    if (!p.timed()) {
      p.strong_missing = "not measured";
      continue;
    }
    const int k = p.scale.devices();
    if (const auto it = baselines.find(series_of(p, p.n)); it != baselines.end()) {
      p.strong = strong_figures(p, *it->second);
    } else {
      p.strong_missing = "no one-device measurement of this implementation at this N";
      if (missing.insert(series_of(p, p.n)).second) {
        study.missing_baselines.push_back(fmt::format(
            "{}: no one-device measurement among the documents, so no speedup or efficiency",
            series_name(p, p.n)));
      }
    }
    if (k > 1 && p.n % static_cast<std::size_t>(k) == 0) {
      const auto it = baselines.find(series_of(p, p.n / static_cast<std::size_t>(k)));
      if (it != baselines.end()) p.weak = weak_figures(p, *it->second);
    }
  }
}

// ---- the audit: rules 1, 5 and 8 of docs/FAIRNESS.md across the documents ----

AuditRule same_problem_across(const ScalingStudy& study) {
  return {.number = 1,
          .title = "Same problem",
          .verdict = RuleVerdict::kept,
          .evidence = fmt::format(
              "{} documents of one problem ({}, seed {}, softening {}); every N two documents "
              "share has the same input hash in both (documents of different problems are "
              "refused)",
              study.sources.size(), study.initial_condition, study.seed, study.softening)};
}

AuditRule same_statistics_across(const ScalingStudy& study) {
  AuditRule rule{.number = 5, .title = "Same statistics"};
  std::size_t timed = 0, disturbed = 0, flagged = 0;
  for (const ScalingPoint& p : study.points) {
    if (!p.timed()) continue;
    ++timed;
    if (!p.disturbance.empty()) ++disturbed;
    if ((p.strong && !p.strong->disturbance.empty()) || (p.weak && !p.weak->disturbance.empty())) {
      ++flagged;
    }
  }
  if (timed == 0) {
    rule.verdict = RuleVerdict::not_applicable;
    rule.evidence = "nothing was timed";
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "{} timed measurements, medians of their repetitions; {} taken on a disturbed machine, and "
      "{} scaling figures resting on one are flagged{}",
      timed, disturbed, flagged,
      std::any_of(study.points.begin(), study.points.end(),
                  [](const ScalingPoint& p) { return p.work == ScalingWork::simulation; })
          ? " (simulations record no conditions of their own)"
          : "");
  return rule;
}

bool names_the_scale(const std::string& label) {
  for (const char* word : {"GPU", "rank", "core", "host"}) {
    if (label.find(word) == std::string::npos) return false;
  }
  return true;
}

AuditRule same_scale_across(const ScalingStudy& study) {
  AuditRule rule{.number = 8, .title = "Same scale"};
  std::size_t figures = 0;
  std::vector<std::string> wrong, unlabelled;
  const auto check = [&](const ScalingPoint& p, const std::string& implementation,
                         const RunScale& baseline, const char* kind) {
    ++figures;
    const bool same_threads =
        p.device == DeviceKind::gpu || baseline.threads_per_rank == p.scale.threads_per_rank;
    if (implementation != p.implementation || baseline.devices() != 1 ||
        baseline.device != p.device || !same_threads) {
      wrong.push_back(
          fmt::format("{} {} at N = {} on {}", kind, p.implementation, p.n, p.scale_label));
    }
  };
  for (const ScalingPoint& p : study.points) {
    if (!names_the_scale(p.scale_label)) unlabelled.push_back(p.scale_label);
    if (p.strong) check(p, p.strong->baseline_implementation, p.strong->baseline_scale, "strong");
    if (p.weak) check(p, p.weak->baseline_implementation, p.weak->baseline_scale, "weak");
  }
  if (!wrong.empty() || !unlabelled.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence =
        !wrong.empty()
            ? fmt::format("efficiencies not against the same implementation on one device: {}",
                          fmt::join(wrong, "; "))
            : fmt::format("labels that do not name GPUs, ranks, cores and hosts: {}",
                          fmt::join(unlabelled, "; "));
    return rule;
  }
  if (figures == 0) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence =
        "no document measured an implementation on one device, so no efficiency is given";
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "all {} speedups and efficiencies are against the same implementation, at the same "
      "threads per rank, on one device (one GPU for GPU formulations, one rank for CPU ones); "
      "CPU and GPU formulations are never set against each other; every label names its GPUs, "
      "ranks, cores and hosts{}",
      figures,
      study.missing_baselines.empty()
          ? ""
          : fmt::format("; {} series without a one-device measurement have none",
                        study.missing_baselines.size()));
  return rule;
}

void audit(ScalingStudy& study) {
  study.audit = {same_problem_across(study), same_statistics_across(study),
                 same_scale_across(study)};
  std::vector<std::string> not_kept, cannot_tell;
  std::size_t applicable = 0;
  for (const AuditRule& rule : study.audit) {
    if (rule.verdict != RuleVerdict::not_applicable) ++applicable;
    const std::string label = fmt::format("{} ({})", rule.number, rule.title);
    if (rule.verdict == RuleVerdict::not_kept) not_kept.push_back(label);
    if (rule.verdict == RuleVerdict::cannot_tell) cannot_tell.push_back(label);
  }
  if (not_kept.empty() && cannot_tell.empty()) {
    study.verdict = fmt::format("all {} applicable rules kept", applicable);
    return;
  }
  std::vector<std::string> parts;
  if (!not_kept.empty()) parts.push_back(fmt::format("not kept: {}", fmt::join(not_kept, ", ")));
  if (!cannot_tell.empty()) {
    parts.push_back(fmt::format("cannot tell: {}", fmt::join(cannot_tell, ", ")));
  }
  study.verdict = fmt::format("{} of {} applicable rules kept; {}",
                              applicable - not_kept.size() - cannot_tell.size(), applicable,
                              fmt::join(parts, "; "));
}

void flag_differences(ScalingStudy& study) {
  std::set<std::string> cpus, gpus, versions;
  for (const ScalingSource& s : study.sources) {
    cpus.insert(s.cpu_model);
    gpus.insert(s.gpu_names.empty() ? "no GPU" : s.gpu_names);
  }
  if (cpus.size() > 1) {
    study.flags.push_back(
        fmt::format("The documents' CPUs differ ({}): part of each ratio is the machine",
                    fmt::join(cpus, "; ")));
  }
  if (gpus.size() > 1) {
    study.flags.push_back(
        fmt::format("The documents' GPUs differ ({}): part of each ratio is the machine",
                    fmt::join(gpus, "; ")));
  }
  for (const ScalingSource& s : study.sources) {
    if (s.interrupted || !s.complete) {
      study.flags.push_back(
          fmt::format("{} did not finish: it holds what it had measured", s.source));
    }
  }
}

}  // namespace

std::string_view to_string(ScalingWork work) {
  return work == ScalingWork::evaluation ? "evaluation" : "simulation";
}

ScalingStudy analyze_scaling(const std::vector<ScalingInput>& inputs) {
  if (inputs.size() < 2) {
    throw UsageError(fmt::format(
        "scaling needs at least 2 results documents (one per rank count or set of GPUs); got {}",
        inputs.size()));
  }
  check_one_problem(inputs);
  check_distinct_scales(inputs);
  ScalingStudy study;
  const RunSettings& first = inputs.front().document.settings;
  study.initial_condition = first.initial_condition;
  study.seed = first.seed;
  study.softening = first.softening;
  for (const ScalingInput& in : inputs) {
    study.sources.push_back(source_of(in));
    if (is_simulation(in.document) && study.dt == 0) study.dt = in.document.settings.dt;
    for (const ResultRecord& r : in.document.results) {
      const ImplementationRecord* impl = find_implementation(in.document, r.implementation);
      if (impl) study.points.push_back(evaluation_point(in, r, *impl));
    }
    for (const SimulationRecord& r : in.document.simulations) {
      study.points.push_back(
          simulation_point(in, r, find_implementation(in.document, r.implementation)));
    }
  }
  // Stable: points of one series and scale keep the order their documents were given in.
  std::stable_sort(
      study.points.begin(), study.points.end(), [](const ScalingPoint& a, const ScalingPoint& b) {
        return std::make_tuple(a.work, a.device, a.implementation, a.precision, a.initial_condition,
                               a.n, a.scale.threads_per_rank, a.scale.devices(), a.scale.ranks) <
               std::make_tuple(b.work, b.device, b.implementation, b.precision, b.initial_condition,
                               b.n, b.scale.threads_per_rank, b.scale.devices(), b.scale.ranks);
      });
  pair_with_baselines(study);
  flag_differences(study);
  audit(study);
  return study;
}

}  // namespace nbody::reports
