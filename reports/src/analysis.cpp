#include "nbody/reports/analysis.hpp"

#include "algorithms.hpp"
#include "analysis_parts.hpp"
#include "answer.hpp"
#include "audit.hpp"
#include "conservation_check.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "nbody/reports/scale.hpp"

namespace nbody::reports {

bool timed_ok(const ResultRecord& r) {
  return r.status == Status::ok && r.kernel && r.kernel_rate;
}

bool timed_all_pairs(const ResultsDocument& doc, const ResultRecord& r) {
  return timed_ok(r) && !is_tree_result(doc, r);
}

RateFigure rate_figure(const ResultsDocument& doc, const ResultRecord& r) {
  const TimingStatistics& t = *r.kernel;
  const double credited = r.interactions_credited;
  const ImplementationRecord* impl = find_implementation(doc, r.implementation);
  std::optional<RunScale> scale;
  if (impl && spans_several_devices(doc.settings)) {
    scale = scale_of(doc.settings, impl->device, r.threads);
  }
  return {.implementation = r.implementation,
          .n = r.n,
          .interactions_per_second = r.kernel_rate->interactions_per_second,
          .low = t.ci_high_s > 0 ? credited / t.ci_high_s : 0,
          .high = t.ci_low_s > 0 ? credited / t.ci_low_s : 0,
          .ci_confidence = t.ci_confidence,
          .disturbance = describe_disturbance(r),
          .scale = scale,
          .scale_label = scale ? describe(*scale) : std::string(),
          .energy = energy_figure(doc, r)};
}

namespace {

// Counted flops of the float32 interaction's instruction mix (3 FADD, 3 FMUL, 6 FFMA: the shared
// physics function's 12 arithmetic instructions; the rsqrt is not a flop), which turns the
// measured mix ceiling (interactions/s) into a FLOP/s roof.
constexpr double kInteractionMixFlops = 18;

// Bytes of input (x, y, z, m) and output (ax, ay, az) per body at `precision`.
double compulsory_bytes_per_body(Precision precision) {
  return precision == Precision::f32 ? 4.0 * 7 : 8.0 * 7;
}

RateRatio ratio_of(const RateFigure& gpu, const RateFigure& cpu) {
  return {.value = gpu.interactions_per_second / cpu.interactions_per_second,
          .low = cpu.high > 0 ? gpu.low / cpu.high : 0,
          .high = cpu.low > 0 ? gpu.high / cpu.low : 0};
}

// The sizes of the run, in the order measured (ascending for the default suite).
std::vector<std::size_t> sizes_of(const ResultsDocument& doc) {
  std::vector<std::size_t> sizes;
  for (const ResultRecord& r : doc.results) {
    if (std::find(sizes.begin(), sizes.end(), r.n) == sizes.end()) sizes.push_back(r.n);
  }
  return sizes;
}

std::vector<Precision> precisions_of(const ResultsDocument& doc) {
  std::vector<Precision> found;
  for (const Precision p : {Precision::f32, Precision::f64}) {
    if (std::any_of(doc.implementations.begin(), doc.implementations.end(),
                    [p](const ImplementationRecord& i) { return i.precision == p; })) {
      found.push_back(p);
    }
  }
  return found;
}

Headline make_headline(const ResultsDocument& doc) {
  Headline headline;
  const auto note_disturbed = [&headline](const std::optional<RateFigure>& f) {
    if (!f || !f->disturbed()) return;
    const bool seen = std::any_of(
        headline.disturbed_figures.begin(), headline.disturbed_figures.end(),
        [&f](const RateFigure& g) { return g.implementation == f->implementation && g.n == f->n; });
    if (!seen) headline.disturbed_figures.push_back(*f);
  };
  for (const Precision precision : precisions_of(doc)) {
    for (const std::size_t n : sizes_of(doc)) {
      HeadlineRow row{.precision = precision, .n = n};
      for (const ResultRecord& r : doc.results) {
        const ImplementationRecord* impl = find_implementation(doc, r.implementation);
        if (r.n != n || !impl || !timed_ok(r) || impl->precision != precision || is_tree(*impl)) {
          continue;
        }
        const bool gpu = impl->device == DeviceKind::gpu;
        if (impl->accuracy_class == AccuracyClass::full && impl->role != Role::tuning_variant) {
          std::optional<RateFigure>& best = gpu ? row.best_gpu : row.best_cpu;
          if (!best || r.kernel_rate->interactions_per_second > best->interactions_per_second) {
            best = rate_figure(doc, r);
          }
        }
        if (impl->role == Role::naive_baseline) {
          (gpu ? row.naive_gpu : row.naive_cpu) = rate_figure(doc, r);
        }
      }
      if (!row.best_cpu && !row.best_gpu) continue;
      if (row.best_cpu && row.best_gpu) row.best_ratio = ratio_of(*row.best_gpu, *row.best_cpu);
      if (row.naive_cpu && row.naive_gpu) {
        row.naive_ratio = ratio_of(*row.naive_gpu, *row.naive_cpu);
      }
      for (const auto* f : {&row.best_cpu, &row.best_gpu, &row.naive_cpu, &row.naive_gpu}) {
        note_disturbed(*f);
      }
      headline.rows.push_back(std::move(row));
    }
  }
  return headline;
}

std::vector<Ladder> make_ladders(const ResultsDocument& doc) {
  std::vector<Ladder> ladders;
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    for (const Precision precision : precisions_of(doc)) {
      std::vector<const ImplementationRecord*> rungs;
      for (const ImplementationRecord& i : doc.implementations) {
        if (i.device == device && i.precision == precision && !is_tree(i) &&
            i.accuracy_class == AccuracyClass::full && i.role != Role::tuning_variant) {
          rungs.push_back(&i);
        }
      }
      // A ladder needs a naive first rung and a second one to climb to.
      if (rungs.size() < 2 || rungs.front()->role != Role::naive_baseline) continue;
      for (const std::size_t n : sizes_of(doc)) {
        Ladder ladder{.device = device, .precision = precision, .n = n};
        std::optional<double> previous, naive;
        int measured = 0;
        for (const ImplementationRecord* rung : rungs) {
          LadderStep step{.implementation = rung->name};
          const auto it = std::find_if(
              doc.results.begin(), doc.results.end(),
              [&](const ResultRecord& r) { return r.implementation == rung->name && r.n == n; });
          if (it == doc.results.end()) {
            step.reason = "not run at this N";
          } else if (!timed_ok(*it)) {
            step.reason = it->reason.empty() ? std::string(to_string(it->status)) : it->reason;
          } else {
            const double rate = it->kernel_rate->interactions_per_second;
            step.interactions_per_second = rate;
            if (previous) step.over_previous = rate / *previous;
            if (rung == rungs.front()) naive = rate;
            if (naive) step.over_naive = rate / *naive;
            previous = rate;
            ++measured;
          }
          ladder.steps.push_back(std::move(step));
        }
        if (measured >= 2) ladders.push_back(std::move(ladder));
      }
    }
  }
  return ladders;
}

std::string ceiling_label(const CeilingEntry& e) {
  if (e.name == kGpuFp32FlopsCeiling) return "FP32 FMA";
  if (e.name == kGpuFp64FlopsCeiling) return "FP64 FMA";
  if (e.name == kGpuMemoryBandwidthCeiling) return "DRAM bandwidth (device copy)";
  if (e.name == kCpuMemoryBandwidthCeiling) return "DRAM bandwidth (triad)";
  if (e.name == kGpuInteractionMixCeiling) return "FP32 interaction mix";
  if (!e.isa.empty()) {
    const bool f64 = e.name.starts_with("cpu.fp64_flops");
    return fmt::format("{} {} FMA, {}", e.isa, f64 ? "FP64" : "FP32",
                       e.threads && *e.threads > 1 ? fmt::format("{} cores", *e.threads)
                                                   : std::string("one core"));
  }
  return e.name;
}

// The ISA of the widest CPU FMA ceilings (most float32 lanes; on a tie the higher rate): on any
// processor, whatever its ISAs are called.
std::string widest_ceiling_isa(const std::vector<CeilingEntry>& entries) {
  const CeilingEntry* widest = nullptr;
  for (const CeilingEntry& e : entries) {
    if (e.device != DeviceKind::cpu || e.isa.empty() || !e.name.starts_with("cpu.fp32_flops")) {
      continue;
    }
    if (!widest || e.lanes > widest->lanes ||
        (e.lanes == widest->lanes && e.value > widest->value)) {
      widest = &e;
    }
  }
  return widest ? widest->isa : std::string();
}

std::vector<Roofline> make_rooflines(const ResultsDocument& doc) {
  std::vector<Roofline> rooflines;
  for (const DeviceKind device : {DeviceKind::cpu, DeviceKind::gpu}) {
    Roofline roof{.device = device};
    roof.device_name =
        device == DeviceKind::cpu
            ? doc.machine.cpu_model
            : (doc.machine.gpus.empty() ? std::string("GPU") : doc.machine.gpus.front().name);
    if (doc.ceilings) {
      const bool flagged = !doc.ceilings->warnings.empty();
      const bool cpu_float64 =
          std::any_of(doc.implementations.begin(), doc.implementations.end(),
                      [](const ImplementationRecord& i) {
                        return i.device == DeviceKind::cpu && i.precision == Precision::f64;
                      });
      const std::string widest = widest_ceiling_isa(doc.ceilings->entries);
      for (const CeilingEntry& e : doc.ceilings->entries) {
        if (e.device != device) continue;
        // The CPU's roofs: the widest ISA on all cores and on one; narrower ISAs add clutter.
        if (!e.isa.empty() && e.isa != widest) continue;
        // Float64 roofs only where a float64 CPU kernel ran (older files have none of either).
        if (e.name.starts_with("cpu.fp64_flops") && !cpu_float64) continue;
        // A link between GPUs is no roof of one GPU's kernels (its bandwidth is not DRAM's).
        if (is_all_gather_ceiling(e.name)) continue;
        if (e.unit == "FLOP/s" || e.unit == "B/s") {
          roof.ceilings.push_back({.name = e.name,
                                   .label = ceiling_label(e),
                                   .value = e.value,
                                   .memory = e.unit == "B/s",
                                   .flagged = flagged});
        } else if (e.name == kGpuInteractionMixCeiling) {
          roof.ceilings.push_back({.name = e.name,
                                   .label = ceiling_label(e),
                                   .value = e.value * kInteractionMixFlops,
                                   .memory = false,
                                   .flagged = flagged});
        }
      }
    }
    for (const ResultRecord& r : doc.results) {
      const ImplementationRecord* impl = find_implementation(doc, r.implementation);
      if (!impl || impl->device != device || is_tree(*impl) || !r.counters ||
          !r.counters->available()) {
        continue;
      }
      const DerivedFigures& d = r.counters->derived;
      if (!d.gflops_counted) continue;
      RooflinePoint point{.implementation = r.implementation,
                          .n = r.n,
                          .flops_per_second = *d.gflops_counted * 1e9};
      point.flops_per_dram_byte = d.arithmetic_intensity_flops_per_dram_byte;
      if (d.l2_bytes_per_second && *d.l2_bytes_per_second > 0) {
        point.flops_per_l2_byte = point.flops_per_second / *d.l2_bytes_per_second;
      }
      if (r.kernel_rate) point.flops_per_second_at_20 = r.kernel_rate->gflops_at_20 * 1e9;
      const double flops_per_interaction =
          d.counted_flops_per_interaction.value_or(kConventionalFlopsPerInteraction);
      point.flops_per_compulsory_byte = flops_per_interaction * static_cast<double>(r.n) /
                                        compulsory_bytes_per_body(impl->precision);
      roof.points.push_back(std::move(point));
    }
    if (!roof.points.empty()) rooflines.push_back(std::move(roof));
  }
  return rooflines;
}

std::vector<PeakFractions> make_peak_fractions(const ResultsDocument& doc) {
  std::vector<PeakFractions> fractions;
  for (const ResultRecord& r : doc.results) {
    if (!r.counters || is_tree_result(doc, r)) continue;
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    PeakFractions f{.implementation = r.implementation,
                    .device = impl ? impl->device : DeviceKind::cpu,
                    .n = r.n,
                    .counter_source = r.counters->source};
    if (!r.counters->available()) {
      f.unavailable_reason = r.counters->unavailable_reason;
    } else {
      const DerivedFigures& d = r.counters->derived;
      f.counted_flops_per_interaction = d.counted_flops_per_interaction;
      f.gflops_counted = d.gflops_counted;
      f.of_measured_peak = d.fraction_of_measured_peak;
      f.of_datasheet_peak = d.fraction_of_datasheet_peak;
      f.instructions_per_interaction = d.instructions_per_interaction;
      f.instruction_bound_interactions_per_second = d.instruction_bound_interactions_per_second;
      f.of_own_bound = d.fraction_of_instruction_bound;
      f.of_interaction_mix_ceiling = d.fraction_of_interaction_mix_ceiling;
      f.dram_bytes_per_second = d.dram_bytes_per_second;
      f.flops_per_dram_byte = d.arithmetic_intensity_flops_per_dram_byte;
      f.achieved_occupancy = d.achieved_occupancy;
    }
    fractions.push_back(std::move(f));
  }
  return fractions;
}

std::vector<SkippedGroup> make_skipped(const ResultsDocument& doc) {
  std::vector<SkippedGroup> groups;
  for (const ResultRecord& r : doc.results) {
    if (r.status != Status::skipped) continue;
    auto it = std::find_if(groups.begin(), groups.end(), [&r](const SkippedGroup& g) {
      return g.implementation == r.implementation && g.reason == r.reason;
    });
    if (it == groups.end()) {
      groups.push_back({.implementation = r.implementation, .reason = r.reason, .sizes = {}});
      it = std::prev(groups.end());
    }
    it->sizes.push_back(r.n);
  }
  return groups;
}

}  // namespace

