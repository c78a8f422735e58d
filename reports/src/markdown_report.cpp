#include "nbody/reports/markdown_report.hpp"

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "nbody/files.hpp"
#include "nbody/reports/ceilings_table.hpp"

namespace nbody::reports {
namespace {

std::string si(double value, const char* unit = "") {
  const char* prefixes[] = {"", "K", "M", "G", "T", "P"};
  int k = 0;
  while (std::abs(value) >= 1000 && k < 5) {
    value /= 1000;
    ++k;
  }
  return fmt::format("{:.3g} {}{}", value, prefixes[k], unit);
}

std::string seconds(double s) {
  if (s < 1e-3) return fmt::format("{:.3g} µs", s * 1e6);
  if (s < 1) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} s", s);
}

std::string escape(std::string text) {
  std::string out;
  for (const char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += ' ';
    else
      out += c;
  }
  return out;
}

const ImplementationRecord* find_impl(const ResultsDocument& doc, const std::string& name) {
  for (const ImplementationRecord& impl : doc.implementations) {
    if (impl.name == name) return &impl;
  }
  return nullptr;
}

// Best full-accuracy float32 rate per device at size n; naive = the plain AoS port on each side.
struct Pick {
  const ResultRecord* record = nullptr;
};

std::optional<double> rate(const ResultRecord& r) {
  if (r.status != Status::ok || !r.kernel_rate) return std::nullopt;
  return r.kernel_rate->interactions_per_second;
}

// Why a measurement's kernel timing may read low (its conditions' disturbances), or empty.
std::optional<std::string> disturbed(const ResultRecord& r) {
  if (!r.kernel || !r.kernel->conditions || r.kernel->conditions->disturbances.empty()) {
    return std::nullopt;
  }
  const MeasurementConditions& c = *r.kernel->conditions;
  return fmt::format("{} ({} attempt{})", fmt::join(c.disturbances, "; "), c.attempts,
                     c.attempts == 1 ? "" : "s");
}

void headline(std::string& out, const ResultsDocument& doc) {
  std::vector<std::size_t> sizes;
  for (const ResultRecord& r : doc.results) {
    if (std::find(sizes.begin(), sizes.end(), r.n) == sizes.end()) sizes.push_back(r.n);
  }
  std::string rows;
  std::vector<const ResultRecord*> flagged;  // disturbed figures the headline uses
  for (const std::size_t n : sizes) {
    std::map<DeviceKind, Pick> best;  // device -> best full-accuracy float32 result
    for (const ResultRecord& r : doc.results) {
      const ImplementationRecord* impl = find_impl(doc, r.implementation);
      if (r.n != n || !impl || !rate(r) || impl->accuracy_class != AccuracyClass::full ||
          impl->precision != Precision::f32)
        continue;
      Pick& p = best[impl->device];
      if (!p.record || *rate(r) > *rate(*p.record)) p.record = &r;
    }
    // The naive side: each device's float32 naive baseline (its role says which).
    std::map<DeviceKind, const ResultRecord*> naive;
    for (const ResultRecord& r : doc.results) {
      const ImplementationRecord* impl = find_impl(doc, r.implementation);
      if (r.n != n || !impl || !rate(r) || impl->role != Role::naive_baseline ||
          impl->precision != Precision::f32)
        continue;
      naive[impl->device] = &r;
    }
    const ResultRecord* naive_cpu = naive[DeviceKind::cpu];
    const ResultRecord* naive_gpu = naive[DeviceKind::gpu];
    const auto cell = [&flagged](const ResultRecord* r) {
      if (!r) return std::string("—");
      const bool disturbed_figure = disturbed(*r).has_value();
      if (disturbed_figure && std::find(flagged.begin(), flagged.end(), r) == flagged.end()) {
        flagged.push_back(r);
      }
      return fmt::format("{} ({}){}", si(*rate(*r), "int/s"), r->implementation,
                         disturbed_figure ? " ⚠" : "");
    };
    const auto ratio = [](const ResultRecord* gpu, const ResultRecord* cpu) {
      return gpu && cpu ? fmt::format("{:.3g}×", *rate(*gpu) / *rate(*cpu)) : std::string("—");
    };
    rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", n,
                        cell(best[DeviceKind::cpu].record), cell(best[DeviceKind::gpu].record),
                        ratio(best[DeviceKind::gpu].record, best[DeviceKind::cpu].record),
                        cell(naive_cpu), cell(naive_gpu), ratio(naive_gpu, naive_cpu));
  }
  out += "## Headline: best against best, naive against naive\n\n";
  out +=
      "Full-accuracy float32 only; kernel time; interactions per second (int/s), N² per force "
      "evaluation. A ratio needs both sides measured at that N.\n\n";
  out += "| N | best CPU | best GPU | GPU/CPU (best) | naive CPU | naive GPU | GPU/CPU (naive) |\n";
  out += "|---:|---|---|---:|---|---|---:|\n";
  out += rows + "\n";
  if (!flagged.empty()) {
    out +=
        "⚠ These figures of the headline were measured while the machine was busy with other "
        "work and may read low (re-measured, still disturbed):\n\n";
    for (const ResultRecord* r : flagged) {
      out += fmt::format("- {} at N = {}: {}\n", r->implementation, r->n, escape(*disturbed(*r)));
    }
    out += "\n";
  }
}

