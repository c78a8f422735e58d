#include "nbody/reports/analysis.hpp"

#include "conservation_check.hpp"
#include "nbody/reports/combined_sides.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "nbody/reports/scale.hpp"

namespace nbody::reports {
namespace {

// Counted flops of the float32 interaction's instruction mix (3 FADD, 3 FMUL, 6 FFMA: the shared
// physics function's 12 arithmetic instructions; the rsqrt is not a flop), which turns the
// measured mix ceiling (interactions/s) into a FLOP/s roof.
constexpr double kInteractionMixFlops = 18;

// Bytes of input (x, y, z, m) and output (ax, ay, az) per body at `precision`.
double compulsory_bytes_per_body(Precision precision) {
  return precision == Precision::f32 ? 4.0 * 7 : 8.0 * 7;
}

bool timed_ok(const ResultRecord& r) {
  return r.status == Status::ok && r.kernel && r.kernel_rate;
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
          .scale_label = scale ? describe(*scale) : std::string()};
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
        if (r.n != n || !impl || !timed_ok(r) || impl->precision != precision) continue;
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
        if (i.device == device && i.precision == precision &&
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
      for (const CeilingEntry& e : doc.ceilings->entries) {
        if (e.device != device) continue;
        // The CPU's roofs: the widest ISA on all cores and on one; narrower ISAs add clutter.
        if (!e.isa.empty() && e.isa != "avx512f" && e.isa != "avx2") continue;
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
      if (!impl || impl->device != device || !r.counters || !r.counters->available()) continue;
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
    if (!r.counters) continue;
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

// ---- The fairness audit: one function per rule of docs/FAIRNESS.md ----

std::string names(const std::vector<std::string>& items, std::size_t at_most = 4) {
  if (items.size() <= at_most) return fmt::format("{}", fmt::join(items, ", "));
  return fmt::format("{} and {} more",
                     fmt::join(items.begin(), items.begin() + static_cast<long>(at_most), ", "),
                     items.size() - at_most);
}

AuditRule same_problem(const ResultsDocument& doc) {
  AuditRule rule{.number = 1, .title = "Same problem"};
  if (doc.inputs.empty()) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = "the results record no inputs";
    return rule;
  }
  std::vector<std::string> mismatched;
  std::set<std::string> conditions;
  for (const InputRecord& in : doc.inputs) conditions.insert(in.initial_condition);
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::skipped) continue;
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    const auto input = std::find_if(doc.inputs.begin(), doc.inputs.end(), [&r](const auto& in) {
      return in.n == r.n && in.initial_condition == r.initial_condition;
    });
    if (!impl || input == doc.inputs.end()) {
      mismatched.push_back(fmt::format("{} at N = {} (no input recorded)", r.implementation, r.n));
      continue;
    }
    const std::string& expected =
        impl->precision == Precision::f32 ? input->hash_f32 : input->hash_f64;
    if (r.input_hash != expected) {
      mismatched.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (!mismatched.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence =
        fmt::format("input hash differs from the run's input for {}", names(mismatched));
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "one generated input per N ({}, seed {}, softening {}) at {} sizes; every measurement's "
      "input hash is its precision's hash of that input{}",
      fmt::join(conditions, ", "), doc.settings.seed, doc.settings.softening, doc.inputs.size(),
      doc.sides_from.empty() ? std::string() : "; " + sides_from_sentence(doc.sides_from));
  return rule;
}

// Rule 2 of a simulation: every simulation kept energy and momentum within its bounds.
AuditRule simulations_within_bounds(const std::vector<IntegrationRow>& rows) {
  AuditRule rule{.number = 2, .title = "Same precision, same accuracy bar"};
  std::size_t checked = 0;
  std::vector<std::string> outside;
  for (const IntegrationRow& r : rows) {
    if (!r.conservation) continue;
    ++checked;
    if (!r.conservation->within()) {
      outside.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (checked == 0) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = "no simulation kept two conservation samples";
    return rule;
  }
  if (!outside.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format(
        "{} of {} simulations kept energy or momentum outside their bounds, not to be trusted: "
        "{} (figures and likely causes under Conservation)",
        outside.size(), checked, names(outside));
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "all {} simulations kept energy within their bounds (|ΔE/E| at most {:.0e}, and within 2 × "
      "the float64 leapfrog's + 4u where it was followed) and momentum within u √steps",
      checked, kTrustedEnergyError);
  return rule;
}

AuditRule same_precision_and_accuracy(const ResultsDocument& doc, const Headline& headline,
                                      const MeasuredSides& sides) {
  AuditRule rule{.number = 2, .title = "Same precision, same accuracy bar"};
  std::size_t validated = 0, passed = 0;
  std::vector<std::string> failed, approximate;
  for (const ResultRecord& r : doc.results) {
    if (!r.accuracy) continue;
    ++validated;
    if (r.accuracy->passed) {
      ++passed;
    } else {
      failed.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  for (const ImplementationRecord& i : doc.implementations) {
    if (i.accuracy_class == AccuracyClass::approximate) approximate.push_back(i.name);
  }
  // Ranked figures: those the headline uses. Each must be full accuracy, passed, and compared
  // with a figure of its own precision (the rows are per precision by construction).
  std::vector<std::string> wrongly_ranked;
  for (const HeadlineRow& row : headline.rows) {
    for (const auto* f : {&row.best_cpu, &row.best_gpu, &row.naive_cpu, &row.naive_gpu}) {
      if (!*f) continue;
      const ImplementationRecord* impl = find_implementation(doc, (*f)->implementation);
      if (!impl || impl->accuracy_class != AccuracyClass::full ||
          impl->precision != row.precision) {
        wrongly_ranked.push_back((*f)->implementation);
      }
    }
  }
  if (validated == 0) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = "no result was validated against the float64 reference";
    return rule;
  }
  if (!wrongly_ranked.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format("ranked although approximate or of another precision: {}",
                                names(wrongly_ranked));
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "{} of {} results within their tolerance of the float64 reference{}; {}{}", passed, validated,
      failed.empty() ? std::string()
                     : fmt::format(" ({} failed and not ranked: {})", failed.size(), names(failed)),
      sides.compares() ? "ratios pair float32 with float32 and float64 with float64"
                       : fmt::format("no ratio was formed ({})", sides.missing_side),
      approximate.empty()
          ? std::string()
          : fmt::format("; approximate class ({}) shown apart, never ranked", names(approximate)));
  return rule;
}

// The widest SIMD ISA among the machine's features, in the suite's spelling.
std::string widest_isa(const MachineRecord& m) {
  for (const char* isa : {"avx512f", "avx2", "sse4.2"}) {
    if (std::find(m.isa_features.begin(), m.isa_features.end(), isa) != m.isa_features.end()) {
      return isa;
    }
  }
  return {};
}

AuditRule same_effort(const ResultsDocument& doc, const Headline& headline,
                      const MeasuredSides& sides) {
  AuditRule rule{.number = 3, .title = "Same effort"};
  const std::string widest = widest_isa(doc.machine);
  std::vector<std::string> short_of_machine, used;
  bool any_best_cpu = false;
  for (const HeadlineRow& row : headline.rows) {
    if (!row.best_cpu) continue;
    any_best_cpu = true;
    const auto r = std::find_if(doc.results.begin(), doc.results.end(), [&row](const auto& x) {
      return x.implementation == row.best_cpu->implementation && x.n == row.n;
    });
    if (r == doc.results.end()) continue;
    const auto isa = r->details.find("isa");
    const std::string isa_used = isa == r->details.end() ? std::string("scalar") : isa->second;
    const std::string description =
        fmt::format("{} at N = {} ({} threads, {})", r->implementation, r->n, r->threads, isa_used);
    if (r->threads < doc.machine.logical_cpus || (!widest.empty() && isa_used != widest)) {
      short_of_machine.push_back(description);
    } else if (used.empty()) {
      used.push_back(description);
    }
  }
  const bool naive_both = std::any_of(headline.rows.begin(), headline.rows.end(),
                                      [](const HeadlineRow& r) { return r.naive_ratio; });
  if (!any_best_cpu) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = sides.cpu ? "no CPU result to check" : sides.missing;
    return rule;
  }
  if (!short_of_machine.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format(
        "the best CPU figure did not use all {} logical CPUs and the widest ISA ({}): {}",
        doc.machine.logical_cpus, widest.empty() ? "unknown" : widest, names(short_of_machine, 2));
    return rule;
  }
  const std::string cpu_side = fmt::format(
      "the best CPU used every one of the {} logical CPUs and the widest ISA the machine has "
      "(e.g. {})",
      doc.machine.logical_cpus, used.empty() ? widest : used.front());
  if (!sides.compares()) {
    // Effort is the same only beside another side's best: one side alone cannot show it.
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence =
        fmt::format("{}, so no best stands against the CPU's; {}", sides.missing, cpu_side);
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "{}; headline ratios are best/best and naive/naive{}; each implementation's optimizations "
      "are listed",
      cpu_side, naive_both ? "" : " (no size has both naive baselines)");
  return rule;
}

AuditRule same_accounting(const ResultsDocument& doc, const MeasuredSides& sides) {
  AuditRule rule{.number = 4, .title = "Same accounting"};
  std::vector<std::string> wrong, symmetric, missing_end_to_end;
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (!impl) continue;
    const double n = static_cast<double>(r.n);
    if (r.interactions_credited != n * n) wrong.push_back(r.implementation);
    if (impl->pairs == PairScheme::symmetric &&
        std::find(symmetric.begin(), symmetric.end(), impl->name) == symmetric.end()) {
      symmetric.push_back(impl->name);
    }
    if (impl->device == DeviceKind::gpu && timed_ok(r) && !r.end_to_end) {
      missing_end_to_end.push_back(fmt::format("{} at N = {}", r.implementation, r.n));
    }
  }
  if (!wrong.empty() || !missing_end_to_end.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence =
        !wrong.empty()
            ? fmt::format("credited other than N² interactions: {}", names(wrong))
            : fmt::format("GPU figures without an end-to-end time: {}", names(missing_end_to_end));
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "N² interactions credited to every measurement{}; FLOP/s at 20 per interaction and as "
      "counted, labelled{}",
      symmetric.empty() ? std::string()
                        : fmt::format(" (symmetric kernels {} evaluate N(N−1)/2 pairs and say so)",
                                      names(symmetric)),
      sides.gpu ? "; GPU time kernel-only and end-to-end" : "");
  return rule;
}

AuditRule same_statistics(const ResultsDocument& doc, const MeasuredSides& sides,
                          std::vector<RateFigure>& disturbed) {
  AuditRule rule{.number = 5, .title = "Same statistics"};
  std::size_t timed = 0, noisy = 0, without_conditions = 0;
  int fewest_repetitions = 0;
  for (const ResultRecord& r : doc.results) {
    if (!timed_ok(r)) continue;
    ++timed;
    if (r.kernel->noisy) ++noisy;
    if (!r.kernel->conditions) ++without_conditions;
    if (fewest_repetitions == 0 || r.kernel->repetitions < fewest_repetitions) {
      fewest_repetitions = r.kernel->repetitions;
    }
    const RateFigure figure = rate_figure(doc, r);
    if (figure.disturbed()) disturbed.push_back(figure);
  }
  if (timed == 0) {
    rule.verdict = RuleVerdict::not_applicable;
    rule.evidence = "nothing was timed";
    return rule;
  }
  const char* clocks = sides.compares() ? "device events on the GPU, a steady clock on the CPU"
                       : sides.gpu      ? "device events on the GPU"
                                        : "a steady clock on the CPU";
  const std::string statistics = fmt::format(
      "{} timings by one runner ({}), warm-up discarded, at least {} repetitions each, medians "
      "with confidence intervals; {} flagged noisy (cv above 5%)",
      timed, clocks, fewest_repetitions, noisy);
  if (without_conditions > 0) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = fmt::format(
        "{}; {} timings record no conditions (a file older than schema 3), so contention cannot "
        "be ruled out",
        statistics, without_conditions);
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  if (disturbed.empty()) {
    rule.evidence = statistics + "; no timing was disturbed by other processes or GPU clocks";
  } else {
    std::vector<std::string> named;
    for (const RateFigure& f : disturbed) {
      named.push_back(fmt::format("{} at N = {}", f.implementation, f.n));
    }
    rule.evidence = fmt::format(
        "{}; {} timings were disturbed (CPU contended or GPU clocks held down), re-measured and "
        "still flagged: {}",
        statistics, disturbed.size(), names(named));
  }
  return rule;
}

// Warnings of the form "what: why", said once per distinct why: "a; b: why".
std::string summarize(const std::vector<std::string>& warnings) {
  std::vector<std::pair<std::vector<std::string>, std::string>> by_reason;
  for (const std::string& w : warnings) {
    const auto colon = w.find(": ");
    const std::string what = colon == std::string::npos ? w : w.substr(0, colon);
    const std::string why = colon == std::string::npos ? std::string() : w.substr(colon + 2);
    auto it = std::find_if(by_reason.begin(), by_reason.end(),
                           [&why](const auto& group) { return group.second == why; });
    if (it == by_reason.end()) {
      by_reason.push_back({{}, why});
      it = std::prev(by_reason.end());
    }
    it->first.push_back(what);
  }
  std::vector<std::string> parts;
  for (const auto& [whats, why] : by_reason) {
    parts.push_back(fmt::format("{}{}", fmt::join(whats, "; "), why.empty() ? "" : ": " + why));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

AuditRule same_ceilings(const ResultsDocument& doc) {
  AuditRule rule{.number = 6, .title = "Same ceilings"};
  const bool kernels_ceilings =
      doc.ceilings &&
      std::any_of(doc.ceilings->entries.begin(), doc.ceilings->entries.end(),
                  [](const CeilingEntry& e) { return !is_all_gather_ceiling(e.name); });
  if (!kernels_ceilings) {
    rule.verdict = RuleVerdict::cannot_tell;
    rule.evidence = "no ceilings were measured (--no-counters): no fraction of peak is given";
    // Several GPUs without counters still measure the link between them (the scaling model's).
    if (doc.ceilings) rule.evidence += "; only the all-gather between the GPUs was";
    return rule;
  }
  const Ceilings& c = *doc.ceilings;
  // Two runs' sides: each side's ceilings were checked against its own run when combined.
  if (doc.sides_from.empty() && (c.machine.hostname != doc.machine.hostname ||
                                 c.machine.cpu_model != doc.machine.cpu_model)) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format("the ceilings were measured on {} ({}), not on this machine",
                                c.machine.hostname, c.machine.cpu_model);
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "{} ceilings measured on {}; each kernel also divided by its own instruction bound{}",
      c.entries.size(),
      doc.sides_from.empty()
          ? fmt::format("this machine ({}{})", c.from_cache ? "cached " : "", c.measured_at)
          : std::string("each side's own machine, by its own run"),
      c.warnings.empty() ? std::string()
                         : fmt::format("; flagged as possibly low: {}", summarize(c.warnings)));
  return rule;
}

AuditRule full_disclosure(const ResultsDocument& doc) {
  AuditRule rule{.number = 7, .title = "Full disclosure"};
  std::vector<std::string> missing;
  if (doc.machine.cpu_model.empty()) missing.push_back("CPU model");
  if (doc.build.cxx_compiler.empty()) missing.push_back("compiler");
  if (doc.command_line.empty()) missing.push_back("command line");
  const bool gpu_results =
      std::any_of(doc.results.begin(), doc.results.end(), [&doc](const ResultRecord& r) {
        const ImplementationRecord* impl = find_implementation(doc, r.implementation);
        return impl && impl->device == DeviceKind::gpu && r.status == Status::ok;
      });
  if (gpu_results && doc.machine.gpus.empty()) missing.push_back("GPU description");
  std::size_t unexplained = 0, skipped = 0;
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::skipped) ++skipped;
    if (r.status != Status::ok && r.reason.empty()) ++unexplained;
  }
  if (unexplained > 0) missing.push_back(fmt::format("reasons of {} measurements", unexplained));
  if (!missing.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format("missing: {}", fmt::join(missing, ", "));
    return rule;
  }
  rule.verdict = RuleVerdict::kept;
  rule.evidence = fmt::format(
      "machine ({}{}), build ({}) and command (`{}`) recorded; {} skipped measurements listed "
      "with their reasons",
      doc.machine.cpu_model,
      doc.machine.gpus.empty() ? std::string() : ", " + doc.machine.gpus.front().name,
      doc.build.cxx_compiler, fmt::join(doc.command_line, " "), skipped);
  return rule;
}

// The most ranks any one host ran: a host's share of the run.
int ranks_per_host(const RunSettings& settings) {
  if (settings.rank_hosts.empty()) return std::max(1, settings.ranks);
  std::map<std::string, int> ranks;
  int most = 0;
  for (const std::string& host : settings.rank_hosts) most = std::max(most, ++ranks[host]);
  return most;
}

// Rule 8 in one document: applicable where the run spanned several devices (ranks, or GPUs driven
// by one rank). Every implementation ran on the same ranks and hosts, so K hosts meet K hosts;
// what remains is each side's share of a host: all its cores against all its GPUs.
AuditRule same_scale(const ResultsDocument& doc, const Headline& headline,
                     const MeasuredSides& sides) {
  AuditRule rule{.number = 8, .title = "Same scale"};
  if (!spans_several_devices(doc.settings)) {
    rule.verdict = RuleVerdict::not_applicable;
    rule.evidence = sides.compares()
                        ? "one CPU host against one GPU: no multi-device comparison in this run"
                        : fmt::format(
                              "one device, one side ({}): no multi-device comparison in "
                              "this run",
                              sides.missing_side);
    return rule;
  }
  const int host_ranks = ranks_per_host(doc.settings);
  const int host_cpus = doc.machine.logical_cpus;
  const int host_gpus = static_cast<int>(doc.machine.gpus.size());
  std::vector<std::string> unlabelled, unlike, paired;
  const auto whole_host = [&](const RateFigure& f) {
    const RunScale& s = *f.scale;
    if (s.device == DeviceKind::cpu) return host_ranks * s.threads_per_rank >= host_cpus;
    return host_gpus == 0 || host_ranks * (s.gpus / s.ranks) >= host_gpus;
  };
  const auto share = [&](const RateFigure& f) {
    const RunScale& s = *f.scale;
    return s.device == DeviceKind::cpu
               ? fmt::format("{} on {} of the host's {} cores", f.implementation,
                             host_ranks * s.threads_per_rank, host_cpus)
               : fmt::format("{} on {} of the host's {} GPUs", f.implementation,
                             host_ranks * (s.gpus / s.ranks), host_gpus);
  };
  for (const HeadlineRow& row : headline.rows) {
    for (const auto* f : {&row.best_cpu, &row.best_gpu, &row.naive_cpu, &row.naive_gpu}) {
      if (*f && (!(*f)->scale || (*f)->scale_label.empty())) {
        unlabelled.push_back(fmt::format("{} at N = {}", (*f)->implementation, row.n));
      }
    }
    const auto pair = [&](const std::optional<RateFigure>& cpu,
                          const std::optional<RateFigure>& gpu) {
      if (!cpu || !gpu || !cpu->scale || !gpu->scale) return;
      const std::string what = fmt::format("{} N = {}: {} against {}", to_string(row.precision),
                                           row.n, share(*gpu), share(*cpu));
      (whole_host(*cpu) && whole_host(*gpu) ? paired : unlike).push_back(what);
    };
    // Best against best only: the naive versions are one thread per rank by definition (rule 3),
    // and their ratio pairs them on the same ranks and GPUs.
    pair(row.best_cpu, row.best_gpu);
  }
  if (!unlabelled.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence =
        fmt::format("headline figures that do not name their scale: {}", names(unlabelled));
    return rule;
  }
  if (!unlike.empty()) {
    rule.verdict = RuleVerdict::not_kept;
    rule.evidence = fmt::format(
        "a best-against-best ratio sets part of a host against the whole of one (all GPUs of a "
        "host pair with all its cores): {}",
        names(unlike, 2));
    return rule;
  }
  const RunScale run = scale_of(doc.settings, DeviceKind::cpu, 1);
  rule.verdict = RuleVerdict::kept;
  rule.evidence =
      paired.empty()
          ? fmt::format(
                "decomposed over {} ranks on {} host{}, {} on the busiest; the headline sets no "
                "CPU against a GPU, and every figure names its GPUs, ranks, cores and hosts",
                run.ranks, run.hosts, run.hosts == 1 ? "" : "s", host_ranks)
          : fmt::format(
                "every formulation ran on the same ranks and hosts; each best-against-best ratio "
                "sets all GPUs of a host against all its cores (e.g. {}), and every figure names "
                "its GPUs, ranks, cores and hosts",
                paired.front());
  return rule;
}

// A rule about force-evaluation figures, in a simulation's audit: its evidence says where it is
// audited instead, so that every evidence line is true of the run.
AuditRule for_runs_only(int number, const char* title) {
  return {.number = number,
          .title = title,
          .verdict = RuleVerdict::not_applicable,
          .evidence =
              "a simulation's figures are whole steps, not force evaluations: this rule "
              "is audited in the reports of `nbody-fair run`"};
}

FairnessAudit make_audit(const ResultsDocument& doc, const Headline& headline,
                         const MeasuredSides& sides,
                         const std::vector<IntegrationRow>& simulations) {
  FairnessAudit audit;
  if (doc.settings.command == "simulate") {
    audit.rules = {same_problem(doc),
                   simulations_within_bounds(simulations),
                   for_runs_only(3, "Same effort"),
                   for_runs_only(4, "Same accounting"),
                   for_runs_only(5, "Same statistics"),
                   for_runs_only(6, "Same ceilings"),
                   full_disclosure(doc),
                   for_runs_only(8, "Same scale")};
  } else {
    audit.rules = {same_problem(doc),
                   same_precision_and_accuracy(doc, headline, sides),
                   same_effort(doc, headline, sides),
                   same_accounting(doc, sides),
                   same_statistics(doc, sides, audit.disturbed_measurements),
                   same_ceilings(doc),
                   full_disclosure(doc),
                   same_scale(doc, headline, sides)};
  }
  std::vector<std::string> not_kept, cannot_tell;
  std::size_t applicable = 0;
  for (const AuditRule& rule : audit.rules) {
    if (rule.verdict != RuleVerdict::not_applicable) ++applicable;
    const std::string label = fmt::format("{} ({})", rule.number, rule.title);
    if (rule.verdict == RuleVerdict::not_kept) not_kept.push_back(label);
    if (rule.verdict == RuleVerdict::cannot_tell) cannot_tell.push_back(label);
  }
  if (not_kept.empty() && cannot_tell.empty()) {
    audit.verdict = fmt::format("all {} applicable rules kept", applicable);
  } else {
    std::vector<std::string> parts;
    if (!not_kept.empty()) {
      parts.push_back(fmt::format("not kept: rule{} {}", not_kept.size() == 1 ? "" : "s",
                                  fmt::join(not_kept, ", ")));
    }
    if (!cannot_tell.empty()) {
      parts.push_back(fmt::format("cannot tell: rule{} {}", cannot_tell.size() == 1 ? "" : "s",
                                  fmt::join(cannot_tell, ", ")));
    }
    audit.verdict = fmt::format("{} of {} applicable rules kept; {}",
                                applicable - not_kept.size() - cannot_tell.size(), applicable,
                                fmt::join(parts, "; "));
  }
  // A run that cannot compare says so before any rule: its rules say only what one side kept.
  if (!sides.compares()) audit.verdict = sides.missing_side + ", no ratio: " + audit.verdict;
  if (!audit.disturbed_measurements.empty()) {
    audit.verdict += fmt::format("; {} measurements taken on a disturbed machine are flagged",
                                 audit.disturbed_measurements.size());
    if (!headline.disturbed_figures.empty()) {
      audit.verdict += fmt::format(", {} of them in the headline, whose ratios may be off",
                                   headline.disturbed_figures.size());
    }
  }
  return audit;
}

}  // namespace

std::string_view to_string(RuleVerdict verdict) {
  switch (verdict) {
    case RuleVerdict::kept:
      return "kept";
    case RuleVerdict::not_kept:
      return "not kept";
    case RuleVerdict::cannot_tell:
      return "cannot tell";
    case RuleVerdict::not_applicable:
      return "not applicable";
  }
  return "cannot tell";
}

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
  for (double* part :
       {&p.step_s, &p.force_s, &p.integration_s, &p.other_s, &p.diagnostics_s, &p.snapshots_s}) {
    if (std::abs(*part) < kStepRoundingFloor_s) *part = 0;
  }
  return p;
}