std::string describe_disturbance(const ResultRecord& r) {
  if (!r.kernel || !r.kernel->conditions || r.kernel->conditions->disturbances.empty()) return {};
  const MeasurementConditions& c = *r.kernel->conditions;
  return fmt::format("{} ({} attempt{})", fmt::join(c.disturbances, "; "), c.attempts,
                     c.attempts == 1 ? "" : "s");
}

bool PeakFractions::above_one() const {
  for (const auto& f :
       {of_measured_peak, of_datasheet_peak, of_own_bound, of_interaction_mix_ceiling}) {
    if (f && *f > 1.0) return true;
  }
  return false;
}

const ImplementationRecord* find_implementation(const ResultsDocument& document,
                                                const std::string& name) {
  for (const ImplementationRecord& impl : document.implementations) {
    if (impl.name == name) return &impl;
  }
  return nullptr;
}

namespace {

// A step's part under a picosecond is rounding (the host's other = step - force - integration),
// not time: the rows carry it as zero.
constexpr double kStepRoundingFloor_s = 1e-12;

StepSplit without_rounding(StepSplit p) {
  for (double* part : {&p.step_s, &p.force_s, &p.tree_build_s, &p.integration_s, &p.other_s,
                       &p.diagnostics_s, &p.snapshots_s}) {
    if (std::abs(*part) < kStepRoundingFloor_s) *part = 0;
  }
  return p;
}

std::optional<StepShares> step_shares(const StepSplit& p) {
  // Negative parts (timing noise around zero) take no share.
  const auto part = [](double s) { return std::isfinite(s) && s > 0 ? s : 0.0; };
  const double tree_build = std::min(part(p.tree_build_s), part(p.force_s));
  StepShares shares{.force = part(p.force_s) - tree_build,
                    .tree_build = tree_build,
                    .integration = part(p.integration_s),
                    .other = part(p.other_s),
                    .diagnostics = part(p.diagnostics_s),
                    .snapshots = part(p.snapshots_s)};
  shares.total_s = shares.force + shares.tree_build + shares.integration + shares.other +
                   shares.diagnostics + shares.snapshots;
  if (!(shares.total_s > 0)) return std::nullopt;
  for (double* share : {&shares.force, &shares.tree_build, &shares.integration, &shares.other,
                        &shares.diagnostics, &shares.snapshots}) {
    *share /= shares.total_s;
  }
  return shares;
}

std::vector<IntegrationRow> make_integration_rows(const ResultsDocument& doc) {
  std::vector<IntegrationRow> rows;
  for (const SimulationRecord& r : doc.simulations) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    IntegrationRow row{.implementation = r.implementation,
                       .n = r.n,
                       .status = r.status,
                       .reason = r.reason,
                       .steps = r.steps,
                       .per_step = without_rounding(r.per_step),
                       .application_step_s = r.steps_per_second > 0 ? 1 / r.steps_per_second : 0,
                       .steps_per_second = r.steps_per_second,
                       .max_relative_energy_error = r.max_relative_energy_error,
                       .divergence = r.divergence};
    if (impl) {
      row.device = impl->device;
      row.precision = impl->precision;
      row.accuracy_class = impl->accuracy_class;
    }
    if (row.application_step_s > 0) row.force_share = r.per_step.force_s / row.application_step_s;
    for (const ConservationSample& c : r.conservation) {
      row.energy_errors.push_back(
          {.step = c.step, .time = c.time, .relative_energy_error = c.relative_energy_error});
    }
    std::sort(row.energy_errors.begin(), row.energy_errors.end(),
              [](const EnergyErrorPoint& x, const EnergyErrorPoint& y) { return x.step < y.step; });
    row.shares = step_shares(row.per_step);
    row.conservation = check_conservation(r, impl, doc.settings);
    if (r.energy && r.energy->evaluations > 0 && r.energy->joules > 0) {
      row.joules_per_step = r.energy->per_evaluation_j;
      row.mean_watts = r.energy->mean_watts;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<ApplicationSpeedup> make_application_speedups(const std::vector<IntegrationRow>& rows) {
  // (precision, N) -> fastest full-accuracy finished row per device.
  std::map<std::pair<Precision, std::size_t>, std::map<DeviceKind, const IntegrationRow*>> best;
  for (const IntegrationRow& row : rows) {
    if (row.status != Status::ok || row.accuracy_class != AccuracyClass::full ||
        row.application_step_s <= 0 || row.per_step.force_s <= 0) {
      continue;
    }
    const IntegrationRow*& slot = best[{row.precision, row.n}][row.device];
    if (!slot || row.application_step_s < slot->application_step_s) slot = &row;
  }
  std::vector<ApplicationSpeedup> speedups;
  for (const auto& [key, by_device] : best) {
    const auto cpu = by_device.find(DeviceKind::cpu);
    const auto gpu = by_device.find(DeviceKind::gpu);
    if (cpu == by_device.end() || gpu == by_device.end()) continue;
    speedups.push_back(
        {.precision = key.first,
         .n = key.second,
         .cpu = cpu->second->implementation,
         .gpu = gpu->second->implementation,
         .kernel_speedup = cpu->second->per_step.force_s / gpu->second->per_step.force_s,
         .application_speedup = cpu->second->application_step_s / gpu->second->application_step_s});
  }
  return speedups;
}

RunSummary make_summary(const ResultsDocument& doc) {
  RunSummary summary;
  summary.measurements = doc.results.size();
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::ok) ++summary.ok;
    if (r.status == Status::failed) ++summary.failed;
    if (r.status == Status::skipped) ++summary.skipped;
  }
  summary.complete = doc.complete;
  summary.interrupted = doc.interrupted;
  summary.budget_s = doc.settings.budget_s;
  if (const auto it = doc.phase_seconds.find("planned"); it != doc.phase_seconds.end()) {
    summary.planned_s = it->second;
    summary.has_plan = true;
  }
  const auto phase = [&](const char* name) {
    const auto it = doc.phase_seconds.find(name);
    return it == doc.phase_seconds.end() ? 0.0 : it->second;
  };
  summary.measured_s = phase("measurements");
  summary.planning_s = phase("planning");
  summary.ceilings_s = phase("ceilings");
  if (const auto it = doc.phase_seconds.find("planned_ran"); it != doc.phase_seconds.end()) {
    summary.planned_ran_s = it->second;
    summary.measured_s -= summary.planning_s;  // the estimate is of the measurements alone
  }
  summary.timed_again = static_cast<std::size_t>(
      std::count_if(doc.results.begin(), doc.results.end(), [](const ResultRecord& r) {
        return r.kernel && r.kernel->conditions && r.kernel->conditions->attempts > 1;
      }));
  summary.left_out_by_plan = static_cast<std::size_t>(
      std::count_if(doc.results.begin(), doc.results.end(), [](const ResultRecord& r) {
        return r.status == Status::skipped && r.reason.starts_with("left out");
      }));
  return summary;
}

std::vector<AccuracyPoint> make_accuracy(const ResultsDocument& doc) {
  std::vector<AccuracyPoint> points;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    // A tree's accuracy stands in the tree table, beside its time (rule 9).
    if (!r.accuracy || !impl || is_tree(*impl)) continue;
    points.push_back({.implementation = r.implementation,
                      .n = r.n,
                      .device = impl->device,
                      .precision = impl->precision,
                      .accuracy_class = impl->accuracy_class,
                      .relative_l2 = r.accuracy->metrics.relative_l2,
                      .max_relative = r.accuracy->metrics.max_relative,
                      .relative_l2_bound = r.accuracy->relative_l2_bound,
                      .passed = r.accuracy->passed,
                      .interactions_per_second =
                          timed_ok(r)
                              ? std::optional<double>(r.kernel_rate->interactions_per_second)
                              : std::nullopt});
  }
  return points;
}