void results_table(std::string& out, const ResultsDocument& doc, bool approximate_class) {
  out += approximate_class
             ? "## Approximate accuracy class (not ranked beside full-accuracy results)\n\n"
             : "## Results\n\n";
  if (!approximate_class) {
    out +=
        "CI of median: a distribution-free confidence interval of the median time, between two "
        "order statistics of the repetitions; in brackets its exact coverage, which depends only "
        "on the number of repetitions. From 6 repetitions on it covers at least 95%; with fewer "
        "the best such interval is [min, max], covering 1 − 2^(1−K) of K repetitions: 93.75% for "
        "5 (shown rounded, 94%).\n\n";
  }
  out +=
      "| implementation | N | status | interactions/s (median) | range (slowest–fastest rep) | "
      "GFLOP/s @20 | time (median) | CI of median (coverage) | cv | end-to-end int/s | "
      "rel. L2 error | max rel. error | accuracy |\n";
  out += "|---|---:|---|---:|---|---:|---:|---|---:|---:|---:|---:|---|\n";
  for (const ResultRecord& r : doc.results) {
    const ImplementationRecord* impl = find_impl(doc, r.implementation);
    if (!impl || (impl->accuracy_class == AccuracyClass::approximate) != approximate_class)
      continue;
    if (r.status == Status::skipped) continue;  // listed, grouped, under "Skipped"
    std::string timing = "| — | — | — | — | — | — | — ";
    if (r.kernel && r.kernel_rate) {
      const TimingStatistics& t = *r.kernel;
      timing =
          fmt::format("| {} | {} – {} | {:.4g} | {} | {} – {} ({:.0f}%) | {:.1f}%{} | {} ",
                      si(r.kernel_rate->interactions_per_second),
                      si(r.kernel_rate->interactions_per_second_min),
                      si(r.kernel_rate->interactions_per_second_max), r.kernel_rate->gflops_at_20,
                      seconds(t.median_s), seconds(t.ci_low_s), seconds(t.ci_high_s),
                      100 * t.ci_confidence, 100 * t.cv, t.noisy ? " ⚠ noisy" : "",
                      r.end_to_end_rate ? si(r.end_to_end_rate->interactions_per_second) : "—");
    }
    std::string accuracy = "| — | — | — ";
    if (r.accuracy) {
      const AccuracyRecord& a = *r.accuracy;
      accuracy = fmt::format(
          "| {:.2e} | {:.2e} | {}{} ", a.metrics.relative_l2, a.metrics.max_relative,
          a.passed ? "pass" : "**FAIL**",
          a.sampled ? fmt::format(" ({} bodies sampled)", a.metrics.bodies_compared) : "");
    }
    std::string status = r.status == Status::ok
                             ? "ok"
                             : fmt::format("**{}**: {}", to_string(r.status), escape(r.reason));
    if (const auto why = disturbed(r)) status += " ⚠ disturbed: " + escape(*why);
    out += fmt::format("| {} | {} | {} {}{}|\n", r.implementation, r.n, status, timing, accuracy);
  }
  out += "\n";
}

// Skipped measurements grouped by implementation and reason, so an unavailable GPU is one line,
// not one per size (every size is still named).
void skipped_table(std::string& out, const ResultsDocument& doc) {
  std::vector<std::pair<std::pair<std::string, std::string>, std::vector<std::size_t>>> groups;
  for (const ResultRecord& r : doc.results) {
    if (r.status != Status::skipped) continue;
    const std::pair<std::string, std::string> key{r.implementation, r.reason};
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (it == groups.end()) {
      groups.push_back({key, {}});
      it = std::prev(groups.end());
    }
    it->second.push_back(r.n);
  }
  if (groups.empty()) return;
  out += "## Skipped\n\n| implementation | N | reason |\n|---|---|---|\n";
  for (const auto& [key, sizes] : groups) {
    out += fmt::format("| {} | {} | {} |\n", key.first, fmt::join(sizes, ", "), escape(key.second));
  }
  out += "\n";
}

std::string derived_cell(const std::optional<double>& figure, const char* format,
                         double scale = 1) {
  if (!figure) return "—";
  return fmt::format(fmt::runtime(format), *figure * scale);
}