std::optional<StepShares> step_shares(const StepSplit& p) {
  // Negative parts (timing noise around zero) take no share.
  const auto part = [](double s) { return std::isfinite(s) && s > 0 ? s : 0.0; };
  StepShares shares{.force = part(p.force_s),
                    .integration = part(p.integration_s),
                    .other = part(p.other_s),
                    .diagnostics = part(p.diagnostics_s),
                    .snapshots = part(p.snapshots_s)};
  shares.total_s =
      shares.force + shares.integration + shares.other + shares.diagnostics + shares.snapshots;
  if (!(shares.total_s > 0)) return std::nullopt;
  for (double* share : {&shares.force, &shares.integration, &shares.other, &shares.diagnostics,
                        &shares.snapshots}) {
    *share /= shares.total_s;
  }
  return shares;
}

}  // namespace

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

Analysis analyze(const ResultsDocument& doc) {
  Analysis a;
  a.integration = make_integration_rows(doc);
  a.application_speedups = make_application_speedups(a.integration);
  a.summary.measurements = doc.results.size();
  for (const ResultRecord& r : doc.results) {
    if (r.status == Status::ok) ++a.summary.ok;
    if (r.status == Status::failed) ++a.summary.failed;
    if (r.status == Status::skipped) ++a.summary.skipped;
  }
  a.summary.complete = doc.complete;
  a.summary.interrupted = doc.interrupted;
  a.summary.budget_s = doc.settings.budget_s;
  if (const auto it = doc.phase_seconds.find("planned"); it != doc.phase_seconds.end()) {
    a.summary.planned_s = it->second;
  }
  if (const auto it = doc.phase_seconds.find("measurements"); it != doc.phase_seconds.end()) {
    a.summary.measured_s = it->second;
  }
  a.summary.left_out_by_plan = static_cast<std::size_t>(
      std::count_if(doc.results.begin(), doc.results.end(), [](const ResultRecord& r) {
        return r.status == Status::skipped && r.reason.starts_with("left out");
      }));
  a.headline = make_headline(doc);
  a.sides = measured_sides(doc);
  a.audit = make_audit(doc, a.headline, a.sides, a.integration);
  a.ladders = make_ladders(doc);
  a.rooflines = make_rooflines(doc);
  a.peak_fractions = make_peak_fractions(doc);
  a.skipped = make_skipped(doc);

  std::map<std::string, const ResultRecord*> largest;  // per implementation, the largest timed N
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_implementation(doc, r.implementation);
    if (r.accuracy && impl) {
      a.accuracy.push_back({.implementation = r.implementation,
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
    if (timed_ok(r) && r.end_to_end) {
      a.end_to_end.push_back({.implementation = r.implementation,
                              .n = r.n,
                              .kernel_s = r.kernel->median_s,
                              .end_to_end_s = r.end_to_end->median_s});
    }
    if (timed_ok(r)) {
      const ResultRecord*& best = largest[r.implementation];
      if (!best || r.n > best->n) best = &r;
    }
  }
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
    a.repetitions.push_back(std::move(samples));
  }
  return a;
}

namespace {

// How GPU formulations' slices travel between the ranks (settings.gpu_exchange, version 7).
std::string exchange_sentence(const std::string& exchange) {
  if (exchange == "nccl") {
    return " GPU formulations run one GPU per rank, and their slices travel between the GPUs by "
           "NCCL (ncclAllGather on device buffers); CPU formulations' through host memory (MPI).";
  }
  if (exchange == "mpi") {
    return " Every formulation's slices travel through host memory (MPI_Allgatherv), GPU "
           "formulations' too.";
  }
  return {};
}

}  // namespace

std::string decomposition_sentence(const RunSettings& settings) {
  if (settings.ranks <= 1) return {};
  std::vector<std::string> hosts = settings.rank_hosts;
  std::sort(hosts.begin(), hosts.end());
  hosts.erase(std::unique(hosts.begin(), hosts.end()), hosts.end());
  return fmt::format(
      "Decomposed over {} MPI ranks{} by target range: each rank computes a slice of the bodies "
      "from all N, and the slices are all-gathered after every {}.{}",
      settings.ranks,
      hosts.empty() ? ""
                    : fmt::format(" on {} host{} ({})", hosts.size(), hosts.size() == 1 ? "" : "s",
                                  fmt::join(hosts, ", ")),
      settings.command == "simulate"
          ? "drift (the positions); a step's other time is the all-gathers, waits for the "
            "slowest rank included"
          : "evaluation (the accelerations); a kernel time is the slowest rank's computation, an "
            "end-to-end time adds the all-gather",
      exchange_sentence(settings.gpu_exchange));
}

}  // namespace nbody::reports