std::vector<EndToEndRow> make_end_to_end(const ResultsDocument& doc) {
  std::vector<EndToEndRow> rows;
  for (const ResultRecord& r : doc.results) {
    if (!timed_all_pairs(doc, r) || !r.end_to_end) continue;
    rows.push_back({.implementation = r.implementation,
                    .n = r.n,
                    .kernel_s = r.kernel->median_s,
                    .end_to_end_s = r.end_to_end->median_s});
  }
  return rows;
}

// Each implementation's repetitions at its largest timed N, in registration order.
std::vector<RepetitionSamples> make_repetitions(const ResultsDocument& doc) {
  std::map<std::string, const ResultRecord*> largest;
  for (const ResultRecord& r : doc.results) {
    if (!timed_all_pairs(doc, r)) continue;
    const ResultRecord*& best = largest[r.implementation];
    if (!best || r.n > best->n) best = &r;
  }
  std::vector<RepetitionSamples> repetitions;
  for (const ImplementationRecord& impl : doc.implementations) {
    const auto it = largest.find(impl.name);
    if (it == largest.end()) continue;
    const ResultRecord& r = *it->second;
    RepetitionSamples samples{.implementation = r.implementation,
                              .n = r.n,
                              .interactions_per_second = {},
                              .median = r.kernel_rate->interactions_per_second,
                              .noisy = r.kernel->noisy};
    for (const double s : r.kernel->samples_s) {
      if (s > 0) samples.interactions_per_second.push_back(r.interactions_credited / s);
    }
    repetitions.push_back(std::move(samples));
  }
  return repetitions;
}

}  // namespace

Analysis analyze(const ResultsDocument& doc) {
  Analysis a;
  a.integration = make_integration_rows(doc);
  a.application_speedups = make_application_speedups(a.integration);
  a.summary = make_summary(doc);
  a.headline = make_headline(doc);
  a.sides = measured_sides(doc);
  a.algorithms = compare_algorithms(doc);
  a.energy = analyze_energy(doc);
  add_energy_ratios(a);
  a.audit = make_audit(doc, a.headline, a.sides, a.algorithms, a.integration, a.energy);
  a.answer = make_answer(doc, a);  // after the energy ratios: its last line quotes them
  a.ladders = make_ladders(doc);
  a.rooflines = make_rooflines(doc);
  a.peak_fractions = make_peak_fractions(doc);
  a.skipped = make_skipped(doc);
  a.accuracy = make_accuracy(doc);
  a.end_to_end = make_end_to_end(doc);
  a.repetitions = make_repetitions(doc);
  return a;
}

}  // namespace nbody::reports