// "disassembly of the hot loop (avx512f loop, 512-bit, in <signature>)" -> "disassembly of the hot
// loop (avx512f loop)"; results.json keeps the whole text.
std::string short_source(const std::string& source) {
  const auto paren = source.find(" (");
  const auto comma = source.find(',', paren == std::string::npos ? 0 : paren);
  if (paren == std::string::npos || comma == std::string::npos) return source;
  return source.substr(0, comma) + ")";
}

// A fraction of a ceiling or bound; above 100% it cannot be a fact (the ceiling read low, or the
// timing is disturbed), so it is marked and explained under the table.
std::string fraction_cell(const std::optional<double>& fraction, bool& above_one) {
  if (!fraction) return "—";
  if (*fraction <= 1.0) return fmt::format("{:.0f}%", 100 * *fraction);
  above_one = true;
  return fmt::format("{:.0f}% ⚠", 100 * *fraction);
}

// Hardware counters and fractions of peak (FAIRNESS rules 4 and 6), one row per measurement.
void counters_table(std::string& out, const ResultsDocument& doc) {
  std::string rows;
  bool above_one = false;
  for (const ResultRecord& r : doc.results) {
    if (!r.counters) continue;
    if (!r.counters->available()) {
      rows += fmt::format("| {} | {} | counters unavailable: {} |||||||||||\n", r.implementation,
                          r.n, escape(r.counters->unavailable_reason));
      continue;
    }
    const DerivedFigures& d = r.counters->derived;
    rows += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                        r.implementation, r.n, short_source(r.counters->source),
                        derived_cell(d.counted_flops_per_interaction, "{:.2f}"),
                        derived_cell(d.gflops_counted, "{:.4g}"),
                        fraction_cell(d.fraction_of_measured_peak, above_one),
                        derived_cell(d.instructions_per_interaction, "{:.3g}"),
                        derived_cell(d.instruction_bound_interactions_per_second, "{:.3g}"),
                        fraction_cell(d.fraction_of_instruction_bound, above_one),
                        fraction_cell(d.fraction_of_interaction_mix_ceiling, above_one),
                        derived_cell(d.dram_bytes_per_second, "{:.3g}", 1e-9),
                        derived_cell(d.arithmetic_intensity_flops_per_dram_byte, "{:.3g}"),
                        derived_cell(d.achieved_occupancy, "{:.0f}%", 100));
  }
  if (rows.empty()) return;
  out +=
      "## Counters and fraction of peak\n\n"
      "Counted flops: FADD + FMUL + 2·FFMA (CUPTI on the GPU; the compiled hot loop on the CPU). "
      "Fractions are of the ceilings measured on this machine (below); the instruction bound is "
      "each kernel's own instructions per interaction over the measured issue rate; the mix "
      "ceiling is the measured rate of the float32 interaction's 12 FP32 instructions and rsqrt "
      "alone (gpu.fp32_interaction_mix).\n\n";
  if (!doc.settings.counter_sizes.empty()) {
    out += fmt::format(
        "Read at N = {} (`--counters-at` chooses the sizes, `--counters-at all` every size).\n\n",
        fmt::join(doc.settings.counter_sizes, ", "));
  }
  out +=
      "| implementation | N | source | counted flops / interaction | GFLOP/s counted | of measured "
      "peak | instructions / interaction | instruction-bound int/s | of own bound | of mix "
      "ceiling | DRAM GB/s | flops / DRAM byte | occupancy |\n"
      "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  out += rows + "\n";
  if (above_one) {
    out +=
        "⚠ A fraction above 100% is not a result: no kernel runs faster than its ceiling. The "
        "ceiling it divides by read low";
    if (doc.ceilings && !doc.ceilings->warnings.empty()) {
      out += fmt::format(", as the ceilings' own warnings say ({})",
                         escape(fmt::format("{}", fmt::join(doc.ceilings->warnings, "; "))));
    } else {
      out +=
          " (measured while the machine was busy, or on a core the kernel did not share with "
          "others); measure the ceilings again with `nbody-fair peaks --remeasure` on a quiet "
          "machine";
    }
    out += ".\n\n";
  }
}

// Where the run's time went: each phase summed over the measurements, with the run's own parts.
void time_table(std::string& out, const ResultsDocument& doc) {
  std::map<std::string, double> phases;
  for (const ResultRecord& r : doc.results) {
    for (const auto& [phase, seconds] : r.phase_seconds) phases[phase] += seconds;
  }
  if (phases.empty() && doc.phase_seconds.empty()) return;
  out += "## Where the time went\n\n| phase | seconds |\n|---|---:|\n";
  for (const auto& [phase, seconds] : doc.phase_seconds) {
    out += fmt::format("| {} (whole run) | {:.1f} |\n", phase, seconds);
  }
  for (const auto& [phase, seconds] : phases) {
    out += fmt::format("| {} (all measurements) | {:.1f} |\n", phase, seconds);
  }
  out += "\n";
}

}  // namespace

std::string render_markdown(const ResultsDocument& doc) {
  std::string out = "# nbody-fair report\n\n";
  std::size_t failed = 0, skipped = 0, ok = 0;
  for (const ResultRecord& r : doc.results) {
    failed += r.status == Status::failed;
    skipped += r.status == Status::skipped;
    ok += r.status == Status::ok;
  }
  out += fmt::format("Generated {} by `{}`.\n\n", doc.generated_at,
                     escape(fmt::format("{}", fmt::join(doc.command_line, " "))));
  if (doc.interrupted) {
    out += "**This run was interrupted: the results below are what it had measured.**\n\n";
  } else if (!doc.complete) {
    out +=
        "**This run did not finish (it was stopped before its last measurement): the results "
        "below are what it had measured.**\n\n";
  }
  out += fmt::format(
      "{} measurements: {} ok, {} failed, {} skipped. Initial condition: {}, seed {}, "
      "softening {}; {} repetitions of at least {} s each after a discarded warm-up{}.\n\n",
      doc.results.size(), ok, failed, skipped, doc.settings.initial_condition, doc.settings.seed,
      doc.settings.softening, doc.settings.repetitions, doc.settings.min_time_s,
      doc.settings.warmup_s > 0
          ? fmt::format(" (the validation evaluation, followed by evaluations up to {} s where it "
                        "was shorter)",
                        doc.settings.warmup_s)
          : "");
  if (doc.settings.command == "run") headline(out, doc);
  results_table(out, doc, false);
  if (std::any_of(doc.implementations.begin(), doc.implementations.end(),
                  [](const ImplementationRecord& i) {
                    return i.accuracy_class == AccuracyClass::approximate;
                  })) {
    results_table(out, doc, true);
  }
  skipped_table(out, doc);
  counters_table(out, doc);
  time_table(out, doc);
  if (doc.ceilings) out += render_ceilings_table(doc.ceilings) + "\n";

  out +=
      "## Implementations\n\n| name | device | layout | precision | accuracy class | pairs | "
      "threads | available | optimizations |\n|---|---|---|---|---|---|---:|---|---|\n";
  for (const ImplementationRecord& i : doc.implementations) {
    out +=
        fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", i.name, to_string(i.device),
                    to_string(i.layout), to_string(i.precision), to_string(i.accuracy_class),
                    i.pairs == PairScheme::symmetric ? "N(N−1)/2 evaluated, N² credited" : "N²",
                    i.threads, i.available ? "yes" : "no: " + escape(i.unavailable_reason),
                    escape(fmt::format("{}", fmt::join(i.optimizations, "; "))));
  }

  const MachineRecord& m = doc.machine;
  out += fmt::format(
      "\n## Machine and build\n\n- CPU: {} ({} physical cores, {} logical CPUs; ISA: {})\n",
      m.cpu_model, m.physical_cores, m.logical_cpus, fmt::join(m.isa_features, ", "));
  out += fmt::format("- Memory: {:.1f} GiB; OS: {}; host: {}\n",
                     static_cast<double>(m.memory_bytes) / (1u << 30), m.os, m.hostname);
  if (m.gpus.empty()) out += "- GPU: none found\n";
  for (const GpuDescription& g : m.gpus) {
    out += fmt::format(
        "- GPU {}: {} (compute capability {}, {} SMs, SM clock {} MHz, {:.1f} GiB, driver {}, "
        "runtime {})\n",
        g.ordinal, g.name, g.compute_capability, g.sm_count, g.sm_clock_khz / 1000,
        static_cast<double>(g.memory_bytes) / (1u << 30), g.driver_version, g.runtime_version);
  }
  const BuildRecord& b = doc.build;
  out += fmt::format("- nbody-fair {} ({}); C++: {} `{}`; CUDA: {} `{}` (architectures {})\n",
                     b.tool_version, b.build_type, b.cxx_compiler, escape(b.cxx_flags),
                     b.cuda_compiler.empty() ? "not built" : b.cuda_compiler, escape(b.cuda_flags),
                     b.cuda_architectures);
  out += "- Libraries:";
  for (const auto& [name, version] : b.libraries) out += fmt::format(" {} {};", name, version);
  out +=
      "\n\n## Inputs\n\n| initial condition | N | seed | hash (float64) | hash (float32) "
      "|\n|---|---:|---:|---|---|\n";
  for (const InputRecord& in : doc.inputs) {
    out += fmt::format("| {} | {} | {} | `{}` | `{}` |\n", in.initial_condition, in.n, in.seed,
                       in.hash_f64, in.hash_f32);
  }
  return out;
}

void write_markdown(const ResultsDocument& document, const std::filesystem::path& directory) {
  write_file_atomically(directory / "report.md", render_markdown(document));
}

}  // namespace nbody::reports
